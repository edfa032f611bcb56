// jax.random samplers built on random_bits (uniform, normal, randint, bernoulli) and XLA's erf_inv.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/half_float.h"
#include "random/threefry.h"

namespace shardscope::random {

// lax.erf_inv as XLA lowers chlo.erf_inv: Giles' single-precision polynomial (float16 and bfloat16
// are computed through it too) and the three-branch double-precision one. erf_inv(+-1) = +-inf.
[[nodiscard]] float erf_inv(float x, FloatContraction contraction = FloatContraction::kFused);
[[nodiscard]] double erf_inv(double x, FloatContraction contraction = FloatContraction::kFused);

// jax.random.uniform(key, shape, dtype, minval, maxval) for Float = float or double. float64 is what
// JAX gives only with jax_enable_x64; without it a float64 request is float32.
template <class Float>
[[nodiscard]] std::vector<Float> uniform(const Key& key, std::span<const int64_t> shape, Float minval = Float(0),
                                         Float maxval = Float(1), const RandomOptions& options = {});
// The same in bfloat16 / float16, as bit patterns; minval and maxval are first rounded to the dtype.
[[nodiscard]] std::vector<uint16_t> uniform_bf16(const Key& key, std::span<const int64_t> shape, double minval = 0.0,
                                                 double maxval = 1.0, const RandomOptions& options = {});
[[nodiscard]] std::vector<uint16_t> uniform_f16(const Key& key, std::span<const int64_t> shape, double minval = 0.0,
                                                double maxval = 1.0, const RandomOptions& options = {});

// jax.random.normal(key, shape, dtype): sqrt(2) * erf_inv(uniform(key, shape, dtype, nextafter(-1, 0), 1)).
template <class Float>
[[nodiscard]] std::vector<Float> normal(const Key& key, std::span<const int64_t> shape,
                                        const RandomOptions& options = {});
[[nodiscard]] std::vector<uint16_t> normal_bf16(const Key& key, std::span<const int64_t> shape,
                                                const RandomOptions& options = {});
[[nodiscard]] std::vector<uint16_t> normal_f16(const Key& key, std::span<const int64_t> shape,
                                               const RandomOptions& options = {});

// jax.random.randint(key, shape, minval, maxval, dtype) for Int = int8_t ... int64_t, uint8_t ... uint64_t.
// The bounds are taken as exact integers (as Python ints within int64 under jax_enable_x64) and
// clipped to the dtype as JAX does; maxval <= minval gives minval.
template <class Int>
[[nodiscard]] std::vector<Int> randint(const Key& key, std::span<const int64_t> shape, int64_t minval, int64_t maxval,
                                       const RandomOptions& options = {});

// jax.random.bernoulli's `mode`: "high" spends a second uniform draw on the low-order bits.
enum class BernoulliMode : uint8_t { kLow, kHigh };

// jax.random.bernoulli(key, p, shape, mode) with p of type Float (float32 for a Python float without
// x64); elements are 0 or 1.
template <class Float>
[[nodiscard]] std::vector<uint8_t> bernoulli(const Key& key, Float p, std::span<const int64_t> shape,
                                             BernoulliMode mode = BernoulliMode::kLow,
                                             const RandomOptions& options = {});

}  // namespace shardscope::random
