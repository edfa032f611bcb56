// jax.vjp's split of a program into a residual-saving forward pass and a backward pass over the residuals: the JVP,
// partially evaluated with the primals known, its linear half transposed.
#include "transforms/vjp_split.h"

#include <algorithm>

#include "base/error.h"
#include "transforms/autodiff.h"
#include "transforms/autodiff_internal.h"

namespace shardscope {

VjpSplit vjp_split(const Jaxpr& jaxpr, const std::vector<bool>& tangent_in, const std::vector<bool>& cotangent_out,
                   std::size_t differentiated) {
  ensure_autodiff_rules();
  if (tangent_in.size() != jaxpr.invars.size() || cotangent_out.size() != jaxpr.invars.size()) {
    throw value_error("vjp_split: one tangent flag and one cotangent flag per invar");
  }
  if (!jaxpr.constvars.empty()) throw value_error("vjp_split: the program's constants must be arguments");
  differentiated = std::min(differentiated, jaxpr.outvars.size());

  // The JVP, with tangents for the marked floating-point invars only.
  JaxprBuilder jvp_builder;
  std::vector<Atom> primals;
  for (const Var& var : jaxpr.invars) primals.emplace_back(jvp_builder.arg(var.aval));
  std::vector<std::optional<Atom>> tangents(jaxpr.invars.size());
  for (std::size_t i = 0; i < jaxpr.invars.size(); ++i) {
    if (tangent_in[i] && ad::has_tangent_space(jaxpr.invars[i].aval.dtype)) {
      tangents[i] = jvp_builder.arg(jaxpr.invars[i].aval);
    }
  }
  const JvpOutputs jvp = jvp_jaxpr_into(jvp_builder, jaxpr, primals, tangents);
  std::vector<Atom> jvp_outs = jvp.primals;
  std::vector<std::optional<std::size_t>> tangent_position(differentiated);
  for (std::size_t o = 0; o < differentiated; ++o) {
    if (jvp.tangents[o]) {
      tangent_position[o] = jvp_outs.size();
      jvp_outs.push_back(*jvp.tangents[o]);
    }
  }
  const JaxprPtr jvp_program = jvp_builder.build(jvp_outs);

  // Primals known, tangents unknown: the known half is the forward pass, the unknown half is linear.
  std::vector<bool> in_unknowns(jvp_program->invars.size(), true);
  std::fill(in_unknowns.begin(), in_unknowns.begin() + static_cast<std::ptrdiff_t>(jaxpr.invars.size()), false);
  const PartialEvalResult split = partial_eval_jaxpr(*jvp_program, in_unknowns);
  if (!split.known->constvars.empty()) throw value_error("vjp_split: the forward pass gained constants");

  VjpSplit result;
  // The known half returns (known outs..., residuals...). The primal outputs are the first known outputs; a tangent
  // output computed without tangents is a zero, and the forward program drops it.
  auto forward = std::make_shared<Jaxpr>(*split.known);
  const std::size_t known_outs = forward->outvars.size() - split.num_residuals;
  std::vector<Atom> outs(forward->outvars.begin(),
                         forward->outvars.begin() + static_cast<std::ptrdiff_t>(jaxpr.outvars.size()));
  const std::vector<Atom> residuals(forward->outvars.begin() + static_cast<std::ptrdiff_t>(known_outs),
                                    forward->outvars.end());
  outs.insert(outs.end(), residuals.begin(), residuals.end());
  forward->outvars = std::move(outs);
  for (const Atom& residual : residuals) {
    std::optional<std::size_t> invar;
    if (const auto* var = std::get_if<Var>(&residual)) {
      for (std::size_t i = 0; i < split.known->invars.size(); ++i) {
        if (split.known->invars[i].id == var->id) invar = i;
      }
    }
    result.residual_invar.push_back(invar);
  }

  // The backward pass: the linear half run backwards from the output cotangents.
  JaxprBuilder builder;
  std::vector<Atom> residual_args;
  for (const Atom& residual : residuals) residual_args.emplace_back(builder.arg(atom_aval(residual)));
  std::vector<std::optional<Atom>> linear_cts(split.unknown->outvars.size());
  std::vector<std::size_t> unknown_index(jvp_outs.size(), 0);
  for (std::size_t j = 0, next = 0; j < jvp_outs.size(); ++j) {
    if (split.out_unknowns[j]) unknown_index[j] = next++;
  }
  for (std::size_t o = 0; o < differentiated; ++o) {
    const Atom ct = builder.arg(atom_aval(jaxpr.outvars[o]));
    const bool zero = !tangent_position[o] || !split.out_unknowns[*tangent_position[o]];
    result.output_zeros.push_back(zero);
    if (!zero) linear_cts[unknown_index[*tangent_position[o]]] = ct;
  }
  const std::vector<std::optional<Atom>> cts = backward_pass(builder, *split.unknown, residual_args, linear_cts);
  std::vector<Atom> arg_cts;
  for (std::size_t i = 0, next = 0; i < jaxpr.invars.size(); ++i) {
    std::optional<Atom> ct;
    if (tangents[i]) ct = cts.at(next++);
    if (cotangent_out[i]) arg_cts.push_back(ad::instantiate(builder, ct, jaxpr.invars[i].aval));
  }
  result.forward = std::move(forward);
  result.backward = builder.build(std::move(arg_cts));
  return result;
}

}  // namespace shardscope
