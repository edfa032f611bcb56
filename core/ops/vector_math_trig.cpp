// float32 sin and cos evaluated in double precision and rounded once, on GCC vector types (portable, AVX2, AVX-512).
// This file is built with -ffp-contract=off and fuses multiply-adds only where it says so, so every build
// performs the same roundings: a result depends on its argument only, never on the instruction set, its lane
// or where a chunk starts.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "ops/vector_math.h"

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

template <int W>
struct Types;
template <>
struct Types<4> {
  using Float = F4;
  using Double = D4;
  using Mask = L4;
};
template <>
struct Types<8> {
  using Float = F8;
  using Double = D8;
  using Mask = L8;
};

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
  uint64_t lanes[static_cast<std::size_t>(W)];
  std::memcpy(lanes, &odd, sizeof(lanes));
  uint64_t any_odd = 0;
  uint64_t all_odd = ~uint64_t{0};
  for (const uint64_t lane : lanes) {
    any_odd |= lane;
    all_odd &= lane;
  }
  D value;
  if (any_odd == 0) {
    value = sine_series<S, W>(r, z, z2, z4);
  } else if (all_odd != 0) {
    value = cosine_series<S, W>(z, z2, z4);
  } else {
    value = bits_as<D>((odd & bits_as<M>(cosine_series<S, W>(z, z2, z4))) |
                       (~odd & bits_as<M>(sine_series<S, W>(r, z, z2, z4))));
  }
  const M negative = (quadrant & 2) != 0;
  return bits_as<D>(bits_as<M>(value) ^ (negative & (M{} + std::numeric_limits<int64_t>::min())));
}

float slow_path(Function function, float x) {
  const double wide = static_cast<double>(x);
  return static_cast<float>(function == Function::kSin ? std::sin(wide) : std::cos(wide));
}

template <Isa S, int W>
[[gnu::always_inline]] inline typename Types<W>::Float rounded_lanes(Function function, typename Types<W>::Float x) {
  using F = typename Types<W>::Float;
  using D = typename Types<W>::Double;
  const D wide = __builtin_convertvector(x, D);
  F y = __builtin_convertvector(sincos_wide<S, W>(wide, function == Function::kSin ? 0 : 1), F);
  using I = decltype(x < x);
  const I slow = ~(x <= kFastLimit) | ~(x >= -kFastLimit);  // NaN fails both comparisons
  uint64_t words[sizeof(I) / sizeof(uint64_t)];
  std::memcpy(words, &slow, sizeof(I));
  uint64_t any = 0;
  for (const uint64_t word : words) any |= word;
  if (any == 0) return y;
  for (int k = 0; k < W; ++k) {
    // Written so that NaN fails the test too; those lanes take <cmath> (in double, rounded once as well).
    if (!(std::fabs(x[k]) <= kFastLimit)) y[k] = slow_path(function, x[k]);
  }
  return y;
}

template <Isa S, int W>
[[gnu::always_inline]] inline void run(Function function, const float* in, float* out, int64_t n) {
  using F = typename Types<W>::Float;
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    F x;
    std::memcpy(&x, in + i, sizeof(F));
    const F y = rounded_lanes<S, W>(function, x);
    std::memcpy(out + i, &y, sizeof(F));
  }
  if (i == n) return;
  const auto rest = static_cast<std::size_t>(n - i);
  F x = F{};
  std::memcpy(&x, in + i, rest * sizeof(float));
  const F y = rounded_lanes<S, W>(function, x);
  std::memcpy(out + i, &y, rest * sizeof(float));
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f"))) void rounded_avx512(Function function, const float* in, float* out, int64_t n) {
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
