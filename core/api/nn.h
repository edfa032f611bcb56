// jax.nn activations and normalisers over user values, with the primitives JAX's definitions emit.
#pragma once

#include <cstdint>
#include <optional>

#include "api/numpy.h"

namespace shardscope::api::nn {

// relu/relu6 are custom_jvp functions in JAX; shardscope has no custom_jvp_call, so their jaxprs show the inner
// jit only.
Value relu(const Value& x);
Value relu6(const Value& x);
Value sigmoid(const Value& x);
Value silu(const Value& x);
Value softplus(const Value& x);
Value gelu(const Value& x, bool approximate = true);
Value softmax(const Value& x, int64_t axis = -1);
Value log_softmax(const Value& x, int64_t axis = -1);
Value logsumexp(const Value& x, const jnp::Axis& axis = std::nullopt, bool keepdims = false);
Value leaky_relu(const Value& x, const Value& negative_slope);
Value elu(const Value& x, const Value& alpha);
Value celu(const Value& x, const Value& alpha);
Value selu(const Value& x);
Value log_sigmoid(const Value& x);
Value soft_sign(const Value& x);
Value hard_tanh(const Value& x);
Value hard_sigmoid(const Value& x);
Value hard_silu(const Value& x);
Value mish(const Value& x);
Value squareplus(const Value& x, const Value& b);
Value sparse_plus(const Value& x);
Value glu(const Value& x, int64_t axis = -1);
// Over one or several axes (None: all), optionally masked by `where` (masked outputs are 0, or -inf for log).
Value softmax(const Value& x, const jnp::Axis& axis, const std::optional<Value>& where);
Value log_softmax(const Value& x, const jnp::Axis& axis, const std::optional<Value>& where);
// (x - mean) * rsqrt(variance + epsilon) over `axis`, with JAX's "fast" variance when none is given.
Value standardize(const Value& x, const jnp::Axis& axis, const std::optional<Value>& mean,
                  const std::optional<Value>& variance, const Value& epsilon);
Value one_hot(const Value& x, int64_t num_classes, std::optional<DType> dtype = std::nullopt, int64_t axis = -1);

}  // namespace shardscope::api::nn
