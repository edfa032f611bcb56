// The PRNG as primitives, as JAX's jaxprs show it on the uint32 key path: random_seed, random_wrap,
// random_unwrap, random_bits, random_split, random_fold_in and threefry2x32.
//
// Keys are not a dtype here (DType is shared by the whole engine): where JAX's avals say key<fry>[*s], ours say
// u32[*s,2], the raw key data. random_wrap and random_unwrap therefore keep the aval as it is, and a printed
// jaxpr shows u32[2] where JAX shows key<fry>[]; every other line (primitive names, params, value types) matches.
//
// jax_threefry_partitionable is read from the config when JAX lowers random_bits and random_split; here it is
// the hidden param `partitionable` (true when absent: the default since jax 0.5.0), which never prints.
//
// Under a partitioned jit, random_bits and random_split run through `block_impl`: each device computes only its
// block of the global result from global indices (exact in both modes). Inside shard_map bodies the ordinary
// kernel runs on each device with the body's local shapes, which is what JAX does there.
#include <algorithm>

#include "base/checked_math.h"
#include "base/error.h"
#include "ir/primitive.h"
#include "ops/elementwise_common.h"
#include "ops/ops.h"
#include "random/sharded_random.h"

namespace shardscope {
namespace {

using random::Block;
using random::Key;

const char* const kHiddenModeParam = "partitionable";

random::ThreefryMode mode_of(const Params& params) {
  const ParamValue* flag = find_param(params, kHiddenModeParam);
  const bool partitionable = flag == nullptr || flag->as_bool(kHiddenModeParam);
  return partitionable ? random::ThreefryMode::kPartitionable : random::ThreefryMode::kOriginal;
}

// JAX's own params, sorted by key; the threefry mode stays hidden.
Params visible_params(const Eqn& eqn, const JaxProfile&) {
  Params params;
  for (const auto& entry : eqn.params) {
    if (entry.first != kHiddenModeParam) params.push_back(entry);
  }
  std::sort(params.begin(), params.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return params;
}

void check_arity(const std::string& name, std::span<const Aval> in, std::size_t expected) {
  elementwise::check_arity(name, in, expected);
}

// Key arrays u32[*s,2]: the leading key dims.
Shape keys_shape(const Aval& keys) {
  random::check_key_data(keys.shape, keys.dtype);
  return Shape(keys.shape.begin(), keys.shape.end() - 1);
}

// A result whose leading dims are the keys' (keeping their explicit sharding and varying axes) followed by
// `extra` unsharded dims.
Aval keyed_result(const Aval& keys, const Shape& extra, DType dtype) {
  Aval out = keys;
  out.shape = keys_shape(keys);
  const std::size_t key_rank = out.shape.size();
  out.shape.insert(out.shape.end(), extra.begin(), extra.end());
  out.dtype = dtype;
  out.weak_type = false;
  out.unreduced.clear();
  if (!out.dim_axes.empty()) {
    out.dim_axes.resize(key_rank);
    out.dim_axes.resize(out.shape.size());
  }
  return out;
}

std::vector<Key> keys_of(const Buffer& keys) {
  const std::span<const uint32_t> words = keys.as<uint32_t>();
  std::vector<Key> out(words.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = Key{words[2 * i], words[2 * i + 1]};
  return out;
}

// On one device the block kernel computes the whole result (an empty index is the full block).
Primitive with_whole_impl(Primitive p) {
  p.impl = [block = p.block_impl](std::span<const BufferPtr> in, std::span<const Aval> avals, const Params& params) {
    return block(in, avals, params, {});
  };
  return p;
}

Shape extent(const Block& block) {
  Shape shape(block.start.size());
  for (std::size_t d = 0; d < shape.size(); ++d) shape[d] = block.stop[d] - block.start[d];
  return shape;
}

// Calls fn(flat key index, sub-block over the trailing dims) for every key position of `block` whose leading
// `key_rank` dims index the keys, in row-major order (so the pieces concatenate into the block).
template <class Fn>
void for_each_key(const Shape& key_shape, const Block& block, Fn&& fn) {
  const std::size_t key_rank = key_shape.size();
  Block inner{std::vector<int64_t>(block.start.begin() + static_cast<std::ptrdiff_t>(key_rank), block.start.end()),
              std::vector<int64_t>(block.stop.begin() + static_cast<std::ptrdiff_t>(key_rank), block.stop.end())};
  for (std::size_t d = 0; d < key_rank; ++d) {
    if (block.start[d] >= block.stop[d]) return;
  }
  std::vector<int64_t> index(block.start.begin(), block.start.begin() + static_cast<std::ptrdiff_t>(key_rank));
  while (true) {
    std::size_t flat = 0;
    for (std::size_t d = 0; d < key_rank; ++d) {
      flat = flat * static_cast<std::size_t>(key_shape[d]) + static_cast<std::size_t>(index[d]);
    }
    fn(flat, inner);
    std::size_t d = key_rank;
    while (d > 0) {
      --d;
      if (++index[d] < block.stop[d]) break;
      index[d] = block.start[d];
      if (d == 0) return;
    }
    if (key_rank == 0) return;
  }
}

template <class UInt>
BufferPtr bits_block(const Buffer& keys, const Shape& key_shape, const Shape& shape, DType dtype,
                     random::ThreefryMode mode, const Block& block) {
  std::vector<UInt> out;
  const std::vector<Key> all_keys = keys_of(keys);
  for_each_key(key_shape, block, [&](std::size_t k, const Block& inner) {
    const std::vector<UInt> part = random::random_bits<UInt>(all_keys[k], shape, {mode, inner, {}});
    out.insert(out.end(), part.begin(), part.end());
  });
  return make_buffer(dtype, extent(block), out);
}

DType bits_dtype(int64_t bit_width) {
  switch (bit_width) {
    case 8: return DType::kUInt8;
    case 16: return DType::kUInt16;
    case 32: return DType::kUInt32;
    case 64: return DType::kUInt64;
    default: throw type_error("data type 'uint" + std::to_string(bit_width) + "' not understood");
  }
}

Primitive random_bits_primitive() {
  Primitive p;
  p.name = "random_bits";
  p.abstract_eval = [](std::span<const Aval> in, const Params& params) {
    check_arity("random_bits", in, 1);
    const DType dtype = bits_dtype(param(params, "bit_width").as_int("bit_width"));
    return std::vector<Aval>{keyed_result(in[0], param(params, "shape").as_ints("shape"), dtype)};
  };
  p.block_impl = [](std::span<const BufferPtr> in, std::span<const Aval> avals, const Params& params,
                    std::span<const DimSlice> index) {
    const DType dtype = bits_dtype(param(params, "bit_width").as_int("bit_width"));
    const Shape shape = param(params, "shape").as_ints("shape");
    const Shape key_shape = keys_shape(avals[0]);
    Shape full = key_shape;
    full.insert(full.end(), shape.begin(), shape.end());
    const Block block = random::block_of(index, full);
    const random::ThreefryMode mode = mode_of(params);
    switch (dtype) {
      case DType::kUInt8: return std::vector{bits_block<uint8_t>(*in[0], key_shape, shape, dtype, mode, block)};
      case DType::kUInt16: return std::vector{bits_block<uint16_t>(*in[0], key_shape, shape, dtype, mode, block)};
      case DType::kUInt32: return std::vector{bits_block<uint32_t>(*in[0], key_shape, shape, dtype, mode, block)};
      default: return std::vector{bits_block<uint64_t>(*in[0], key_shape, shape, dtype, mode, block)};
    }
  };
  p.printed_params = visible_params;
  return p;
}

Primitive random_split_primitive() {
  Primitive p;
  p.name = "random_split";
  p.abstract_eval = [](std::span<const Aval> in, const Params& params) {
    check_arity("random_split", in, 1);
    Shape extra = param(params, "shape").as_ints("shape");
    check_shapelike("iota", "shape", extra);  // JAX's threefry split counts the keys with lax.iota(shape)
    extra.push_back(2);
    return std::vector<Aval>{keyed_result(in[0], extra, DType::kUInt32)};
  };
  p.block_impl = [](std::span<const BufferPtr> in, std::span<const Aval> avals, const Params& params,
                    std::span<const DimSlice> index) {
    const Shape shape = param(params, "shape").as_ints("shape");
    const Shape key_shape = keys_shape(avals[0]);
    Shape full = key_shape;
    full.insert(full.end(), shape.begin(), shape.end());
    full.push_back(2);
    const Block block = random::block_of(index, full);
    const std::vector<Key> all_keys = keys_of(*in[0]);
    std::vector<uint32_t> out;
    for_each_key(key_shape, block, [&](std::size_t k, const Block& inner) {
      const std::vector<uint32_t> part = random::split_block(all_keys[k], shape, mode_of(params), inner);
      out.insert(out.end(), part.begin(), part.end());
    });
    return std::vector{make_buffer(DType::kUInt32, extent(block), out)};
  };
  p.printed_params = visible_params;
  return p;
}

// Row-major multi-index of `flat` in `shape`, mapped onto an operand of `operand` shape broadcast to it
// (same rank with size-1 dims, or a scalar).
std::size_t broadcast_source(std::size_t flat, const Shape& shape, const Shape& operand) {
  if (operand.empty()) return 0;
  std::size_t source = 0;
  std::size_t stride = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    const auto size = static_cast<std::size_t>(shape[d]);
    const std::size_t i = flat % size;
    flat /= size;
    if (operand[d] != 1) source += i * stride;
    stride *= static_cast<std::size_t>(operand[d]);
  }
  return source;
}

uint32_t as_uint32(const Buffer& buffer, std::size_t i) {
  switch (buffer.dtype()) {
    case DType::kInt8: return static_cast<uint32_t>(buffer.as<int8_t>()[i]);
    case DType::kInt16: return static_cast<uint32_t>(buffer.as<int16_t>()[i]);
    case DType::kInt32: return static_cast<uint32_t>(buffer.as<int32_t>()[i]);
    case DType::kInt64: return static_cast<uint32_t>(buffer.as<int64_t>()[i]);
    case DType::kUInt8: return buffer.as<uint8_t>()[i];
    case DType::kUInt16: return buffer.as<uint16_t>()[i];
    case DType::kUInt32: return buffer.as<uint32_t>()[i];
    case DType::kUInt64: return static_cast<uint32_t>(buffer.as<uint64_t>()[i]);
    default: throw type_error("random_fold_in needs integer data, got " + std::string(dtype_name(buffer.dtype())));
  }
}

// Kernels that compute the whole (small, key-sized) result serve their blocks by slicing it.
template <class Kernel>
void add_block_by_slicing(Primitive& p, Kernel kernel) {
  p.impl = [kernel](std::span<const BufferPtr> in, std::span<const Aval> avals, const Params& params) {
    return std::vector<BufferPtr>{kernel(in, avals, params)};
  };
  p.block_impl = [kernel](std::span<const BufferPtr> in, std::span<const Aval> avals, const Params& params,
                          std::span<const DimSlice> index) {
    const BufferPtr whole = kernel(in, avals, params);
    return std::vector<BufferPtr>{slice_block(*whole, std::vector<DimSlice>(index.begin(), index.end()))};
  };
}

Primitive random_fold_in_primitive() {
  Primitive p;
  p.name = "random_fold_in";
  p.abstract_eval = [](std::span<const Aval> in, const Params&) {
    check_arity("random_fold_in", in, 2);
    if (!is_integral(in[1].dtype)) {
      throw type_error("random_fold_in needs integer data, got " + std::string(dtype_name(in[1].dtype)));
    }
    Aval keys = Aval::of(keys_shape(in[0]), DType::kUInt32);
    keys.varying = in[0].varying;
    const std::vector<Aval> operands = {keys, in[1]};
    Aval out = in[0];
    out.shape = elementwise::broadcasting_shape("random_fold_in", operands);
    out.shape.push_back(2);
    out.varying = elementwise::nary_result(operands, out.shape, DType::kUInt32, false).varying;
    out.dim_axes.clear();
    return std::vector<Aval>{out};
  };
  add_block_by_slicing(p, [](std::span<const BufferPtr> in, std::span<const Aval> avals, const Params&) {
    const Shape key_shape = keys_shape(avals[0]);
    const Aval keys = Aval::of(key_shape, DType::kUInt32);
    const std::vector<Aval> operands = {keys, avals[1]};
    Shape shape = elementwise::broadcasting_shape("random_fold_in", operands);
    const std::vector<Key> all_keys = keys_of(*in[0]);
    std::vector<uint32_t> out;
    const auto n = static_cast<std::size_t>(product(shape));
    for (std::size_t i = 0; i < n; ++i) {
      const Key folded = random::fold_in(all_keys[broadcast_source(i, shape, key_shape)],
                                         as_uint32(*in[1], broadcast_source(i, shape, avals[1].shape)));
      out.insert(out.end(), folded.begin(), folded.end());
    }
    shape.push_back(2);
    return make_buffer(DType::kUInt32, shape, out);
  });
  return p;
}

// threefry_seed: k0 is the seed's bits above 32 (none for narrower seeds), k1 its low 32 bits.
Primitive random_seed_primitive() {
  Primitive p;
  p.name = "random_seed";
  p.abstract_eval = [](std::span<const Aval> in, const Params&) {
    check_arity("random_seed", in, 1);
    if (!is_integral(in[0].dtype)) throw type_error("PRNG key seed must be an integer; got " + in[0].str_short(false));
    Aval out = in[0];
    out.shape.push_back(2);
    out.dtype = DType::kUInt32;
    out.weak_type = false;
    if (!out.dim_axes.empty()) out.dim_axes.emplace_back();
    return std::vector<Aval>{out};
  };
  add_block_by_slicing(p, [](std::span<const BufferPtr> in, std::span<const Aval>, const Params&) {
    const Buffer& seeds = *in[0];
    std::vector<uint32_t> out;
    for (std::size_t i = 0; i < static_cast<std::size_t>(seeds.size()); ++i) {
      uint64_t bits = 0;
      switch (seeds.dtype()) {
        case DType::kInt64: bits = static_cast<uint64_t>(seeds.as<int64_t>()[i]); break;
        case DType::kUInt64: bits = seeds.as<uint64_t>()[i]; break;
        default: bits = as_uint32(seeds, i); break;
      }
      out.push_back(static_cast<uint32_t>(bits >> 32));
      out.push_back(static_cast<uint32_t>(bits));
    }
    Shape shape = seeds.shape();
    shape.push_back(2);
    return make_buffer(DType::kUInt32, shape, out);
  });
  p.printed_params = visible_params;
  return p;
}

// random_wrap / random_unwrap: the key data is the key here, so both pass values through.
Primitive key_cast_primitive(const std::string& name, bool checks_key_data) {
  Primitive p;
  p.name = name;
  p.abstract_eval = [name, checks_key_data](std::span<const Aval> in, const Params&) {
    check_arity(name, in, 1);
    if (checks_key_data) random::check_key_data(in[0].shape, in[0].dtype);
    return std::vector<Aval>{in[0]};
  };
  p.impl = [](std::span<const BufferPtr> in, std::span<const Aval>, const Params&) {
    return std::vector<BufferPtr>{in[0]};
  };
  p.elementwise = true;
  return p;
}

std::string avals_repr(std::span<const Aval> avals) {
  std::vector<std::string> items;
  for (const Aval& a : avals) items.push_back("ShapedArray(" + a.str_short(false) + ")");
  return python_tuple(items);
}

Primitive threefry2x32_primitive() {
  Primitive p;
  p.name = "threefry2x32";
  p.multiple_results = true;
  p.abstract_eval = [](std::span<const Aval> in, const Params&) {
    check_arity("threefry2x32", in, 4);
    if (std::any_of(in.begin(), in.end(), [](const Aval& a) { return a.dtype != DType::kUInt32; })) {
      throw type_error("Arguments to threefry2x32 must have uint32 type, got " + avals_repr(in));
    }
    const Shape shape = elementwise::broadcasting_shape("threefry2x32", in);
    const Aval out = elementwise::nary_result(in, shape, DType::kUInt32, false);
    return std::vector<Aval>{out, out};
  };
  p.impl = [](std::span<const BufferPtr> in, std::span<const Aval> avals, const Params&) {
    const Shape shape = elementwise::broadcasting_shape("threefry2x32", avals);
    const auto n = static_cast<std::size_t>(product(shape));
    std::vector<uint32_t> x0(n);
    std::vector<uint32_t> x1(n);
    const auto at = [&](std::size_t operand, std::size_t i) {
      return in[operand]->as<uint32_t>()[broadcast_source(i, shape, in[operand]->shape())];
    };
    for (std::size_t i = 0; i < n; ++i) {
      const std::array<uint32_t, 2> y = random::threefry2x32(Key{at(0, i), at(1, i)}, at(2, i), at(3, i));
      x0[i] = y[0];
      x1[i] = y[1];
    }
    return std::vector<BufferPtr>{make_buffer(DType::kUInt32, shape, x0), make_buffer(DType::kUInt32, shape, x1)};
  };
  p.elementwise = true;
  return p;
}

}  // namespace

void register_random_primitives() {
  register_primitive(random_seed_primitive());
  Primitive wrap = key_cast_primitive("random_wrap", true);
  wrap.printed_params = visible_params;
  register_primitive(std::move(wrap));
  register_primitive(key_cast_primitive("random_unwrap", false));
  register_primitive(with_whole_impl(random_bits_primitive()));
  register_primitive(with_whole_impl(random_split_primitive()));
  register_primitive(random_fold_in_primitive());
  register_primitive(threefry2x32_primitive());
}

}  // namespace shardscope
