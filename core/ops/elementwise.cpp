// Unary elementwise primitives (sin, exp, neg, not, ...): JAX's dtype rules, print rules and kernels.
#include <array>
#include <bit>
#include <cmath>
#include <numbers>

#include "ops/elementwise_common.h"
#include "ops/ops.h"
#include "ops/vector_math.h"
#include "random/distributions.h"

namespace shardscope {
namespace elementwise {
namespace {

// What JAX's param list looks like for the op, which decides what its jaxpr line may show.
enum class UnaryParams : uint8_t {
  kNone,
  kAccuracy,  // `accuracy`, hidden while None (and absent before JAX 0.6.0)
};

template <TypeClasses Accepted, typename Kernel>
void register_unary(const std::string& name, UnaryParams params, bool bool_result, Kernel kernel) {
  Primitive p;
  p.name = name;
  p.abstract_eval = [name, bool_result](std::span<const Aval> in, const Params&) {
    check_arity(name, in, 1);
    check_unary_dtype(name, in[0], Accepted);
    return std::vector<Aval>{unary_result(in[0], bool_result ? DType::kBool : in[0].dtype, in[0].weak_type)};
  };
  p.impl = [name, kernel](std::span<const BufferPtr> in, std::span<const Aval>, const Params& op_params) {
    const Buffer& operand = *in[0];
    return std::vector<BufferPtr>{visit_dtype(operand.dtype(), [&](auto tag) -> BufferPtr {
      constexpr DType D = decltype(tag)::value;
      if constexpr (class_accepts(Accepted, D)) {
        return kernel(tag, operand, op_params);
      } else {
        throw kernel_dtype_error(name, D);
      }
    })};
  };
  if (params == UnaryParams::kAccuracy) {
    p.printed_params = [](const Eqn& eqn, const JaxProfile& profile) {
      return sorted_params_without(eqn, {"accuracy"}, profile.has(JaxFeature::kUnaryAccuracyParam));
    };
  }
  p.elementwise = true;
  register_primitive(std::move(p));
}

// A same-dtype kernel from a function of one compute value.
template <typename Fn>
auto same_dtype(Fn fn) {
  return [fn](auto tag, const Buffer& operand, const Params&) -> BufferPtr {
    constexpr DType D = decltype(tag)::value;
    return map_unary<D, D>(operand, fn);
  };
}

template <TypeClasses Accepted, typename Fn>
void unary(const std::string& name, Fn fn, UnaryParams params = UnaryParams::kNone) {
  register_unary<Accepted>(name, params, false, same_dtype(fn));
}

// float32/float64 through the SIMD kernels of vector_math; other dtypes elementwise through `fallback`.
template <typename Fn>
auto vectorised(vector_math::Function function, Fn fallback) {
  return [function, fallback](auto tag, const Buffer& operand, const Params&) -> BufferPtr {
    constexpr DType D = decltype(tag)::value;
    if constexpr (D == DType::kFloat32 || D == DType::kFloat64) {
      using T = Storage<D>;
      auto out = new_buffer(D, operand.shape());
      vector_math::apply(function, operand.as<T>().data(), out->as_mutable<T>().data(), operand.size());
      return out;
    } else {
      return map_unary<D, D>(operand, fallback);
    }
  };
}

// float32 through vector_math::apply_rounded (sin, cos); other dtypes elementwise through `fallback`.
template <typename Fn>
auto rounded_trig(vector_math::Function function, Fn fallback) {
  return [function, fallback](auto tag, const Buffer& operand, const Params&) -> BufferPtr {
    constexpr DType D = decltype(tag)::value;
    if constexpr (D == DType::kFloat32) {
      auto out = new_buffer(D, operand.shape());
      vector_math::apply_rounded(function, operand.as<float>().data(), out->as_mutable<float>().data(), operand.size());
      return out;
    } else {
      return map_unary<D, D>(operand, fallback);
    }
  };
}

template <TypeClasses Accepted, typename Fn>
void vector_unary(const std::string& name, vector_math::Function function, Fn fallback) {
  register_unary<Accepted>(name, UnaryParams::kAccuracy, false, vectorised(function, fallback));
}

// x * N(x^2) / D(x^2), both polynomials by Horner's rule in fused multiply-adds (highest power first).
template <typename T, std::size_t N, std::size_t D>
T odd_fraction(T x, const std::array<T, N>& numerator_coeffs, const std::array<T, D>& denominator_coeffs) {
  const T square = x * x;
  T numerator = numerator_coeffs[0];
  for (std::size_t i = 1; i < N; ++i) numerator = std::fma(square, numerator, numerator_coeffs[i]);
  T denominator = denominator_coeffs[0];
  for (std::size_t i = 1; i < D; ++i) denominator = std::fma(square, denominator, denominator_coeffs[i]);
  return x * numerator / denominator;
}

// tanh as XLA's CPU and GPU code generators emit it: an odd rational function of x (Eigen's coefficients), the
// input clamped where the fraction reaches exactly +-1, tanh(x) = x below 4e-4 in float32 and +-1 from |x| = 20.
// The Horner steps are fused multiply-adds, as LLVM contracts them. It is not correctly rounded (tanh(-1.0480671f)
// is -0.7810538f, not -0.7810537f), and printed values and gradients follow it.
float xla_tanh(float x) {
  static constexpr std::array<float, 7> kNumerator{
      -2.76076847742355e-16F, 2.00018790482477e-13F, -8.60467152213735e-11F, 5.12229709037114e-08F,
      1.48572235717979e-05F,  6.37261928875436e-04F, 4.89352455891786e-03F};
  static constexpr std::array<float, 4> kDenominator{1.19825839466702e-06F, 1.18534705686654e-04F,
                                                     2.26843463243900e-03F, 4.89352518554385e-03F};
  constexpr float kClamp = 7.99881172180175781F;
  const float magnitude = std::fabs(x);
  if (std::isnan(x) || magnitude < 0.0004F) return x;
  if (magnitude >= 20.0F) return std::copysign(1.0F, x);
  return odd_fraction(std::fmin(std::fmax(x, -kClamp), kClamp), kNumerator, kDenominator);
}

double xla_tanh(double x) {
  // Eigen's double-precision fraction: alpha_19 .. alpha_1 over beta_18 .. beta_0.
  static constexpr std::array<double, 10> kNumerator{2.6158007860482230e-23, 7.6534862268749319e-19,
                                                     3.1309488231386680e-15, 4.2303918148209176e-12,
                                                     2.4618379131293676e-09, 6.8644367682497074e-07,
                                                     9.3839087674268880e-05, 5.9809711724441161e-03,
                                                     1.5184719640284322e-01, 1.0};
  static constexpr std::array<double, 10> kDenominator{6.463747022670968018e-21, 5.782506856739003571e-17,
                                                       1.293019623712687916e-13, 1.123643448069621992e-10,
                                                       4.492975677839633985e-08, 8.785185266237658698e-06,
                                                       8.295161192716231542e-04, 3.437448108450402717e-02,
                                                       4.851805297361760360e-01, 1.0};
  constexpr double kClamp = 17.714196154005176;
  if (std::isnan(x)) return x;
  if (std::fabs(x) >= 20.0) return std::copysign(1.0, x);
  return odd_fraction(std::fmin(std::fmax(x, -kClamp), kClamp), kNumerator, kDenominator);
}

// ---- special functions without a <cmath> counterpart ----

double digamma(double x) {
  if (std::isnan(x) || x == std::numeric_limits<double>::infinity()) return x;
  // Poles at zero and the negative integers (and -inf) give NaN, as XLA's expansion does.
  if (x <= 0 && x == std::floor(x)) return std::numeric_limits<double>::quiet_NaN();
  double reflection = 0;
  if (x < 0.5) {
    // psi(x) = psi(1 - x) - pi / tan(pi x); sinpi-style reduction keeps pi*x accurate.
    const double reduced = x - std::round(x);
    reflection = -std::numbers::pi / std::tan(std::numbers::pi * reduced);
    x = 1 - x;
  }
  double result = 0;
  while (x < 10) {
    result -= 1 / x;
    x += 1;
  }
  const double inv2 = 1 / (x * x);
  // Asymptotic series in 1/x^2 with Bernoulli-number coefficients, to double precision for x >= 10.
  const double tail =
      inv2 *
      (1.0 / 12 -
       inv2 * (1.0 / 120 -
               inv2 * (1.0 / 252 - inv2 * (1.0 / 240 - inv2 * (1.0 / 132 - inv2 * (691.0 / 32760 - inv2 / 12))))));
  return reflection + result + std::log(x) - 0.5 / x - tail;
}

template <typename T>
T typed_digamma(T x) {
  return static_cast<T>(digamma(static_cast<double>(x)));
}

template <typename T>
T typed_erf_inv(T x) {
  return random::erf_inv(x);
}

template <typename T>
T logistic(T x) {
  return T{1} / (T{1} + std::exp(-x));
}

// ---- integer-capable ops: integers wrap, floats follow IEEE ----

template <typename T>
T negate(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return -x;
  } else {
    return wrapping_sub<T>(T{0}, x);
  }
}

template <typename T>
T sign_of(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(x) || x == 0) return x;  // keeps NaN and the zero's sign
    return x > 0 ? T{1} : T{-1};
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<T>(x > 0 ? 1 : (x < 0 ? -1 : 0));
  } else {
    return static_cast<T>(x != 0 ? 1 : 0);
  }
}

template <typename T>
T absolute(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::fabs(x);
  } else {
    return x < 0 ? wrapping_sub<T>(T{0}, x) : x;  // abs(INT_MIN) wraps to INT_MIN
  }
}

template <typename T>
T square(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return x * x;
  } else {
    return wrapping_mul<T>(x, x);
  }
}

template <typename T>
T bitwise_not(T x) {
  if constexpr (std::is_same_v<T, bool>) {
    return !x;
  } else {
    return static_cast<T>(~x);
  }
}

template <typename T>
T population_count(T x) {
  return static_cast<T>(std::popcount(static_cast<std::make_unsigned_t<T>>(x)));
}

template <typename T>
T count_leading_zeros(T x) {
  return static_cast<T>(std::countl_zero(static_cast<std::make_unsigned_t<T>>(x)));
}

// lax.RoundingMethod: 0 rounds halves away from zero, 1 to even. Accepts the enum's int or its name.
bool rounds_to_even(const Params& params) {
  const ParamValue* method = find_param(params, "rounding_method");
  if (method == nullptr || method->is_none()) return false;
  if (const auto* name = method->get_if<std::string>()) {
    if (*name == "TO_NEAREST_EVEN" || *name == "RoundingMethod.TO_NEAREST_EVEN") return true;
    if (*name == "AWAY_FROM_ZERO" || *name == "RoundingMethod.AWAY_FROM_ZERO") return false;
    throw value_error("unknown rounding_method " + *name);
  }
  const int64_t value = method->as_int("rounding_method");
  if (value != 0 && value != 1) throw value_error("rounding_method must be 0 or 1, got " + std::to_string(value));
  return value == 1;
}

void register_round() {
  const auto kernel = [](auto tag, const Buffer& operand, const Params& params) -> BufferPtr {
    constexpr DType D = decltype(tag)::value;
    if (rounds_to_even(params)) {
      return map_unary<D, D>(operand, [](auto x) { return std::nearbyint(x); });
    }
    return map_unary<D, D>(operand, [](auto x) { return std::round(x); });
  };
  register_unary<kFloatTypes>("round", UnaryParams::kNone, false, kernel);
}

void register_is_finite() {
  const auto kernel = [](auto tag, const Buffer& operand, const Params&) -> BufferPtr {
    constexpr DType D = decltype(tag)::value;
    return map_unary<D, DType::kBool>(operand, [](auto x) { return static_cast<bool>(std::isfinite(x)); });
  };
  register_unary<kFloatTypes>("is_finite", UnaryParams::kNone, true, kernel);
}

}  // namespace

void register_unary_primitives() {
  constexpr UnaryParams kAccuracy = UnaryParams::kAccuracy;
  unary<kNumTypes>("neg", [](auto x) { return negate(x); });
  unary<kNumTypes>("sign", [](auto x) { return sign_of(x); });
  unary<kSignedNumTypes>("abs", [](auto x) { return absolute(x); });
  unary<kNumTypes>("square", [](auto x) { return square(x); });
  unary<kBoolOrIntTypes>("not", [](auto x) { return bitwise_not(x); });
  unary<kIntTypes>("population_count", [](auto x) { return population_count(x); });
  unary<kIntTypes>("clz", [](auto x) { return count_leading_zeros(x); });

  unary<kFloatTypes>("floor", [](auto x) { return std::floor(x); });
  unary<kFloatTypes>("ceil", [](auto x) { return std::ceil(x); });
  register_round();
  register_is_finite();

  vector_unary<kInexactTypes>("exp", vector_math::Function::kExp, [](auto x) { return std::exp(x); });
  unary<kInexactTypes>(
      "exp2", [](auto x) { return std::exp2(x); }, kAccuracy);
  vector_unary<kInexactTypes>("log", vector_math::Function::kLog, [](auto x) { return std::log(x); });
  unary<kInexactTypes>(
      "log1p", [](auto x) { return std::log1p(x); }, kAccuracy);
  unary<kInexactTypes>(
      "expm1", [](auto x) { return std::expm1(x); }, kAccuracy);
  unary<kInexactTypes>(
      "tanh", [](auto x) { return xla_tanh(x); }, kAccuracy);
  vector_unary<kInexactTypes>("logistic", vector_math::Function::kLogistic, [](auto x) { return logistic(x); });
  // XLA:CPU's sin and cos round correctly (seed 002 prints 2*sin(10)+1 as -0.08804226): float32 goes through
  // vector_math's double-precision kernel rounded once, float64 through <cmath>.
  register_unary<kInexactTypes>("sin", UnaryParams::kAccuracy, false,
                                rounded_trig(vector_math::Function::kSin, [](auto x) { return std::sin(x); }));
  register_unary<kInexactTypes>("cos", UnaryParams::kAccuracy, false,
                                rounded_trig(vector_math::Function::kCos, [](auto x) { return std::cos(x); }));
  unary<kInexactTypes>(
      "tan", [](auto x) { return std::tan(x); }, kAccuracy);
  unary<kInexactTypes>(
      "sqrt", [](auto x) { return std::sqrt(x); }, kAccuracy);
  unary<kInexactTypes>(
      "rsqrt", [](auto x) { return decltype(x){1} / std::sqrt(x); }, kAccuracy);
  unary<kFloatTypes>(
      "cbrt", [](auto x) { return std::cbrt(x); }, kAccuracy);

  unary<kInexactTypes>("asin", [](auto x) { return std::asin(x); });
  unary<kInexactTypes>("acos", [](auto x) { return std::acos(x); });
  unary<kInexactTypes>("atan", [](auto x) { return std::atan(x); });
  unary<kInexactTypes>("sinh", [](auto x) { return std::sinh(x); });
  unary<kInexactTypes>("cosh", [](auto x) { return std::cosh(x); });
  unary<kInexactTypes>("asinh", [](auto x) { return std::asinh(x); });
  unary<kInexactTypes>("acosh", [](auto x) { return std::acosh(x); });
  unary<kInexactTypes>("atanh", [](auto x) { return std::atanh(x); });

  unary<kFloatTypes>("erf", [](auto x) { return std::erf(x); });
  unary<kFloatTypes>("erfc", [](auto x) { return std::erfc(x); });
  unary<kFloatTypes>("erf_inv", [](auto x) { return typed_erf_inv(x); });
  unary<kFloatTypes>("lgamma", [](auto x) { return std::lgamma(x); });
  unary<kFloatTypes>("digamma", [](auto x) { return typed_digamma(x); });
}

}  // namespace elementwise

void register_elementwise_primitives() {
  elementwise::register_unary_primitives();
  elementwise::register_binary_primitives();
  elementwise::register_other_elementwise_primitives();
}

}  // namespace shardscope
