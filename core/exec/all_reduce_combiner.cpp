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

void combine_all_reduces(const Jaxpr& jaxpr, const Mesh& mesh, std::vector<EquationPlan>& plans) {
  // Every candidate all-reduce, in program order: an equation's partial results over one set of axes.
  struct Candidate {
    std::size_t equation;
    std::size_t reduction;
  };
  std::vector<Candidate> candidates;
  for (std::size_t e = 0; e < jaxpr.eqns.size() && e < plans.size(); ++e) {
    EquationPlan& plan = plans[e];
    plan.combined.assign(plan.reductions.size(), -1);
    // Control flow reduces inside its bodies, and a multi-result equation's all-reduces run per result.
    if (plan.mode != EquationMode::kLocal || jaxpr.eqns[e].outputs.size() != 1 || is_control_flow(jaxpr.eqns[e])) {
      continue;
    }
    for (std::size_t k = 0; k < plan.reductions.size(); ++k) candidates.push_back({e, k});
  }
  if (candidates.size() < 2) return;
  const CombinerLimits limits = combiner_limits(mesh);
  const std::size_t words = (candidates.size() + 63) / 64;
  // The all-reduces each value depends on (its own equation's included once they have run).
  std::map<int64_t, Bits> depends;
  std::map<std::tuple<std::vector<std::string>, int, DType>, OpenGroup> open;
  std::size_t next = 0;
  for (std::size_t e = 0; e < jaxpr.eqns.size() && e < plans.size(); ++e) {
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
      const std::size_t k = candidates[next].reduction;
      const Var& result = eqn.outputs.front();
      const auto key = std::make_tuple(plans[e].reductions[k], reduction_kind(eqn.primitive->name), result.aval.dtype);
      const int64_t bytes = local_bytes(result.aval, plans[e].produced.at(0), mesh);
      // A group one of whose all-reduces this one reads is closed, whatever its key: its combined all-reduce runs
      // at its last member, before this one. Joining only groups it does not read keeps the combined program
      // acyclic (every combined all-reduce reads only groups that closed before it).
      for (auto it = open.begin(); it != open.end();) {
        const std::vector<std::size_t>& members = it->second.members;
        const bool read =
            std::any_of(members.begin(), members.end(), [&](std::size_t m) { return has_bit(inputs, m); });
        it = read ? open.erase(it) : std::next(it);
      }
      OpenGroup& group = open[key];
      if (group.members.empty() || group.members.size() >= limits.max_count || group.bytes + bytes > limits.max_bytes) {
        group = OpenGroup{{}, 0, static_cast<int64_t>(next)};
      }
      group.members.push_back(next);
      group.bytes += bytes;
      plans[e].combined[k] = group.id;
      set_bit(outputs, next);
    }
    for (const Var& output : eqn.outputs) depends[output.id] = outputs;
  }
  // A group of one is no combination.
  std::map<int64_t, int> sizes;
  for (const EquationPlan& plan : plans) {
    for (const int64_t id : plan.combined) {
      if (id >= 0) ++sizes[id];
    }
  }
  for (EquationPlan& plan : plans) {
    for (int64_t& id : plan.combined) {
      if (id >= 0 && sizes[id] < 2) id = -1;
    }
  }
}

}  // namespace shardscope
