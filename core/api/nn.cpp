// jax.nn: each activation as JAX defines it in terms of jnp/lax, including which ones are jitted.
#include "api/nn.h"

#include <cmath>
#include <functional>
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
  // JAX shifts by the max under stop_gradient: the shift cancels in the value, so its derivative is dropped.
  const Value x_max = lax::stop_gradient(max_with_neg_inf(x, axis));
  const Value unnormalized = jnp::exp(jnp::subtract(x, x_max));
  return jnp::true_divide(unnormalized, jnp::sum(unnormalized, std::vector<int64_t>{axis}, std::nullopt, true));
}

Value log_softmax(const Value& x, int64_t axis) {
  return jitted("log_softmax", {x}, [axis](const std::vector<Value>& in) -> std::vector<Value> {
    const Value shifted = jnp::subtract(in[0], lax::stop_gradient(max_with_neg_inf(in[0], axis)));
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

namespace shardscope::api::nn {
namespace {

Value jit1(const std::string& name, const std::vector<Value>& inputs,
           const std::function<Value(const std::vector<Value>&)>& body) {
  return jitted(name, inputs, [&body](const std::vector<Value>& in) -> std::vector<Value> { return {body(in)}; })[0];
}

Value gt(const Value& x, double v) { return jnp::greater(x, py_float(v)); }

// All axes when axis is None, as jnp reductions take them.
std::vector<int64_t> axes_of(const Value& x, const jnp::Axis& axis) {
  std::vector<int64_t> dims;
  if (axis) {
    for (const int64_t d : *axis) dims.push_back(canonicalize_axis(d, ndim_of(x)));
  } else {
    for (int64_t d = 0; d < ndim_of(x); ++d) dims.push_back(d);
  }
  return dims;
}

// jnp.max(x, axis, where=where, initial=-inf, keepdims=True): masked-out elements count as -inf.
Value masked_max(const Value& x, const std::vector<int64_t>& dims, const std::optional<Value>& where) {
  const Value neg_inf = typed_scalar(-std::numeric_limits<double>::infinity(), dtype_of(x));
  const Value masked = where ? jnp::where(*where, x, neg_inf) : x;
  const Value reduced = jnp::max(masked, dims, false);
  return lax::expand_dims(lax::max(typed_scalar(-std::numeric_limits<double>::infinity(), dtype_of(reduced)), reduced),
                          dims);
}

Value masked_sum(const Value& x, const std::vector<int64_t>& dims, const std::optional<Value>& where) {
  const Value masked = where ? jnp::where(*where, x, py_int(0)) : x;
  return jnp::sum(masked, dims, std::nullopt, true);
}

}  // namespace

Value leaky_relu(const Value& x, const Value& negative_slope) {
  return jit1("leaky_relu", {x, negative_slope}, [](const std::vector<Value>& in) {
    return jnp::where(jnp::greater_equal(in[0], py_int(0)), in[0], jnp::multiply(in[1], in[0]));
  });
}

Value elu(const Value& x, const Value& alpha) {
  return jit1("elu", {x, alpha}, [](const std::vector<Value>& in) {
    const Value positive = gt(in[0], 0.0);
    return jnp::where(positive, in[0],
                      jnp::multiply(in[1], jnp::math("expm1", jnp::where(positive, py_float(0.0), in[0]))));
  });
}

Value celu(const Value& x, const Value& alpha) {
  return jit1("celu", {x, alpha}, [](const std::vector<Value>& in) {
    const Value negative_part = jnp::true_divide(jnp::minimum(in[0], py_float(0.0)), in[1]);
    return jnp::add(jnp::maximum(in[0], py_float(0.0)), jnp::multiply(in[1], jnp::math("expm1", negative_part)));
  });
}

Value selu(const Value& x) {
  return jit1("selu", {x}, [](const std::vector<Value>& in) {
    return jnp::multiply(py_float(1.0507009873554804934193349852946),
                         elu(in[0], py_float(1.6732632423543772848170429916717)));
  });
}

Value log_sigmoid(const Value& x) {
  return jit1("log_sigmoid", {x},
              [](const std::vector<Value>& in) { return jnp::negative(softplus(jnp::negative(in[0]))); });
}

Value soft_sign(const Value& x) {
  return jit1("soft_sign", {x}, [](const std::vector<Value>& in) {
    return jnp::true_divide(in[0], jnp::add(jnp::abs(in[0]), py_int(1)));
  });
}

Value hard_tanh(const Value& x) {
  return jit1("hard_tanh", {x}, [](const std::vector<Value>& in) {
    return jnp::where(jnp::greater(in[0], py_int(1)), py_int(1),
                      jnp::where(jnp::less(in[0], py_int(-1)), py_int(-1), in[0]));
  });
}

Value hard_sigmoid(const Value& x) {
  return jit1("hard_sigmoid", {x}, [](const std::vector<Value>& in) {
    return jnp::true_divide(relu6(jnp::add(in[0], py_float(3.0))), py_float(6.0));
  });
}

Value hard_silu(const Value& x) {
  return jit1("hard_silu", {x}, [](const std::vector<Value>& in) { return jnp::multiply(in[0], hard_sigmoid(in[0])); });
}

Value mish(const Value& x) {
  return jit1("mish", {x},
              [](const std::vector<Value>& in) { return jnp::multiply(in[0], jnp::tanh(softplus(in[0]))); });
}

Value squareplus(const Value& x, const Value& b) {
  return jit1("squareplus", {x, b}, [](const std::vector<Value>& in) {
    const Value y = jnp::add(in[0], jnp::sqrt(jnp::add(jnp::square(in[0]), in[1])));
    return jnp::true_divide(y, py_int(2));
  });
}

Value sparse_plus(const Value& x) {
  return jit1("sparse_plus", {x}, [](const std::vector<Value>& in) {
    const Value quadratic = jnp::true_divide(jnp::power(jnp::add(in[0], py_float(1.0)), py_int(2)), py_int(4));
    return jnp::where(jnp::less_equal(in[0], py_float(-1.0)), py_float(0.0),
                      jnp::where(jnp::greater_equal(in[0], py_float(1.0)), in[0], quadratic));
  });
}

Value glu(const Value& x, int64_t axis) {
  return jit1("glu", {x}, [axis](const std::vector<Value>& in) {
    const int64_t dim = canonicalize_axis(axis, ndim_of(in[0]));
    if (shape_of(in[0])[static_cast<std::size_t>(dim)] % 2 != 0) {
      throw Error("AssertionError", "axis size must be divisible by 2");
    }
    const auto halves = jnp::split(in[0], 2, dim);
    return jnp::multiply(halves[0], sigmoid(halves[1]));
  });
}

Value softmax(const Value& x, const jnp::Axis& axis, const std::optional<Value>& where) {
  const std::vector<int64_t> dims = axes_of(x, axis);
  const Value x_max = lax::stop_gradient(masked_max(x, dims, where));
  const Value safe =
      where ? jnp::where(*where, x, typed_scalar(-std::numeric_limits<double>::infinity(), dtype_of(x))) : x;
  const Value unnormalized = jnp::exp(jnp::subtract(safe, x_max));
  const Value result = jnp::true_divide(unnormalized, masked_sum(unnormalized, dims, where));
  return where ? jnp::where(*where, result, py_int(0)) : result;
}

Value log_softmax(const Value& x, const jnp::Axis& axis, const std::optional<Value>& where) {
  std::vector<Value> inputs{x};
  if (where) inputs.push_back(*where);
  const bool masked = where.has_value();
  return jit1("log_softmax", inputs, [&axis, masked](const std::vector<Value>& in) {
    const std::optional<Value> mask = masked ? std::optional<Value>(in[1]) : std::nullopt;
    const std::vector<int64_t> dims = axes_of(in[0], axis);
    const Value x_max = lax::stop_gradient(masked_max(in[0], dims, mask));
    const Value safe =
        mask ? jnp::where(*mask, in[0], typed_scalar(-std::numeric_limits<double>::infinity(), dtype_of(in[0])))
             : in[0];
    const Value shifted = jnp::subtract(safe, x_max);  // shift-invariant: the max term's gradient cancels
    const Value result = jnp::subtract(shifted, jnp::log(masked_sum(jnp::exp(shifted), dims, mask)));
    return mask ? jnp::where(*mask, result, typed_scalar(-std::numeric_limits<double>::infinity(), dtype_of(result)))
                : result;
  });
}

Value standardize(const Value& x, const jnp::Axis& axis, const std::optional<Value>& mean,
                  const std::optional<Value>& variance, const Value& epsilon) {
  std::vector<Value> inputs{x, epsilon};
  if (mean) inputs.push_back(*mean);
  if (variance) inputs.push_back(*variance);
  const bool has_mean = mean.has_value();
  const bool has_variance = variance.has_value();
  return jit1("standardize", inputs, [&axis, has_mean, has_variance](const std::vector<Value>& in) {
    std::size_t next = 2;
    const Value m = has_mean ? in[next++] : jnp::mean(in[0], axis, std::nullopt, true);
    Value v;
    if (has_variance) {
      v = in[next];
    } else {
      // The "fast" variance, E[x^2] - E[x]^2, clipped at zero against rounding.
      v = jnp::subtract(jnp::mean(jnp::square(in[0]), axis, std::nullopt, true), jnp::square(m));
      v = jnp::clip(v, py_int(0), std::nullopt);
    }
    return jnp::multiply(jnp::subtract(in[0], m), lax::unary("rsqrt", jnp::add(v, in[1])));
  });
}

}  // namespace shardscope::api::nn
