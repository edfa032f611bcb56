// Per-equation partitioning decisions: which layout each operand needs, what the kernel produces, which partial
// results are reduced, from the op's factor rule and the propagated layouts.
#include "exec/partition_plan.h"

#include <algorithm>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>

#include "exec/all_reduce_combiner.h"
#include "exec/host_callbacks.h"
#include "exec/local_block_strategies.h"
#include "exec/shard_map.h"
#include "ir/layout_constraint.h"
#include "ir/param.h"
#include "ir/primitive.h"
#include "ops/structural.h"
#include "propagation/factor_rule.h"

namespace shardscope {
namespace {

std::vector<Layout> result_layouts(const Eqn& eqn, const LayoutMap& layouts) {
  std::vector<Layout> out;
  out.reserve(eqn.outputs.size());
  for (const Var& output : eqn.outputs) out.push_back(layout_in(layouts, Atom{output}));
  return out;
}

std::vector<Layout> unsharded_operands(const Eqn& eqn) {
  std::vector<Layout> out;
  out.reserve(eqn.inputs.size());
  for (const Atom& input : eqn.inputs) out.emplace_back(atom_aval(input).rank());
  return out;
}

EquationPlan manual_plan(const Eqn& eqn, const Mesh& mesh) {
  const ShardMapSpec spec = shard_map_spec_of(eqn.params);
  EquationPlan plan;
  plan.mode = EquationMode::kManual;
  plan.reason = "shard_map in_specs of operand";
  for (std::size_t i = 0; i < eqn.inputs.size(); ++i) {
    plan.operands.push_back(
        manual_boundary_layout(spec.in_specs.at(i), spec.mesh, mesh, atom_aval(eqn.inputs[i]).rank()));
  }
  for (std::size_t r = 0; r < eqn.outputs.size(); ++r) {
    plan.produced.push_back(manual_boundary_layout(spec.out_specs.at(r), spec.mesh, mesh, eqn.outputs[r].aval.rank()));
  }
  return plan;
}

// The first dim other than `source` that can take `source`'s axes as well as its own: its size splits evenly
// over both (XLA's GetFirstTargetDimToMoveShardingTiles, dims in order); nullopt when none can.
std::optional<std::size_t> first_target_dim(const Aval& aval, const Layout& layout, std::size_t source,
                                            const Mesh& mesh) {
  if (source >= aval.rank() || aval.shape[source] <= 1) return std::nullopt;
  const int64_t moving = mesh.axes_size(layout[source]);
  for (std::size_t d = 0; d < aval.rank(); ++d) {
    if (d == source) continue;
    if (aval.shape[d] % (mesh.axes_size(layout[d]) * moving) == 0) return d;
  }
  return std::nullopt;
}

// `layout` with `dim`'s axes moved onto `target` after its own (XLA's MoveAndMergeShardingTiles keeps the
// target's tiles major), or dropped when there is no target (the dim is gathered).
Layout axes_moved_aside(Layout layout, std::size_t dim, std::optional<std::size_t> target) {
  if (target) layout[*target].insert(layout[*target].end(), layout[dim].begin(), layout[dim].end());
  layout[dim].clear();
  return layout;
}

// XLA sorts along a sharded dimension without gathering it (HandleSort): an all-to-all first moves that
// dimension's axes onto the first other dimension that splits evenly over them, the sort runs locally, and the
// results move back to their layout the same way. The operands and the kernel's layout change; the results'
// propagated layouts do not.
void move_sorted_axes_aside(const Eqn& eqn, const LayoutMap& layouts, const Mesh& mesh, EquationPlan& plan) {
  if (eqn.primitive->name != "sort" || eqn.inputs.empty() || plan.operands.empty()) return;
  const int64_t dimension = param(eqn.params, "dimension").as_int("dimension");
  const Aval& aval = atom_aval(eqn.inputs[0]);
  const Layout held = layout_in(layouts, eqn.inputs[0]);
  if (dimension < 0 || static_cast<std::size_t>(dimension) >= held.size()) return;
  const auto dim = static_cast<std::size_t>(dimension);
  const std::vector<std::string>& moving = held[dim];
  if (moving.empty()) return;
  const Layout& required = plan.operands[0];
  for (const auto& axes : required) {
    for (const std::string& axis : moving) {
      if (std::find(axes.begin(), axes.end(), axis) != axes.end()) return;
    }
  }
  Layout probe = required;
  probe[dim] = moving;
  const std::optional<std::size_t> target = first_target_dim(aval, probe, dim, mesh);
  if (!target) return;
  for (Layout& operand : plan.operands) {
    if (operand.size() != aval.rank()) return;
  }
  for (Layout& operand : plan.operands) operand[*target].insert(operand[*target].end(), moving.begin(), moving.end());
  for (Layout& produced : plan.produced) {
    if (produced.size() == aval.rank()) produced = plan.operands[0];
  }
}

EquationPlan local_plan(const Eqn& eqn, const LayoutMap& layouts, const Mesh& mesh) {
  const FactorRule rule = factor_rule_for(eqn);
  EquationPlan plan;
  plan.mode = EquationMode::kLocal;
  plan.reason = eqn.primitive->name + " operand";
  // Pass-through factors take the results' axes; reduction factors the axes the operands agree on.
  std::map<int, std::vector<std::string>> axes;
  for (std::size_t r = 0; r < eqn.outputs.size() && r < rule.results.size(); ++r) {
    const auto from_result = factor_axes(rule.results[r], layout_in(layouts, Atom{eqn.outputs[r]}), rule, mesh);
    axes.insert(from_result.begin(), from_result.end());
  }
  // Factors that need replication are computed whole, whatever layout propagation gave the result.
  for (std::size_t f = 0; f < rule.kinds.size(); ++f) {
    if (needs_whole_dims(rule.kinds[f])) axes.erase(static_cast<int>(f));
  }
  for (std::size_t f = 0; f < rule.kinds.size(); ++f) {
    if (rule.kinds[f] != FactorKind::kReduction) continue;
    std::optional<std::vector<std::string>> agreed;
    for (std::size_t o = 0; o < rule.operands.size() && o < eqn.inputs.size(); ++o) {
      const auto from_operand = factor_axes(rule.operands[o], layout_in(layouts, eqn.inputs[o]), rule, mesh);
      const auto it = from_operand.find(static_cast<int>(f));
      if (it == from_operand.end()) continue;
      agreed = agreed && *agreed != it->second ? std::vector<std::string>{} : it->second;
    }
    if (agreed && agreed->empty()) agreed = contraction_kept_sharded(eqn, layouts, rule, static_cast<int>(f), mesh);
    axes[static_cast<int>(f)] = agreed.value_or(std::vector<std::string>{});
    const std::vector<std::string>& reduced = axes[static_cast<int>(f)];
    plan.reduced_axes.insert(plan.reduced_axes.end(), reduced.begin(), reduced.end());
    if (!reduced.empty()) plan.reductions.push_back(reduced);
  }
  std::set<int> cut_factors;  // factors computed whole although propagation sharded them
  // An axis that splits a contraction or reduction cannot also split a kept dim (each device holds one block
  // per axis): the partial results are reduced over it, and the kept dim comes out whole, cut to its layout
  // after (the reduce-scatter XLA makes).
  for (std::size_t f = 0; f < rule.kinds.size(); ++f) {
    if (rule.kinds[f] == FactorKind::kReduction) continue;
    std::vector<std::string>& list = axes[static_cast<int>(f)];
    const auto clash = std::find_if(list.begin(), list.end(), [&](const std::string& axis) {
      return std::find(plan.reduced_axes.begin(), plan.reduced_axes.end(), axis) != plan.reduced_axes.end();
    });
    if (clash == list.end()) continue;
    list.erase(clash, list.end());
    cut_factors.insert(static_cast<int>(f));
  }
  // Two kept factors cannot split over one axis. Propagation settles conflicts per tensor, so two results may
  // each give a different factor the same axis (a loop's carry and a stacked output): the factor met first in
  // the results keeps it, the other is computed whole and cut to its results' layouts after.
  {
    std::vector<int> first_seen;
    for (const auto& dims : rule.results) {
      for (const auto& factors : dims) {
        for (const int f : factors) {
          if (std::find(first_seen.begin(), first_seen.end(), f) == first_seen.end()) first_seen.push_back(f);
        }
      }
    }
    std::set<std::string> claimed(plan.reduced_axes.begin(), plan.reduced_axes.end());
    for (const int f : first_seen) {
      if (rule.kinds[static_cast<std::size_t>(f)] == FactorKind::kReduction) continue;
      std::vector<std::string>& list = axes[f];
      const auto clash =
          std::find_if(list.begin(), list.end(), [&](const std::string& axis) { return claimed.count(axis) != 0; });
      if (clash != list.end()) {
        list.erase(clash, list.end());
        cut_factors.insert(f);
      }
      claimed.insert(list.begin(), list.end());
    }
  }
  // A dim made of several factors (a reshape's merge or split) holds blocks only when its axes fill the major
  // factors before any minor one is sharded: a minor factor sharded under a partly sharded major one would be
  // a strided layout. Such factors are computed whole, and the result is cut to its propagated layout after.
  const auto cut_minor_factors = [&](const std::vector<std::vector<int>>& dims) {
    bool changed = false;
    for (const std::vector<int>& factors : dims) {
      bool cut = false;
      for (const int f : factors) {
        std::vector<std::string>& list = axes[f];
        if (cut && !list.empty() && rule.kinds[static_cast<std::size_t>(f)] != FactorKind::kReduction) {
          list.clear();
          cut_factors.insert(f);
          changed = true;
        }
        if (mesh.axes_size(list) != rule.factor_sizes[static_cast<std::size_t>(f)]) cut = true;
      }
    }
    return changed;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& dims : rule.operands) changed = cut_minor_factors(dims) || changed;
    for (const auto& dims : rule.results) changed = cut_minor_factors(dims) || changed;
  }
  // The axes a dim of factors holds as blocks, major factor first.
  const auto dim_axes = [&](const std::vector<int>& factors) {
    std::vector<std::string> held;
    for (const int f : factors) {
      const auto& list = axes[f];
      held.insert(held.end(), list.begin(), list.end());
      if (mesh.axes_size(list) != rule.factor_sizes[static_cast<std::size_t>(f)]) break;
    }
    return held;
  };
  for (std::size_t o = 0; o < eqn.inputs.size(); ++o) {
    const Aval& aval = atom_aval(eqn.inputs[o]);
    Layout required(aval.rank());
    if (o < rule.operands.size()) {
      for (std::size_t d = 0; d < aval.rank() && d < rule.operands[o].size(); ++d) {
        required[d] = dim_axes(rule.operands[o][d]);
      }
    }
    plan.operands.push_back(std::move(required));
  }
  // A result dim whose factor needs replication comes out whole even where propagation sharded it (an output
  // sharding on the result): it is cut to the propagated layout after the kernel.
  for (std::size_t r = 0; r < eqn.outputs.size(); ++r) {
    Layout layout = layout_in(layouts, Atom{eqn.outputs[r]});
    for (std::size_t d = 0; r < rule.results.size() && d < layout.size() && d < rule.results[r].size(); ++d) {
      for (const int f : rule.results[r][d]) {
        if (needs_whole_dims(rule.kinds[static_cast<std::size_t>(f)])) layout[d].clear();
      }
      // The kernel's block of a dim of several factors is what the factors' axes give (see above).
      const std::vector<int>& factors = rule.results[r][d];
      if (factors.size() > 1 ||
          std::any_of(factors.begin(), factors.end(), [&](int f) { return cut_factors.contains(f); })) {
        layout[d] = dim_axes(factors);
      }
    }
    plan.produced.push_back(std::move(layout));
  }
  gather_from_local_blocks(eqn, layouts, plan);
  slice_from_local_blocks(eqn, layouts, mesh, plan);
  scatter_into_local_blocks(eqn, layouts, plan);
  if ((eqn.primitive->name == "argmax" || eqn.primitive->name == "argmin") && !plan.operands.empty()) {
    plan.moves_index_iota = layout_in(layouts, eqn.inputs[0]) != plan.operands[0];
  }
  if (eqn.primitive->name == "top_k") {
    // XLA's partitioner has no rule of its own for TopK: its default action replicates the operand (one all-gather
    // per sharded dim), runs the op whole (its index iota made whole beside it), and cuts the results to their
    // propagated layouts in place.
    for (Layout& operand : plan.operands) operand.assign(operand.size(), {});
    for (Layout& produced : plan.produced) produced.assign(produced.size(), {});
    plan.exchanges.clear();
  }
  move_sorted_axes_aside(eqn, layouts, mesh, plan);
  if (eqn.outputs.size() == 1) {
    const Layout result = layout_in(layouts, Atom{eqn.outputs[0]});
    for (std::size_t o = 0; o < eqn.inputs.size(); ++o) {
      plan.exchanges.push_back(
          halo_exchanges(eqn, o, layout_in(layouts, eqn.inputs[o]), plan.operands[o], result, mesh));
    }
  }
  return plan;
}

// The slice of `var` along `dim` alone (stride 1, other dims whole) that `eqn` makes: its [start, limit).
std::optional<std::pair<int64_t, int64_t>> slice_along(const Eqn& eqn, const Var& var, std::size_t dim) {
  if (eqn.primitive->name != "slice" || eqn.inputs.size() != 1) return std::nullopt;
  const auto* operand = std::get_if<Var>(&eqn.inputs[0]);
  if (operand == nullptr || operand->id != var.id) return std::nullopt;
  if (const ParamValue* strides = find_param(eqn.params, "strides"); strides != nullptr && !strides->is_none()) {
    for (const int64_t stride : strides->as_ints("strides")) {
      if (stride != 1) return std::nullopt;
    }
  }
  const std::vector<int64_t> start = param(eqn.params, "start_indices").as_ints("start_indices");
  const std::vector<int64_t> limit = param(eqn.params, "limit_indices").as_ints("limit_indices");
  for (std::size_t d = 0; d < var.aval.rank(); ++d) {
    if (d != dim && (start.at(d) != 0 || limit.at(d) != var.aval.shape[d])) return std::nullopt;
  }
  return std::make_pair(start.at(dim), limit.at(dim));
}

}  // namespace

std::set<std::size_t> plan_rotations(const Jaxpr& jaxpr, const LayoutMap& layouts, const Mesh& mesh,
                                     std::vector<EquationPlan>& plans) {
  std::set<std::size_t> rotated;
  std::map<int64_t, std::size_t> producer;
  std::map<int64_t, int> uses;
  for (std::size_t e = 0; e < jaxpr.eqns.size(); ++e) {
    for (const Var& v : jaxpr.eqns[e].outputs) producer[v.id] = e;
    for (const Atom& in : jaxpr.eqns[e].inputs) {
      if (const auto* v = std::get_if<Var>(&in)) ++uses[v->id];
    }
  }
  for (const Atom& out : jaxpr.outvars) {
    if (const auto* v = std::get_if<Var>(&out)) ++uses[v->id];
  }
  for (std::size_t e = 0; e < jaxpr.eqns.size() && e < plans.size(); ++e) {
    const Eqn& concat = jaxpr.eqns[e];
    if (concat.primitive->name != "concatenate" || concat.inputs.size() != 2 || concat.outputs.size() != 1) continue;
    const auto dim = static_cast<std::size_t>(param(concat.params, "dimension").as_int("dimension"));
    if (!std::holds_alternative<Var>(concat.inputs[0]) || !std::holds_alternative<Var>(concat.inputs[1])) continue;
    const Var& head = std::get<Var>(concat.inputs[0]);
    const Var& tail = std::get<Var>(concat.inputs[1]);
    if (!producer.contains(head.id) || !producer.contains(tail.id)) continue;
    const std::size_t head_eqn = producer[head.id];
    const std::size_t tail_eqn = producer[tail.id];
    // Slices read only by the concatenation: the partitioner rotates their operand instead of cutting them.
    if (head_eqn == tail_eqn || uses[head.id] != 1 || uses[tail.id] != 1) continue;
    if (jaxpr.eqns[head_eqn].primitive->name != "slice" || jaxpr.eqns[tail_eqn].primitive->name != "slice" ||
        jaxpr.eqns[head_eqn].inputs.empty() || !std::holds_alternative<Var>(jaxpr.eqns[head_eqn].inputs[0]) ||
        std::get<Var>(jaxpr.eqns[head_eqn].inputs[0]).aval.rank() <= dim) {
      continue;
    }
    const Var* source = &std::get<Var>(jaxpr.eqns[head_eqn].inputs[0]);
    const auto head_range = slice_along(jaxpr.eqns[head_eqn], *source, dim);
    const auto tail_range = slice_along(jaxpr.eqns[tail_eqn], *source, dim);
    const int64_t n = source->aval.shape.at(dim);
    // x[n-s:] ++ x[:n-s] is x rotated right by s (jnp.roll's static lowering).
    if (!head_range || !tail_range || head_range->second != n || tail_range->first != 0 ||
        tail_range->second != head_range->first || head_range->first <= 0 || head_range->first >= n) {
      continue;
    }
    const Layout held = layout_in(layouts, Atom{*source});
    if (layout_in(layouts, Atom{concat.outputs[0]}) != held) continue;
    // The slices' and the concatenation's own moves must all be along `dim` (anything else is a reshard of its
    // own), and the slices must come out as propagated or be cut to it: the rotation replaces the moves along
    // `dim`.
    const auto along_dim_only = [&](const Layout& from, const Layout& to) {
      if (from.size() != to.size()) return false;
      for (std::size_t d = 0; d < from.size(); ++d) {
        if (d != dim && from[d] != to[d]) return false;
      }
      return true;
    };
    const auto slice_result = [&](std::size_t slice) { return layout_in(layouts, Atom{jaxpr.eqns[slice].outputs[0]}); };
    // A slice that comes out whole along `dim` is cut to its propagated layout in place (nothing moves).
    const auto cut_without_moving = [&](const Layout& produced, const Layout& result) {
      return along_dim_only(produced, result) && (produced[dim].empty() || produced[dim] == result[dim]);
    };
    bool in_place = true;
    for (std::size_t o = 0; o < concat.inputs.size(); ++o) {
      in_place = in_place && o < plans[e].operands.size() &&
                 along_dim_only(layout_in(layouts, concat.inputs[o]), plans[e].operands[o]);
    }
    for (const std::size_t slice : {head_eqn, tail_eqn}) {
      const EquationPlan& cut = plans[slice];
      in_place = in_place && !cut.operands.empty() && along_dim_only(held, cut.operands[0]) &&
                 cut.produced.size() == 1 && cut_without_moving(cut.produced[0], slice_result(slice));
    }
    if (!in_place) continue;
    if (held.size() <= dim || held[dim].empty() || n % mesh.axes_size(held[dim]) != 0) continue;
    const std::vector<HaloExchange> exchanges =
        rotation_exchanges(source->aval, dim, n - head_range->first, held, mesh);
    HaloExchange none{CollectiveKind::kCollectivePermute,
                      0,
                      dim,
                      held[dim],
                      std::vector<int64_t>(mesh.devices().size(), 0),
                      std::vector<int64_t>(mesh.devices().size(), 0)};
    // The slices then move nothing of their own (an exchange that sends nothing stands for their gather); a
    // one-element slice planned as a masked all-reduce (slice_from_local_blocks) is part of the rotation instead.
    for (const std::size_t slice : {head_eqn, tail_eqn}) {
      EquationPlan& plan = plans[slice];
      if (plan.partial_gather) {
        plan.operands[0][dim].clear();
        plan.partial_gather = false;
        plan.reductions.clear();
        plan.reduced_axes.clear();
      }
      plan.exchanges.resize(1);
      plan.exchanges[0] = {none};
    }
    EquationPlan& plan = plans[e];
    plan.exchanges.assign(concat.inputs.size(), {});
    plan.exchanges[0] = exchanges.empty() ? std::vector<HaloExchange>{none} : exchanges;
    none.operand = 1;
    plan.exchanges[1] = {none};
    rotated.insert(e);
  }
  return rotated;
}

void pin_argument(LayoutMap& known, const Var& arg, const NamedSharding& sharding, std::size_t index,
                  bool from_in_shardings) {
  const std::string origin =
      (from_in_shardings ? "in_shardings[" : "argument ") + std::to_string(index) + (from_in_shardings ? "]" : "");
  known[arg.id] = {dim_axes_of(sharding, arg.aval.rank()), true, origin, {}};
}

void pin_outputs_and_types(LayoutMap& known, const Jaxpr& jaxpr,
                           const std::vector<std::optional<Sharding>>& out_shardings, const Mesh& mesh) {
  for (std::size_t o = 0; o < jaxpr.outvars.size() && o < out_shardings.size(); ++o) {
    const auto* var = std::get_if<Var>(&jaxpr.outvars[o]);
    if (var == nullptr || !out_shardings[o]) continue;
    if (const auto* named = std::get_if<NamedSharding>(&*out_shardings[o])) {
      known[var->id] = {dim_axes_of(*named, var->aval.rank()), true, "out_shardings[" + std::to_string(o) + "]", {}};
    }
  }
  // Explicit mode: every value's type names its sharding; propagation only fills in the untyped ones.
  const auto& types = mesh.axis_types();
  if (std::find(types.begin(), types.end(), AxisType::kExplicit) == types.end()) return;
  for (const Eqn& eqn : jaxpr.eqns) {
    for (const Var& out : eqn.outputs) {
      if (out.aval.dim_axes.size() == out.aval.rank() && !known.contains(out.id)) {
        known[out.id] = {out.aval.dim_axes, true, "sharding in types", {}};
      }
    }
  }
}

std::string layout_text(const Layout& layout) {
  std::string text = "P(";
  for (std::size_t d = 0; d < layout.size(); ++d) {
    if (d > 0) text += ", ";
    const auto& axes = layout[d];
    if (axes.empty()) {
      text += "None";
    } else if (axes.size() == 1) {
      text += "'" + axes.front() + "'";
    } else {
      text += "(";
      for (std::size_t a = 0; a < axes.size(); ++a) text += (a > 0 ? ", '" : "'") + axes[a] + "'";
      text += ")";
    }
  }
  return text + (layout.size() == 1 && !layout.front().empty() && layout.front().size() > 1 ? ",)" : ")");
}

std::string operand_move_reason(const EquationPlan& plan, std::size_t operand, const Layout& from) {
  if (plan.mode == EquationMode::kLayoutMove) return plan.reason;
  return plan.reason + " " + std::to_string(operand) + ": " + layout_text(from) + " -> " +
         layout_text(plan.operands.at(operand));
}

std::string index_iota_reason(const Eqn& eqn) { return eqn.primitive->name + " index iota (moves as operand 0)"; }

std::string halo_exchange_reason(const EquationPlan& plan, const HaloExchange& exchange) {
  std::string axes;
  for (const std::string& axis : exchange.axes) axes += (axes.empty() ? "'" : ", '") + axis + "'";
  if (exchange.kind == CollectiveKind::kAllGather || exchange.kind == CollectiveKind::kAllReduce) {
    // The result of a pad or slice that drops the dim's sharding, made whole after the op ran on blocks.
    std::string op = plan.reason;
    if (op.ends_with(" operand")) op.resize(op.size() - std::string(" operand").size());
    return op + " result: blocks along dim " + std::to_string(exchange.dim) + " made whole over " + axes;
  }
  return plan.reason + " " + std::to_string(exchange.operand) + ": neighbours' elements along dim " +
         std::to_string(exchange.dim) + ", which stays sharded over " + axes;
}

Layout layout_in(const LayoutMap& layouts, const Atom& atom) {
  const Aval& aval = atom_aval(atom);
  if (const auto* var = std::get_if<Var>(&atom)) {
    const auto it = layouts.find(var->id);
    if (it != layouts.end() && it->second.layout.size() == aval.rank()) return it->second.layout;
  }
  return Layout(aval.rank());
}

EquationPlan plan_equation(const Eqn& eqn, const LayoutMap& layouts, const Mesh& mesh) {
  const std::string& name = eqn.primitive->name;
  if (eqn.outputs.empty()) {
    // Effects (debug callbacks) read their operands where they are: nothing moves for them.
    EquationPlan plan;
    plan.reason = name + " operand";
    for (const Atom& input : eqn.inputs) plan.operands.push_back(layout_in(layouts, input));
    return plan;
  }
  if (is_layout_constraint(eqn) || name == "reshard" || name == "mesh_cast") {
    EquationPlan plan;
    plan.mode = EquationMode::kLayoutMove;
    plan.reason = "with_sharding_constraint";
    plan.produced = result_layouts(eqn, layouts);
    plan.operands = plan.produced;
    return plan;
  }
  if (name == "shard_map" && shard_map_spec_of(eqn.params).mesh.devices() == mesh.devices()) {
    return manual_plan(eqn, mesh);
  }
  // Host callbacks run once, on whole operands, their results replicated (JAX runs them on one device).
  if (eqn.primitive->block_impl || eqn.inputs.empty() || !eqn.primitive->impl || is_host_callback(eqn)) {
    EquationPlan plan;
    plan.mode = eqn.primitive->block_impl ? EquationMode::kBlocked : EquationMode::kWhole;
    plan.reason = name + " operand";
    plan.operands = unsharded_operands(eqn);
    // Blocked kernels compute each device's own block; whole results are cut to their layouts afterwards.
    if (plan.mode == EquationMode::kBlocked) {
      plan.produced = result_layouts(eqn, layouts);
    } else {
      for (const Var& output : eqn.outputs) plan.produced.emplace_back(output.aval.rank());
    }
    return plan;
  }
  return local_plan(eqn, layouts, mesh);
}

namespace {

bool contains(const std::vector<std::string>& axes, const std::string& axis) {
  return std::find(axes.begin(), axes.end(), axis) != axes.end();
}

// Unreduced types (JAX's P(unreduced=...)): a result typed unreduced over an axis keeps each device's partial sum
// there, so the all-reduce the contraction would take over it is not run; a value leaving an unreduced type
// (reshard to a reduced or sharded spec) is summed over the axes it drops, the one all-reduce such programs take.
void keep_unreduced_partial_sums(const Eqn& eqn, EquationPlan& plan) {
  if (eqn.outputs.size() != 1) return;
  const std::vector<std::string>& kept = eqn.outputs[0].aval.unreduced;
  if (plan.mode == EquationMode::kLayoutMove) {
    if (eqn.inputs.empty()) return;
    std::vector<std::string> summed;
    for (const std::string& axis : atom_aval(eqn.inputs[0]).unreduced) {
      if (!contains(kept, axis)) summed.push_back(axis);
    }
    if (!summed.empty()) {
      plan.reduced_axes = summed;
      plan.reductions.push_back(std::move(summed));
    }
    return;
  }
  if (kept.empty()) return;
  for (std::vector<std::string>& axes : plan.reductions) {
    axes.erase(std::remove_if(axes.begin(), axes.end(), [&](const std::string& a) { return contains(kept, a); }),
               axes.end());
  }
  plan.reductions.erase(std::remove_if(plan.reductions.begin(), plan.reductions.end(),
                                       [](const std::vector<std::string>& axes) { return axes.empty(); }),
                        plan.reductions.end());
}

// XLA's HandleConcatenate treats the concatenated dim as one to replicate (HandleElementwiseWithDimsToReplicate):
// when the result is sharded along it, its axes move onto the first other dim that splits evenly over them (or,
// with none, the dim is gathered), every operand is resharded to that layout (once per distinct value: the
// partitioner caches a value's reshards), the blocks are concatenated locally, and the result moves back. This
// replaces the regrouping exchange halo_exchanges planned for the operands.
void move_concatenated_axes_aside(const Eqn& eqn, const LayoutMap& layouts, const Mesh& mesh, EquationPlan& plan) {
  if (eqn.primitive->name != "concatenate" || plan.mode != EquationMode::kLocal || eqn.outputs.size() != 1 ||
      plan.produced.size() != 1 || plan.operands.size() != eqn.inputs.size()) {
    return;
  }
  const auto dim = static_cast<std::size_t>(param(eqn.params, "dimension").as_int("dimension"));
  const Aval& out = eqn.outputs[0].aval;
  const Layout result = layout_in(layouts, Atom{eqn.outputs[0]});
  if (dim >= result.size() || result[dim].empty()) return;
  // XLA's simplifier drops operands with no elements first; one operand left is the result itself.
  const auto empty = [&](const Atom& a) { return atom_aval(a).shape.at(dim) == 0; };
  if (std::count_if(eqn.inputs.begin(), eqn.inputs.end(), [&](const Atom& a) { return !empty(a); }) <= 1) return;
  const Layout kernel = axes_moved_aside(result, dim, first_target_dim(out, result, dim, mesh));
  plan.exchanges.assign(eqn.inputs.size(), {});
  for (std::size_t o = 0; o < eqn.inputs.size(); ++o) {
    plan.operands[o] = kernel;
    const auto* var = std::get_if<Var>(&eqn.inputs[o]);
    const auto seen = std::find_if(eqn.inputs.begin(), eqn.inputs.begin() + static_cast<std::ptrdiff_t>(o),
                                   [&](const Atom& a) { return var != nullptr && a == eqn.inputs[o]; });
    if (seen == eqn.inputs.begin() + static_cast<std::ptrdiff_t>(o) && !empty(eqn.inputs[o])) continue;
    // The same value again (the first operand's reshard serves it) or no elements at all: an exchange that sends
    // nothing stands for the move.
    plan.exchanges[o] = {HaloExchange{CollectiveKind::kAllToAll, o, dim, result[dim],
                                      std::vector<int64_t>(mesh.devices().size(), 0),
                                      std::vector<int64_t>(mesh.devices().size(), 0)}};
  }
  plan.produced[0] = kernel;
}

// A result nothing reads (argsort's sorted values beside the permutation) is not moved to its layout: XLA's dead
// code elimination drops the collectives that would move it.
void keep_dead_results_in_place(const Jaxpr& jaxpr, const LayoutMap& layouts, std::vector<EquationPlan>& plans) {
  std::set<int64_t> read;
  for (const Eqn& eqn : jaxpr.eqns) {
    for (const Atom& in : eqn.inputs) {
      if (const auto* v = std::get_if<Var>(&in)) read.insert(v->id);
    }
  }
  for (const Atom& out : jaxpr.outvars) {
    if (const auto* v = std::get_if<Var>(&out)) read.insert(v->id);
  }
  for (std::size_t e = 0; e < jaxpr.eqns.size() && e < plans.size(); ++e) {
    const Eqn& eqn = jaxpr.eqns[e];
    if (eqn.primitive->name != "sort" || plans[e].mode != EquationMode::kLocal) continue;
    for (std::size_t r = 0; r < eqn.outputs.size() && r < plans[e].produced.size(); ++r) {
      if (!read.contains(eqn.outputs[r].id)) plans[e].produced[r] = layout_in(layouts, Atom{eqn.outputs[r]});
    }
  }
}

}  // namespace

std::vector<EquationPlan> plan_equations(const Jaxpr& jaxpr, const LayoutMap& layouts, const Mesh& mesh) {
  std::vector<EquationPlan> plans;
  plans.reserve(jaxpr.eqns.size());
  for (const Eqn& eqn : jaxpr.eqns) {
    plans.push_back(plan_equation(eqn, layouts, mesh));
    keep_unreduced_partial_sums(eqn, plans.back());
  }
  const std::set<std::size_t> rotated = plan_rotations(jaxpr, layouts, mesh, plans);
  for (std::size_t e = 0; e < jaxpr.eqns.size() && e < plans.size(); ++e) {
    if (!rotated.contains(e)) move_concatenated_axes_aside(jaxpr.eqns[e], layouts, mesh, plans[e]);
  }
  keep_dead_results_in_place(jaxpr, layouts, plans);
  combine_all_reduces(jaxpr, mesh, plans);
  return plans;
}

}  // namespace shardscope
