// jax.custom_jvp and jax.custom_vjp as primitives: custom_jvp_call (a function with its own JVP program),
// custom_vjp_call (a function with its own forward and backward programs) and custom_lin (the linear part a
// custom_vjp leaves in a JVP, transposed by the backward program). Shape rules, kernels, and the JVP, transpose
// and batching rules of all three live here.
#include "transforms/custom_derivatives.h"

#include <mutex>

#include "base/error.h"
#include "ops/control_flow.h"
#include "ops/ops.h"
#include "transforms/autodiff.h"
#include "transforms/autodiff_internal.h"
#include "transforms/batching.h"

namespace shardscope {
namespace {

using Cts = std::vector<std::optional<Atom>>;

int64_t count_param(const Params& params, const std::string& key) { return param(params, key).as_int(key); }

// What JAX prints of a custom call: the function's name first, then the rest sorted, the rules by their
// functions' names and the consts counted only when there are some.
Params printed_custom_call(const Eqn& eqn, const JaxProfile&) {
  const Params& params = eqn.params;
  const bool jvp = eqn.primitive->name == "custom_jvp_call";
  int64_t consts = 0;
  for (const char* key : {"num_call_consts", "num_jvp_consts", "num_fwd_consts", "num_bwd_consts"}) {
    if (const ParamValue* value = find_param(params, key)) consts += value->as_int(key);
  }
  const auto verbatim = [&](const std::string& key) {
    return ParamValue(ParamValue::Verbatim{param(params, key).as_string(key)});
  };
  Params out{{"name", verbatim("name")}};
  if (!jvp) out.emplace_back("bwd", verbatim("bwd_name"));
  out.emplace_back("call_jaxpr", param(params, "call_jaxpr"));
  if (jvp) {
    out.emplace_back("jvp", verbatim("jvp_name"));
  } else {
    out.emplace_back("fwd", verbatim("fwd_name"));
  }
  if (consts != 0) out.emplace_back("num_consts", consts);
  out.emplace_back("symbolic_zeros", param(params, "symbolic_zeros"));
  return out;
}

// A call primitive whose value is its `call_jaxpr` applied to the operands.
Primitive call_primitive(const std::string& name) {
  Primitive p;
  p.name = name;
  p.printed_params = printed_custom_call;
  p.multiple_results = true;
  p.abstract_eval = [](std::span<const Aval>, const Params& params) {
    return outvar_avals(*nested_jaxpr(params, "call_jaxpr"));
  };
  p.impl = [](std::span<const BufferPtr> in, std::span<const Aval>, const Params& params) {
    return run_nested(*nested_jaxpr(params, "call_jaxpr"), std::vector<BufferPtr>(in.begin(), in.end()));
  };
  return p;
}

// custom_lin's operands are (residuals..., tangents...); its results have the types of the function's outputs,
// which are the cotangent inputs of the backward program. Running it forward is JAX's error.
Primitive custom_lin_primitive() {
  Primitive p;
  p.name = "custom_lin";
  p.multiple_results = true;
  p.abstract_eval = [](std::span<const Aval>, const Params& params) {
    const Jaxpr& bwd = *nested_jaxpr(params, "bwd");
    const auto residuals = static_cast<std::size_t>(count_param(params, "num_res"));
    std::vector<Aval> out;
    for (std::size_t i = residuals; i < bwd.invars.size(); ++i) out.push_back(bwd.invars[i].aval);
    return out;
  };
  p.impl = [](std::span<const BufferPtr>, std::span<const Aval>, const Params&) -> std::vector<BufferPtr> {
    throw type_error("can't apply forward-mode autodiff (jvp) to a custom_vjp function.");
  };
  return p;
}

// The tangents a program is applied to: zeros instantiated where the JVP had a symbolic zero.
std::vector<Atom> instantiated(JaxprBuilder& b, std::span<const Atom> primals, std::span<const std::optional<Atom>> t) {
  std::vector<Atom> out;
  for (std::size_t i = 0; i < primals.size(); ++i) out.push_back(ad::instantiate(b, t[i], atom_aval(primals[i])));
  return out;
}

// A call traced where nothing differentiated it has no rules: differentiating it later (a program reused under
// grad) differentiates the function itself.
std::pair<std::vector<Atom>, Cts> function_jvp(JaxprBuilder& b, std::span<const Atom> x,
                                               std::span<const std::optional<Atom>> t, const Params& params) {
  JvpOutputs outs = jvp_jaxpr_into(b, *nested_jaxpr(params, "call_jaxpr"), x, t);
  return {std::move(outs.primals), std::move(outs.tangents)};
}

// custom_jvp_call's operands are (call consts..., jvp consts..., args...), all of them call_jaxpr's arguments;
// the JVP program maps (jvp consts...,
// primals..., tangents...) to (primal outs..., tangent outs...). The rule inlines it, as JAX runs the user's rule.
std::pair<std::vector<Atom>, Cts> custom_jvp_rule(JaxprBuilder& b, std::span<const Atom> x,
                                                  std::span<const std::optional<Atom>> t, const Params& params) {
  if (find_param(params, "jvp_jaxpr") == nullptr) return function_jvp(b, x, t, params);
  const auto call_consts = static_cast<std::size_t>(count_param(params, "num_call_consts"));
  const auto jvp_consts = static_cast<std::size_t>(count_param(params, "num_jvp_consts"));
  const std::span<const Atom> args = x.subspan(call_consts + jvp_consts);
  const std::vector<Atom> tangents = instantiated(b, args, t.subspan(call_consts + jvp_consts));
  std::vector<Atom> inputs(x.begin() + static_cast<std::ptrdiff_t>(call_consts),
                           x.begin() + static_cast<std::ptrdiff_t>(call_consts + jvp_consts));
  inputs.insert(inputs.end(), args.begin(), args.end());
  inputs.insert(inputs.end(), tangents.begin(), tangents.end());
  const std::vector<Atom> outs = inline_jaxpr(b, *nested_jaxpr(params, "jvp_jaxpr"), inputs);
  const std::size_t m = outs.size() / 2;
  Cts tangent_outs;
  for (std::size_t o = 0; o < m; ++o) tangent_outs.emplace_back(outs[m + o]);
  return {std::vector<Atom>(outs.begin(), outs.begin() + static_cast<std::ptrdiff_t>(m)), tangent_outs};
}

// custom_vjp_call's operands are (call consts..., fwd consts..., bwd consts..., args...). Its JVP runs the
// forward program for the outputs and residuals, and leaves the tangents to custom_lin, whose transpose is the
// backward program.
std::pair<std::vector<Atom>, Cts> custom_vjp_rule(JaxprBuilder& b, std::span<const Atom> x,
                                                  std::span<const std::optional<Atom>> t, const Params& params) {
  if (find_param(params, "fwd_jaxpr") == nullptr) return function_jvp(b, x, t, params);
  const auto call_consts = static_cast<std::size_t>(count_param(params, "num_call_consts"));
  const auto fwd_consts = static_cast<std::size_t>(count_param(params, "num_fwd_consts"));
  const auto bwd_consts = static_cast<std::size_t>(count_param(params, "num_bwd_consts"));
  const std::size_t first_arg = call_consts + fwd_consts + bwd_consts;
  const std::span<const Atom> args = x.subspan(first_arg);
  std::vector<Atom> fwd_inputs(x.begin() + static_cast<std::ptrdiff_t>(call_consts),
                               x.begin() + static_cast<std::ptrdiff_t>(call_consts + fwd_consts));
  fwd_inputs.insert(fwd_inputs.end(), args.begin(), args.end());
  const std::vector<Atom> fwd_outs = inline_jaxpr(b, *nested_jaxpr(params, "fwd_jaxpr"), fwd_inputs);
  const std::size_t m = nested_jaxpr(params, "call_jaxpr")->outvars.size();
  const std::vector<Atom> outs(fwd_outs.begin(), fwd_outs.begin() + static_cast<std::ptrdiff_t>(m));
  // The residuals: the backward program's consts, then what the forward program saved.
  std::vector<Atom> lin_inputs(x.begin() + static_cast<std::ptrdiff_t>(call_consts + fwd_consts),
                               x.begin() + static_cast<std::ptrdiff_t>(first_arg));
  lin_inputs.insert(lin_inputs.end(), fwd_outs.begin() + static_cast<std::ptrdiff_t>(m), fwd_outs.end());
  const auto residuals = static_cast<int64_t>(lin_inputs.size());
  const std::vector<Atom> tangents = instantiated(b, args, t.subspan(first_arg));
  lin_inputs.insert(lin_inputs.end(), tangents.begin(), tangents.end());
  const std::vector<Atom> lin = b.bind(
      "custom_lin", lin_inputs,
      {{"num_res", residuals}, {"bwd", ParamValue(nested_jaxpr(params, "bwd_jaxpr"))}, {"symbolic_zeros", false}});
  Cts tangent_outs(lin.begin(), lin.end());
  return {outs, tangent_outs};
}

// custom_lin transposed: the backward program on (residuals..., output cotangents...) gives one cotangent per
// tangent operand; residuals get none.
Cts custom_lin_transpose(JaxprBuilder& b, std::span<const std::optional<Atom>> cotangents,
                         std::span<const std::optional<Atom>> primals, std::span<const Aval> avals,
                         const Params& params) {
  const Jaxpr& bwd = *nested_jaxpr(params, "bwd");
  const auto residuals = static_cast<std::size_t>(count_param(params, "num_res"));
  std::vector<Atom> inputs;
  for (std::size_t i = 0; i < residuals; ++i) {
    if (!primals[i]) throw type_error("custom_vjp: a residual of the forward pass depends on the tangents");
    inputs.push_back(*primals[i]);
  }
  for (std::size_t o = 0; o < cotangents.size(); ++o) {
    inputs.push_back(ad::instantiate(b, cotangents[o], bwd.invars[residuals + o].aval));
  }
  const std::vector<Atom> cts = inline_jaxpr(b, bwd, inputs);
  Cts out(residuals);
  for (std::size_t i = 0; i + residuals < avals.size(); ++i) {
    out.emplace_back(i < cts.size() ? std::optional<Atom>(cts[i]) : std::nullopt);
  }
  return out;
}

// vmap of a custom_jvp/custom_vjp call batches the function itself (its rules are used by differentiation, which
// JAX applies before or after vmap alike for the programs shardscope runs).
std::vector<BatchedValue> batch_call(JaxprBuilder& builder, std::span<const BatchedValue> args, const Params& params,
                                     const BatchAxis& axis) {
  return batch_jaxpr_into(builder, *nested_jaxpr(params, "call_jaxpr"), args, axis);
}

}  // namespace

void ensure_custom_derivative_primitives() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_primitive(call_primitive("custom_jvp_call"));
    register_primitive(call_primitive("custom_vjp_call"));
    register_primitive(custom_lin_primitive());
    register_jvp_rule("custom_jvp_call", custom_jvp_rule);
    register_jvp_rule("custom_vjp_call", custom_vjp_rule);
    register_transpose_rule("custom_lin", custom_lin_transpose);
    register_batch_rule("custom_jvp_call", batch_call);
    register_batch_rule("custom_vjp_call", batch_call);
  });
}

}  // namespace shardscope
