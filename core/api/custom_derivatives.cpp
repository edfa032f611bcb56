// Traces a custom_jvp/custom_vjp function and its rules on the argument types and binds the call equation; the
// rules' type checks raise JAX's TypeErrors.
#include "api/custom_derivatives.h"

#include <algorithm>

#include "api/numpy.h"
#include "api/trace.h"
#include "base/error.h"
#include "transforms/custom_derivatives.h"

namespace shardscope::api {
namespace {

// A traced function with its captured values as leading arguments.
Traced traced_with_consts_as_args(const Function& f, const std::vector<Aval>& avals, const std::string& name) {
  Traced traced = trace_function(f, avals, name);
  traced.jaxpr = consts_as_args(*traced.jaxpr);
  return traced;
}

// A rule traced on the call's arguments: with their known values alongside where the enclosing trace carries
// them (grad or jvp of concrete values), as JAX runs a rule on concrete primals, so that Python control flow on
// them works. `avals` may go on past the arguments (the tangents), which are not known.
Traced traced_rule(const Function& rule, const std::vector<Value>& args, const std::vector<Aval>& avals,
                   const std::string& name) {
  const Trace* enclosing = current_trace();
  const bool known = enclosing != nullptr && !enclosing->concrete_kind().empty() &&
                     std::all_of(args.begin(), args.end(), [](const Value& v) { return v.concrete_or_known(); });
  if (!known) return traced_with_consts_as_args(rule, avals, name);
  Trace trace(name);
  trace.set_concrete_kind(enclosing->concrete_kind());
  std::vector<Value> traced_args;
  for (std::size_t i = 0; i < avals.size(); ++i) {
    traced_args.push_back(i < args.size() ? trace.arg_known(avals[i], realized(*args[i].concrete_or_known()))
                                          : trace.arg(avals[i]));
  }
  const std::vector<Value> outputs = rule(traced_args);
  Trace::Closed closed = trace.finish(outputs);
  return {consts_as_args(*closed.jaxpr), std::move(closed.captured)};
}

std::string types_text(const std::vector<Aval>& avals) {
  std::string out = "[";
  for (std::size_t i = 0; i < avals.size(); ++i) out += (i == 0 ? "" : ", ") + avals[i].str_short(false);
  return out + "]";
}

bool same_type(const Aval& a, const Aval& b) { return a.shape == b.shape && a.dtype == b.dtype; }

// The function traced as a program of all the call's operands: (its own consts..., the rules' consts..., args...).
// Its invars line up with the equation's operands, so jit, partitioning and the cost model see an ordinary call.
// `on_all_operands` takes (rules' consts..., args...).
Traced traced_call_of_operands(const Function& on_all_operands, const std::vector<Value>& rule_consts,
                               const std::vector<Aval>& arg_avals, const std::string& name) {
  std::vector<Aval> avals = argument_avals(rule_consts);
  avals.insert(avals.end(), arg_avals.begin(), arg_avals.end());
  return traced_with_consts_as_args(on_all_operands, avals, name);
}

// The user's function as the call program: the rules' consts are arguments it does not read.
Traced traced_call(const Function& f, const std::vector<Value>& rule_consts, const std::vector<Aval>& arg_avals,
                   const std::string& name) {
  const std::size_t skipped = rule_consts.size();
  const Function without_rule_consts = [f, skipped](const std::vector<Value>& leaves) {
    return f(std::vector<Value>(leaves.begin() + static_cast<std::ptrdiff_t>(skipped), leaves.end()));
  };
  return traced_call_of_operands(without_rule_consts, rule_consts, arg_avals, name);
}

// Where the call is being differentiated, JAX runs the rule and never the function: the call program is then the
// rule's primal outputs. `rule` takes (its consts..., args..., [zero tangents...]); its consts sit at
// [first_const, first_const + num_consts) among the rules' consts.
struct RuleAsCall {
  JaxprPtr rule;
  std::size_t first_const = 0;
  std::size_t num_consts = 0;
  std::size_t num_outs = 0;
  bool takes_tangents = false;
};

Function primal_outputs_of(const RuleAsCall& spec, std::size_t num_args) {
  return [spec, num_args](const std::vector<Value>& operands) {
    const std::size_t args_begin = operands.size() - num_args;
    std::vector<Value> inputs(operands.begin() + static_cast<std::ptrdiff_t>(spec.first_const),
                              operands.begin() + static_cast<std::ptrdiff_t>(spec.first_const + spec.num_consts));
    inputs.insert(inputs.end(), operands.begin() + static_cast<std::ptrdiff_t>(args_begin), operands.end());
    if (spec.takes_tangents) {
      for (std::size_t i = args_begin; i < operands.size(); ++i) inputs.push_back(jnp::zeros_like(operands[i]));
    }
    std::vector<Value> outs = apply_jaxpr(*spec.rule, inputs);
    outs.resize(std::min(outs.size(), spec.num_outs));
    return outs;
  };
}

// JAX's TypeErrors for a JVP rule whose outputs do not fit: primal outputs against the function's (when the
// function was traced), tangent shapes against the primal outputs'.
void check_jvp_rule_outputs(const std::vector<Aval>& outs, const std::vector<Aval>& rule_outs, bool against_function) {
  if (rule_outs.size() != 2 * outs.size()) {
    throw type_error(
        "Custom JVP rule must produce primal and tangent outputs with equal container (pytree) "
        "structures, but got " +
        std::to_string(rule_outs.size() / 2) + " and " + std::to_string(outs.size()) + " outputs.");
  }
  for (std::size_t o = 0; o < outs.size(); ++o) {
    if (against_function && !same_type(rule_outs[o], outs[o])) {
      throw type_error(
          "Custom JVP rule must produce primal outputs with equal shapes and dtypes as the custom_jvp-"
          "decorated function, but got " +
          types_text({rule_outs[o]}) + " and " + types_text({outs[o]}) + ".");
    }
    if (rule_outs[outs.size() + o].shape != outs[o].shape) {
      throw type_error("Custom JVP rule must produce primal and tangent outputs with corresponding shapes, but got " +
                       types_text({outs[o]}) + " and " + types_text({rule_outs[outs.size() + o]}) + ".");
    }
  }
}

}  // namespace

std::vector<Value> custom_jvp_call(const Function& f, const Function& jvp, const std::vector<Value>& args,
                                   const CustomNames& names) {
  const std::string& name = names.function;
  ensure_custom_derivative_primitives();
  const std::vector<Aval> arg_avals = argument_avals(args);
  std::optional<Traced> rule;
  if (jvp) {
    std::vector<Aval> rule_avals = arg_avals;
    rule_avals.insert(rule_avals.end(), arg_avals.begin(), arg_avals.end());
    rule = traced_rule(jvp, args, rule_avals, names.rules.at(0));
  }
  const std::vector<Value> rule_consts = rule ? rule->captured : std::vector<Value>{};
  std::optional<Traced> call;
  if (f) {
    call = traced_call(f, rule_consts, arg_avals, name);
  } else {
    const std::size_t num_outs = rule->jaxpr->outvars.size() / 2;
    call = traced_call_of_operands(primal_outputs_of({rule->jaxpr, 0, rule_consts.size(), num_outs, true}, args.size()),
                                   rule_consts, arg_avals, name);
  }
  const std::vector<Aval> outs = outvar_avals(*call->jaxpr);
  if (rule) check_jvp_rule_outputs(outs, outvar_avals(*rule->jaxpr), static_cast<bool>(f));
  std::vector<Value> inputs = call->captured;
  inputs.insert(inputs.end(), rule_consts.begin(), rule_consts.end());
  inputs.insert(inputs.end(), args.begin(), args.end());
  Params params{{"name", name},
                {"jvp_name", names.rules.at(0)},
                {"call_jaxpr", ParamValue(call->jaxpr)},
                {"num_call_consts", static_cast<int64_t>(call->captured.size())},
                {"num_jvp_consts", static_cast<int64_t>(rule_consts.size())},
                {"symbolic_zeros", false}};
  if (rule) params.emplace_back("jvp_jaxpr", ParamValue(rule->jaxpr));
  return api::bind("custom_jvp_call", inputs, std::move(params));
}

std::vector<Value> custom_vjp_call(const Function& f, const Function& fwd, const Function& bwd,
                                   const std::vector<Value>& args, const std::function<std::size_t()>& count_outs,
                                   const CustomNames& names) {
  ensure_custom_derivative_primitives();
  const std::string& name = names.function;
  const std::vector<Aval> arg_avals = argument_avals(args);
  if (!fwd) {
    // Not differentiated where it is called: the function alone, as JAX traces it there.
    const Traced call = traced_call(f, {}, arg_avals, name);
    std::vector<Value> inputs = call.captured;
    inputs.insert(inputs.end(), args.begin(), args.end());
    return api::bind("custom_vjp_call", inputs,
                     {{"name", name},
                      {"fwd_name", names.rules.at(0)},
                      {"bwd_name", names.rules.at(1)},
                      {"call_jaxpr", ParamValue(call.jaxpr)},
                      {"num_call_consts", static_cast<int64_t>(call.captured.size())},
                      {"num_fwd_consts", int64_t{0}},
                      {"num_bwd_consts", int64_t{0}},
                      {"symbolic_zeros", false}});
  }
  const Traced forward = traced_rule(fwd, args, arg_avals, names.rules.at(0));
  const std::vector<Aval> fwd_outs = outvar_avals(*forward.jaxpr);
  const std::size_t num_outs = count_outs();
  const std::vector<Aval> outs(fwd_outs.begin(),
                               fwd_outs.begin() + static_cast<std::ptrdiff_t>(std::min(num_outs, fwd_outs.size())));
  if (fwd_outs.size() < num_outs) {
    throw type_error(
        "Custom VJP fwd rule must produce a pair (list or tuple of length two) where the first element "
        "represents the primal output (equal to the output of the custom_vjp-decorated function) and "
        "the second element represents residuals (i.e. values stored from the forward pass for use "
        "on the backward pass).");
  }
  std::vector<Aval> bwd_avals(fwd_outs.begin() + static_cast<std::ptrdiff_t>(num_outs), fwd_outs.end());
  bwd_avals.insert(bwd_avals.end(), outs.begin(), outs.end());
  const Traced backward = traced_with_consts_as_args(bwd, bwd_avals, names.rules.at(1));
  std::vector<Value> rule_consts = forward.captured;
  rule_consts.insert(rule_consts.end(), backward.captured.begin(), backward.captured.end());
  const Traced call =
      f ? traced_call(f, rule_consts, arg_avals, name)
        : traced_call_of_operands(
              primal_outputs_of({forward.jaxpr, 0, forward.captured.size(), num_outs, false}, args.size()), rule_consts,
              arg_avals, name);
  const std::vector<Aval> call_outs = outvar_avals(*call.jaxpr);
  for (std::size_t o = 0; o < num_outs; ++o) {
    if (o >= call_outs.size() || !same_type(fwd_outs[o], call_outs[o])) {
      throw type_error("Custom VJP fwd rule " + names.rules.at(0) +
                       " must produce primal outputs with equal shapes and "
                       "dtypes as the custom_vjp-decorated function, but got " +
                       types_text({fwd_outs[o]}) + " and " +
                       (o < call_outs.size() ? types_text({call_outs[o]}) : std::string("nothing")) + ".");
    }
  }
  const std::vector<Aval> cts = outvar_avals(*backward.jaxpr);
  if (cts.size() != args.size()) {
    throw type_error(
        "Custom VJP bwd rule must produce an output with the same container (pytree) structure as the "
        "args tuple of the primal function, and in particular must produce a tuple of length equal to "
        "the number of arguments to the primal function, but got bwd output of " +
        std::to_string(cts.size()) + " values for " + std::to_string(args.size()) + " arguments.");
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (cts[i].shape != arg_avals[i].shape) {
      throw value_error(
          "Custom VJP bwd rule must produce an output with the same shape/dtypes as the args tuple of "
          "the primal function, but at output index " +
          std::to_string(i) + " the bwd rule produced " + "an output of shape/dtype " + cts[i].str_short(false) +
          " corresponding to an input of "
          "shape/dtype " +
          arg_avals[i].str_short(false) + ".");
    }
  }
  std::vector<Value> inputs = call.captured;
  inputs.insert(inputs.end(), rule_consts.begin(), rule_consts.end());
  inputs.insert(inputs.end(), args.begin(), args.end());
  Params params{{"name", name},
                {"fwd_name", names.rules.at(0)},
                {"bwd_name", names.rules.at(1)},
                {"call_jaxpr", ParamValue(call.jaxpr)},
                {"fwd_jaxpr", ParamValue(forward.jaxpr)},
                {"bwd_jaxpr", ParamValue(backward.jaxpr)},
                {"num_call_consts", static_cast<int64_t>(call.captured.size())},
                {"num_fwd_consts", static_cast<int64_t>(forward.captured.size())},
                {"num_bwd_consts", static_cast<int64_t>(backward.captured.size())},
                {"symbolic_zeros", false}};
  return api::bind("custom_vjp_call", inputs, std::move(params));
}

}  // namespace shardscope::api
