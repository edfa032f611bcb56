// jax.random on sharded arrays: keys and samples placed under a sharding, each device holding only its block.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "array/array.h"
#include "random/distributions.h"
#include "random/threefry.h"

namespace shardscope::random {

// How samples are generated: jax_threefry_partitionable and the float contraction of erf_inv.
struct GenerationConfig {
  ThreefryMode mode = ThreefryMode::kPartitionable;
  FloatContraction contraction = FloatContraction::kFused;
};

// The flag's default in the profile's JAX release.
[[nodiscard]] GenerationConfig default_generation_config(const JaxProfile& profile);

// Every function places its result under `sharding` the way device_put would (IndivisibleError when the
// sharding does not divide the shape) and computes only each device's block, from global indices: in the
// partitionable mode each element hashes its own index; the legacy stream can be cut into blocks too (see
// RandomOptions), so both modes give JAX's global value. Devices holding the same block share one buffer. An
// abstract key gives an abstract result (shape, dtype and sharding only).

// Key data as jax.random.PRNGKey(seed) / key_data(jax.random.key(seed)) holds it: uint32[2]. Keys are not a
// dtype of their own here; they stay uint32[..., 2] arrays.
[[nodiscard]] Array key_array(const Key& data, const Sharding& sharding, const JaxProfile& profile);
[[nodiscard]] Array prng_key(int64_t seed, const Sharding& sharding, const JaxProfile& profile,
                             bool enable_x64 = false);

// The key a uint32[2] array holds (JAX's TypeErrors for invalid key data, its ValueError "`name` accepts a
// single key ..." for key arrays). Abstract keys have no value: ValueError.
[[nodiscard]] Key key_value(const Array& key, const std::string& name);

// jax.random.split(key, shape): uint32[*shape, 2].
[[nodiscard]] Array split(const Array& key, std::span<const int64_t> shape, const Sharding& sharding,
                          const JaxProfile& profile, const GenerationConfig& config = {});
// jax.random.fold_in(key, data): uint32[2] (the same in both modes).
[[nodiscard]] Array fold_in(const Array& key, uint32_t data, const Sharding& sharding, const JaxProfile& profile);

// jax.random.bits(key, shape, dtype): dtype uint8, uint16, uint32 or uint64.
[[nodiscard]] Array bits(const Array& key, std::span<const int64_t> shape, DType dtype, const Sharding& sharding,
                         const JaxProfile& profile, const GenerationConfig& config = {});
// jax.random.uniform(key, shape, dtype, minval, maxval): float dtypes, taken as given (canonicalizing float64
// to float32 without x64 is the caller's job, as for every dtype here).
[[nodiscard]] Array uniform(const Array& key, std::span<const int64_t> shape, DType dtype, double minval, double maxval,
                            const Sharding& sharding, const JaxProfile& profile, const GenerationConfig& config = {});
// jax.random.normal(key, shape, dtype): real float dtypes.
[[nodiscard]] Array normal(const Array& key, std::span<const int64_t> shape, DType dtype, const Sharding& sharding,
                           const JaxProfile& profile, const GenerationConfig& config = {});
// jax.random.randint(key, shape, minval, maxval, dtype): integer dtypes.
[[nodiscard]] Array randint(const Array& key, std::span<const int64_t> shape, int64_t minval, int64_t maxval,
                            DType dtype, const Sharding& sharding, const JaxProfile& profile,
                            const GenerationConfig& config = {});
// jax.random.bernoulli(key, p, shape, mode): bool. `p_dtype` is p's dtype (float32 for a Python float
// without x64).
[[nodiscard]] Array bernoulli(const Array& key, double p, std::span<const int64_t> shape, const Sharding& sharding,
                              const JaxProfile& profile, const GenerationConfig& config = {},
                              BernoulliMode mode = BernoulliMode::kLow, DType p_dtype = DType::kFloat32);

// Shared with the random primitives: the global block a device index covers (dims past the index's end
// whole), and the check
// _check_prng_key_data makes on raw key data (TypeError with JAX's message).
[[nodiscard]] Block block_of(std::span<const DimSlice> index, std::span<const int64_t> shape);
void check_key_data(const Shape& shape, DType dtype);
// check_key_data plus the samplers' "`name` accepts a single key" ValueError for key arrays.
void check_single_key(const Shape& shape, DType dtype, const std::string& name);
// The words of split(key, shape) (uint32[*shape, 2]) inside `block`, row-major.
[[nodiscard]] std::vector<uint32_t> split_block(const Key& key, std::span<const int64_t> shape, ThreefryMode mode,
                                                const Block& block);

}  // namespace shardscope::random
