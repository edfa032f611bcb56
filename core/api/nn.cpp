// jax.nn: each activation as JAX defines it in terms of jnp/lax, including which ones are jitted.
#include "api/nn.h"

#include <cmath>
#include <limits>
#include <numbers>

#include "api/session.h"
#include "base/error.h"

namespace shardscope::api::nn {
namespace {

Value one(const std::string& name, const Value& x, Value (*body)(const Value&)) {
  return jitted(name, {x}, [body](const std::vector<Value>& in) -> std::vector<Value> { return {body(in[0])}; })[0];
}

// jnp.max(x, axis, initial=-inf, keepdims=True): the reduction, then max with the initial value.
Value max_with_neg_inf(const Value& x, int64_t axis) {
  const Value reduced = jnp::max(x, std::vector<int64_t>{axis}, false);
  const Value initial = typed_scalar(-std::numeric_limits<double>::infinity(), dtype_of(reduced));
  const Value result = lax::max(initial, reduced);
  return lax::expand_dims(result, {canonicalize_axis(axis, ndim_of(x))});
}

}  // namespace

Value relu(const Value& x) {
  return one("relu", x, [](const Value& v) { return jnp::maximum(v, py_int(0)); });
}

Value relu6(const Value& x) {
  return one("relu6", x, [](const Value& v) { return jnp::minimum(jnp::maximum(v, py_int(0)), py_float(6.0)); });
}

Value sigmoid(const Value& x) { return lax::unary("logistic", x); }

Value silu(const Value& x) {
  return one("silu", x, [](const Value& v) { return jnp::multiply(v, sigmoid(v)); });
}

Value softplus(const Value& x) {
  return one("softplus", x, [](const Value& v) { return jnp::logaddexp(v, py_int(0)); });
}

Value gelu(const Value& x, bool approximate) {
  const Value v = jnp::promote_dtypes_inexact({x})[0];
  const DType dtype = dtype_of(v);
  if (approximate) {
    const Value scale = typed_scalar(static_cast<double>(static_cast<float>(std::sqrt(2.0 / std::numbers::pi))), dtype);
    const Value cubic = jnp::multiply(py_float(0.044715), jnp::power(v, py_int(3)));
    const Value cdf =
        jnp::multiply(py_float(0.5), jnp::add(py_float(1.0), jnp::tanh(jnp::multiply(scale, jnp::add(v, cubic)))));
    return jnp::multiply(v, cdf);
  }
  const Value sqrt_half = typed_scalar(static_cast<double>(static_cast<float>(std::sqrt(0.5))), dtype);
  const Value half_x = jnp::multiply(py_float(0.5), v);
  const Value erfc = lax::unary("erfc", jnp::multiply(jnp::negative(v), sqrt_half));
  return jnp::asarray(jnp::multiply(half_x, erfc), dtype);
}

Value softmax(const Value& x, int64_t axis) {
  const Value x_max = max_with_neg_inf(x, axis);
  const Value unnormalized = jnp::exp(jnp::subtract(x, x_max));
  return jnp::true_divide(unnormalized, jnp::sum(unnormalized, std::vector<int64_t>{axis}, std::nullopt, true));
}

Value log_softmax(const Value& x, int64_t axis) {
  return jitted("log_softmax", {x}, [axis](const std::vector<Value>& in) -> std::vector<Value> {
    const Value shifted = jnp::subtract(in[0], max_with_neg_inf(in[0], axis));
    const Value total = jnp::log(jnp::sum(jnp::exp(shifted), std::vector<int64_t>{axis}, std::nullopt, true));
    return {jnp::subtract(shifted, total)};
  })[0];
}

Value logsumexp(const Value& x, const jnp::Axis& axis, bool keepdims) {
  const Value a = jnp::promote_dtypes_inexact({x})[0];
  std::vector<int64_t> dims;
  if (axis) {
    for (const int64_t d : *axis) dims.push_back(canonicalize_axis(d, ndim_of(a)));
  } else {
    for (int64_t d = 0; d < ndim_of(a); ++d) dims.push_back(d);
  }
  // jnp.max with initial=-inf: the reduction, then max against the initial value.
  Value amax = jnp::max(a, dims, false);
  amax = lax::max(typed_scalar(-std::numeric_limits<double>::infinity(), dtype_of(amax)), amax);
  if (keepdims) amax = lax::expand_dims(amax, dims);
  const Value finite = jnp::isfinite(amax);
  amax = lax::select(finite, amax, lax::full(shape_of(amax), typed_scalar(0, dtype_of(amax))));
  const Value with_dims = keepdims ? amax : lax::expand_dims(amax, dims);
  const Value exp = lax::unary("exp", lax::sub(a, jnp::astype(with_dims, dtype_of(a))));
  const Value summed = jnp::abs(jnp::sum(exp, dims, std::nullopt, keepdims));
  const Value log_sum = lax::unary("log", summed);
  return lax::add(log_sum, jnp::astype(amax, dtype_of(summed)));
}

Value one_hot(const Value& x, int64_t num_classes, std::optional<DType> dtype, int64_t axis) {
  const DType out = dtype.value_or(default_float_dtype(session().enable_x64));
  if (!is_integral(dtype_of(x))) {
    throw value_error("jax.nn.one_hot expects integral input, got " + std::string(dtype_name(dtype_of(x))));
  }
  return jitted("_one_hot", {x}, [&](const std::vector<Value>& in) -> std::vector<Value> {
    const int64_t out_axis = canonicalize_axis(axis, ndim_of(in[0]) + 1);
    const Value lhs = lax::expand_dims(in[0], {out_axis});
    Shape rhs_shape(static_cast<std::size_t>(ndim_of(in[0])), 1);
    rhs_shape.insert(rhs_shape.begin() + out_axis, num_classes);
    const Value rhs = lax::broadcasted_iota(dtype_of(in[0]), rhs_shape, out_axis);
    return {jnp::astype(jnp::equal(lhs, rhs), out)};
  })[0];
}

}  // namespace shardscope::api::nn
