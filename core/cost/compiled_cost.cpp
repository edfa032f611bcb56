// Pricing a compiled program's partition plan: per-device equations and the collectives the plan inserts.
#include "cost/compiled_cost.h"

#include "cost/cost_rules.h"

namespace shardscope {

CostAnalysis compiled_cost_analysis(const Compiled& compiled) {
  const PartitionPlan& plan = compiled.plan();
  OpCost total;
  for (const Eqn& eqn : compiled.program().eqns) {
    std::vector<Aval> operands;
    for (const Atom& input : eqn.inputs) operands.push_back(plan.local_aval(input));
    std::vector<Aval> results;
    for (const Var& output : eqn.outputs) results.push_back(plan.local_aval(Atom{output}));
    total += equation_cost(eqn, operands, results);
  }
  for (const PlannedCollective& c : plan.collectives) {
    // XLA prices an all-reduce at one flop per element; every collective reads its operand and writes its result.
    OpCost moved;
    moved.operand_bytes = {aval_bytes(c.local_operand)};
    moved.output_bytes = aval_bytes(c.local_result);
    if (c.kind == CollectiveKind::kAllReduce) moved.flops = aval_elements(c.local_result);
    total += moved;
  }
  CostAnalysis analysis;
  analysis["flops"] = total.flops;
  analysis["transcendentals"] = total.transcendentals;
  analysis["bytes accessed"] = total.bytes_accessed();
  analysis["bytes accessedout{}"] = total.output_bytes;
  for (std::size_t i = 0; i < total.operand_bytes.size(); ++i) {
    analysis["bytes accessed" + std::to_string(i) + "{}"] = total.operand_bytes[i];
  }
  return analysis;
}

ProgramCostReport compiled_cost_report(const Compiled& compiled, const HardwareSpec* hardware) {
  const PartitionPlan& plan = compiled.plan();
  std::vector<Device> devices;
  if (plan.mesh) devices = plan.mesh->devices();
  if (!plan.mesh && plan.device) devices = {*plan.device};
  const HardwareSpec& spec = hardware != nullptr ? *hardware
                             : devices.empty()   ? hardware_for_kind("cpu")
                                                 : hardware_for(devices.front());
  return estimate_program_cost(
      compiled.program(), [&plan](const Atom& a) { return plan.local_aval(a); }, devices, plan.comm_log(), spec);
}

}  // namespace shardscope
