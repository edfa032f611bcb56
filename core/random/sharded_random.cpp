// Sharded jax.random: every device computes its own block of the global sample from global indices.
#include "random/sharded_random.h"

#include <map>
#include <utility>

#include "base/checked_math.h"
#include "base/error.h"

namespace shardscope::random {
namespace {

Shape block_shape(const Block& block) {
  Shape shape(block.start.size());
  for (std::size_t d = 0; d < shape.size(); ++d) shape[d] = block.stop[d] - block.start[d];
  return shape;
}

// Places a value of `aval` under `sharding`, asking `make_block` once per distinct block.
template <class MakeBlock>
Array generate(ShapedArray aval, const Sharding& sharding, const JaxProfile& profile, bool abstract,
               MakeBlock&& make_block) {
  if (abstract) return Array::abstract(std::move(aval), sharding, profile);
  std::map<std::vector<DimSlice>, BufferPtr> blocks;
  std::vector<Array::Shard> shards;
  for (DeviceIndex& entry : devices_indices_map(sharding, aval.shape, profile)) {
    BufferPtr& buffer = blocks[entry.index];
    if (!buffer) {
      const Block block = block_of(entry.index, aval.shape);
      buffer = make_block(block, block_shape(block));
    }
    shards.push_back({std::move(entry.device), std::move(entry.index), entry.replica_id, buffer});
  }
  return Array::from_shards(std::move(aval), sharding, std::move(shards));
}

Shape with_key_dim(std::span<const int64_t> shape) {
  Shape out(shape.begin(), shape.end());
  out.push_back(2);
  return out;
}

// A whole (small) uint32 value, each device keeping its block.
Array place_words(Shape shape, const std::vector<uint32_t>& words, const Sharding& sharding, const JaxProfile& profile,
                  bool abstract) {
  if (abstract) return Array::abstract({std::move(shape), DType::kUInt32, false}, sharding, profile);
  return Array::from_host(make_buffer(DType::kUInt32, std::move(shape), words), sharding, profile);
}

// The key of a sampler's `key` argument; nullopt for an abstract key (its shape and dtype are still checked).
std::optional<Key> sampler_key(const Array& key, const std::string& name) {
  if (!key.is_abstract()) return key_value(key, name);
  check_single_key(key.shape(), key.dtype(), name);
  return std::nullopt;
}

RandomOptions options_for(const GenerationConfig& config, const Block& block) {
  return RandomOptions{config.mode, block, config.contraction};
}

}  // namespace

GenerationConfig default_generation_config(const JaxProfile& profile) {
  const JaxVersion& v = profile.version();
  return GenerationConfig{default_threefry_mode(v.major, v.minor, v.patch), FloatContraction::kFused};
}

Block block_of(std::span<const DimSlice> index, std::span<const int64_t> shape) {
  Block block{std::vector<int64_t>(shape.size(), 0), std::vector<int64_t>(shape.begin(), shape.end())};
  for (std::size_t d = 0; d < shape.size() && d < index.size(); ++d) {
    if (index[d].full) continue;
    block.start[d] = index[d].start;
    block.stop[d] = index[d].stop;
  }
  return block;
}

void check_key_data(const Shape& shape, DType dtype) {
  if (shape.empty()) {
    throw type_error("JAX encountered invalid PRNG key data: expected key_data.ndim >= 1; got ndim=0");
  }
  if (shape.back() != 2) {
    // JAX ends the message with the PRNGImpl's NamedTuple repr, whose function addresses vary by process.
    throw type_error("JAX encountered invalid PRNG key data: expected key_data.shape to end with (2,); got shape=" +
                     python_int_tuple(shape) + " for impl=PRNGImpl(key_shape=(2,), name='threefry2x32', tag='fry')");
  }
  if (dtype != DType::kUInt32) {
    throw type_error("JAX encountered invalid PRNG key data: expected key_data.dtype = uint32; got dtype=" +
                     std::string(dtype_name(dtype)));
  }
}

Key key_value(const Array& key, const std::string& name) {
  check_single_key(key.shape(), key.dtype(), name);
  const BufferPtr value = key.gather();
  const std::span<const uint32_t> words = value->as<uint32_t>();
  return Key{words[0], words[1]};
}

void check_single_key(const Shape& shape, DType dtype, const std::string& name) {
  check_key_data(shape, dtype);
  if (shape.size() != 1) {
    throw value_error(name + " accepts a single key, but was given a key array of shape " + python_int_tuple(shape) +
                      " != (). Use jax.vmap for batching.");
  }
}

Array key_array(const Key& data, const Sharding& sharding, const JaxProfile& profile) {
  return place_words({2}, {data[0], data[1]}, sharding, profile, false);
}

Array prng_key(int64_t seed, const Sharding& sharding, const JaxProfile& profile, bool enable_x64) {
  return key_array(PRNGKey(seed, enable_x64), sharding, profile);
}

Array split(const Array& key, std::span<const int64_t> shape, const Sharding& sharding, const JaxProfile& profile,
            const GenerationConfig& config) {
  check_shapelike("iota", "shape", shape);  // JAX's threefry split counts the keys with lax.iota(shape)
  const std::optional<Key> k = sampler_key(key, "split");
  return generate({with_key_dim(shape), DType::kUInt32, false}, sharding, profile, !k,
                  [&](const Block& block, const Shape& local) {
                    return make_buffer(DType::kUInt32, local, split_block(*k, shape, config.mode, block));
                  });
}

Array fold_in(const Array& key, uint32_t data, const Sharding& sharding, const JaxProfile& profile) {
  const std::optional<Key> k = sampler_key(key, "fold_in");
  const Key folded = k ? random::fold_in(*k, data) : Key{};
  return place_words({2}, {folded[0], folded[1]}, sharding, profile, !k);
}

Array bits(const Array& key, std::span<const int64_t> shape, DType dtype, const Sharding& sharding,
           const JaxProfile& profile, const GenerationConfig& config) {
  const std::optional<Key> k = sampler_key(key, "bits");
  if (dtype_kind(dtype) != DTypeKind::kUnsigned) {
    throw value_error("dtype argument to `bits` must be an unsigned int dtype, got " + std::string(dtype_name(dtype)));
  }
  return generate({Shape(shape.begin(), shape.end()), dtype, false}, sharding, profile, !k,
                  [&](const Block& block, const Shape& local) {
                    const RandomOptions options = options_for(config, block);
                    switch (dtype) {
                      case DType::kUInt8: return make_buffer(dtype, local, random_bits<uint8_t>(*k, shape, options));
                      case DType::kUInt16: return make_buffer(dtype, local, random_bits<uint16_t>(*k, shape, options));
                      case DType::kUInt32: return make_buffer(dtype, local, random_bits<uint32_t>(*k, shape, options));
                      default: return make_buffer(dtype, local, random_bits<uint64_t>(*k, shape, options));
                    }
                  });
}

Array uniform(const Array& key, std::span<const int64_t> shape, DType dtype, double minval, double maxval,
              const Sharding& sharding, const JaxProfile& profile, const GenerationConfig& config) {
  const std::optional<Key> k = sampler_key(key, "uniform");
  if (!is_floating(dtype)) {
    throw value_error("dtype argument to `uniform` must be a float dtype, got " + std::string(dtype_name(dtype)));
  }
  return generate({Shape(shape.begin(), shape.end()), dtype, false}, sharding, profile, !k,
                  [&](const Block& block, const Shape& local) {
                    const RandomOptions options = options_for(config, block);
                    switch (dtype) {
                      case DType::kFloat32:
                        return make_buffer(dtype, local,
                                           random::uniform<float>(*k, shape, static_cast<float>(minval),
                                                                  static_cast<float>(maxval), options));
                      case DType::kFloat64:
                        return make_buffer(dtype, local, random::uniform<double>(*k, shape, minval, maxval, options));
                      case DType::kBFloat16:
                        return make_buffer(dtype, local, uniform_bf16(*k, shape, minval, maxval, options));
                      default: return make_buffer(dtype, local, uniform_f16(*k, shape, minval, maxval, options));
                    }
                  });
}

Array normal(const Array& key, std::span<const int64_t> shape, DType dtype, const Sharding& sharding,
             const JaxProfile& profile, const GenerationConfig& config) {
  const std::optional<Key> k = sampler_key(key, "normal");
  if (!is_floating(dtype)) {
    throw value_error("dtype argument to `normal` must be a float or complex dtype, got " +
                      std::string(dtype_name(dtype)));
  }
  return generate({Shape(shape.begin(), shape.end()), dtype, false}, sharding, profile, !k,
                  [&](const Block& block, const Shape& local) {
                    const RandomOptions options = options_for(config, block);
                    switch (dtype) {
                      case DType::kFloat32: return make_buffer(dtype, local, random::normal<float>(*k, shape, options));
                      case DType::kFloat64:
                        return make_buffer(dtype, local, random::normal<double>(*k, shape, options));
                      case DType::kBFloat16: return make_buffer(dtype, local, normal_bf16(*k, shape, options));
                      default: return make_buffer(dtype, local, normal_f16(*k, shape, options));
                    }
                  });
}

Array randint(const Array& key, std::span<const int64_t> shape, int64_t minval, int64_t maxval, DType dtype,
              const Sharding& sharding, const JaxProfile& profile, const GenerationConfig& config) {
  const std::optional<Key> k = sampler_key(key, "randint");
  if (!is_integral(dtype)) {
    throw type_error("randint only accepts integer dtypes, got " + std::string(dtype_name(dtype)));
  }
  return generate({Shape(shape.begin(), shape.end()), dtype, false}, sharding, profile, !k,
                  [&](const Block& block, const Shape& local) -> BufferPtr {
                    const RandomOptions o = options_for(config, block);
                    switch (dtype) {
                      case DType::kInt8:
                        return make_buffer(dtype, local, random::randint<int8_t>(*k, shape, minval, maxval, o));
                      case DType::kInt16:
                        return make_buffer(dtype, local, random::randint<int16_t>(*k, shape, minval, maxval, o));
                      case DType::kInt32:
                        return make_buffer(dtype, local, random::randint<int32_t>(*k, shape, minval, maxval, o));
                      case DType::kInt64:
                        return make_buffer(dtype, local, random::randint<int64_t>(*k, shape, minval, maxval, o));
                      case DType::kUInt8:
                        return make_buffer(dtype, local, random::randint<uint8_t>(*k, shape, minval, maxval, o));
                      case DType::kUInt16:
                        return make_buffer(dtype, local, random::randint<uint16_t>(*k, shape, minval, maxval, o));
                      case DType::kUInt32:
                        return make_buffer(dtype, local, random::randint<uint32_t>(*k, shape, minval, maxval, o));
                      default:
                        return make_buffer(dtype, local, random::randint<uint64_t>(*k, shape, minval, maxval, o));
                    }
                  });
}

Array bernoulli(const Array& key, double p, std::span<const int64_t> shape, const Sharding& sharding,
                const JaxProfile& profile, const GenerationConfig& config, BernoulliMode mode, DType p_dtype) {
  const std::optional<Key> k = sampler_key(key, "bernoulli");
  if (!is_floating(p_dtype)) {
    throw type_error("bernoulli probability `p` must have a floating dtype, got " + std::string(dtype_name(p_dtype)) +
                     ".");
  }
  if (p_dtype != DType::kFloat32 && p_dtype != DType::kFloat64) {
    throw not_implemented_error("jax.random.bernoulli with a " + std::string(dtype_name(p_dtype)) + " probability");
  }
  return generate({Shape(shape.begin(), shape.end()), DType::kBool, false}, sharding, profile, !k,
                  [&](const Block& block, const Shape& local) {
                    const RandomOptions o = options_for(config, block);
                    if (p_dtype == DType::kFloat32) {
                      return make_buffer(DType::kBool, local,
                                         random::bernoulli<float>(*k, static_cast<float>(p), shape, mode, o));
                    }
                    return make_buffer(DType::kBool, local, random::bernoulli<double>(*k, p, shape, mode, o));
                  });
}

std::vector<uint32_t> split_block(const Key& key, std::span<const int64_t> shape, ThreefryMode mode,
                                  const Block& block) {
  const Shape full = with_key_dim(shape);
  const std::size_t rank = shape.size();
  std::vector<uint32_t> out;
  out.reserve(static_cast<std::size_t>(product(block_shape(block))));
  std::vector<Key> legacy;
  if (mode == ThreefryMode::kOriginal) legacy = random::split(key, shape, mode);  // one iota over all keys
  // Row-major walk over the block's key positions; each key contributes the words its last-dim slice keeps.
  std::vector<int64_t> index(block.start.begin(), block.start.begin() + static_cast<std::ptrdiff_t>(rank));
  for (std::size_t d = 0; d < rank; ++d) {
    if (block.start[d] >= block.stop[d]) return out;
  }
  while (true) {
    uint64_t flat = 0;
    for (std::size_t d = 0; d < rank; ++d)
      flat = flat * static_cast<uint64_t>(full[d]) + static_cast<uint64_t>(index[d]);
    const Key k = mode == ThreefryMode::kPartitionable
                      ? threefry2x32(key, static_cast<uint32_t>(flat >> 32), static_cast<uint32_t>(flat))
                      : legacy[flat];
    for (int64_t w = block.start[rank]; w < block.stop[rank]; ++w) out.push_back(k[static_cast<std::size_t>(w)]);
    std::size_t d = rank;
    while (d > 0) {
      --d;
      if (++index[d] < block.stop[d]) break;
      index[d] = block.start[d];
      if (d == 0) return out;
    }
    if (rank == 0) return out;
  }
}

}  // namespace shardscope::random
