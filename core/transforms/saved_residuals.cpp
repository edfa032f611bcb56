// Which forward-pass values a gradient keeps: the JVP split into known and unknown halves, its residuals named.
#include "transforms/saved_residuals.h"

#include <unordered_set>

#include "transforms/autodiff.h"
#include "transforms/autodiff_internal.h"

namespace shardscope {
namespace {

std::string describe(const Eqn& eqn) {
  const std::string where = summarize(eqn.source);
  const std::string& primitive = eqn.primitive->name;
  if (primitive == "name") {
    if (const ParamValue* name = find_param(eqn.params, "name"); name != nullptr && name->get_if<std::string>()) {
      return "named '" + *name->get_if<std::string>() + "' from " + where;
    }
  }
  if (primitive == "jit") {
    const ParamValue* name = find_param(eqn.params, "name");
    const std::string* text = name != nullptr ? name->get_if<std::string>() : nullptr;
    return "output of jitted function '" + (text != nullptr ? *text : std::string("<unnamed>")) + "' from " + where;
  }
  return "output of " + primitive + " from " + where;
}

}  // namespace

std::vector<SavedResidual> saved_residuals(const Jaxpr& jaxpr, const std::vector<std::string>& arg_names) {
  ensure_autodiff_rules();
  // The forward pass with a tangent for every floating-point input, as jax.vjp linearizes.
  JaxprBuilder builder;
  std::vector<Atom> primals;
  for (const Var& var : jaxpr.invars) primals.emplace_back(builder.arg(var.aval));
  std::vector<std::optional<Atom>> tangents(jaxpr.invars.size());
  for (std::size_t i = 0; i < jaxpr.invars.size(); ++i) {
    if (ad::has_tangent_space(jaxpr.invars[i].aval.dtype)) tangents[i] = builder.arg(jaxpr.invars[i].aval);
  }
  const JvpOutputs jvp = jvp_jaxpr_into(builder, jaxpr, primals, tangents);
  std::vector<Atom> outs = jvp.primals;
  for (const auto& tangent : jvp.tangents) {
    if (tangent) outs.push_back(*tangent);
  }
  const JaxprPtr program = builder.build(std::move(outs));
  std::vector<bool> in_unknowns(program->invars.size(), true);
  std::fill(in_unknowns.begin(), in_unknowns.begin() + static_cast<std::ptrdiff_t>(jaxpr.invars.size()), false);
  const PartialEvalResult split = partial_eval_jaxpr(*program, in_unknowns);

  const Jaxpr& known = *split.known;
  std::unordered_set<int64_t> residual_ids;
  std::vector<SavedResidual> result;
  for (std::size_t r = known.outvars.size() - split.num_residuals; r < known.outvars.size(); ++r) {
    const Atom& residual = known.outvars[r];
    if (const auto* var = std::get_if<Var>(&residual)) {
      residual_ids.insert(var->id);
    } else {
      result.push_back({atom_aval(residual), "from a literal"});
    }
  }
  for (const Var& var : known.constvars) {
    if (residual_ids.contains(var.id)) result.push_back({var.aval, "from a constant"});
  }
  for (std::size_t i = 0; i < program->invars.size() && i < jaxpr.invars.size(); ++i) {
    if (!residual_ids.contains(program->invars[i].id)) continue;
    const std::string name = i < arg_names.size() ? arg_names[i] : std::string();
    // JAX's text for an unnamed argument is an f-string missing its f: the braces print as they are.
    result.push_back({program->invars[i].aval,
                      name.empty() ? "from the argument at flattened index {i}" : "from the argument " + name});
  }
  for (const Eqn& eqn : known.eqns) {
    for (const Var& out : eqn.outputs) {
      if (residual_ids.contains(out.id)) result.push_back({out.aval, describe(eqn)});
    }
  }
  return result;
}

}  // namespace shardscope
