// Reverse mode: partial evaluation splits a JVP into primal and linear parts, the linear part runs backwards.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "base/error.h"
#include "base/python_format.h"
#include "explicit/mesh_context.h"
#include "transforms/autodiff.h"
#include "transforms/autodiff_internal.h"
#include "transforms/call_params.h"
#include "transforms/mapped_ad.h"

namespace shardscope {
namespace {

bool is_var_in(const Atom& atom, const std::unordered_set<int64_t>& ids) {
  const auto* var = std::get_if<Var>(&atom);
  return var != nullptr && ids.contains(var->id);
}

const Jaxpr& jit_inner(const Params& params) {
  const auto* ref = param(params, "jaxpr").get_if<ParamValue::JaxprRef>();
  if (ref == nullptr || !*ref) throw type_error("jit equation without a jaxpr");
  return **ref;
}

}  // namespace

PartialEvalResult partial_eval_jaxpr(const Jaxpr& jaxpr, const std::vector<bool>& in_unknowns) {
  ensure_autodiff_rules();
  if (in_unknowns.size() != jaxpr.invars.size()) throw value_error("partial_eval_jaxpr: one flag per invar");
  auto known = std::make_shared<Jaxpr>();
  auto unknown = std::make_shared<Jaxpr>();
  known->constvars = jaxpr.constvars;
  std::unordered_set<int64_t> unknown_ids;
  std::vector<Var> unknown_invars;
  for (std::size_t i = 0; i < jaxpr.invars.size(); ++i) {
    if (in_unknowns[i]) {
      unknown_ids.insert(jaxpr.invars[i].id);
      unknown_invars.push_back(jaxpr.invars[i]);
    } else {
      known->invars.push_back(jaxpr.invars[i]);
    }
  }
  std::vector<Var> residuals;
  std::unordered_set<int64_t> residual_ids;
  auto note_residual = [&](const Atom& atom) {
    const auto* var = std::get_if<Var>(&atom);
    if (var == nullptr || unknown_ids.contains(var->id) || residual_ids.contains(var->id)) return;
    residual_ids.insert(var->id);
    residuals.push_back(*var);
  };
  // Outputs a split remat forwards from its operands: later equations read the operand instead.
  std::unordered_map<int64_t, Atom> forwarded;
  auto substitute = [&](const Atom& atom) -> Atom {
    const auto* var = std::get_if<Var>(&atom);
    if (var == nullptr) return atom;
    const auto it = forwarded.find(var->id);
    return it != forwarded.end() ? it->second : atom;
  };
  for (const Eqn& original : jaxpr.eqns) {
    Eqn substituted;
    if (!forwarded.empty()) {
      substituted = original;
      for (Atom& input : substituted.inputs) input = substitute(input);
    }
    const Eqn& eqn = forwarded.empty() ? original : substituted;
    std::vector<bool> unknown_inputs;
    for (const Atom& input : eqn.inputs) unknown_inputs.push_back(is_var_in(input, unknown_ids));
    if (std::none_of(unknown_inputs.begin(), unknown_inputs.end(), [](bool u) { return u; })) {
      known->eqns.push_back(eqn);
      continue;
    }
    if (std::optional<ad::RematSplit> split = ad::split_remat_eqn(eqn, unknown_inputs)) {
      // A checkpoint's known half runs inline; its staged half recomputes what the policy did not save.
      for (Eqn& hoisted : split->known_eqns) known->eqns.push_back(std::move(hoisted));
      for (const auto& [output, source] : split->forwarded) forwarded.insert_or_assign(output.id, source);
      for (const Var& out : split->staged.outputs) unknown_ids.insert(out.id);
      for (const Atom& input : split->staged.inputs) note_residual(input);
      unknown->eqns.push_back(std::move(split->staged));
      continue;
    }
    if (eqn.primitive->name == "jit") {
      // Split the nested program too, so its primal half runs with the rest of the known values.
      const PartialEvalResult inner = partial_eval_jaxpr(jit_inner(eqn.params), unknown_inputs);
      Eqn known_eqn{eqn.primitive, call_params_with_body(eqn.params, inner.known), {}, {}, eqn.source};
      Eqn unknown_eqn{eqn.primitive, call_params_with_body(eqn.params, inner.unknown), {}, {}, eqn.source};
      for (std::size_t i = 0; i < eqn.inputs.size(); ++i) {
        if (!unknown_inputs[i]) known_eqn.inputs.push_back(eqn.inputs[i]);
      }
      for (std::size_t j = 0; j < eqn.outputs.size(); ++j) {
        (inner.out_unknowns[j] ? unknown_eqn : known_eqn).outputs.push_back(eqn.outputs[j]);
        if (inner.out_unknowns[j]) unknown_ids.insert(eqn.outputs[j].id);
      }
      const std::size_t first_residual = inner.known->outvars.size() - inner.num_residuals;
      for (std::size_t r = first_residual; r < inner.known->outvars.size(); ++r) {
        const Var residual = new_var(atom_aval(inner.known->outvars[r]));
        known_eqn.outputs.push_back(residual);
        unknown_eqn.inputs.emplace_back(residual);
      }
      for (std::size_t i = 0; i < eqn.inputs.size(); ++i) {
        if (unknown_inputs[i]) unknown_eqn.inputs.push_back(eqn.inputs[i]);
      }
      for (const Atom& input : unknown_eqn.inputs) note_residual(input);
      if (!known_eqn.outputs.empty()) known->eqns.push_back(std::move(known_eqn));
      unknown->eqns.push_back(std::move(unknown_eqn));
      continue;
    }
    if (std::optional<ad::EqnSplit> split = ad::split_mapped_eqn(eqn, unknown_inputs)) {
      // Mapped programs split the same way, their residuals staying per device.
      for (std::size_t j = 0; j < eqn.outputs.size(); ++j) {
        if (split->out_unknowns[j]) unknown_ids.insert(eqn.outputs[j].id);
      }
      for (const Atom& input : split->unknown.inputs) note_residual(input);
      if (split->known) known->eqns.push_back(std::move(*split->known));
      unknown->eqns.push_back(std::move(split->unknown));
      continue;
    }
    for (const Atom& input : eqn.inputs) note_residual(input);
    for (const Var& out : eqn.outputs) unknown_ids.insert(out.id);
    unknown->eqns.push_back(eqn);
  }
  PartialEvalResult result;
  for (const Atom& original_out : jaxpr.outvars) {
    const Atom out = substitute(original_out);
    const bool is_unknown = is_var_in(out, unknown_ids);
    result.out_unknowns.push_back(is_unknown);
    (is_unknown ? unknown->outvars : known->outvars).push_back(out);
  }
  known->outvars.insert(known->outvars.end(), residuals.begin(), residuals.end());
  unknown->invars = residuals;
  unknown->invars.insert(unknown->invars.end(), unknown_invars.begin(), unknown_invars.end());
  result.num_residuals = residuals.size();
  result.known = std::move(known);
  result.unknown = std::move(unknown);
  return result;
}

std::vector<std::optional<Atom>> backward_pass(JaxprBuilder& builder, const Jaxpr& linear,
                                               std::span<const Atom> nonlinear,
                                               std::span<const std::optional<Atom>> output_cotangents) {
  ensure_autodiff_rules();
  if (nonlinear.size() > linear.invars.size() || output_cotangents.size() != linear.outvars.size()) {
    throw value_error("backward_pass: argument counts do not match the linear jaxpr");
  }
  std::unordered_map<int64_t, Atom> primal_env;
  std::unordered_set<int64_t> linear_ids;
  for (std::size_t i = 0; i < linear.invars.size(); ++i) {
    if (i < nonlinear.size()) {
      primal_env.insert_or_assign(linear.invars[i].id, nonlinear[i]);
    } else {
      linear_ids.insert(linear.invars[i].id);
    }
  }
  for (const Var& var : linear.constvars) primal_env.insert_or_assign(var.id, builder.constant(var.aval));
  auto read_primal = [&](const Atom& atom) -> Atom {
    if (const auto* var = std::get_if<Var>(&atom)) return primal_env.at(var->id);
    return atom;
  };
  // Equations that do not touch a linear value are ordinary computations: run them first.
  std::vector<const Eqn*> linear_eqns;
  for (const Eqn& eqn : linear.eqns) {
    const bool touches_linear =
        std::any_of(eqn.inputs.begin(), eqn.inputs.end(), [&](const Atom& a) { return is_var_in(a, linear_ids); });
    if (touches_linear) {
      for (const Var& out : eqn.outputs) linear_ids.insert(out.id);
      linear_eqns.push_back(&eqn);
      continue;
    }
    const SourceScope source(source_or_current(eqn.source));
    std::vector<Atom> inputs;
    for (const Atom& input : eqn.inputs) inputs.push_back(read_primal(input));
    const std::vector<Atom> outs = builder.bind(eqn.primitive->name, std::move(inputs), eqn.params);
    for (std::size_t i = 0; i < outs.size(); ++i) primal_env.insert_or_assign(eqn.outputs[i].id, outs[i]);
  }
  std::unordered_map<int64_t, Atom> cotangents;
  auto accumulate = [&](const Atom& target, const std::optional<Atom>& ct) {
    if (!ct || !is_var_in(target, linear_ids)) return;
    const int64_t id = std::get<Var>(target).id;
    const auto it = cotangents.find(id);
    if (it == cotangents.end()) {
      cotangents.insert_or_assign(id, *ct);
    } else {
      it->second = builder.bind1("add_any", {it->second, *ct});
    }
  };
  auto read_cotangent = [&](const Var& var) -> std::optional<Atom> {
    const auto it = cotangents.find(var.id);
    return it == cotangents.end() ? std::nullopt : std::optional<Atom>(it->second);
  };
  for (std::size_t i = 0; i < linear.outvars.size(); ++i) accumulate(linear.outvars[i], output_cotangents[i]);
  for (auto it = linear_eqns.rbegin(); it != linear_eqns.rend(); ++it) {
    const Eqn& eqn = **it;
    const SourceScope source(source_or_current(eqn.source));
    std::vector<std::optional<Atom>> cts;
    for (const Var& out : eqn.outputs) cts.push_back(read_cotangent(out));
    if (ad::all_zero(cts)) continue;
    std::vector<std::optional<Atom>> primals;
    std::vector<Aval> avals;
    for (const Atom& input : eqn.inputs) {
      avals.push_back(atom_aval(input));
      primals.push_back(is_var_in(input, linear_ids) ? std::nullopt : std::optional<Atom>(read_primal(input)));
    }
    const TransposeRule* rule = find_transpose_rule(eqn.primitive->name);
    if (rule == nullptr) {
      throw not_implemented_error("Transpose rule (for reverse-mode differentiation) for '" + eqn.primitive->name +
                                  "' not implemented");
    }
    const std::vector<std::optional<Atom>> cts_in = (*rule)(builder, cts, primals, avals, eqn.params);
    for (std::size_t i = 0; i < eqn.inputs.size() && i < cts_in.size(); ++i) {
      if (!primals[i]) accumulate(eqn.inputs[i], cts_in[i]);
    }
  }
  std::vector<std::optional<Atom>> result;
  for (std::size_t i = nonlinear.size(); i < linear.invars.size(); ++i)
    result.push_back(read_cotangent(linear.invars[i]));
  return result;
}

namespace {

std::string argnums_repr(const std::vector<int64_t>& argnums) {
  if (argnums.size() == 1) return std::to_string(argnums[0]);
  return python_int_tuple(argnums);
}

void check_grad_signature(const Jaxpr& jaxpr, const std::vector<int64_t>& argnums) {
  if (argnums.empty()) throw value_error("argnums must be a non-empty sequence of ints");
  const int64_t arg_count = static_cast<int64_t>(jaxpr.invars.size());
  const int64_t max_argnum = *std::max_element(argnums.begin(), argnums.end());
  if (max_argnum >= arg_count) {
    throw type_error("differentiating with respect to argnums=" + argnums_repr(argnums) + " requires at least " +
                     std::to_string(max_argnum + 1) +
                     " positional arguments to be passed by the caller, but got only " + std::to_string(arg_count) +
                     " positional arguments.");
  }
  for (const int64_t argnum : argnums) {
    if (argnum < 0) throw value_error("argnums must be nonnegative, got " + std::to_string(argnum));
    const DType dtype = jaxpr.invars[static_cast<std::size_t>(argnum)].aval.dtype;
    if (!is_floating(dtype)) {
      throw type_error(
          "grad requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
          "np.inexact), but got " +
          std::string(dtype_name(dtype)) +
          ". If you want to use Boolean- or integer-valued inputs, use vjp or set allow_int to True.");
    }
  }
}

// The output checks run after the forward pass, as JAX checks the output of its vjp: an operation without a JVP
// (a host callback) raises its own error first.
void check_grad_output(const Jaxpr& jaxpr, bool has_aux) {
  if (jaxpr.outvars.empty() || (!has_aux && jaxpr.outvars.size() != 1)) {
    throw type_error("Gradient only defined for scalar-output functions. Output was a tuple of " +
                     std::to_string(jaxpr.outvars.size()) + " values.");
  }
  const Aval& out = atom_aval(jaxpr.outvars[0]);
  if (!out.shape.empty()) {
    std::string extract;
    if (product(out.shape) == 1) {
      extract =
          std::string("extract the scalar with output.reshape(())") + (out.rank() == 1 ? " or output[0]" : "") + ", ";
    }
    throw type_error("Gradient only defined for scalar-output functions. Output had shape: " +
                     python_int_tuple(out.shape) + ". To get the gradient, " + extract +
                     "reduce the output to a scalar with output.sum(), or use jax.jacobian to differentiate a "
                     "function with a non-scalar output.");
  }
  if (!is_floating(out.dtype)) {
    throw type_error("grad requires real-valued outputs (output dtype that is a sub-dtype of np.floating), but got " +
                     std::string(dtype_name(out.dtype)) +
                     ". For differentiation of functions with integer outputs, use jax.vjp directly.");
  }
}

struct GradParts {
  std::vector<Atom> outputs;  // value, aux...
  std::vector<Atom> grads;    // one per argnum
};

// The cotangent grad starts from: 1.0, or (kReshard) 1.0 moved to a replicated sharding on the mesh in effect, as
// lax._one_vjp stages it: the literal's sharding is on the mesh in effect, the output's on its arguments' mesh, and a
// reshard is staged when they differ. With neither (plain Python numbers, unplaced arrays) there is none.
Atom cotangent_seed(JaxprBuilder& builder, const Aval& out, GradSeed seed, bool output_on_mesh) {
  const Atom one = ad::full_like(builder, out, 1.0);
  if (seed == GradSeed::kLiteral || !out.shape.empty()) return one;
  if (is_empty(get_abstract_mesh()) && !output_on_mesh) return one;
  const std::optional<Mesh> mesh = get_concrete_mesh();
  return builder.bind1("reshard", {one},
                       {{"dst_sharding", NamedSharding{mesh.value_or(Mesh()), PartitionSpec(), std::nullopt}}});
}

// Whether the program's values are typed on a mesh: its arguments were placed on one, or an equation names one
// (a shard_map, a sharding constraint, a device_put to a NamedSharding), as JAX's avals then carry it.
bool values_on_mesh(const Jaxpr& jaxpr) {
  if (tracing_mesh_placed_values()) return true;
  return std::any_of(jaxpr.eqns.begin(), jaxpr.eqns.end(), [](const Eqn& eqn) {
    return std::any_of(eqn.params.begin(), eqn.params.end(), [](const auto& entry) {
      const auto* sharding = entry.second.template get_if<NamedSharding>();
      return entry.second.template get_if<Mesh>() != nullptr ||
             (sharding != nullptr && !sharding->mesh.devices().empty());
    });
  });
}

GradParts build_grad(JaxprBuilder& builder, const Jaxpr& jaxpr, const std::vector<int64_t>& argnums, bool has_aux,
                     GradSeed seed_kind) {
  ensure_autodiff_rules();
  check_grad_signature(jaxpr, argnums);
  std::vector<Atom> args;
  for (const Var& var : jaxpr.invars) args.emplace_back(builder.arg(var.aval));

  // Forward pass: the JVP with respect to the argnums, as its own program.
  JaxprBuilder jvp_builder;
  std::vector<Atom> primals;
  for (const Var& var : jaxpr.invars) primals.emplace_back(jvp_builder.arg(var.aval));
  std::vector<std::optional<Atom>> tangents(jaxpr.invars.size());
  // Tangent invars in argument order, whatever order argnums lists them in.
  for (std::size_t i = 0; i < jaxpr.invars.size(); ++i) {
    if (std::find(argnums.begin(), argnums.end(), static_cast<int64_t>(i)) != argnums.end()) {
      tangents[i] = jvp_builder.arg(jaxpr.invars[i].aval);
    }
  }
  const JvpOutputs jvp = jvp_jaxpr_into(jvp_builder, jaxpr, primals, tangents);
  check_grad_output(jaxpr, has_aux);
  std::vector<Atom> jvp_outs = jvp.primals;
  if (jvp.tangents[0]) jvp_outs.push_back(*jvp.tangents[0]);
  const JaxprPtr jvp_program = jvp_builder.build(jvp_outs);

  // Partial evaluation: the primal half runs now, the linear half is transposed.
  std::vector<bool> in_unknowns(jvp_program->invars.size(), true);
  std::fill(in_unknowns.begin(), in_unknowns.begin() + static_cast<std::ptrdiff_t>(jaxpr.invars.size()), false);
  const PartialEvalResult split = partial_eval_jaxpr(*jvp_program, in_unknowns);
  const std::vector<Atom> known_outs = inline_jaxpr(builder, *split.known, args);
  GradParts parts;
  for (std::size_t o = 0; o < jaxpr.outvars.size(); ++o) parts.outputs.push_back(known_outs.at(o));

  std::vector<std::optional<Atom>> arg_cts(jaxpr.invars.size());
  if (jvp.tangents[0] && split.out_unknowns.back()) {
    const std::span<const Atom> residuals(known_outs.end() - static_cast<std::ptrdiff_t>(split.num_residuals),
                                          known_outs.end());
    const Aval& out_aval = atom_aval(jaxpr.outvars[0]);
    const std::vector<std::optional<Atom>> seed{cotangent_seed(builder, out_aval, seed_kind, values_on_mesh(jaxpr))};
    const std::vector<std::optional<Atom>> cts = backward_pass(builder, *split.unknown, residuals, seed);
    std::size_t next = 0;
    for (std::size_t i = 0; i < tangents.size(); ++i) {
      if (tangents[i]) arg_cts[i] = cts[next++];
    }
  }
  for (const int64_t argnum : argnums) {
    const auto index = static_cast<std::size_t>(argnum);
    parts.grads.push_back(ad::instantiate(builder, arg_cts[index], jaxpr.invars[index].aval));
  }
  return parts;
}

}  // namespace

JaxprPtr value_and_grad_jaxpr(const Jaxpr& jaxpr, const std::vector<int64_t>& argnums, bool has_aux, GradSeed seed) {
  JaxprBuilder builder;
  GradParts parts = build_grad(builder, jaxpr, argnums, has_aux, seed);
  std::vector<Atom> outs = parts.outputs;
  outs.insert(outs.end(), parts.grads.begin(), parts.grads.end());
  return builder.build(std::move(outs));
}

JaxprPtr grad_jaxpr(const Jaxpr& jaxpr, const std::vector<int64_t>& argnums, bool has_aux, GradSeed seed) {
  JaxprBuilder builder;
  GradParts parts = build_grad(builder, jaxpr, argnums, has_aux, seed);
  std::vector<Atom> outs = parts.grads;
  if (has_aux) outs.insert(outs.end(), parts.outputs.begin() + 1, parts.outputs.end());
  return builder.build(std::move(outs));
}

}  // namespace shardscope
