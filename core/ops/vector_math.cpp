// Cephes-style range reduction and minimax polynomials on GCC vector types, compiled for SSE2 and AVX2.
// Products in the reductions are exact (constants split with few mantissa bits), so no FMA is needed
// and both builds give the same results.
#include "ops/vector_math.h"

#include <cmath>
#include <cstring>
#include <type_traits>

// Every helper taking or returning a 32-byte vector is always_inline into an AVX2 entry point, so no such
// value crosses a real call; GCC warns about the ABI of the (never emitted) out-of-line versions.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace shardscope::vector_math {

template <typename T>
T scalar_logistic(T x) {
  return T{1} / (T{1} + std::exp(-x));
}
template float scalar_logistic<float>(float);
template double scalar_logistic<double>(double);

namespace {

using F4 [[gnu::vector_size(16)]] = float;
using F8 [[gnu::vector_size(32)]] = float;
using I4 [[gnu::vector_size(16)]] = int32_t;
using I8 [[gnu::vector_size(32)]] = int32_t;
using D2 [[gnu::vector_size(16)]] = double;
using D4 [[gnu::vector_size(32)]] = double;
using L2 [[gnu::vector_size(16)]] = int64_t;
using L4 [[gnu::vector_size(32)]] = int64_t;
using U4 [[gnu::vector_size(16)]] = uint32_t;
using U8 [[gnu::vector_size(32)]] = uint32_t;
using UL2 [[gnu::vector_size(16)]] = uint64_t;
using UL4 [[gnu::vector_size(32)]] = uint64_t;
using D8 [[gnu::vector_size(64)]] = double;  // two AVX registers: float lanes widened for reduction

template <typename T, int W>
struct Lanes;
template <>
struct Lanes<float, 4> {
  using V = F4;
  using I = I4;
  using U = U4;
  using Wide = D4;
};
template <>
struct Lanes<float, 8> {
  using V = F8;
  using I = I8;
  using U = U8;
  using Wide = D8;
};
template <>
struct Lanes<double, 2> {
  using V = D2;
  using I = L2;
  using U = UL2;
  using Wide = D2;
};
template <>
struct Lanes<double, 4> {
  using V = D4;
  using I = L4;
  using U = UL4;
  using Wide = D4;
};

// Per-precision constants: Cephes' splits of pi/2 and ln 2, and the polynomials.
template <typename T>
struct Consts;
template <>
struct Consts<float> {
  static constexpr float kTwoOverPi = 0.636619772367581343F;
  static constexpr float kTrigLimit = 1.0e5F;
  static constexpr float kRoundMagic = 12582912.0F;  // 1.5 * 2^23: adding it rounds to an integer
  static constexpr int kMantissaBits = 23;
  static constexpr int kExponentBias = 127;
  static constexpr float kLog2e = 1.44269504088896341F;
  static constexpr float kLn2Hi = 0.693359375F;
  static constexpr float kLn2Lo = -2.12194440e-4F;
  static constexpr float kExpLow = -87.0F;
  static constexpr float kExpHigh = 88.0F;
  static constexpr float kTanhClamp = 40.0F;  // exp(2 * 40) is finite and tanh(40) rounds to 1
  static constexpr float kSqrtHalf = 0.707106781186547524F;
  static constexpr float kMinNormal = 1.17549435e-38F;
  static constexpr float kMax = 3.40282347e+38F;
};
template <>
struct Consts<double> {
  static constexpr double kTwoOverPi = 0.63661977236758134308;
  static constexpr double kPio2[3] = {1.57079625129699707031, 7.54978941586159635335e-8, 5.39030285815811905290e-15};
  static constexpr double kTrigLimit = 1.0e6;                // reduction products exact up to here
  static constexpr double kRoundMagic = 6755399441055744.0;  // 1.5 * 2^52
  static constexpr int kMantissaBits = 52;
  static constexpr int kExponentBias = 1023;
  static constexpr double kLog2e = 1.4426950408889634074;
  static constexpr double kLn2Hi = 6.93145751953125E-1;
  static constexpr double kLn2Lo = 1.42860682030941723212E-6;
  static constexpr double kExpLow = -708.0;
  static constexpr double kExpHigh = 709.0;
  static constexpr double kTanhClamp = 350.0;
  static constexpr double kSqrtHalf = 0.70710678118654752440;
  static constexpr double kMinNormal = 2.2250738585072014e-308;
  static constexpr double kMax = 1.7976931348623157e308;
};

// Reinterprets a vector's bits (memcpy compiles to nothing; UBSan mis-instruments bit_cast of vectors).
template <typename To, typename From>
[[gnu::always_inline]] inline To bits_as(const From& from) {
  static_assert(sizeof(To) == sizeof(From));
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
}

template <typename T, int W>
struct Simd {
  using V = typename Lanes<T, W>::V;
  using I = typename Lanes<T, W>::I;
  using U = typename Lanes<T, W>::U;
  using Int = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  using C = Consts<T>;

  [[gnu::always_inline]] static V splat(T value) { return V{} + value; }
  [[gnu::always_inline]] static bool all(I mask) {
    bool ok = true;
    for (int i = 0; i < W; ++i) ok = ok && mask[i] != 0;
    return ok;
  }
  [[gnu::always_inline]] static V select(I mask, V yes, V no) {
    return bits_as<V>((mask & bits_as<I>(yes)) | (~mask & bits_as<I>(no)));
  }
  // Rounds to the nearest integer: the sum's low mantissa bits hold it in two's complement.
  [[gnu::always_inline]] static V round_magic(V x, I& bits) {
    const V shifted = x + splat(C::kRoundMagic);
    bits = bits_as<I>(shifted);
    return shifted - splat(C::kRoundMagic);
  }
  // 2^n for integer-valued n given by the magic-rounded bits (n inside the normal exponent range).
  [[gnu::always_inline]] static V pow2(I bits) {
    // Unsigned: the shift discards the magic constant's high bits by design.
    return bits_as<V>((bits_as<U>(bits) + C::kExponentBias) << C::kMantissaBits);
  }

  [[gnu::always_inline]] static V sin_poly(V r, V z) {
    if constexpr (sizeof(T) == 4) {
      const V p = ((splat(-1.9515295891E-4F) * z + splat(8.3321608736E-3F)) * z + splat(-1.6666654611E-1F));
      return p * z * r + r;
    } else {
      V p = splat(1.58962301576546568060E-10);
      p = p * z + splat(-2.50507477628578072866E-8);
      p = p * z + splat(2.75573136213857245213E-6);
      p = p * z + splat(-1.98412698295895385996E-4);
      p = p * z + splat(8.33333333332211858878E-3);
      p = p * z + splat(-1.66666666666666307295E-1);
      return r + r * z * p;
    }
  }
  [[gnu::always_inline]] static V cos_poly(V z) {
    if constexpr (sizeof(T) == 4) {
      const V p =
          ((splat(2.443315711809948E-5F) * z + splat(-1.388731625493765E-3F)) * z + splat(4.166664568298827E-2F));
      return p * z * z - splat(0.5F) * z + splat(1.0F);
    } else {
      V p = splat(-1.13585365213876817300E-11);
      p = p * z + splat(2.08757008419747316778E-9);
      p = p * z + splat(-2.75573141792967388112E-7);
      p = p * z + splat(2.48015872888517045348E-5);
      p = p * z + splat(-1.38888888888730564116E-3);
      p = p * z + splat(4.16666666666665929218E-2);
      return splat(1.0) - splat(0.5) * z + z * z * p;
    }
  }
  // sin(x) for quadrant_shift 0, cos(x) for 1: reduce to r in [-pi/4, pi/4] and quadrant q.
  [[gnu::always_inline]] static bool sincos(V x, V& y, int quadrant_shift) {
    const V magnitude = select(x < 0, -x, x);
    if (!all(magnitude <= splat(C::kTrigLimit))) return false;  // also catches NaN
    I bits;
    const V q = round_magic(x * splat(C::kTwoOverPi), bits);
    // float arguments are reduced in double: float splits of pi/2 leave tens of ulp near its multiples.
    using Wide = typename Lanes<T, W>::Wide;
    using DC = Consts<double>;
    const Wide wide_x = __builtin_convertvector(x, Wide);
    const Wide wide_q = __builtin_convertvector(q, Wide);
    const Wide reduced = ((wide_x - wide_q * DC::kPio2[0]) - wide_q * DC::kPio2[1]) - wide_q * DC::kPio2[2];
    const V r = __builtin_convertvector(reduced, V);
    const V z = r * r;
    const I quadrant = bits + quadrant_shift;
    const V value = select((quadrant & 1) != 0, cos_poly(z), sin_poly(r, z));
    const V result = select((quadrant & 2) != 0, -value, value);
    y = quadrant_shift == 0 ? select(x == 0, x, result) : result;  // the polynomials make sin(-0) +0
    return true;
  }

  [[gnu::always_inline]] static V exp_in_range(V x) {
    I bits;
    const V n = round_magic(x * splat(C::kLog2e), bits);
    const V r = (x - n * splat(C::kLn2Hi)) - n * splat(C::kLn2Lo);
    V e;
    if constexpr (sizeof(T) == 4) {
      V p = splat(1.9875691500E-4F);
      p = p * r + splat(1.3981999507E-3F);
      p = p * r + splat(8.3334519073E-3F);
      p = p * r + splat(4.1665795894E-2F);
      p = p * r + splat(1.6666665459E-1F);
      p = p * r + splat(5.0000001201E-1F);
      e = p * r * r + r + splat(1.0F);
    } else {
      const V rr = r * r;
      const V px = r * ((splat(1.26177193074810590878E-4) * rr + splat(3.02994407707441961300E-2)) * rr +
                        splat(9.99999999999999999910E-1));
      const V qx = ((splat(3.00198505138664455042E-6) * rr + splat(2.52448340349684104192E-3)) * rr +
                    splat(2.27265548208155028766E-1)) *
                       rr +
                   splat(2.00000000000000000009E0);
      e = splat(1.0) + splat(2.0) * (px / (qx - px));
    }
    return e * pow2(bits);
  }
  [[gnu::always_inline]] static bool exp(V x, V& y) {
    if (!all((x >= splat(C::kExpLow)) & (x <= splat(C::kExpHigh)))) return false;
    y = exp_in_range(x);
    return true;
  }

  [[gnu::always_inline]] static bool log(V x, V& y) {
    if (!all((x >= splat(C::kMinNormal)) & (x <= splat(C::kMax)))) return false;
    const I bits = bits_as<I>(x);
    constexpr int kShift = C::kMantissaBits;
    const I mantissa_mask = I{} + ((Int{1} << kShift) - 1);
    // m in [0.5, 1): the mantissa with the exponent of 0.5; e the matching power of two.
    const V m = bits_as<V>((bits & mantissa_mask) | bits_as<I>(splat(T{0.5})));
    V e;
    if constexpr (sizeof(T) == 4) {
      e = __builtin_convertvector((bits >> kShift) - (C::kExponentBias - 1), V);
    } else {
      // Exponent field to double without a 64-bit integer conversion: OR it under 2^52 and subtract.
      const V field = bits_as<V>((bits >> kShift) | bits_as<I>(splat(4503599627370496.0)));
      e = field - splat(4503599627370496.0 + (C::kExponentBias - 1));
    }
    const I small = m < splat(C::kSqrtHalf);
    e = select(small, e - splat(T{1}), e);
    const V f = select(small, m + m - splat(T{1}), m - splat(T{1}));
    const V z = f * f;
    V t;
    if constexpr (sizeof(T) == 4) {
      V p = splat(7.0376836292E-2F);
      p = p * f + splat(-1.1514610310E-1F);
      p = p * f + splat(1.1676998740E-1F);
      p = p * f + splat(-1.2420140846E-1F);
      p = p * f + splat(1.4249322787E-1F);
      p = p * f + splat(-1.6668057665E-1F);
      p = p * f + splat(2.0000714765E-1F);
      p = p * f + splat(-2.4999993993E-1F);
      p = p * f + splat(3.3333331174E-1F);
      t = p * f * z;
    } else {
      V p = splat(1.01875663804580931796E-4);
      p = p * f + splat(4.97494994976747001425E-1);
      p = p * f + splat(4.70579119878881725854E0);
      p = p * f + splat(1.44989225341610930846E1);
      p = p * f + splat(1.79368678507819816313E1);
      p = p * f + splat(7.70838733755885391666E0);
      V q = f + splat(1.12873587189167450590E1);
      q = q * f + splat(4.52279145837532221105E1);
      q = q * f + splat(8.29875266912776603211E1);
      q = q * f + splat(7.11544750618563894466E1);
      q = q * f + splat(2.31251620126765340583E1);
      t = f * (z * p / q);
    }
    t = t - e * splat(T(2.121944400546905827679e-4));
    t = t - splat(T{0.5}) * z;
    y = (f + t) + e * splat(T(0.693359375));
    return true;
  }

  [[gnu::always_inline]] static bool tanh(V x, V& y) {
    if (!all(x == x)) return false;
    const V magnitude = select(x < 0, -x, x);
    const V z = x * x;
    V small;
    if constexpr (sizeof(T) == 4) {
      V p = splat(-5.70498872745E-3F);
      p = p * z + splat(2.06390887954E-2F);
      p = p * z + splat(-5.37397155531E-2F);
      p = p * z + splat(1.33314422036E-1F);
      p = p * z + splat(-3.33332819422E-1F);
      small = p * z * x + x;
    } else {
      const V p = (splat(-9.64399179425052238628E-1) * z + splat(-9.92877231001918586564E1)) * z +
                  splat(-1.61468768441708447952E3);
      const V q = ((z + splat(1.12811678491632931402E2)) * z + splat(2.23548839060100448583E3)) * z +
                  splat(4.84406305325125486048E3);
      small = x + x * z * (p / q);
    }
    const V clamped = select(magnitude < splat(C::kTanhClamp), magnitude, splat(C::kTanhClamp));
    const V large = splat(T{1}) - splat(T{2}) / (exp_in_range(clamped + clamped) + splat(T{1}));
    const V signed_large = select(x < 0, -large, large);
    y = select(magnitude < splat(T(0.625)), select(x == 0, x, small), signed_large);
    return true;
  }

  [[gnu::always_inline]] static bool logistic(V x, V& y) {
    V e;
    if (!exp(-x, e)) return false;
    y = splat(T{1}) / (splat(T{1}) + e);
    return true;
  }
};

template <typename T>
T scalar(Function function, T x) {
  switch (function) {
    case Function::kSin: return std::sin(x);
    case Function::kCos: return std::cos(x);
    case Function::kExp: return std::exp(x);
    case Function::kLog: return std::log(x);
    case Function::kTanh: return std::tanh(x);
    case Function::kLogistic: return scalar_logistic(x);
  }
  return x;
}

template <typename T, int W, Function F>
[[gnu::always_inline]] inline bool compute(typename Lanes<T, W>::V x, typename Lanes<T, W>::V& y) {
  using S = Simd<T, W>;
  if constexpr (F == Function::kSin) return S::sincos(x, y, 0);
  if constexpr (F == Function::kCos) return S::sincos(x, y, 1);
  if constexpr (F == Function::kExp) return S::exp(x, y);
  if constexpr (F == Function::kLog) return S::log(x, y);
  if constexpr (F == Function::kTanh) return S::tanh(x, y);
  if constexpr (F == Function::kLogistic) return S::logistic(x, y);
  return false;
}

template <typename T, int W, Function F>
[[gnu::always_inline]] inline void run(const T* in, T* out, int64_t n) {
  using V = typename Lanes<T, W>::V;
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    V x;
    V y;
    std::memcpy(&x, in + i, sizeof(V));
    if (compute<T, W, F>(x, y)) {
      std::memcpy(out + i, &y, sizeof(V));
    } else {
      for (int k = 0; k < W; ++k) out[i + k] = scalar(F, in[i + k]);
    }
  }
  if (i == n) return;
  // The tail: pad with 1 (inside every function's fast range) and keep only the real lanes.
  const auto rest = static_cast<std::size_t>(n - i);
  V x = V{} + T{1};
  V y;
  std::memcpy(&x, in + i, rest * sizeof(T));
  if (compute<T, W, F>(x, y)) {
    std::memcpy(out + i, &y, rest * sizeof(T));
  } else {
    for (int64_t k = i; k < n; ++k) out[k] = scalar(F, in[k]);
  }
}

template <typename T, int W>
[[gnu::always_inline]] inline void dispatch(Function function, const T* in, T* out, int64_t n) {
  switch (function) {
    case Function::kSin: run<T, W, Function::kSin>(in, out, n); return;
    case Function::kCos: run<T, W, Function::kCos>(in, out, n); return;
    case Function::kExp: run<T, W, Function::kExp>(in, out, n); return;
    case Function::kLog: run<T, W, Function::kLog>(in, out, n); return;
    case Function::kTanh: run<T, W, Function::kTanh>(in, out, n); return;
    case Function::kLogistic: run<T, W, Function::kLogistic>(in, out, n); return;
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) void apply_avx2(Function function, const float* in, float* out, int64_t n) {
  dispatch<float, 8>(function, in, out, n);
}
__attribute__((target("avx2"))) void apply_avx2(Function function, const double* in, double* out, int64_t n) {
  dispatch<double, 4>(function, in, out, n);
}
bool has_avx2() {
  static const bool supported = __builtin_cpu_supports("avx2") != 0;
  return supported;
}
#endif

}  // namespace

void apply_portable(Function function, const float* in, float* out, int64_t n) {
  dispatch<float, 4>(function, in, out, n);
}
void apply_portable(Function function, const double* in, double* out, int64_t n) {
  dispatch<double, 2>(function, in, out, n);
}

void apply(Function function, const float* in, float* out, int64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (has_avx2()) {
    apply_avx2(function, in, out, n);
    return;
  }
#endif
  apply_portable(function, in, out, n);
}

void apply(Function function, const double* in, double* out, int64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (has_avx2()) {
    apply_avx2(function, in, out, n);
    return;
  }
#endif
  apply_portable(function, in, out, n);
}

}  // namespace shardscope::vector_math
