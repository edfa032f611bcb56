// Binary elementwise primitives (add, div, max, shifts, comparisons, pow, ...) with XLA's integer and NaN semantics.
#include <cmath>
#include <limits>

#include "ops/elementwise_common.h"

namespace shardscope::elementwise {
namespace {

enum class BinaryResult : uint8_t { kSameDtype, kBool };

template <TypeClasses Accepted, typename Kernel>
void register_binary(const std::string& name, BinaryResult result, Kernel kernel) {
  Primitive p;
  p.name = name;
  p.abstract_eval = [name, result](std::span<const Aval> in, const Params&) {
    check_arity(name, in, 2);
    Shape shape = broadcasting_shape(name, in);
    const TypeClasses accepted[] = {Accepted, Accepted};
    check_operand_dtypes(name, in, accepted);
    check_same_dtypes(name, in);
    const DType dtype = result == BinaryResult::kBool ? DType::kBool : in[0].dtype;
    return std::vector<Aval>{nary_result(in, std::move(shape), dtype, all_weak(in))};
  };
  p.impl = [name, kernel](std::span<const BufferPtr> in, std::span<const Aval>, const Params& params) {
    return std::vector<BufferPtr>{visit_dtype(in[0]->dtype(), [&](auto tag) -> BufferPtr {
      constexpr DType D = decltype(tag)::value;
      if (in[1]->dtype() != D) throw kernel_dtype_error(name, in[1]->dtype());
      if constexpr (class_accepts(Accepted, D)) {
        return kernel(tag, name, in[0], in[1], params);
      } else {
        throw kernel_dtype_error(name, D);
      }
    })};
  };
  p.elementwise = true;
  register_primitive(std::move(p));
}

// A kernel from a function of two compute values of the operands' dtype.
template <BinaryResult Result, typename Fn>
auto from_values(Fn fn) {
  return [fn](auto tag, const std::string& name, const BufferPtr& a, const BufferPtr& b, const Params&) -> BufferPtr {
    constexpr DType D = decltype(tag)::value;
    constexpr DType Out = Result == BinaryResult::kBool ? DType::kBool : D;
    return map_binary<D, D, Out>(name, a, b, fn);
  };
}

template <TypeClasses Accepted, typename Fn>
void binary(const std::string& name, Fn fn) {
  register_binary<Accepted>(name, BinaryResult::kSameDtype, from_values<BinaryResult::kSameDtype>(fn));
}

template <TypeClasses Accepted, typename Fn>
void comparison(const std::string& name, Fn fn) {
  register_binary<Accepted>(name, BinaryResult::kBool, from_values<BinaryResult::kBool>(fn));
}

// ---- value functions ----

template <typename T>
T add_values(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return a + b;
  } else {
    return wrapping_add(a, b);
  }
}

template <typename T>
T sub_values(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return a - b;
  } else {
    return wrapping_sub(a, b);
  }
}

template <typename T>
T mul_values(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return a * b;
  } else {
    return wrapping_mul(a, b);
  }
}

// XLA defines the overflowing cases instead of trapping: x / 0 is all ones (-1, or the unsigned
// maximum) and INT_MIN / -1 is INT_MIN.
template <typename T>
T div_values(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return a / b;
  } else {
    if (b == 0) return static_cast<T>(~T{0});
    if constexpr (std::is_signed_v<T>) {
      if (a == std::numeric_limits<T>::min() && b == T{-1}) return a;
    }
    return static_cast<T>(a / b);
  }
}

// Truncated remainder with the dividend's sign; XLA gives x % 0 == x and INT_MIN % -1 == 0.
template <typename T>
T rem_values(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::fmod(a, b);
  } else {
    if (b == 0) return a;
    if constexpr (std::is_signed_v<T>) {
      if (a == std::numeric_limits<T>::min() && b == T{-1}) return T{0};
    }
    return static_cast<T>(a % b);
  }
}

template <typename T>
T and_values(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a && b;
  } else {
    return static_cast<T>(a & b);
  }
}

template <typename T>
T or_values(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a || b;
  } else {
    return static_cast<T>(a | b);
  }
}

template <typename T>
T xor_values(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a != b;
  } else {
    return static_cast<T>(a ^ b);
  }
}

// Shift amounts are read as unsigned; one of at least the bit width shifts everything out
// (XLA's saturating shifts), so negative amounts do too.
template <typename T>
constexpr bool shift_out_of_range(T amount) {
  return static_cast<std::make_unsigned_t<T>>(amount) >= std::numeric_limits<std::make_unsigned_t<T>>::digits;
}

template <typename T>
T shift_left_values(T a, T b) {
  if (shift_out_of_range(b)) return T{0};
  const auto amount = static_cast<unsigned>(b);
  return static_cast<T>(static_cast<WrapType<T>>(a) << amount);
}

template <typename T>
T shift_right_logical_values(T a, T b) {
  if (shift_out_of_range(b)) return T{0};
  const auto amount = static_cast<unsigned>(b);
  return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) >> amount);
}

// Arithmetic shifts fill with the top bit of the pattern, for unsigned dtypes too.
template <typename T>
T shift_right_arithmetic_values(T a, T b) {
  using Signed = std::make_signed_t<T>;
  const auto pattern = static_cast<Signed>(a);
  if (shift_out_of_range(b)) return static_cast<T>(pattern < 0 ? Signed{-1} : Signed{0});
  const auto amount = static_cast<unsigned>(b);
  return static_cast<T>(pattern >> amount);
}

// chlo.next_after on the dtype's own bit patterns (a float step is no bfloat16 step).
template <DType D>
Compute<D> next_after(Compute<D> x, Compute<D> y) {
  using T = Compute<D>;
  if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<T>::quiet_NaN();
  if (x == y) return y;
  if constexpr (D == DType::kFloat32 || D == DType::kFloat64) {
    return std::nextafter(x, y);
  } else {
    constexpr uint16_t kSignBit = 0x8000U;
    uint16_t bits = store<D>(x);  // exact: x came from this dtype
    if (x == 0) {
      bits = static_cast<uint16_t>((y < 0 ? kSignBit : 0U) | 1U);
    } else if ((x < y) == (x > 0)) {
      ++bits;
    } else {
      --bits;
    }
    return load<D>(bits);
  }
}

template <DType D>
struct NextAfter {
  Compute<D> operator()(Compute<D> x, Compute<D> y) const { return next_after<D>(x, y); }
};

// An integer exponent is first converted to the base's dtype, as XLA's lowering does.
template <DType D, DType E>
struct Power {
  Compute<D> operator()(Compute<D> x, Compute<E> y) const { return std::pow(x, static_cast<Compute<D>>(y)); }
};

// ---- primitives with their own rules ----

// mul's optional out_dtype converts both operands first (and lifts the same-dtype requirement).
void register_mul() {
  Primitive p;
  p.name = "mul";
  p.abstract_eval = [](std::span<const Aval> in, const Params& params) {
    check_arity("mul", in, 2);
    Shape shape = broadcasting_shape("mul", in);
    const TypeClasses accepted[] = {kNumTypes, kNumTypes};
    check_operand_dtypes("mul", in, accepted);
    const ParamValue* out_dtype = find_param(params, "out_dtype");
    DType dtype = in[0].dtype;
    if (out_dtype != nullptr && !out_dtype->is_none()) {
      dtype = dtype_param(*out_dtype, "out_dtype");
    } else {
      check_same_dtypes("mul", in);
    }
    return std::vector<Aval>{nary_result(in, std::move(shape), dtype, all_weak(in))};
  };
  p.impl = [](std::span<const BufferPtr> in, std::span<const Aval>, const Params& params) {
    BufferPtr a = in[0];
    BufferPtr b = in[1];
    const ParamValue* out_dtype = find_param(params, "out_dtype");
    if (out_dtype != nullptr && !out_dtype->is_none()) {
      const DType dtype = dtype_param(*out_dtype, "out_dtype");
      a = convert_buffer(a, dtype);
      b = convert_buffer(b, dtype);
    }
    if (a->dtype() != b->dtype()) throw kernel_dtype_error("mul", b->dtype());
    return std::vector<BufferPtr>{visit_dtype(a->dtype(), [&](auto tag) -> BufferPtr {
      constexpr DType D = decltype(tag)::value;
      if constexpr (class_accepts(kNumTypes, D)) {
        return map_binary<D, D, D>("mul", a, b, [](auto x, auto y) { return mul_values(x, y); });
      } else {
        throw kernel_dtype_error("mul", D);
      }
    })};
  };
  p.printed_params = [](const Eqn& eqn, const JaxProfile& profile) {
    return sorted_params_without(eqn, {"out_dtype"}, profile.has(JaxFeature::kMulOutDtypeParam));
  };
  p.elementwise = true;
  register_primitive(std::move(p));
}

// pow takes a float base and a float (same dtype) or integer exponent, which XLA converts to the
// base's dtype before the power.
void register_pow() {
  Primitive p;
  p.name = "pow";
  p.abstract_eval = [](std::span<const Aval> in, const Params&) {
    check_arity("pow", in, 2);
    Shape shape = broadcasting_shape("pow", in);
    const TypeClasses accepted[] = {kInexactTypes, kNumTypes};
    check_operand_dtypes("pow", in, accepted);
    const bool integer_exponent = is_floating(in[0].dtype) && is_integral(in[1].dtype);
    if (!integer_exponent && in[0].dtype != in[1].dtype) {
      throw type_error(
          "the first argument to pow must have an inexact dtype (float or complex), and the second argument must "
          "have an inexact or integer dtype, and two inexact dtypes must match, but got " +
          std::string(dtype_name(in[0].dtype)) + " and " + std::string(dtype_name(in[1].dtype)) + " respectively.");
    }
    return std::vector<Aval>{nary_result(in, std::move(shape), in[0].dtype, all_weak(in))};
  };
  p.impl = [](std::span<const BufferPtr> in, std::span<const Aval>, const Params&) {
    return std::vector<BufferPtr>{visit_dtype(in[0]->dtype(), [&](auto base_tag) -> BufferPtr {
      constexpr DType D = decltype(base_tag)::value;
      if constexpr (kIsFloat<D>) {
        return visit_dtype(in[1]->dtype(), [&](auto exponent_tag) -> BufferPtr {
          constexpr DType E = decltype(exponent_tag)::value;
          if constexpr (E == D || kIsInteger<E>) {
            return map_binary<D, E, D>("pow", in[0], in[1], Power<D, E>{});
          } else {
            throw kernel_dtype_error("pow", E);
          }
        });
      } else {
        throw kernel_dtype_error("pow", D);
      }
    })};
  };
  p.elementwise = true;
  register_primitive(std::move(p));
}

void register_nextafter() {
  const auto kernel = [](auto tag, const std::string& name, const BufferPtr& a, const BufferPtr& b,
                         const Params&) -> BufferPtr {
    constexpr DType D = decltype(tag)::value;
    return map_binary<D, D, D>(name, a, b, NextAfter<D>{});
  };
  register_binary<kFloatTypes>("nextafter", BinaryResult::kSameDtype, kernel);
}

}  // namespace

void register_binary_primitives() {
  binary<kNumTypes>("add", [](auto a, auto b) { return add_values(a, b); });
  binary<kNumTypes>("sub", [](auto a, auto b) { return sub_values(a, b); });
  register_mul();
  binary<kNumTypes>("div", [](auto a, auto b) { return div_values(a, b); });
  binary<kIntOrFloatTypes>("rem", [](auto a, auto b) { return rem_values(a, b); });
  register_pow();
  binary<kAnyTypes>("max", [](auto a, auto b) { return xla_max(a, b); });
  binary<kAnyTypes>("min", [](auto a, auto b) { return xla_min(a, b); });
  binary<kInexactTypes>("atan2", [](auto a, auto b) { return std::atan2(a, b); });
  register_nextafter();

  binary<kBoolOrIntTypes>("and", [](auto a, auto b) { return and_values(a, b); });
  binary<kBoolOrIntTypes>("or", [](auto a, auto b) { return or_values(a, b); });
  binary<kBoolOrIntTypes>("xor", [](auto a, auto b) { return xor_values(a, b); });
  binary<kIntTypes>("shift_left", [](auto a, auto b) { return shift_left_values(a, b); });
  binary<kIntTypes>("shift_right_logical", [](auto a, auto b) { return shift_right_logical_values(a, b); });
  binary<kIntTypes>("shift_right_arithmetic", [](auto a, auto b) { return shift_right_arithmetic_values(a, b); });

  comparison<kAnyTypes>("eq", [](auto a, auto b) { return a == b; });
  comparison<kAnyTypes>("ne", [](auto a, auto b) { return a != b; });
  comparison<kOrderedTypes>("lt", [](auto a, auto b) { return a < b; });
  comparison<kOrderedTypes>("le", [](auto a, auto b) { return a <= b; });
  comparison<kOrderedTypes>("gt", [](auto a, auto b) { return a > b; });
  comparison<kOrderedTypes>("ge", [](auto a, auto b) { return a >= b; });
}

}  // namespace shardscope::elementwise
