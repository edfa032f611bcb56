// Factor-based propagation: candidates agreed by every tensor of an op, conflicts settled by tensor size,
// open tensors extended until nothing changes; cheap ops propagate first, broadcasts forward last.
#include "propagation/auto_propagation.h"

#include <algorithm>
#include <set>

#include "ir/layout_constraint.h"
#include "ir/primitive.h"

namespace shardscope {
namespace {

bool is_prefix(const std::vector<std::string>& prefix, const std::vector<std::string>& of) {
  return prefix.size() <= of.size() && std::equal(prefix.begin(), prefix.end(), of.begin());
}

bool cheap_op(const std::string& name, bool elementwise) {
  return elementwise || name == "transpose" || name == "reshape" || name == "squeeze" ||
         name == "sharding_constraint" || name == "device_put";
}

// Shardy's compatible-major-axes walk: the shared prefix of two lists; a longer list extends the candidate only
// while no tensor has disagreed with it.
void merge_compatible(std::vector<std::string>& candidate, std::vector<bool>::reference can_expand,
                      const std::vector<std::string>& list) {
  std::size_t k = 0;
  while (k < candidate.size() && k < list.size() && candidate[k] == list[k]) ++k;
  if (k < candidate.size() && k < list.size()) {
    candidate.resize(k);
    can_expand = false;
    return;
  }
  if (can_expand && list.size() > candidate.size()) candidate = list;
}

// The number of elements a tensor spans in factor space (the product of its factors' sizes).
int64_t factor_volume(const std::vector<std::vector<int>>& dims, const FactorRule& rule) {
  int64_t volume = 1;
  for (const auto& factors : dims) {
    for (const int f : factors) volume *= rule.factor_sizes[static_cast<std::size_t>(f)];
  }
  return volume;
}

struct TensorRef {
  const Var* var;  // null for literals (rank 0, nothing to propagate)
  const std::vector<std::vector<int>>* dims;
  bool is_result;
};

// The order of rounds follows Shardy's op priorities: pass-through ops (elementwise, transpose, reshape) first;
// then every op but only along its pass-through factors, so a concatenation or a contraction takes the sharding
// of the dims it keeps before that of the dims it rearranges or reduces; then every factor; broadcasts take
// shardings from their operand only in the last round.
constexpr int kRounds = 4;
constexpr int kPassThroughFactorsRound = 1;

class Propagator {
 public:
  Propagator(const Mesh& mesh, LayoutMap& states) : mesh_(mesh), states_(states) {}

  void run(const Jaxpr& jaxpr) {
    for (const Var& v : jaxpr.invars) ensure(v);
    for (const Var& v : jaxpr.constvars) ensure(v);
    for (const Eqn& eqn : jaxpr.eqns) {
      for (const Var& v : eqn.outputs) ensure(v);
      if (is_layout_constraint(eqn)) close_constraint(eqn);
      if (eqn.primitive->name == "shard_map") close_manual_results(eqn);
    }
    rules_.reserve(jaxpr.eqns.size());
    for (const Eqn& eqn : jaxpr.eqns) rules_.push_back(factor_rule_for(eqn));
    for (int round = 0; round < kRounds; ++round) {
      for (int sweep = 0; sweep < 32; ++sweep) {
        bool changed = false;
        for (std::size_t i = 0; i < jaxpr.eqns.size(); ++i) changed = step(jaxpr.eqns[i], rules_[i], round) || changed;
        for (std::size_t i = jaxpr.eqns.size(); i-- > 0;) changed = step(jaxpr.eqns[i], rules_[i], round) || changed;
        if (!changed) break;
      }
    }
  }

 private:
  void ensure(const Var& v) {
    auto& state = states_[v.id];
    if (state.layout.size() != v.aval.rank()) state.layout.resize(v.aval.rank());
  }

  void close_constraint(const Eqn& eqn) {
    const NamedSharding* sharding = layout_constraint_target(eqn);
    if (sharding == nullptr) return;
    TensorLayoutState& state = states_[eqn.outputs.at(0).id];
    state.layout = dim_axes_on(*sharding, mesh_, eqn.outputs.at(0).aval.rank());
    state.closed = true;
    state.origin = eqn.primitive->name == "device_put" ? "device_put" : "with_sharding_constraint";
    state.dim_sources.clear();
  }

  // A shard_map's results are laid out as its out_specs say, whatever uses them; its operands are wanted as the
  // in_specs say, which open operands take (Shardy propagates a manual computation's in_shardings backwards).
  void close_manual_results(const Eqn& eqn) {
    const ParamValue* mesh_param = find_param(eqn.params, "mesh");
    const Mesh* spec_mesh = mesh_param == nullptr ? nullptr : mesh_param->get_if<Mesh>();
    const auto specs = manual_specs(eqn, "out_specs");
    if (spec_mesh == nullptr || spec_mesh->devices() != mesh_.devices() || specs.size() != eqn.outputs.size()) return;
    for (std::size_t r = 0; r < eqn.outputs.size(); ++r) {
      TensorLayoutState& state = states_[eqn.outputs[r].id];
      state.layout = dim_axes_on(NamedSharding{*spec_mesh, specs[r], std::nullopt}, mesh_, eqn.outputs[r].aval.rank());
      state.closed = true;
      state.origin = "shard_map out_specs";
      state.dim_sources.clear();
    }
  }

  bool manual_operands_step(const Eqn& eqn) {
    const ParamValue* mesh_param = find_param(eqn.params, "mesh");
    const Mesh* spec_mesh = mesh_param == nullptr ? nullptr : mesh_param->get_if<Mesh>();
    const auto specs = manual_specs(eqn, "in_specs");
    if (spec_mesh == nullptr || spec_mesh->devices() != mesh_.devices() || specs.size() != eqn.inputs.size()) {
      return false;
    }
    bool changed = false;
    for (std::size_t i = 0; i < eqn.inputs.size(); ++i) {
      const auto* var = std::get_if<Var>(&eqn.inputs[i]);
      if (var == nullptr) continue;
      TensorLayoutState& state = states_[var->id];
      const bool unsharded =
          std::all_of(state.layout.begin(), state.layout.end(), [](const auto& a) { return a.empty(); });
      if (state.closed || !unsharded) continue;
      Layout wanted = dim_axes_on(NamedSharding{*spec_mesh, specs[i], std::nullopt}, mesh_, var->aval.rank());
      if (wanted != state.layout) {
        state.layout = std::move(wanted);
        state.origin = "shard_map in_specs of operand " + std::to_string(i);
        state.dim_sources.clear();
        changed = true;
      }
    }
    return changed;
  }

  static std::vector<PartitionSpec> manual_specs(const Eqn& eqn, const char* key) {
    std::vector<PartitionSpec> specs;
    const ParamValue* value = find_param(eqn.params, key);
    const auto* items = value == nullptr ? nullptr : value->get_if<ParamValue::Tuple>();
    if (items == nullptr) return specs;
    for (const ParamValue& item : items->items) {
      if (const auto* spec = item.get_if<PartitionSpec>()) specs.push_back(*spec);
    }
    return specs;
  }

  std::vector<TensorRef> tensors_of(const Eqn& eqn, const FactorRule& rule) const {
    std::vector<TensorRef> tensors;
    for (std::size_t i = 0; i < eqn.inputs.size() && i < rule.operands.size(); ++i) {
      const auto* var = std::get_if<Var>(&eqn.inputs[i]);
      tensors.push_back({var, &rule.operands[i], false});
    }
    for (std::size_t i = 0; i < eqn.outputs.size() && i < rule.results.size(); ++i) {
      tensors.push_back({&eqn.outputs[i], &rule.results[i], true});
    }
    return tensors;
  }

  bool step(const Eqn& eqn, const FactorRule& rule, int round) {
    const std::string& name = eqn.primitive->name;
    if (name == "shard_map") return round > 0 && manual_operands_step(eqn);
    if (round == 0 && !cheap_op(name, rule.elementwise)) return false;
    const std::vector<TensorRef> tensors = tensors_of(eqn, rule);
    const std::size_t factor_count = rule.factor_sizes.size();

    // Candidate axes per factor: the longest list every tensor's own list is compatible with. Where two tensors
    // disagree, the candidate stops at their common prefix and no later tensor may extend it.
    std::vector<std::vector<std::string>> candidate(factor_count);
    std::vector<bool> can_expand(factor_count, true);
    std::vector<std::map<int, std::vector<std::string>>> tensor_axes(tensors.size());
    for (std::size_t t = 0; t < tensors.size(); ++t) {
      if (tensors[t].var == nullptr) continue;
      tensor_axes[t] = factor_axes(*tensors[t].dims, source_layout(*tensors[t].var), rule, mesh_);
      for (const auto& [f, list] : tensor_axes[t]) {
        if (round == kPassThroughFactorsRound && rule.kinds[static_cast<std::size_t>(f)] != FactorKind::kPassThrough) {
          continue;
        }
        merge_compatible(candidate[static_cast<std::size_t>(f)], can_expand[static_cast<std::size_t>(f)], list);
      }
    }
    // A factor's source is the largest tensor whose own axes already hold the whole candidate.
    std::vector<int64_t> source_size(factor_count, 0);
    std::vector<std::size_t> source_index(factor_count, tensors.size());
    for (std::size_t t = 0; t < tensors.size(); ++t) {
      if (tensors[t].var == nullptr) continue;
      const int64_t size = factor_volume(*tensors[t].dims, rule);
      for (const auto& [f, list] : tensor_axes[t]) {
        const auto factor = static_cast<std::size_t>(f);
        if (!candidate[factor].empty() && is_prefix(candidate[factor], list) && size > source_size[factor]) {
          source_size[factor] = size;
          source_index[factor] = t;
        }
      }
    }
    // Broadcast results only take shardings from their operand in the last round.
    const bool forward_allowed = !(name == "broadcast_in_dim" && round < kRounds - 1);

    // Factor preference for conflicts: the larger source tensor, then (elementwise) the more sharded factor, then
    // the earlier source, then the lower factor index.
    std::vector<std::size_t> order(factor_count);
    for (std::size_t f = 0; f < factor_count; ++f) order[f] = f;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      if (source_size[a] != source_size[b]) return source_size[a] > source_size[b];
      if (rule.elementwise && candidate[a].size() != candidate[b].size()) {
        return mesh_.axes_size(candidate[a]) > mesh_.axes_size(candidate[b]);
      }
      if (source_index[a] != source_index[b]) return source_index[a] < source_index[b];
      return a < b;
    });

    bool changed = false;
    // Results first, then operands (backward propagation reaches open inputs and intermediates).
    for (const bool results : {true, false}) {
      for (const TensorRef& tensor : tensors) {
        if (tensor.var == nullptr || tensor.is_result != results) continue;
        if (results && !forward_allowed) continue;
        const auto proposal = resolve_for_tensor(*tensor.var, *tensor.dims, candidate, order, rule);
        changed = extend(*tensor.var, *tensor.dims, proposal, rule,
                         [&](int factor) -> TensorLayoutState::DimSource {
                           const std::size_t source = source_index[static_cast<std::size_t>(factor)];
                           if (source >= tensors.size()) return {name, -1};
                           const int64_t from = tensors[source].var == nullptr ? -1 : tensors[source].var->id;
                           if (tensors[source].is_result) return {name + " from its result", from};
                           return {name + " from operand " + std::to_string(source), from};
                         }) ||
                  changed;
      }
    }
    return changed;
  }

  // Conflicts between factors are settled per tensor, against what the tensor already holds: factors are taken
  // in order of preference, and each keeps its candidate up to the first axis another factor of this tensor
  // uses. So a contracting factor's axis blocks a result factor only in tensors that carry both.
  std::vector<std::vector<std::string>> resolve_for_tensor(const Var& var, const std::vector<std::vector<int>>& dims,
                                                           const std::vector<std::vector<std::string>>& candidate,
                                                           const std::vector<std::size_t>& order,
                                                           const FactorRule& rule) {
    std::map<int, std::vector<std::string>> held = factor_axes(dims, states_[var.id].layout, rule, mesh_);
    std::set<int> present;
    for (const auto& factors : dims) present.insert(factors.begin(), factors.end());
    for (const std::size_t f : order) {
      const int factor = static_cast<int>(f);
      if (present.count(factor) == 0) continue;
      std::vector<std::string> wanted = candidate[f];
      std::vector<std::string>& current = held[factor];
      if (!is_prefix(current, wanted) || wanted.size() == current.size()) continue;
      for (std::size_t k = current.size(); k < wanted.size(); ++k) {
        const bool taken = std::any_of(held.begin(), held.end(), [&](const auto& other) {
          return other.first != factor &&
                 std::find(other.second.begin(), other.second.end(), wanted[k]) != other.second.end();
        });
        if (taken) {
          wanted.resize(k);
          break;
        }
      }
      current = std::move(wanted);
    }
    std::vector<std::vector<std::string>> proposal(candidate.size());
    for (auto& [factor, axes] : held) proposal[static_cast<std::size_t>(factor)] = std::move(axes);
    return proposal;
  }

  // What a tensor passes on: its layout, or the uneven sharding it would have taken (see extend).
  Layout source_layout(const Var& var) {
    Layout layout = states_[var.id].layout;
    const auto it = uneven_.find(var.id);
    if (it == uneven_.end()) return layout;
    for (std::size_t d = 0; d < layout.size() && d < it->second.size(); ++d) {
      if (it->second[d].size() > layout[d].size() && is_prefix(layout[d], it->second[d])) layout[d] = it->second[d];
    }
    return layout;
  }

  template <typename Describe>
  bool extend(const Var& var, const std::vector<std::vector<int>>& dims,
              const std::vector<std::vector<std::string>>& candidate, const FactorRule& rule, Describe describe) {
    TensorLayoutState& state = states_[var.id];
    if (state.closed) return false;
    bool changed = false;
    std::set<std::string> used;
    for (const auto& axes : state.layout) used.insert(axes.begin(), axes.end());
    for (std::size_t d = 0; d < dims.size() && d < state.layout.size(); ++d) {
      // A minor factor's axes only count once the major factors are fully sharded.
      std::vector<std::string> proposed;
      int first_source = -1;
      for (const int f : dims[d]) {
        const auto& c = candidate[static_cast<std::size_t>(f)];
        if (first_source < 0 && !c.empty()) first_source = f;
        proposed.insert(proposed.end(), c.begin(), c.end());
        if (mesh_.axes_size(c) != rule.factor_sizes[static_cast<std::size_t>(f)]) break;
      }
      std::vector<std::string>& current = state.layout[d];
      if (!is_prefix(current, proposed) || proposed.size() == current.size()) continue;
      std::vector<std::string> next = current;
      for (std::size_t k = current.size(); k < proposed.size(); ++k) {
        const std::string& axis = proposed[k];
        if (used.count(axis) != 0) break;
        next.push_back(axis);
        if (var.aval.shape[d] % mesh_.axes_size(next) != 0) {
          // The value cannot be cut evenly there, so it stays whole along the dim; but it still carries the
          // sharding on to its users, as Shardy propagates uneven shardings through intermediates (the two
          // slices of a roll pass the row sharding on to the concatenation, whose rows divide again).
          std::vector<std::string> carried = next;
          for (std::size_t rest = k + 1; rest < proposed.size() && used.count(proposed[rest]) == 0; ++rest) {
            carried.push_back(proposed[rest]);
          }
          Layout& uneven = uneven_.try_emplace(var.id, state.layout).first->second;
          if (uneven[d].size() < carried.size() && is_prefix(uneven[d], carried)) {
            uneven[d] = std::move(carried);
            changed = true;
          }
          next.pop_back();
          break;
        }
      }
      if (next.size() > current.size()) {
        for (std::size_t k = current.size(); k < next.size(); ++k) used.insert(next[k]);
        current = next;
        if (first_source >= 0) {
          TensorLayoutState::DimSource source = describe(first_source);
          state.origin = source.origin;
          if (state.dim_sources.size() < state.layout.size()) state.dim_sources.resize(state.layout.size());
          state.dim_sources[d] = std::move(source);
        }
        changed = true;
      }
    }
    return changed;
  }

  const Mesh& mesh_;
  LayoutMap& states_;
  std::vector<FactorRule> rules_;
  std::map<int64_t, Layout> uneven_;  // per value: its layout extended by the axes that do not divide its dims
};

}  // namespace

std::map<int, std::vector<std::string>> factor_axes(const std::vector<std::vector<int>>& dims, const Layout& layout,
                                                    const FactorRule& rule, const Mesh& mesh) {
  std::map<int, std::vector<std::string>> result;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    const std::vector<std::string> empty;
    const std::vector<std::string>& axes = d < layout.size() ? layout[d] : empty;
    std::size_t next_axis = 0;
    for (const int f : dims[d]) {
      auto& list = result[f];
      int64_t filled = 1;
      const int64_t size = rule.factor_sizes[static_cast<std::size_t>(f)];
      while (next_axis < axes.size() && filled < size && size % (filled * mesh.axis_size(axes[next_axis])) == 0) {
        filled *= mesh.axis_size(axes[next_axis]);
        list.push_back(axes[next_axis++]);
      }
      // A block of the dim covers a minor factor only where every major one is wholly split: an axis left
      // over here straddles this factor and the next, and belongs to neither.
      if (filled < size) break;
    }
  }
  return result;
}

LayoutMap propagate_layouts(const Jaxpr& jaxpr, const Mesh& mesh, LayoutMap known) {
  Propagator propagator(mesh, known);
  propagator.run(jaxpr);
  return known;
}

}  // namespace shardscope
