// Cost rules of scan, while, cond and remat2: what their bodies cost, counted per iteration or per branch.
#include <algorithm>

#include "cost/cost_rules.h"
#include "ops/control_flow.h"

namespace shardscope {
namespace {

OpCost scaled(OpCost cost, double times) {
  cost.flops *= times;
  cost.transcendentals *= times;
  cost.output_bytes *= times;
  for (double& bytes : cost.operand_bytes) bytes *= times;
  return cost;
}

// A scan runs its body `length` times.
OpCost scan_cost(const CostInputs& in) {
  const ScanLayout layout = scan_layout(in.params);
  return scaled(jaxpr_cost(*nested_jaxpr(in.params, "jaxpr")), static_cast<double>(layout.length));
}

// A while loop's trip count is unknown before it runs: counted as one predicate and one body, as XLA's
// HloCostAnalysis counts a while loop without a known trip count.
OpCost while_cost(const CostInputs& in) {
  OpCost cost = jaxpr_cost(*nested_jaxpr(in.params, "cond_jaxpr"));
  cost += jaxpr_cost(*nested_jaxpr(in.params, "body_jaxpr"));
  return cost;
}

// Only one branch runs: the most expensive one bounds it.
OpCost cond_cost(const CostInputs& in) {
  OpCost most;
  bool first = true;
  for (const JaxprPtr& branch : cond_branches(in.params)) {
    const OpCost cost = jaxpr_cost(*branch);
    const auto key = [](const OpCost& c) { return std::pair{c.flops + c.transcendentals, c.bytes_accessed()}; };
    if (first || key(cost) > key(most)) most = cost;
    first = false;
  }
  return most;
}

}  // namespace

void register_control_flow_cost_rules() {
  register_cost_rule("scan", scan_cost);
  register_cost_rule("while", while_cost);
  register_cost_rule("cond", cond_cost);
  register_cost_rule("remat2", [](const CostInputs& in) { return jaxpr_cost(*nested_jaxpr(in.params, "jaxpr")); });
  register_cost_rule("name", [](const CostInputs& in) {
    OpCost cost;
    cost.operand_bytes.assign(in.operands.size(), 0.0);
    return cost;
  });
}

}  // namespace shardscope
