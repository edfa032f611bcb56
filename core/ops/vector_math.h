// Vectorised float32/float64 transcendental functions for the elementwise kernels (a few ulp of <cmath>).
#pragma once

#include <cstdint>

namespace shardscope::vector_math {

enum class Function : uint8_t { kSin, kCos, kExp, kLog, kTanh, kLogistic };

// out[i] = f(in[i]) for i < n (in == out is allowed). Inputs outside a function's fast range (huge
// arguments, NaN, infinities, denormal results) take <cmath> for their whole vector, so special
// values come out as <cmath> gives them. The SIMD width is picked at run time (AVX2 when present).
void apply(Function function, const float* in, float* out, int64_t n);
void apply(Function function, const double* in, double* out, int64_t n);

// The portable build (4 floats / 2 doubles per vector) regardless of the CPU: for tests.
void apply_portable(Function function, const float* in, float* out, int64_t n);
void apply_portable(Function function, const double* in, double* out, int64_t n);

// float32 sin or cos (kSin / kCos only) evaluated in double and rounded once to float: the correctly rounded
// value except for arguments whose value lies within about 2^-50 of a rounding boundary. Every element's
// result depends only on its argument (same on every instruction set, in any chunk, in place or not).
void apply_rounded(Function function, const float* in, float* out, int64_t n);
void apply_rounded_portable(Function function, const float* in, float* out, int64_t n);
// The AVX2+FMA build whatever else the CPU has, for tests comparing builds; false (nothing written) where the
// CPU lacks AVX2 or FMA.
bool apply_rounded_avx2(Function function, const float* in, float* out, int64_t n);

// logistic as the scalar kernels define it: 1 / (1 + exp(-x)).
template <typename T>
[[nodiscard]] T scalar_logistic(T x);

}  // namespace shardscope::vector_math
