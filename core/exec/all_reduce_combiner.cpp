// The all-reduce combiner's grouping: dependencies tracked per value as bitsets over the program's all-reduces.
#include "exec/all_reduce_combiner.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <tuple>

#include "propagation/control_flow_factor_rule.h"

namespace shardscope {
namespace {

using Bits = std::vector<uint64_t>;

void set_bit(Bits& bits, std::size_t i) { bits[i / 64] |= uint64_t{1} << (i % 64); }
bool has_bit(const Bits& bits, std::size_t i) { return (bits[i / 64] >> (i % 64) & 1U) != 0; }

// Bytes of one device's block of a value laid out as `layout`.
int64_t local_bytes(const Aval& aval, const Layout& layout, const Mesh& mesh) {
  int64_t elements = 1;
  for (std::size_t d = 0; d < aval.rank(); ++d) {
    const int64_t parts = d < layout.size() ? mesh.axes_size(layout[d]) : 1;
    elements *= (aval.shape[d] + parts - 1) / parts;
  }
  return elements * static_cast<int64_t>(dtype_size(aval.dtype));
}

// The reduction an equation's partial results are combined with, as the run applies it.
int reduction_kind(const std::string& primitive) {
  if (primitive == "reduce_max") return 1;
  if (primitive == "reduce_min") return 2;
  return 0;
}

struct OpenGroup {
  std::vector<std::size_t> members;  // all-reduce positions in program order
  int64_t bytes = 0;
  int64_t id = -1;
};

}  // namespace

CombinerLimits combiner_limits(const Mesh& mesh) {
  CombinerLimits limits;
  if (!mesh.devices().empty() && mesh.devices().front().platform == Platform::kGpu) {
    limits.max_bytes = int64_t{30} * 1024 * 1024;
  }
  return limits;
}

namespace {

// One all-reduce the combiner may join with others: equation `equation`'s, keyed by what must match.
struct Candidate {
  std::size_t equation;
  std::tuple<std::vector<std::string>, int, DType> key;  // device groups (as axes), reduction, element type
  int64_t bytes;
};

// The combined-group id of every candidate (the position of its group's first member; groups of one included).
// Walking the program in order, an all-reduce first closes every open group it depends on, then joins the open
// group of its key unless that group is full; otherwise it opens a new one.
std::vector<int64_t> group_candidates(const Jaxpr& jaxpr, const std::vector<Candidate>& candidates,
                                      const CombinerLimits& limits) {
  std::vector<int64_t> ids(candidates.size(), -1);
  const std::size_t words = (candidates.size() + 63) / 64;
  // The all-reduces each value depends on (its own equation's included once they have run).
  std::map<int64_t, Bits> depends;
  std::map<std::tuple<std::vector<std::string>, int, DType>, OpenGroup> open;
  std::size_t next = 0;
  for (std::size_t e = 0; e < jaxpr.eqns.size() && next < candidates.size(); ++e) {
    const Eqn& eqn = jaxpr.eqns[e];
    Bits inputs(words, 0);
    for (const Atom& input : eqn.inputs) {
      const auto* var = std::get_if<Var>(&input);
      if (var == nullptr) continue;
      const auto found = depends.find(var->id);
      if (found == depends.end()) continue;
      for (std::size_t w = 0; w < words; ++w) inputs[w] |= found->second[w];
    }
    Bits outputs = inputs;
    for (; next < candidates.size() && candidates[next].equation == e; ++next) {
      const Candidate& candidate = candidates[next];
      // A group one of whose all-reduces this one reads is closed, whatever its key: its combined all-reduce runs
      // at its last member, before this one. Joining only groups it does not read keeps the combined program
      // acyclic (every combined all-reduce reads only groups that closed before it).
      for (auto it = open.begin(); it != open.end();) {
        const std::vector<std::size_t>& members = it->second.members;
        const bool read =
            std::any_of(members.begin(), members.end(), [&](std::size_t m) { return has_bit(inputs, m); });
        it = read ? open.erase(it) : std::next(it);
      }
      OpenGroup& group = open[candidate.key];
      if (group.members.empty() || group.members.size() >= limits.max_count ||
          group.bytes + candidate.bytes > limits.max_bytes) {
        group = OpenGroup{{}, 0, static_cast<int64_t>(next)};
      }
      group.members.push_back(next);
      group.bytes += candidate.bytes;
      ids[next] = group.id;
      set_bit(outputs, next);
    }
    for (const Var& output : eqn.outputs) depends[output.id] = outputs;
  }
  return ids;
}

// The mesh axes a collective equation in a shard_map body runs over (its `axes` or `axis_name` param).
std::vector<std::string> collective_axes(const Eqn& eqn) {
  const ParamValue* value = find_param(eqn.params, "axes");
  if (value == nullptr) value = find_param(eqn.params, "axis_name");
  std::vector<std::string> axes;
  if (value == nullptr) return axes;
  if (const auto* single = value->get_if<std::string>()) axes.push_back(*single);
  if (const auto* tuple = value->get_if<ParamValue::Tuple>()) {
    for (const ParamValue& item : tuple->items) {
      if (const auto* axis = item.get_if<std::string>()) axes.push_back(*axis);
    }
  }
  return axes;
}

}  // namespace

void combine_all_reduces(const Jaxpr& jaxpr, const Mesh& mesh, std::vector<EquationPlan>& plans) {
  // Every candidate all-reduce, in program order: an equation's partial results over one set of axes.
  std::vector<Candidate> candidates;
  std::vector<std::pair<std::size_t, std::size_t>> positions;  // (equation, reduction) of each candidate
  for (std::size_t e = 0; e < jaxpr.eqns.size() && e < plans.size(); ++e) {
    EquationPlan& plan = plans[e];
    plan.combined.assign(plan.reductions.size(), -1);
    // Control flow reduces inside its bodies, and a multi-result equation's all-reduces run per result.
    if (plan.mode != EquationMode::kLocal || jaxpr.eqns[e].outputs.size() != 1 || is_control_flow(jaxpr.eqns[e])) {
      continue;
    }
    const Var& result = jaxpr.eqns[e].outputs.front();
    for (std::size_t k = 0; k < plan.reductions.size(); ++k) {
      candidates.push_back(
          {e, std::make_tuple(plan.reductions[k], reduction_kind(jaxpr.eqns[e].primitive->name), result.aval.dtype),
           local_bytes(result.aval, plan.produced.at(0), mesh)});
      positions.emplace_back(e, k);
    }
  }
  if (candidates.size() < 2) return;
  const std::vector<int64_t> ids = group_candidates(jaxpr, candidates, combiner_limits(mesh));
  // A group of one is no combination.
  std::map<int64_t, int> sizes;
  for (const int64_t id : ids) ++sizes[id];
  for (std::size_t c = 0; c < candidates.size(); ++c) {
    plans[positions[c].first].combined[positions[c].second] = sizes[ids[c]] < 2 ? -1 : ids[c];
  }
}

std::vector<int64_t> combine_body_all_reduces(const Jaxpr& body, const Mesh& mesh) {
  std::vector<int64_t> ids(body.eqns.size(), -1);
  std::vector<Candidate> candidates;
  for (std::size_t e = 0; e < body.eqns.size(); ++e) {
    const Eqn& eqn = body.eqns[e];
    const std::string& name = eqn.primitive->name;
    const bool sum = name == "psum" || name == "psum_invariant" || name == "psum2";
    if ((!sum && name != "pmax" && name != "pmin") || eqn.outputs.empty()) continue;
    // A psum of several values is one all-reduce of their tuple.
    int64_t bytes = 0;
    for (const Var& out : eqn.outputs) bytes += static_cast<int64_t>(aval_bytes(out.aval));
    candidates.push_back(
        {e, std::make_tuple(collective_axes(eqn), sum ? 0 : (name == "pmax" ? 1 : 2), eqn.outputs.front().aval.dtype),
         bytes});
  }
  const std::vector<int64_t> grouped = group_candidates(body, candidates, combiner_limits(mesh));
  std::map<int64_t, int> values;  // values reduced per group
  for (std::size_t c = 0; c < candidates.size(); ++c) {
    values[grouped[c]] += static_cast<int>(body.eqns[candidates[c].equation].outputs.size());
  }
  for (std::size_t c = 0; c < candidates.size(); ++c) {
    // One value reduced alone is an all-reduce of its own, as before.
    if (values[grouped[c]] >= 2) ids[candidates[c].equation] = grouped[c];
  }
  return ids;
}

}  // namespace shardscope
