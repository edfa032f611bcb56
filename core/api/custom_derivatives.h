// jax.custom_jvp / jax.custom_vjp over flat user functions: the function and its rules traced into programs,
// bound as one custom_jvp_call or custom_vjp_call equation.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "api/transforms.h"

namespace shardscope::api {

// The names jaxprs print: the function's, and its rules' (jvp; or fwd then bwd).
struct CustomNames {
  std::string function;
  std::vector<std::string> rules;
};

// f(*args) with `jvp` as its derivative: `jvp` maps (primals..., tangents...) to (outs..., tangent outs...),
// with as many outputs as `f` and of the same types (JAX's TypeErrors otherwise).
//
// Either may be empty, as JAX traces only one of them: where the call is differentiated, the rule runs and the
// function does not (the call's program is the rule's primal outputs); elsewhere the function runs and the rule is
// not traced (differentiating that call later differentiates the function itself).
std::vector<Value> custom_jvp_call(const Function& f, const Function& jvp, const std::vector<Value>& args,
                                   const CustomNames& names);

// f(*args) with `fwd` ((args...) -> (outs..., residuals...); `count_outs()`, asked once fwd is traced, says how
// many are outs) and `bwd` ((residuals...,
// output cotangents...) -> one cotangent per arg) as its reverse-mode derivative. As for custom_jvp_call, `f`
// is empty where the call is differentiated (the forward rule gives the outputs), and `fwd` and `bwd` are empty
// where it is not.
std::vector<Value> custom_vjp_call(const Function& f, const Function& fwd, const Function& bwd,
                                   const std::vector<Value>& args, const std::function<std::size_t()>& count_outs,
                                   const CustomNames& names);

}  // namespace shardscope::api
