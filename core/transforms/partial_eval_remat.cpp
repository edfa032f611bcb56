// Partial evaluation of a remat2 equation under its checkpoint policy, as JAX's remat_partial_eval: the values the
// policy saves (and the remat's own inputs) become residuals, everything else the backward pass recomputes.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "base/error.h"
#include "ir/remat_policy.h"
#include "ops/control_flow.h"
#include "ops/ops.h"
#include "transforms/autodiff_internal.h"
#include "transforms/call_params.h"

namespace shardscope::ad {
namespace {

// A variable's state while splitting: unknown (needs the tangents), and whether the staged half can read it
// (an input, a recomputed value or a residual) without it being saved for it.
struct VarState {
  bool unknown = false;
  bool available = true;
};

struct CustomSplit {
  Jaxpr known;   // (known invars...) -> (known outs..., residuals...)
  Jaxpr staged;  // (residuals..., every invar...) -> (outs the staged half has...)
  std::vector<bool> out_unknowns;
  std::vector<bool> out_available;
  std::size_t num_residuals = 0;
};

// Host calls other than a pure callback are effects: remat keeps them where the program has them.
bool has_effect(const Primitive& primitive) {
  return primitive.host_call == HostCall::kDebug || primitive.host_call == HostCall::kIoCallback;
}

bool is_call(const std::string& primitive) { return primitive == "remat2" || primitive == "jit"; }

const Primitive* device_put_primitive() {
  ensure_core_primitives();
  return find_primitive("device_put");
}

// device_put's params moving a value to memory space `space` (JAX's offload and reload equations).
Params memory_move_params(const char* space) {
  return {{"copy_semantics", ParamValue::tuple({ParamValue::Verbatim{"<ArrayCopySemantics.ALWAYS_COPY: 1>"}})},
          {"devices", ParamValue::tuple({ParamValue::Verbatim{space}})},
          {"srcs", ParamValue::tuple({ParamValue::None{}})}};
}

CustomSplit split_by_policy(const Jaxpr& body, const std::vector<bool>& in_unknowns,
                            const std::vector<bool>& in_available, const RematPolicy& policy);

// A nested call (jit, remat2) inside a checkpointed body splits by the enclosing policy, as JAX's
// call_partial_eval_custom_rule: a known call producing the residuals, and a staged call reading them.
struct CallSplit {
  Eqn known;
  Eqn staged;
  std::vector<bool> out_unknowns;
  std::vector<bool> out_available;
  std::vector<Var> residuals;
};

CallSplit split_call(const Eqn& eqn, const std::vector<bool>& unknowns, const std::vector<bool>& available,
                     const RematPolicy& policy) {
  const auto* ref = param(eqn.params, "jaxpr").get_if<ParamValue::JaxprRef>();
  if (ref == nullptr || !*ref) throw type_error(eqn.primitive->name + " equation without a jaxpr");
  const CustomSplit inner = split_by_policy(**ref, unknowns, available, policy);
  CallSplit out;
  out.out_unknowns = inner.out_unknowns;
  out.out_available = inner.out_available;
  const bool is_remat = eqn.primitive->name == "remat2";
  auto body_params = [&](const Jaxpr& jaxpr, bool staged) {
    auto body = std::make_shared<const Jaxpr>(jaxpr);
    Params params =
        is_remat ? replace_param(eqn.params, "jaxpr", ParamValue(body)) : call_params_with_body(eqn.params, body);
    if (is_remat && staged) params = replace_param(params, "differentiated", true);
    return params;
  };
  out.known = Eqn{eqn.primitive, body_params(inner.known, false), {}, {}, eqn.source};
  out.staged = Eqn{eqn.primitive, body_params(inner.staged, true), {}, {}, eqn.source};
  for (std::size_t i = 0; i < eqn.inputs.size(); ++i) {
    if (!unknowns[i]) out.known.inputs.push_back(eqn.inputs[i]);
  }
  for (std::size_t o = 0; o < eqn.outputs.size(); ++o) {
    if (!inner.out_unknowns[o]) out.known.outputs.push_back(eqn.outputs[o]);
  }
  const std::size_t first_residual = inner.known.outvars.size() - inner.num_residuals;
  for (std::size_t r = first_residual; r < inner.known.outvars.size(); ++r) {
    out.residuals.push_back(new_var(atom_aval(inner.known.outvars[r])));
  }
  out.known.outputs.insert(out.known.outputs.end(), out.residuals.begin(), out.residuals.end());
  out.staged.inputs.assign(out.residuals.begin(), out.residuals.end());
  for (std::size_t i = 0; i < eqn.inputs.size(); ++i) {
    if (available[i]) out.staged.inputs.push_back(eqn.inputs[i]);
  }
  for (std::size_t o = 0; o < eqn.outputs.size(); ++o) {
    if (inner.out_available[o]) out.staged.outputs.push_back(eqn.outputs[o]);
  }
  return out;
}

// JAX's partial_eval_jaxpr_custom: known equations go to the known half; those the policy does not save are
// also copied to the staged half, which recomputes them from what it can read.
CustomSplit split_by_policy(const Jaxpr& body, const std::vector<bool>& in_unknowns,
                            const std::vector<bool>& in_available, const RematPolicy& policy) {
  std::unordered_map<int64_t, VarState> env;
  std::vector<Var> residuals;
  std::unordered_set<int64_t> residual_ids;
  auto read = [&](const Atom& atom) {
    const auto* var = std::get_if<Var>(&atom);
    return var != nullptr ? env.at(var->id) : VarState{false, true};
  };
  auto keep = [&](const Var& var) {
    if (residual_ids.insert(var.id).second) residuals.push_back(var);
  };
  // A staged equation reading a known value the staged half cannot recompute: the value is saved.
  auto ensure_available = [&](const Atom& atom) {
    const auto* var = std::get_if<Var>(&atom);
    if (var != nullptr && !read(atom).available) keep(*var);
  };
  CustomSplit split;
  for (std::size_t i = 0; i < body.invars.size(); ++i) {
    env[body.invars[i].id] = {in_unknowns[i], in_available[i]};
    if (!in_unknowns[i]) split.known.invars.push_back(body.invars[i]);
  }
  for (const Var& var : body.constvars) env[var.id] = {false, true};
  split.known.constvars = body.constvars;
  split.staged.constvars = body.constvars;
  for (const Eqn& eqn : body.eqns) {
    std::vector<bool> unknowns;
    std::vector<bool> available;
    for (const Atom& input : eqn.inputs) {
      unknowns.push_back(read(input).unknown);
      available.push_back(read(input).available);
    }
    const bool any_unknown = std::any_of(unknowns.begin(), unknowns.end(), [](bool u) { return u; });
    if (is_call(eqn.primitive->name)) {
      CallSplit call = split_call(eqn, unknowns, available, policy);
      for (std::size_t i = 0; i < eqn.inputs.size(); ++i) {
        if (!available[i]) ensure_available(eqn.inputs[i]);
      }
      for (const Var& residual : call.residuals) keep(residual);
      for (std::size_t o = 0; o < eqn.outputs.size(); ++o) {
        env[eqn.outputs[o].id] = {call.out_unknowns[o], call.out_available[o]};
      }
      split.known.eqns.push_back(std::move(call.known));
      split.staged.eqns.push_back(std::move(call.staged));
      continue;
    }
    if (any_unknown) {
      for (const Atom& input : eqn.inputs) ensure_available(input);
      split.staged.eqns.push_back(eqn);
      for (const Var& out : eqn.outputs) env[out.id] = {true, true};
      continue;
    }
    split.known.eqns.push_back(eqn);
    std::vector<Aval> in_avals;
    for (const Atom& input : eqn.inputs) in_avals.push_back(atom_aval(input));
    const RematDecision decision = has_effect(*eqn.primitive)
                                       ? RematDecision::kSave
                                       : remat_decision(policy, eqn.primitive->name, in_avals, eqn.params);
    if (decision == RematDecision::kSave) {
      for (const Var& out : eqn.outputs) env[out.id] = {false, false};
      continue;
    }
    if (decision == RematDecision::kOffload) {
      // The forward pass copies the value to host memory, where it is saved; the backward pass loads it back.
      for (const Var& out : eqn.outputs) {
        Aval host = out.aval;
        host.memory = MemorySpace::kHost;
        const Var offloaded = new_var(host);
        split.known.eqns.push_back(
            Eqn{device_put_primitive(), memory_move_params(kHostMemorySpaceText), {out}, {offloaded}, eqn.source});
        split.staged.eqns.push_back(
            Eqn{device_put_primitive(), memory_move_params(kDeviceMemorySpaceText), {offloaded}, {out}, eqn.source});
        keep(offloaded);
        env[out.id] = {false, true};
      }
      continue;
    }
    for (const Atom& input : eqn.inputs) ensure_available(input);
    split.staged.eqns.push_back(eqn);
    for (const Var& out : eqn.outputs) env[out.id] = {false, true};
  }
  for (const Atom& out : body.outvars) {
    const VarState state = read(out);
    split.out_unknowns.push_back(state.unknown);
    split.out_available.push_back(state.available);
    if (!state.unknown) split.known.outvars.push_back(out);
    if (state.available) split.staged.outvars.push_back(out);
  }
  split.known.outvars.insert(split.known.outvars.end(), residuals.begin(), residuals.end());
  split.staged.invars = residuals;
  for (std::size_t i = 0; i < body.invars.size(); ++i) {
    if (in_available[i]) split.staged.invars.push_back(body.invars[i]);
  }
  split.num_residuals = residuals.size();
  return split;
}

// Dead-code elimination keeping the outvars flagged in `keep_outs`; returns which invars are still read.
std::vector<bool> remove_dead_code(Jaxpr& jaxpr, const std::vector<bool>& keep_outs) {
  std::unordered_set<int64_t> live;
  std::vector<Atom> outs;
  for (std::size_t o = 0; o < jaxpr.outvars.size(); ++o) {
    if (!keep_outs[o]) continue;
    outs.push_back(jaxpr.outvars[o]);
    if (const auto* var = std::get_if<Var>(&jaxpr.outvars[o])) live.insert(var->id);
  }
  std::vector<Eqn> kept;
  for (auto it = jaxpr.eqns.rbegin(); it != jaxpr.eqns.rend(); ++it) {
    const bool needed = has_effect(*it->primitive) || std::any_of(it->outputs.begin(), it->outputs.end(),
                                                                  [&](const Var& v) { return live.contains(v.id); });
    if (!needed) continue;
    for (const Atom& input : it->inputs) {
      if (const auto* var = std::get_if<Var>(&input)) live.insert(var->id);
    }
    kept.push_back(*it);
  }
  std::reverse(kept.begin(), kept.end());
  jaxpr.eqns = std::move(kept);
  jaxpr.outvars = std::move(outs);
  std::vector<bool> used;
  std::vector<Var> invars;
  for (const Var& var : jaxpr.invars) {
    used.push_back(live.contains(var.id));
    if (used.back()) invars.push_back(var);
  }
  jaxpr.invars = std::move(invars);
  return used;
}

}  // namespace

std::optional<RematSplit> split_remat_eqn(const Eqn& eqn, const std::vector<bool>& unknown_inputs) {
  if (eqn.primitive->name != "remat2") return std::nullopt;
  const auto* ref = param(eqn.params, "jaxpr").get_if<ParamValue::JaxprRef>();
  if (ref == nullptr || !*ref) throw type_error("remat2 equation without a jaxpr");
  const Jaxpr& body = **ref;
  const std::vector<bool> all_available(body.invars.size(), true);
  CustomSplit split = split_by_policy(body, unknown_inputs, all_available, remat_policy_of(eqn.params));

  // The staged half keeps only the unknown outputs, and reads only the residuals and inputs those need.
  std::vector<bool> keep_staged;
  for (std::size_t o = 0; o < body.outvars.size(); ++o) {
    if (split.out_available[o]) keep_staged.push_back(split.out_unknowns[o]);
  }
  const std::vector<bool> staged_reads = remove_dead_code(split.staged, keep_staged);
  const std::vector<bool> used_residuals(staged_reads.begin(),
                                         staged_reads.begin() + static_cast<std::ptrdiff_t>(split.num_residuals));
  // The known half keeps its outputs and the residuals the staged half reads.
  std::vector<bool> keep_known(split.known.outvars.size() - split.num_residuals, true);
  keep_known.insert(keep_known.end(), used_residuals.begin(), used_residuals.end());
  remove_dead_code(split.known, keep_known);

  RematSplit out;
  out.out_unknowns = split.out_unknowns;
  // The known equations run inline, renamed: body inputs read the equation's operands, known outputs bind the
  // equation's outputs, and everything else gets a fresh variable.
  std::unordered_map<int64_t, Atom> rename;
  for (std::size_t i = 0; i < body.invars.size(); ++i) rename.insert_or_assign(body.invars[i].id, eqn.inputs[i]);
  auto renamed = [&](const Atom& atom) -> Atom {
    const auto* var = std::get_if<Var>(&atom);
    if (var == nullptr) return atom;
    const auto it = rename.find(var->id);
    return it != rename.end() ? it->second : atom;
  };
  std::size_t next_known_out = 0;
  std::unordered_map<int64_t, Var> known_out_binders;
  for (std::size_t o = 0; o < body.outvars.size(); ++o) {
    if (split.out_unknowns[o]) continue;
    const Atom& inner = split.known.outvars[next_known_out++];
    if (const auto* var = std::get_if<Var>(&inner)) known_out_binders.emplace(var->id, eqn.outputs[o]);
  }
  for (const Eqn& inner : split.known.eqns) {
    Eqn hoisted = inner;
    for (Atom& input : hoisted.inputs) input = renamed(input);
    for (Var& output : hoisted.outputs) {
      const auto bound = known_out_binders.find(output.id);
      const Var fresh = bound != known_out_binders.end() ? bound->second : new_var(output.aval);
      rename.insert_or_assign(output.id, fresh);
      output = fresh;
    }
    out.known_eqns.push_back(std::move(hoisted));
  }
  // Known outputs the body passes straight through (an input, a literal) still bind the equation's outputs.
  next_known_out = 0;
  for (std::size_t o = 0; o < body.outvars.size(); ++o) {
    if (split.out_unknowns[o]) continue;
    const Atom& inner = split.known.outvars[next_known_out++];
    const auto* var = std::get_if<Var>(&inner);
    const bool bound_by_eqn = var != nullptr && rename.contains(var->id) &&
                              std::holds_alternative<Var>(rename.at(var->id)) &&
                              std::get<Var>(rename.at(var->id)).id == eqn.outputs[o].id;
    if (!bound_by_eqn) out.forwarded.emplace_back(eqn.outputs[o], renamed(inner));
  }

  Params staged_params = replace_param(eqn.params, "jaxpr", ParamValue(std::make_shared<const Jaxpr>(split.staged)));
  staged_params = replace_param(staged_params, "differentiated", true);
  out.staged = Eqn{eqn.primitive, std::move(staged_params), {}, {}, eqn.source};
  // After dead-code elimination the known half's outvars are its outputs, then the residuals still read.
  std::size_t next_residual = split.known.outvars.size() -
                              static_cast<std::size_t>(std::count(used_residuals.begin(), used_residuals.end(), true));
  std::size_t read_index = 0;
  for (std::size_t r = 0; r < split.num_residuals; ++r, ++read_index) {
    if (staged_reads[read_index]) out.staged.inputs.push_back(renamed(split.known.outvars.at(next_residual++)));
  }
  for (std::size_t i = 0; i < body.invars.size(); ++i, ++read_index) {
    if (staged_reads[read_index]) out.staged.inputs.push_back(eqn.inputs[i]);
  }
  for (std::size_t o = 0; o < body.outvars.size(); ++o) {
    if (split.out_unknowns[o]) out.staged.outputs.push_back(eqn.outputs[o]);
  }
  return out;
}

}  // namespace shardscope::ad
