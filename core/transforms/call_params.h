// The params of a call (jit) whose body a transformation replaced.
#pragma once

#include "ir/jaxpr.h"
#include "ir/param.h"

namespace shardscope {

// `params` with `body` as the call's jaxpr. The per-argument params (in/out shardings and layouts, donated
// inputs) describe the original signature, which the new body no longer has, so they are dropped.
[[nodiscard]] Params call_params_with_body(const Params& params, const ParamValue::JaxprRef& body);

}  // namespace shardscope
