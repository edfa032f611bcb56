// jnp reductions: JAX's _reduction (promotion, computation dtype, keepdims) and mean/var/std/arg*/cum* on top.
#include <algorithm>
#include <cmath>
#include <set>

#include "api/numpy.h"
#include "api/session.h"
#include "base/error.h"

namespace shardscope::api::jnp {
namespace {

// Positive reduction dims, in the order the axis argument gives them.
std::vector<int64_t> reduction_dims(const Value& x, const Axis& axis) {
  const int64_t rank = ndim_of(x);
  std::vector<int64_t> dims;
  if (!axis) {
    for (int64_t d = 0; d < rank; ++d) dims.push_back(d);
    return dims;
  }
  for (const int64_t a : *axis) dims.push_back(canonicalize_axis(a, rank));
  if (std::set<int64_t>(dims.begin(), dims.end()).size() != dims.size()) {
    std::string text = axis->size() == 1 ? std::to_string(axis->front()) : "(";
    if (axis->size() != 1) {
      for (std::size_t i = 0; i < axis->size(); ++i) text += (i > 0 ? ", " : "") + std::to_string((*axis)[i]);
      text += ")";
    }
    throw value_error("duplicate value in 'axis': " + text);
  }
  return dims;
}

DType promote_integer_dtype(DType dtype) {
  const bool x64 = session().enable_x64;
  if (dtype == DType::kBool) return default_int_dtype(x64);
  const DType default_int = default_int_dtype(x64);
  const DType default_uint = x64 ? DType::kUInt64 : DType::kUInt32;
  if (dtype_kind(dtype) == DTypeKind::kUnsigned && dtype_bits(dtype) < dtype_bits(default_uint)) return default_uint;
  if (dtype_kind(dtype) == DTypeKind::kSigned && dtype_bits(dtype) < dtype_bits(default_int)) return default_int;
  return dtype;
}

DType upcast_f16(DType dtype) {
  return dtype == DType::kFloat16 || dtype == DType::kBFloat16 ? DType::kFloat32 : dtype;
}

DType to_inexact(DType dtype) { return promote_dtypes_inexact({typed_scalar(0, dtype)})[0].aval().dtype; }

enum class Preproc { kNone, kNumeric, kBool };

struct ReductionSpec {
  std::string name;
  std::string primitive;       // for non-bool computation
  std::string bool_primitive;  // for bool computation
  Preproc preproc = Preproc::kNone;
  bool has_identity = true;
  bool upcast_f16_for_computation = false;
  bool promote_integers = false;
};

Value reduction(const ReductionSpec& spec, const Value& input, const Axis& axis, std::optional<DType> dtype,
                bool keepdims) {
  Value a = input;
  if (spec.preproc == Preproc::kNumeric) a = promote_dtypes_numeric({a})[0];
  if (spec.preproc == Preproc::kBool) a = lax::convert_element_type(a, DType::kBool);
  const std::vector<int64_t> dims = reduction_dims(a, axis);
  if (!spec.has_identity) {
    for (const int64_t d : dims) {
      if (shape_of(a)[static_cast<std::size_t>(d)] < 1) {
        throw value_error("zero-size array to reduction operation " + spec.name + " which has no identity");
      }
    }
  }
  DType result_dtype = dtype_of(a);
  if (dtype) {
    result_dtype = canonicalize_dtype(*dtype, session().enable_x64);
  } else if (spec.promote_integers) {
    result_dtype = promote_integer_dtype(result_dtype);
  }
  const DType computation_dtype =
      spec.upcast_f16_for_computation && is_floating(result_dtype) ? upcast_f16(result_dtype) : result_dtype;
  a = lax::convert_element_type(a, computation_dtype);
  const std::string& primitive = computation_dtype == DType::kBool ? spec.bool_primitive : spec.primitive;
  Value result = lax::reduce(primitive, a, dims);
  if (keepdims) result = lax::expand_dims(result, dims);
  return lax::convert_element_type(result, dtype.value_or(result_dtype));
}

// The element count of the reduced dims as a scalar of `dtype` (a literal, as a Python int converts to one).
Value count(const Value& x, const Axis& axis, DType dtype) {
  int64_t size = 1;
  for (const int64_t d : reduction_dims(x, axis)) size *= shape_of(x)[static_cast<std::size_t>(d)];
  return lax::convert_element_type(py_int(size), dtype);
}

Value arg_reduction(const std::string& primitive, const Value& x, std::optional<int64_t> axis, bool keepdims) {
  Value a = x;
  std::vector<int64_t> dims;
  int64_t along = 0;
  if (!axis) {
    for (int64_t d = 0; d < ndim_of(x); ++d) dims.push_back(d);
    a = ravel(a);
  } else {
    along = *axis;
    dims.push_back(*axis);
  }
  along = canonicalize_axis(along, ndim_of(a));
  if (shape_of(a)[static_cast<std::size_t>(along)] == 0) {
    throw value_error("attempt to get " + primitive + " of an empty sequence");
  }
  Value result = lax::argminmax(primitive, a, along, default_int_dtype(session().enable_x64));
  return keepdims ? expand_dims(result, dims) : result;
}

Value cumulative(const std::string& name, const std::string& primitive, const Value& x, std::optional<int64_t> axis,
                 std::optional<DType> dtype) {
  return jitted(name, {x}, [&](const std::vector<Value>& in) -> std::vector<Value> {
    Value a = in[0];
    if (!axis || ndim_of(a) == 0) a = lax::reshape(a, {product(shape_of(a))});
    const int64_t along = canonicalize_axis(axis.value_or(0), ndim_of(a));
    DType result_type = dtype.value_or(dtype_of(a));
    if (!dtype || result_type == DType::kBool) result_type = promote_integer_dtype(result_type);
    result_type = canonicalize_dtype(result_type, session().enable_x64);
    if (dtype_of(a) != DType::kBool && dtype == DType::kBool) a = lax::convert_element_type(a, DType::kBool);
    a = lax::convert_element_type(a, result_type);
    Value result = lax::cumulative(primitive, a, along);
    if (dtype == DType::kBool) result = lax::convert_element_type(result, DType::kBool);
    return {result};
  })[0];
}

Value var_impl(const Value& x, const Axis& axis, std::optional<DType> dtype, int64_t ddof, bool keepdims) {
  DType computation;
  DType out;
  if (dtype) {
    computation = canonicalize_dtype(*dtype, session().enable_x64);
    out = computation;
  } else if (!is_floating(dtype_of(x))) {
    out = to_inexact(dtype_of(x));
    computation = out;
  } else {
    out = dtype_of(x);
    computation = dtype_of(x);
  }
  computation = upcast_f16(computation);
  const Value a = astype(x, computation);
  const Value a_mean = mean(a, axis, computation, true);
  const Value centered = lax::unary("square", lax::sub(a, a_mean));
  Value normalizer = count(a, axis, computation);
  normalizer = lax::sub(normalizer, lax::convert_element_type(py_int(ddof), computation));
  Value result = sum(centered, axis, computation, keepdims);
  result = astype(lax::div(result, normalizer), out);
  return where(greater(normalizer, py_int(0)), result, py_float(std::nan("")));
}

}  // namespace

Value sum(const Value& x, const Axis& axis, std::optional<DType> dtype, bool keepdims) {
  return reduction({"sum", "reduce_sum", "reduce_or", Preproc::kNumeric, true, true, true}, x, axis, dtype, keepdims);
}

Value prod(const Value& x, const Axis& axis, std::optional<DType> dtype, bool keepdims) {
  return reduction({"prod", "reduce_prod", "reduce_and", Preproc::kNumeric, true, true, true}, x, axis, dtype,
                   keepdims);
}

Value max(const Value& x, const Axis& axis, bool keepdims) {
  return reduction({"max", "reduce_max", "reduce_max", Preproc::kNone, false, false, false}, x, axis, std::nullopt,
                   keepdims);
}

Value min(const Value& x, const Axis& axis, bool keepdims) {
  return reduction({"min", "reduce_min", "reduce_min", Preproc::kNone, false, false, false}, x, axis, std::nullopt,
                   keepdims);
}

Value all(const Value& x, const Axis& axis, bool keepdims) {
  return reduction({"all", "reduce_and", "reduce_and", Preproc::kBool, true, false, false}, x, axis, std::nullopt,
                   keepdims);
}

Value any(const Value& x, const Axis& axis, bool keepdims) {
  return reduction({"any", "reduce_or", "reduce_or", Preproc::kBool, true, false, false}, x, axis, std::nullopt,
                   keepdims);
}

Value mean(const Value& x, const Axis& axis, std::optional<DType> dtype, bool keepdims) {
  const DType result_dtype = dtype ? canonicalize_dtype(*dtype, session().enable_x64) : to_inexact(dtype_of(x));
  const DType computation = is_floating(result_dtype) ? upcast_f16(result_dtype) : result_dtype;
  const Value normalizer = count(x, axis, computation);
  return astype(lax::div(sum(x, axis, computation, keepdims), normalizer), result_dtype);
}

Value var(const Value& x, const Axis& axis, std::optional<DType> dtype, int64_t ddof, bool keepdims) {
  return jitted("_var", {x}, [&](const std::vector<Value>& in) -> std::vector<Value> {
    return {var_impl(in[0], axis, dtype, ddof, keepdims)};
  })[0];
}

Value stddev(const Value& x, const Axis& axis, std::optional<DType> dtype, int64_t ddof, bool keepdims) {
  return jitted("_std", {x}, [&](const std::vector<Value>& in) -> std::vector<Value> {
    DType computation;
    DType out;
    if (dtype) {
      computation = canonicalize_dtype(*dtype, session().enable_x64);
      out = computation;
    } else {
      out = to_inexact(dtype_of(in[0]));
      computation = is_floating(dtype_of(in[0])) ? dtype_of(in[0]) : out;
    }
    computation = upcast_f16(computation);
    return {astype(lax::unary("sqrt", var(in[0], axis, computation, ddof, keepdims)), out)};
  })[0];
}

Value argmax(const Value& x, std::optional<int64_t> axis, bool keepdims) {
  return arg_reduction("argmax", x, axis, keepdims);
}

Value argmin(const Value& x, std::optional<int64_t> axis, bool keepdims) {
  return arg_reduction("argmin", x, axis, keepdims);
}

Value cumsum(const Value& x, std::optional<int64_t> axis, std::optional<DType> dtype) {
  return cumulative("cumsum", "cumsum", x, axis, dtype);
}

Value cumprod(const Value& x, std::optional<int64_t> axis, std::optional<DType> dtype) {
  return cumulative("cumprod", "cumprod", x, axis, dtype);
}

}  // namespace shardscope::api::jnp
