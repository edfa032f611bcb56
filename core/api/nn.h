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
Value one_hot(const Value& x, int64_t num_classes, std::optional<DType> dtype = std::nullopt, int64_t axis = -1);

}  // namespace shardscope::api::nn
