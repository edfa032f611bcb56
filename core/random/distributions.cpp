// Samplers that turn threefry bits into floats, integers and booleans exactly as jax.random does.
#include "random/distributions.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace shardscope::random {
namespace {

// Per-dtype facts for the float samplers. `Calc` is the type arithmetic is done in and `round`
// brings a Calc value back to the dtype after each operation, as XLA's 16-bit elementwise ops do
// (compute in float32, convert back); the conversions between them keep those ops unfused.
struct F32 {
  using Calc = float;
  using Out = float;
  using Bits = uint32_t;
  using RngBits = uint32_t;
  static constexpr int kRngBits = 32;
  static constexpr int kMant = 23;
  static constexpr Bits kOne = 0x3F800000u;
  static constexpr bool kNative = true;
  static Calc round(Calc v) { return v; }
  static Calc from_bits(Bits b) { return std::bit_cast<float>(b); }
  static Calc from_double(double v) { return static_cast<float>(v); }
  static Out store(Calc v) { return v; }
};

struct F64 {
  using Calc = double;
  using Out = double;
  using Bits = uint64_t;
  using RngBits = uint64_t;
  static constexpr int kRngBits = 64;
  static constexpr int kMant = 52;
  static constexpr Bits kOne = 0x3FF0000000000000u;
  static constexpr bool kNative = true;
  static Calc round(Calc v) { return v; }
  static Calc from_bits(Bits b) { return std::bit_cast<double>(b); }
  static Calc from_double(double v) { return v; }
  static Out store(Calc v) { return v; }
};

// bfloat16 has 7 mantissa bits, so JAX draws 8 random bits per element rather than 16.
struct BF16 {
  using Calc = float;
  using Out = uint16_t;
  using Bits = uint16_t;
  using RngBits = uint8_t;
  static constexpr int kRngBits = 8;
  static constexpr int kMant = 7;
  static constexpr Bits kOne = 0x3F80u;
  static constexpr bool kNative = false;
  static Calc round(Calc v) { return bf16_to_float(float_to_bf16(v)); }
  static Calc from_bits(Bits b) { return bf16_to_float(b); }
  static Calc from_double(double v) { return bf16_to_float(double_to_bf16(v)); }
  static Out store(Calc v) { return float_to_bf16(v); }
};

struct F16 {
  using Calc = float;
  using Out = uint16_t;
  using Bits = uint16_t;
  using RngBits = uint16_t;
  static constexpr int kRngBits = 16;
  static constexpr int kMant = 10;
  static constexpr Bits kOne = 0x3C00u;
  static constexpr bool kNative = false;
  static Calc round(Calc v) { return f16_to_float(float_to_f16(v)); }
  static Calc from_bits(Bits b) { return f16_to_float(b); }
  static Calc from_double(double v) { return f16_to_float(double_to_f16(v)); }
  static Out store(Calc v) { return float_to_f16(v); }
};

template <class F>
std::vector<typename F::Out> store_all(std::vector<typename F::Calc>&& values) {
  if constexpr (std::is_same_v<typename F::Calc, typename F::Out>) {
    return std::move(values);
  } else {
    std::vector<typename F::Out> out(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) out[i] = F::store(values[i]);
    return out;
  }
}

// _uniform: the top mantissa bits under the exponent of 1.0 give f in [1, 2); then f - 1 is scaled.
// Products and sums are separate statements so that the host compiler never contracts them on its
// own; std::fma is used exactly where XLA is assumed to fuse.
template <class F>
std::vector<typename F::Calc> uniform_values(const Key& key, std::span<const int64_t> shape, typename F::Calc minval,
                                             typename F::Calc maxval, const RandomOptions& options) {
  using Calc = typename F::Calc;
  using Bits = typename F::Bits;
  const Calc span = F::round(maxval - minval);
  const std::vector<typename F::RngBits> bits = random_bits<typename F::RngBits>(key, shape, options);
  std::vector<Calc> out(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) {
    const Bits mantissa = static_cast<Bits>(static_cast<Bits>(bits[i]) >> (F::kRngBits - F::kMant));
    const Calc unit = F::round(F::from_bits(static_cast<Bits>(mantissa | F::kOne)) - Calc(1));
    Calc value;
    if (F::kNative && options.contraction == FloatContraction::kFused) {
      value = std::fma(unit, span, minval);
    } else {
      const Calc scaled = F::round(unit * span);
      value = F::round(scaled + minval);
    }
    out[i] = value < minval ? minval : value;
  }
  return out;
}

float erf_inv_calc(float x, FloatContraction contraction) { return erf_inv(x, contraction); }
double erf_inv_calc(double x, FloatContraction contraction) { return erf_inv(x, contraction); }

// _normal_real. nextafter(-1, 0) in a format with m mantissa bits is -1 + 2^-(m+1).
template <class F>
std::vector<typename F::Calc> normal_values(const Key& key, std::span<const int64_t> shape,
                                            const RandomOptions& options) {
  using Calc = typename F::Calc;
  const Calc lo = F::from_double(-1.0 + std::ldexp(1.0, -(F::kMant + 1)));
  const Calc sqrt2 = F::from_double(std::sqrt(2.0));
  std::vector<Calc> values = uniform_values<F>(key, shape, lo, Calc(1), options);
  for (Calc& v : values) {
    const Calc e = F::round(erf_inv_calc(v, options.contraction));
    v = F::round(sqrt2 * e);
  }
  return values;
}

// The log1p that erf_inv needs, correctly rounded to float (XLA:CPU's own is within 1 ulp of it).
float log1p_f32(float v) { return static_cast<float>(std::log1p(static_cast<double>(v))); }

// XLA's unsigned remainder: x % 0 is x.
template <class U>
U urem(U a, U b) {
  return b == 0 ? a : static_cast<U>(a % b);
}

// The dtype's range as int64 values, clipped to int64 (uint64's top half is out of reach of the bounds).
template <class D>
constexpr int64_t dtype_min_as_int64() {
  if constexpr (std::numeric_limits<D>::is_signed) {
    return static_cast<int64_t>(std::numeric_limits<D>::min());
  } else {
    return 0;
  }
}

template <class D>
constexpr int64_t dtype_max_as_int64() {
  if constexpr (std::is_same_v<D, uint64_t>) {
    return std::numeric_limits<int64_t>::max();
  } else {
    return static_cast<int64_t>(std::numeric_limits<D>::max());
  }
}

// _convert_and_clip_integer for an exact integer value.
template <class D>
D convert_and_clip(int64_t value) {
  return static_cast<D>(std::clamp(value, dtype_min_as_int64<D>(), dtype_max_as_int64<D>()));
}

// _randint for a dtype of at least 32 bits: two bit streams from split keys, reduced modulo the span
// with the 2^nbits wrap folded in through `multiplier`.
template <class D>
std::vector<D> randint_wide(const Key& key, std::span<const int64_t> shape, int64_t minval, int64_t maxval,
                            const RandomOptions& options) {
  using U = std::make_unsigned_t<D>;
  constexpr int kBits = static_cast<int>(sizeof(D) * 8);
  const bool maxval_out_of_range = maxval > dtype_max_as_int64<D>();
  const D lo = convert_and_clip<D>(minval);
  const D hi = convert_and_clip<D>(maxval);
  U span = static_cast<U>(static_cast<U>(hi) - static_cast<U>(lo));
  if (hi <= lo) span = 1;
  if (maxval_out_of_range && hi > lo) span = static_cast<U>(span + 1u);
  U multiplier = urem<U>(static_cast<U>(U{1} << (kBits / 2)), span);
  multiplier = urem<U>(static_cast<U>(multiplier * multiplier), span);

  const std::vector<Key> keys = split(key, 2, options.mode);
  const std::vector<U> higher = random_bits<U>(keys[0], shape, options);
  const std::vector<U> lower = random_bits<U>(keys[1], shape, options);
  std::vector<D> out(higher.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    const U high_part = static_cast<U>(urem<U>(higher[i], span) * multiplier);
    const U offset = urem<U>(static_cast<U>(high_part + urem<U>(lower[i], span)), span);
    out[i] = static_cast<D>(static_cast<U>(static_cast<U>(lo) + offset));
  }
  return out;
}

// Horner steps p = c + p * w, fused or not.
template <class T>
T horner(std::span<const T> c, T w, FloatContraction contraction) {
  T p = c[0];
  for (std::size_t i = 1; i < c.size(); ++i) {
    if (contraction == FloatContraction::kFused) {
      p = std::fma(p, w, c[i]);
    } else {
      const T pw = p * w;
      p = c[i] + pw;
    }
  }
  return p;
}

}  // namespace

float erf_inv(float x, FloatContraction contraction) {
  static constexpr std::array<float, 9> kCentral = {2.81022636e-08f,  3.43273939e-07f, -3.5233877e-06f,
                                                    -4.39150654e-06f, 0.00021858087f,  -0.00125372503f,
                                                    -0.00417768164f,  0.246640727f,    1.50140941f};
  static constexpr std::array<float, 9> kTail = {-0.000200214257f, 0.000100950558f, 0.00134934322f,
                                                 -0.00367342844f,  0.00573950773f,  -0.0076224613f,
                                                 0.00943887047f,   1.00167406f,     2.83297682f};
  if (std::fabs(x) == 1.0f) return x * std::numeric_limits<float>::infinity();
  const float minus_x_squared = x * -x;
  const float w0 = -log1p_f32(minus_x_squared);
  const bool central = w0 < 5.0f;
  const float w = central ? w0 - 2.5f : std::sqrt(w0) - 3.0f;
  return horner<float>(central ? kCentral : kTail, w, contraction) * x;
}

double erf_inv(double x, FloatContraction contraction) {
  static constexpr std::array<double, 23> kCentral = {
      -3.6444120640178196996e-21, -1.685059138182016589e-19,  1.2858480715256400167e-18,  1.115787767802518096e-17,
      -1.333171662854620906e-16,  2.0972767875968561637e-17,  6.6376381343583238325e-15,  -4.0545662729752068639e-14,
      -8.1519341976054721522e-14, 2.6335093153082322977e-12,  -1.2975133253453532498e-11, -5.4154120542946279317e-11,
      1.051212273321532285e-09,   -4.1126339803469836976e-09, -2.9070369957882005086e-08, 4.2347877827932403518e-07,
      -1.3654692000834678645e-06, -1.3882523362786468719e-05, 0.0001867342080340571352,   -0.00074070253416626697512,
      -0.0060336708714301490533,  0.24015818242558961693,     1.6536545626831027356};
  static constexpr std::array<double, 19> kMiddle = {
      2.2137376921775787049e-09,  9.0756561938885390979e-08, -2.7517406297064545428e-07, 1.8239629214389227755e-08,
      1.5027403968909827627e-06,  -4.013867526981545969e-06, 2.9234449089955446044e-06,  1.2475304481671778723e-05,
      -4.7318229009055733981e-05, 6.8284851459573175448e-05, 2.4031110387097893999e-05,  -0.0003550375203628474796,
      0.00095328937973738049703,  -0.0016882755560235047313, 0.0024914420961078508066,   -0.0037512085075692412107,
      0.005370914553590063617,    1.0052589676941592334,     3.0838856104922207635};
  static constexpr std::array<double, 17> kTail = {
      -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,  -3.7894654401267369937e-09,
      7.6157012080783393804e-09,  -1.4960026627149240478e-08, 2.9147953450901080826e-08,  -6.7711997758452339498e-08,
      2.2900482228026654717e-07,  -9.9298272942317002539e-07, 4.5260625972231537039e-06,  -1.9681778105531670567e-05,
      7.5995277030017761139e-05,  -0.00021503011930044477347, -0.00013871931833623122026, 1.0103004648645343977,
      4.8499064014085844221};
  if (std::fabs(x) == 1.0) return x * std::numeric_limits<double>::infinity();
  const double minus_x_squared = x * -x;
  const double w0 = -std::log1p(minus_x_squared);
  std::span<const double> c;
  double w = 0.0;
  if (w0 < 6.25) {
    c = kCentral;
    w = w0 - 3.125;
  } else if (w0 < 16.0) {
    c = kMiddle;
    w = std::sqrt(w0) - 3.25;
  } else {
    c = kTail;
    w = std::sqrt(w0) - 5.0;
  }
  return horner<double>(c, w, contraction) * x;
}

template <class Float>
std::vector<Float> uniform(const Key& key, std::span<const int64_t> shape, Float minval, Float maxval,
                           const RandomOptions& options) {
  using F = std::conditional_t<std::is_same_v<Float, float>, F32, F64>;
  return uniform_values<F>(key, shape, minval, maxval, options);
}

std::vector<uint16_t> uniform_bf16(const Key& key, std::span<const int64_t> shape, double minval, double maxval,
                                   const RandomOptions& options) {
  return store_all<BF16>(
      uniform_values<BF16>(key, shape, BF16::from_double(minval), BF16::from_double(maxval), options));
}

std::vector<uint16_t> uniform_f16(const Key& key, std::span<const int64_t> shape, double minval, double maxval,
                                  const RandomOptions& options) {
  return store_all<F16>(uniform_values<F16>(key, shape, F16::from_double(minval), F16::from_double(maxval), options));
}

template <class Float>
std::vector<Float> normal(const Key& key, std::span<const int64_t> shape, const RandomOptions& options) {
  using F = std::conditional_t<std::is_same_v<Float, float>, F32, F64>;
  return normal_values<F>(key, shape, options);
}

std::vector<uint16_t> normal_bf16(const Key& key, std::span<const int64_t> shape, const RandomOptions& options) {
  return store_all<BF16>(normal_values<BF16>(key, shape, options));
}

std::vector<uint16_t> normal_f16(const Key& key, std::span<const int64_t> shape, const RandomOptions& options) {
  return store_all<F16>(normal_values<F16>(key, shape, options));
}

template <class Int>
std::vector<Int> randint(const Key& key, std::span<const int64_t> shape, int64_t minval, int64_t maxval,
                         const RandomOptions& options) {
  if constexpr (sizeof(Int) >= 4) {
    return randint_wide<Int>(key, shape, minval, maxval, options);
  } else {
    // Narrow dtypes are sampled as int32 (to limit the modulo bias), with the bounds cast to int32
    // and clipped to the narrow range; maxval may sit one past it so the top value stays reachable.
    constexpr int64_t kMin = std::numeric_limits<Int>::min();
    constexpr int64_t kMax = std::numeric_limits<Int>::max();
    const int64_t lo = std::clamp<int64_t>(static_cast<int32_t>(minval), kMin, kMax);
    const int64_t hi = std::clamp<int64_t>(static_cast<int32_t>(maxval), kMin, kMax + 1);
    const std::vector<int32_t> wide = randint_wide<int32_t>(key, shape, lo, hi, options);
    std::vector<Int> out(wide.size());
    for (std::size_t i = 0; i < wide.size(); ++i) out[i] = static_cast<Int>(wide[i]);
    return out;
  }
}

template <class Float>
std::vector<uint8_t> bernoulli(const Key& key, Float p, std::span<const int64_t> shape, BernoulliMode mode,
                               const RandomOptions& options) {
  if (mode == BernoulliMode::kLow) {
    const std::vector<Float> u = uniform<Float>(key, shape, Float(0), Float(1), options);
    std::vector<uint8_t> out(u.size());
    for (std::size_t i = 0; i < u.size(); ++i) out[i] = u[i] < p ? 1 : 0;
    return out;
  }
  // "high": one uniform draw of shape (2, *shape); the second half supplies bits below the first's ulp.
  std::vector<int64_t> doubled{2};
  doubled.insert(doubled.end(), shape.begin(), shape.end());
  Block first = options.block ? *options.block : full_block(shape);
  first.start.insert(first.start.begin(), 0);
  first.stop.insert(first.stop.begin(), 1);
  Block second = first;
  second.start[0] = 1;
  second.stop[0] = 2;
  const std::vector<Float> u1 =
      uniform<Float>(key, doubled, Float(0), Float(1), {options.mode, first, options.contraction});
  const std::vector<Float> u2 =
      uniform<Float>(key, doubled, Float(0), Float(1), {options.mode, second, options.contraction});
  constexpr int kMant = std::numeric_limits<Float>::digits - 1;
  const Float scale = std::ldexp(Float(1), -kMant);
  std::vector<uint8_t> out(u1.size());
  for (std::size_t i = 0; i < u1.size(); ++i) {
    const Float low = u2[i] * scale;
    const Float remaining = p - u1[i];
    out[i] = low < remaining ? 1 : 0;
  }
  return out;
}

template std::vector<float> uniform<float>(const Key&, std::span<const int64_t>, float, float, const RandomOptions&);
template std::vector<double> uniform<double>(const Key&, std::span<const int64_t>, double, double,
                                             const RandomOptions&);
template std::vector<float> normal<float>(const Key&, std::span<const int64_t>, const RandomOptions&);
template std::vector<double> normal<double>(const Key&, std::span<const int64_t>, const RandomOptions&);
template std::vector<int8_t> randint<int8_t>(const Key&, std::span<const int64_t>, int64_t, int64_t,
                                             const RandomOptions&);
template std::vector<int16_t> randint<int16_t>(const Key&, std::span<const int64_t>, int64_t, int64_t,
                                               const RandomOptions&);
template std::vector<int32_t> randint<int32_t>(const Key&, std::span<const int64_t>, int64_t, int64_t,
                                               const RandomOptions&);
template std::vector<int64_t> randint<int64_t>(const Key&, std::span<const int64_t>, int64_t, int64_t,
                                               const RandomOptions&);
template std::vector<uint8_t> randint<uint8_t>(const Key&, std::span<const int64_t>, int64_t, int64_t,
                                               const RandomOptions&);
template std::vector<uint16_t> randint<uint16_t>(const Key&, std::span<const int64_t>, int64_t, int64_t,
                                                 const RandomOptions&);
template std::vector<uint32_t> randint<uint32_t>(const Key&, std::span<const int64_t>, int64_t, int64_t,
                                                 const RandomOptions&);
template std::vector<uint64_t> randint<uint64_t>(const Key&, std::span<const int64_t>, int64_t, int64_t,
                                                 const RandomOptions&);
template std::vector<uint8_t> bernoulli<float>(const Key&, float, std::span<const int64_t>, BernoulliMode,
                                               const RandomOptions&);
template std::vector<uint8_t> bernoulli<double>(const Key&, double, std::span<const int64_t>, BernoulliMode,
                                                const RandomOptions&);

}  // namespace shardscope::random
