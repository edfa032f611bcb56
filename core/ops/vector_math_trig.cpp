// float32 sin and cos evaluated in double precision and rounded once, on GCC vector types (portable, AVX2, AVX-512).
// This file is built with -ffp-contract=off and fuses multiply-adds only where it says so, so every build
// performs the same roundings: a result depends on its argument only, never on the instruction set, its lane
// or where a chunk starts.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "ops/vector_math.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

// Helpers taking wide vectors are always_inline into their entry points; GCC warns about the ABI of the
// out-of-line copies it never emits.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace shardscope::vector_math {
namespace {

using F4 [[gnu::vector_size(16)]] = float;
using F8 [[gnu::vector_size(32)]] = float;
using D4 [[gnu::vector_size(32)]] = double;
using D8 [[gnu::vector_size(64)]] = double;
using L4 [[gnu::vector_size(32)]] = int64_t;
using L8 [[gnu::vector_size(64)]] = int64_t;
using I4 [[gnu::vector_size(16)]] = int32_t;
using I8 [[gnu::vector_size(32)]] = int32_t;

template <int W>
struct Types;
template <>
struct Types<4> {
  using Float = F4;
  using Double = D4;
  using Mask = L4;
  using FloatMask = I4;
};
template <>
struct Types<8> {
  using Float = F8;
  using Double = D8;
  using Mask = L8;
  using FloatMask = I8;
};

// Arguments of at most this magnitude lie inside [-pi/4, pi/4]: their quadrant is 0 and their reduced argument
// is the argument itself, exactly.
constexpr double kInsideFirstQuadrant = 0.78;
// Arguments up to here keep the quadrant count below 2^16, so q * kPio2[0] and q * kPio2[1] are exact.
constexpr float kFastLimit = 1.0e5F;
constexpr double kTwoOverPi = 0.6366197723675814;
constexpr double kRoundMagic = 6755399441055744.0;  // 1.5 * 2^52: adding it rounds to an integer
// pi/2 = kPio2[0] + kPio2[1] + kPio2[2] to about 2^-129; the first two have 36 significant bits.
constexpr double kPio2[3] = {1.5707963267923333, 2.5633441515839558e-12, 1.0562999066987428e-23};
// Taylor coefficients 1/k! with alternating signs: on [-pi/4, pi/4] the omitted terms stay below 2^-60.
constexpr double kSin[8] = {-0.16666666666666666,   0.008333333333333333,   -0.0001984126984126984,
                            2.7557319223985893e-06, -2.505210838544172e-08, 1.6059043836821613e-10,
                            -7.647163731819816e-13, 2.8114572543455206e-15};
constexpr double kCos[8] = {0.041666666666666664,   -0.001388888888888889,  2.48015873015873e-05,
                            -2.755731922398589e-07, 2.08767569878681e-09,   -1.1470745597729725e-11,
                            4.779477332387385e-14,  -1.5619206968586225e-16};

template <typename To, typename From>
[[gnu::always_inline]] inline To bits_as(const From& from) {
  static_assert(sizeof(To) == sizeof(From));
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
}

enum class Isa : uint8_t { kPortable, kAvx2, kAvx512 };

// a * b + c rounded once. Every build uses a fused multiply-add here and nowhere else (the file is compiled
// without contraction), so all builds round alike; the portable one takes std::fma per lane.
template <Isa S, int W>
[[gnu::always_inline]] inline typename Types<W>::Double fma(typename Types<W>::Double a, typename Types<W>::Double b,
                                                            typename Types<W>::Double c) {
  using D = typename Types<W>::Double;
  D result;
  for (int k = 0; k < W; ++k) result[k] = __builtin_fma(a[k], b[k], c[k]);
  return result;
}

template <int W>
[[gnu::always_inline]] inline typename Types<W>::Double splat(double value) {
  return typename Types<W>::Double{} + value;
}

// Bit k set when lane k of a comparison mask is set. It decides which code a vector runs, never what a lane
// computes. The AVX-512 specialisation reads it in one instruction instead of a horizontal reduction; it is a
// target function that only the flattened AVX-512 entry point inlines, so the mask goes by reference (no
// vector argument crosses a calling convention when it is not inlined).
template <Isa S, int W>
inline unsigned lane_bits(const typename Types<W>::Mask& mask) {
  using M = typename Types<W>::Mask;
  M bits;
  if constexpr (W == 8) {
    bits = mask & M{1, 2, 4, 8, 16, 32, 64, 128};
    bits |= __builtin_shufflevector(bits, bits, 4, 5, 6, 7, 4, 5, 6, 7);
    bits |= __builtin_shufflevector(bits, bits, 2, 3, 2, 3, 2, 3, 2, 3);
    bits |= __builtin_shufflevector(bits, bits, 1, 1, 1, 1, 1, 1, 1, 1);
  } else {
    bits = mask & M{1, 2, 4, 8};
    bits |= __builtin_shufflevector(bits, bits, 2, 3, 2, 3);
    bits |= __builtin_shufflevector(bits, bits, 1, 1, 1, 1);
  }
  return static_cast<unsigned>(bits[0]);
}

#if defined(__x86_64__) && defined(__GNUC__)
template <>
[[gnu::target("avx512f")]] inline unsigned lane_bits<Isa::kAvx512, 8>(const L8& mask) {
  __m512i lanes;
  std::memcpy(&lanes, &mask, sizeof(lanes));
  return _mm512_test_epi64_mask(lanes, lanes);
}
#endif

// The lanes of x outside [-kFastLimit, kFastLimit] or NaN (which fails both comparisons), as bits.
template <Isa S, int W>
[[gnu::always_inline]] inline unsigned slow_lanes(typename Types<W>::Float x) {
  using I = typename Types<W>::FloatMask;
  const I slow = ~(x <= kFastLimit) | ~(x >= -kFastLimit);
  uint64_t words[sizeof(I) / sizeof(uint64_t)];
  std::memcpy(words, &slow, sizeof(I));
  uint64_t any = 0;
  for (const uint64_t word : words) any |= word;
  if (any == 0) [[likely]]
    return 0;
  unsigned bits = 0;
  for (int k = 0; k < W; ++k) bits |= static_cast<unsigned>(slow[k] != 0) << k;
  return bits;
}

// The degree-7 polynomial in z with coefficients k[0..7], by Estrin's scheme: a short dependency chain, so
// several vectors are in flight at once.
template <Isa S, int W>
[[gnu::always_inline]] inline typename Types<W>::Double estrin(const double* k, typename Types<W>::Double z,
                                                               typename Types<W>::Double z2,
                                                               typename Types<W>::Double z4) {
  using D = typename Types<W>::Double;
  const D low =
      fma<S, W>(fma<S, W>(splat<W>(k[3]), z, splat<W>(k[2])), z2, fma<S, W>(splat<W>(k[1]), z, splat<W>(k[0])));
  const D high =
      fma<S, W>(fma<S, W>(splat<W>(k[7]), z, splat<W>(k[6])), z2, fma<S, W>(splat<W>(k[5]), z, splat<W>(k[4])));
  return fma<S, W>(high, z4, low);
}

// sin(r) for |r| <= pi/4 from r, z = r^2, z^2 and z^4. (Helpers, not lambdas: a lambda is not inlined into
// the AVX-512 entry point and would take its wide vectors through a mismatched calling convention.)
template <Isa S, int W>
[[gnu::always_inline]] inline typename Types<W>::Double sine_series(typename Types<W>::Double r,
                                                                    typename Types<W>::Double z,
                                                                    typename Types<W>::Double z2,
                                                                    typename Types<W>::Double z4) {
  using D = typename Types<W>::Double;
  using M = typename Types<W>::Mask;
  const D series = fma<S, W>(r * z, estrin<S, W>(kSin, z, z2, z4), r);
  const M zero = r == 0;  // sin(-0) is -0, which the sum above makes +0
  return bits_as<D>((zero & bits_as<M>(r)) | (~zero & bits_as<M>(series)));
}

// cos(r) for |r| <= pi/4 from z = r^2, z^2 and z^4.
template <Isa S, int W>
[[gnu::always_inline]] inline typename Types<W>::Double cosine_series(typename Types<W>::Double z,
                                                                      typename Types<W>::Double z2,
                                                                      typename Types<W>::Double z4) {
  return fma<S, W>(z2, estrin<S, W>(kCos, z, z2, z4), fma<S, W>(splat<W>(-0.5), z, splat<W>(1.0)));
}

// sin (shift 0) or cos (shift 1) of every lane, in double; lanes beyond kFastLimit hold garbage.
template <Isa S, int W>
[[gnu::always_inline]] inline typename Types<W>::Double sincos_wide(typename Types<W>::Double x, int shift) {
  using D = typename Types<W>::Double;
  using M = typename Types<W>::Mask;
  // Vectors of arguments inside the first quadrant skip the reduction, which would return them unchanged
  // (q = 0, r = x exactly): same bits, less work for inputs near zero. The magnitude test compares bit
  // patterns (positive doubles order like their bits; NaN is never inside).
  const M magnitude = bits_as<M>(x) & std::numeric_limits<int64_t>::max();
  if (lane_bits<S, W>(magnitude <= bits_as<int64_t>(kInsideFirstQuadrant)) == (1U << W) - 1) {
    const D z = x * x;
    const D z2 = z * z;
    const D z4 = z2 * z2;
    return shift == 0 ? sine_series<S, W>(x, z, z2, z4) : cosine_series<S, W>(z, z2, z4);
  }
  const D shifted = x * kTwoOverPi + kRoundMagic;
  const M quadrant = bits_as<M>(shifted) + shift;  // the sum's low mantissa bits hold q
  const D q = shifted - kRoundMagic;
  // The first product and difference are exact; the next two round once each, relative to the small r.
  const D r = fma<S, W>(-q, splat<W>(kPio2[2]), fma<S, W>(-q, splat<W>(kPio2[1]), x - q * kPio2[0]));
  const D z = r * r;
  const D z2 = z * z;
  const D z4 = z2 * z2;
  const M odd = (quadrant & 1) != 0;
  // Smooth inputs put whole vectors in one quadrant parity: then only the polynomial they need is evaluated.
  // Each lane's arithmetic is the same either way, so the result does not depend on its neighbours.
  const unsigned odd_lanes = lane_bits<S, W>(odd);
  D value;
  if (odd_lanes == 0) {
    value = sine_series<S, W>(r, z, z2, z4);
  } else if (odd_lanes == (1U << W) - 1) {
    value = cosine_series<S, W>(z, z2, z4);
  } else {
    value = bits_as<D>((odd & bits_as<M>(cosine_series<S, W>(z, z2, z4))) |
                       (~odd & bits_as<M>(sine_series<S, W>(r, z, z2, z4))));
  }
  const M negative = (quadrant & 2) != 0;
  return bits_as<D>(bits_as<M>(value) ^ (negative & (M{} + std::numeric_limits<int64_t>::min())));
}

// Lanes beyond the fast range (huge, infinite or NaN arguments) take <cmath> in double, rounded once as well.
[[gnu::noinline, gnu::cold]] void fix_slow_lanes(Function function, const float* in, float* out, unsigned lanes) {
  for (std::size_t k = 0; lanes != 0; ++k, lanes >>= 1U) {
    if ((lanes & 1U) == 0) continue;
    const double wide = static_cast<double>(in[k]);
    out[k] = static_cast<float>(function == Function::kSin ? std::sin(wide) : std::cos(wide));
  }
}

// Rounds one vector of W floats from `in` into `out` (which may be `in`).
template <Isa S, int W>
[[gnu::always_inline]] inline void rounded_vector(Function function, const float* in, float* out) {
  using F = typename Types<W>::Float;
  using D = typename Types<W>::Double;
  F x;
  std::memcpy(&x, in, sizeof(F));
  const F y =
      __builtin_convertvector(sincos_wide<S, W>(__builtin_convertvector(x, D), function == Function::kSin ? 0 : 1), F);
  const unsigned slow = slow_lanes<S, W>(x);
  if (slow != 0) [[unlikely]] {
    float arguments[static_cast<std::size_t>(W)];  // kept apart: `out` may be `in`
    std::memcpy(arguments, &x, sizeof(F));
    std::memcpy(out, &y, sizeof(F));
    fix_slow_lanes(function, arguments, out, slow);
    return;
  }
  std::memcpy(out, &y, sizeof(F));
}

template <Isa S, int W>
[[gnu::always_inline]] inline void run(Function function, const float* in, float* out, int64_t n) {
  int64_t i = 0;
  // Two vectors per step, so that their independent dependency chains overlap.
  for (; i + 2 * W <= n; i += 2 * W) {
    rounded_vector<S, W>(function, in + i, out + i);
    rounded_vector<S, W>(function, in + i + W, out + i + W);
  }
  for (; i + W <= n; i += W) rounded_vector<S, W>(function, in + i, out + i);
  if (i == n) return;
  // The tail goes through a vector padded with zeros and is computed like any other.
  const auto rest = static_cast<std::size_t>(n - i);
  float padded_in[static_cast<std::size_t>(W)] = {};
  float padded_out[static_cast<std::size_t>(W)];
  std::memcpy(padded_in, in + i, rest * sizeof(float));
  rounded_vector<S, W>(function, padded_in, padded_out);
  std::memcpy(out + i, padded_out, rest * sizeof(float));
}

#if defined(__x86_64__) && defined(__GNUC__)
// Flattened so that lane_bits<kAvx512> (a target function) is inlined through the templates.
__attribute__((target("avx512f"), flatten)) void rounded_avx512(Function function, const float* in, float* out,
                                                                int64_t n) {
  run<Isa::kAvx512, 8>(function, in, out, n);
}
__attribute__((target("avx2,fma"))) void rounded_avx2(Function function, const float* in, float* out, int64_t n) {
  run<Isa::kAvx2, 8>(function, in, out, n);
}
#endif

}  // namespace

void apply_rounded_portable(Function function, const float* in, float* out, int64_t n) {
  run<Isa::kPortable, 4>(function, in, out, n);
}

bool apply_rounded_avx2(Function function, const float* in, float* out, int64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("fma") != 0) {
    rounded_avx2(function, in, out, n);
    return true;
  }
#endif
  (void)function;
  (void)in;
  (void)out;
  (void)n;
  return false;
}

void apply_rounded(Function function, const float* in, float* out, int64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool avx512 = __builtin_cpu_supports("avx512f") != 0;
  static const bool avx2 = __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("fma") != 0;
  if (avx512) {
    rounded_avx512(function, in, out, n);
    return;
  }
  if (avx2) {
    rounded_avx2(function, in, out, n);
    return;
  }
#endif
  apply_rounded_portable(function, in, out, n);
}

}  // namespace shardscope::vector_math
