// jnp's elementwise functions: the promotion each applies (args, inexact, numeric) and the lax op it ends in.
#include <limits>
#include <map>

#include "api/numpy.h"
#include "api/session.h"
#include "base/error.h"
#include "exec/device_assignment.h"

namespace shardscope::api::jnp {
namespace {

// jnp's binary ufuncs are jitted functions in JAX: when their committed arrays live on different device
// assignments, JAX's error names the function and its parameters, not the primitive.
void check_ufunc_devices(const std::string& name, const std::vector<Value>& values) {
  const JaxProfile& profile = session().profile;
  if (!profile.has(JaxFeature::kDeviceMismatchNamesArguments) || values.size() != 2) return;
  const std::vector<Device>* first_devices = nullptr;
  std::size_t first = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!values[i].is_concrete()) continue;
    const auto* named = std::get_if<NamedSharding>(&values[i].array().sharding());
    if (named == nullptr) continue;
    if (first_devices == nullptr) {
      first_devices = &named->mesh.devices();
      first = i;
    } else if (*first_devices != named->mesh.devices()) {
      // Until 0.4.36 the ufunc was jax.numpy.<name>(x1, x2); from then on it is <name>(x, y).
      const bool modern = profile.has(JaxFeature::kUfuncMismatchNamesAdd);
      const auto placed = [&](std::size_t k, const std::vector<Device>& devices) {
        const std::string argument = modern ? std::string(k == 0 ? "x" : "y") : "x" + std::to_string(k + 1);
        return PlacedArgument{argument, argument_aval(values[k]), devices};
      };
      throw_device_assignment_mismatch(modern ? name : "jax.numpy." + name, placed(first, *first_devices),
                                       placed(i, named->mesh.devices()), profile);
    }
  }
}

std::vector<Value> promote_args(const std::string& name, const Value& x, const Value& y) {
  check_ufunc_devices(name, {x, y});
  return promote_shapes(name, promote_dtypes({x, y}));
}

std::vector<Value> promote_args_inexact(const std::string& name, const std::vector<Value>& values) {
  check_ufunc_devices(name, values);
  return promote_shapes(name, promote_dtypes_inexact(values));
}

std::vector<Value> promote_args_numeric(const std::string& name, const std::vector<Value>& values) {
  check_ufunc_devices(name, values);
  return promote_shapes(name, promote_dtypes_numeric(values));
}

// A constant with x's dtype (lax._const): a typed literal, weak when x is.
Value constant_like(const Value& x, double value) { return typed_scalar(value, dtype_of(x), x.aval().weak_type); }

Value to_bool(const Value& x) {
  return dtype_of(x) == DType::kBool ? x : lax::binary("ne", x, typed_scalar(0, dtype_of(x)));
}

Value compare(const std::string& name, const std::string& primitive, const Value& x, const Value& y) {
  const auto args = promote_args(name, x, y);
  return lax::binary(primitive, args[0], args[1]);
}

bool is_unsigned(DType dtype) { return dtype_kind(dtype) == DTypeKind::kUnsigned; }

Value where_impl(const Value& condition, const Value& x, const Value& y) {
  Value cond = condition;
  if (dtype_of(cond) != DType::kBool) cond = lax::binary("ne", cond, typed_scalar(0, dtype_of(cond)));
  const auto promoted = promote_dtypes({x, y});
  if (cond.aval().rank() == 0) {
    const auto arrays = broadcast_arrays(promoted);
    return lax::select(cond, arrays[0], arrays[1]);
  }
  const auto arrays = broadcast_arrays({cond, promoted[0], promoted[1]});
  return lax::select(arrays[0], arrays[1], arrays[2]);
}

}  // namespace

Value add(const Value& x, const Value& y) {
  const auto a = promote_args("add", x, y);
  return dtype_of(a[0]) == DType::kBool ? lax::binary("or", a[0], a[1]) : lax::add(a[0], a[1]);
}

Value subtract(const Value& x, const Value& y) {
  const auto a = promote_args("subtract", x, y);
  return lax::sub(a[0], a[1]);
}

Value multiply(const Value& x, const Value& y) {
  const auto a = promote_args("multiply", x, y);
  return dtype_of(a[0]) == DType::kBool ? lax::binary("and", a[0], a[1]) : lax::mul(a[0], a[1]);
}

Value true_divide(const Value& x, const Value& y) {
  const auto a = promote_args_inexact("true_divide", {x, y});
  return lax::div(a[0], a[1]);
}

Value floor_divide(const Value& x, const Value& y) {
  return jitted("floor_divide", {x, y}, [](const std::vector<Value>& in) -> std::vector<Value> {
    const auto a = promote_args_numeric("floor_divide", in);
    const DType dtype = dtype_of(a[0]);
    if (is_unsigned(dtype)) return {lax::div(a[0], a[1])};
    if (is_integral(dtype)) {
      const Value quotient = lax::div(a[0], a[1]);
      const Value sign_x = lax::unary("sign", a[0]);
      const Value sign_y = lax::unary("sign", a[1]);
      const Value signs_differ = not_equal(sign_x, sign_y);
      const Value inexact = not_equal(lax::rem(a[0], a[1]), py_int(0));
      const Value select = logical_and(signs_differ, inexact);
      const Value lowered = subtract(quotient, py_int(1));
      return {where(select, lowered, quotient)};
    }
    // Float: Python's float floor division from the truncated remainder (CPython's float_divmod).
    Value mod = lax::rem(a[0], a[1]);
    const Value divisor_zero = equal(a[1], py_int(0));
    const Value difference = lax::sub(a[0], mod);
    const Value corrected = where(divisor_zero, a[0], difference);
    Value div = lax::div(corrected, a[1]);
    const Value mod_nonzero = not_equal(mod, py_int(0));
    const Value sign_y = lax::unary("sign", a[1]);
    const Value sign_mod = lax::unary("sign", mod);
    const Value ind = lax::binary("and", mod_nonzero, not_equal(sign_y, sign_mod));
    const Value adjusted_mod = add(mod, a[1]);
    mod = lax::select(ind, adjusted_mod, mod);
    const Value lowered = subtract(div, py_float(1.0));
    div = lax::select(ind, lowered, div);
    return {bind1("round", {div}, {{"rounding_method", ParamValue(int64_t{0})}})};
  })[0];
}

Value remainder(const Value& x, const Value& y) {
  return jitted("remainder", {x, y}, [](const std::vector<Value>& in) -> std::vector<Value> {
    const auto a = promote_args_numeric("remainder", in);
    const Value zero = constant_like(a[0], 0);
    Value divisor = a[1];
    if (is_integral(dtype_of(divisor))) {
      // Division by zero is checked elsewhere in JAX; the remainder divides by one there instead.
      const Value is_zero = equal(divisor, py_int(0));
      const Value ones = lax::full(shape_of(divisor), constant_like(divisor, 1));
      divisor = where(is_zero, ones, divisor);
    }
    const Value trunc_mod = lax::rem(a[0], divisor);
    const Value nonzero = lax::binary("ne", trunc_mod, zero);
    const Value mod_negative = lax::binary("lt", trunc_mod, zero);
    const Value divisor_negative = lax::binary("lt", divisor, zero);
    const Value do_plus = lax::binary("and", lax::binary("ne", mod_negative, divisor_negative), nonzero);
    const Value plus = lax::add(trunc_mod, divisor);
    return {lax::select(do_plus, plus, trunc_mod)};
  })[0];
}

Value power(const Value& x, const Value& y) {
  // A concrete integer exponent: repeated multiplication (integer_pow) on the promoted base.
  std::optional<int64_t> exponent;
  if (y.is_scalar_literal()) {
    const auto& literal = std::get<Literal>(y.atom());
    if (const auto* i = std::get_if<int64_t>(&literal.value)) exponent = *i;
    if (const auto* b = std::get_if<bool>(&literal.value)) exponent = *b ? 1 : 0;
  }
  if (exponent) return lax::integer_pow(promote_dtypes_numeric({x})[0], *exponent);
  const auto shaped = promote_shapes("power", {x, y});
  const auto a = promote_dtypes_numeric(shaped);
  if (is_integral(dtype_of(a[0])) || dtype_of(a[0]) == DType::kBool) {
    // Square-and-multiply over the exponent's low bits, as JAX does for integer powers.
    Value base = a[0];
    Value exp = a[1];
    const Value zero = constant_like(exp, 0);
    const Value one = constant_like(exp, 1);
    const Value base_zero = lax::binary("eq", base, zero);
    const Value exp_nonzero = lax::binary("ne", exp, zero);
    Value acc = where(lax::binary("and", base_zero, exp_nonzero), zero, one);
    for (int bit = 0; bit < 6; ++bit) {
      const Value bit_set = lax::binary("and", exp, one);
      const Value multiplied = lax::mul(acc, base);
      acc = where(bit_set, multiplied, acc);
      base = lax::mul(base, base);
      exp = lax::binary("shift_right_logical", exp, one);
    }
    return acc;
  }
  if (!is_integral(dtype_of(shaped[0])) && is_integral(dtype_of(shaped[1])) && dtype_of(shaped[0]) != DType::kBool) {
    return lax::pow(shaped[0], shaped[1]);
  }
  return lax::pow(a[0], a[1]);
}

Value maximum(const Value& x, const Value& y) {
  const auto a = promote_args("maximum", x, y);
  return lax::max(a[0], a[1]);
}

Value minimum(const Value& x, const Value& y) {
  const auto a = promote_args("minimum", x, y);
  return lax::min(a[0], a[1]);
}

Value equal(const Value& x, const Value& y) { return compare("equal", "eq", x, y); }
Value not_equal(const Value& x, const Value& y) { return compare("not_equal", "ne", x, y); }
Value less(const Value& x, const Value& y) { return compare("less", "lt", x, y); }
Value less_equal(const Value& x, const Value& y) { return compare("less_equal", "le", x, y); }
Value greater(const Value& x, const Value& y) { return compare("greater", "gt", x, y); }
Value greater_equal(const Value& x, const Value& y) { return compare("greater_equal", "ge", x, y); }

Value logical_and(const Value& x, const Value& y) {
  const auto a = promote_args("logical_and", x, y);
  const Value lhs = to_bool(a[0]);
  return lax::binary("and", lhs, to_bool(a[1]));
}

Value logical_or(const Value& x, const Value& y) {
  const auto a = promote_args("logical_or", x, y);
  const Value lhs = to_bool(a[0]);
  return lax::binary("or", lhs, to_bool(a[1]));
}

Value logical_xor(const Value& x, const Value& y) {
  const auto a = promote_args("logical_xor", x, y);
  const Value lhs = to_bool(a[0]);
  return lax::binary("xor", lhs, to_bool(a[1]));
}

Value bitwise_and(const Value& x, const Value& y) {
  const auto a = promote_args("bitwise_and", x, y);
  return lax::binary("and", a[0], a[1]);
}

Value bitwise_or(const Value& x, const Value& y) {
  const auto a = promote_args("bitwise_or", x, y);
  return lax::binary("or", a[0], a[1]);
}

Value logaddexp(const Value& x, const Value& y) {
  const auto a = promote_args_inexact("logaddexp", {x, y});
  const Value amax = lax::max(a[0], a[1]);
  const Value delta = lax::sub(a[0], a[1]);
  const Value is_nan = lax::binary("ne", delta, delta);
  const Value both = lax::add(a[0], a[1]);
  const Value soft = lax::add(amax, lax::unary("log1p", lax::unary("exp", lax::neg(lax::unary("abs", delta)))));
  return lax::select(is_nan, both, soft);
}

Value arctan2(const Value& x, const Value& y) {
  const auto a = promote_args_inexact("arctan2", {x, y});
  return lax::binary("atan2", a[0], a[1]);
}

Value logical_not(const Value& x) { return lax::unary("not", to_bool(x)); }
Value negative(const Value& x) { return lax::neg(x); }
Value positive(const Value& x) { return x; }

Value abs(const Value& x) {
  const DType dtype = dtype_of(x);
  return dtype == DType::kBool || is_unsigned(dtype) ? x : lax::unary("abs", x);
}

Value sign(const Value& x) { return lax::unary("sign", x); }  // promote_args of one value changes nothing
Value square(const Value& x) { return lax::unary("square", promote_dtypes_numeric({x})[0]); }
Value reciprocal(const Value& x) { return lax::integer_pow(promote_dtypes_inexact({x})[0], -1); }

Value floor(const Value& x) {
  if (is_integral(dtype_of(x)) || dtype_of(x) == DType::kBool) return x;
  return lax::unary("floor", promote_dtypes_inexact({x})[0]);
}

Value ceil(const Value& x) {
  if (is_integral(dtype_of(x)) || dtype_of(x) == DType::kBool) return x;
  return lax::unary("ceil", promote_dtypes_inexact({x})[0]);
}

Value isfinite(const Value& x) {
  if (is_floating(dtype_of(x))) return lax::unary("is_finite", x);
  return lax::full(shape_of(x), py_bool(true), DType::kBool);
}

Value isnan(const Value& x) {
  if (is_floating(dtype_of(x))) return lax::binary("ne", x, x);
  return lax::full(shape_of(x), py_bool(false), DType::kBool);
}

Value math(const std::string& name, const Value& x) {
  static const std::map<std::string, std::string> primitives = {
      {"exp", "exp"},     {"exp2", "exp2"},        {"log", "log"},       {"log1p", "log1p"},   {"expm1", "expm1"},
      {"sqrt", "sqrt"},   {"rsqrt", "rsqrt"},      {"cbrt", "cbrt"},     {"sin", "sin"},       {"cos", "cos"},
      {"tan", "tan"},     {"tanh", "tanh"},        {"sinh", "sinh"},     {"cosh", "cosh"},     {"arcsin", "asin"},
      {"arccos", "acos"}, {"arctan", "atan"},      {"arcsinh", "asinh"}, {"arctanh", "atanh"}, {"arccosh", "acosh"},
      {"asin", "asin"},   {"acos", "acos"},        {"atan", "atan"},     {"asinh", "asinh"},   {"atanh", "atanh"},
      {"acosh", "acosh"}, {"logistic", "logistic"}};
  const auto it = primitives.find(name);
  if (it == primitives.end()) throw not_implemented_error("jax.numpy." + name + " is not supported");
  return lax::unary(it->second, promote_args_inexact(name, {x})[0]);
}

Value exp(const Value& x) { return math("exp", x); }
Value log(const Value& x) { return math("log", x); }
Value sqrt(const Value& x) { return math("sqrt", x); }
Value tanh(const Value& x) { return math("tanh", x); }
Value sin(const Value& x) { return math("sin", x); }
Value cos(const Value& x) { return math("cos", x); }

Value where(const Value& condition, const Value& x, const Value& y) {
  return jitted("_where", {condition, x, y}, [](const std::vector<Value>& in) -> std::vector<Value> {
    return {where_impl(in[0], in[1], in[2])};
  })[0];
}

Value clip(const Value& x, const std::optional<Value>& min, const std::optional<Value>& max) {
  std::vector<Value> inputs{x};
  if (min) inputs.push_back(*min);
  if (max) inputs.push_back(*max);
  const bool has_min = min.has_value();
  const bool has_max = max.has_value();
  return jitted("clip", inputs, [has_min, has_max](const std::vector<Value>& in) -> std::vector<Value> {
    Value out = in[0];
    std::size_t next = 1;
    if (has_min) out = maximum(in[next++], out);
    if (has_max) out = minimum(in[next], out);
    return {out};
  })[0];
}

}  // namespace shardscope::api::jnp

namespace shardscope::api::jnp {

Value isinf(const Value& x) {
  if (!is_floating(dtype_of(x))) return lax::full(shape_of(x), py_bool(false), DType::kBool);
  return lax::binary("eq", lax::unary("abs", x), typed_scalar(std::numeric_limits<double>::infinity(), dtype_of(x)));
}

// JAX's isclose: |a - b| <= atol + rtol * |b| where b is finite, exact equality otherwise (so equal infinities
// are close), NaNs equal only with equal_nan.
Value isclose(const Value& a, const Value& b, const Value& rtol, const Value& atol, bool equal_nan) {
  return jitted("isclose", {a, b, rtol, atol}, [equal_nan](const std::vector<Value>& in) -> std::vector<Value> {
    const auto same = promote_args("isclose", in[0], in[1]);
    const auto args = promote_args_inexact("isclose", same);
    const Value& x = args[0];
    const Value& y = args[1];
    const DType dtype = dtype_of(x);
    const Value r = lax::convert_element_type(in[2], dtype);
    const Value t = lax::convert_element_type(in[3], dtype);
    const Value both_nan = logical_and(isnan(x), isnan(y));
    const Value in_range =
        lax::binary("le", lax::unary("abs", lax::sub(x, y)), lax::add(t, lax::mul(r, lax::unary("abs", y))));
    const Value out = logical_or(lax::binary("eq", x, y), logical_and(isfinite(y), in_range));
    return {equal_nan ? logical_or(out, both_nan) : out};
  })[0];
}

Value allclose(const Value& a, const Value& b, const Value& rtol, const Value& atol, bool equal_nan) {
  return jitted("allclose", {a, b, rtol, atol}, [equal_nan](const std::vector<Value>& in) -> std::vector<Value> {
    return {all(isclose(in[0], in[1], in[2], in[3], equal_nan))};
  })[0];
}

Value array_equal(const Value& a, const Value& b, bool equal_nan) {
  // A concrete False placed like jnp.array(False): JAX answers without comparing anything.
  if (shape_of(a) != shape_of(b)) return asarray(std::make_shared<Buffer>(DType::kBool, Shape{}));
  Value eq = equal(a, b);
  if (equal_nan) eq = logical_or(eq, logical_and(isnan(a), isnan(b)));
  return all(eq);
}

Value array_equiv(const Value& a, const Value& b) {
  try {
    (void)broadcast_shapes({shape_of(a), shape_of(b)});
  } catch (const Error& error) {
    if (error.python_type() != "ValueError") throw;
    return asarray(std::make_shared<Buffer>(DType::kBool, Shape{}));
  }
  return all(equal(a, b));
}

}  // namespace shardscope::api::jnp
