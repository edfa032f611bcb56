// jax.custom_jvp / jax.custom_vjp: the primitives a call binds and the rules differentiation and vmap use.
#pragma once

namespace shardscope {

// Registers custom_jvp_call, custom_vjp_call and custom_lin with their JVP, transpose and batching rules, once.
//
// custom_jvp_call: operands (call consts..., jvp consts..., args...); params call_jaxpr (every operand, the jvp
// consts unused) -> outs, jvp_jaxpr (jvp consts..., primals..., tangents...) -> (outs..., tangent outs...),
// num_call_consts, num_jvp_consts. custom_vjp_call: operands (call consts..., fwd consts..., bwd consts..., args...);
// params call_jaxpr (every operand), fwd_jaxpr (fwd consts..., args...) -> (outs..., residuals...), bwd_jaxpr (bwd
// consts..., residuals..., output cotangents...) -> one cotangent per arg, num_call_consts, num_fwd_consts,
// num_bwd_consts.
void ensure_custom_derivative_primitives();

}  // namespace shardscope
