// Pricing a compiled program's partition plan, and the lowered program, the way XLA's HloCostAnalysis prices the
// HLO they become (exec/hlo_program): per-instruction rules, fusions priced as one kernel.
#include "cost/compiled_cost.h"

#include <map>
#include <set>

#include "cost/cost_rules.h"
#include "exec/hlo_program.h"

namespace shardscope {
namespace {

// One instruction as HloCostAnalysis prices it on its own: what it reads from each operand and writes.
OpCost instruction_cost(const HloInstruction& instr) {
  std::vector<Aval> operands;
  for (const HloValue& v : instr.operands) operands.push_back(v.aval);
  std::vector<Aval> results;
  for (const HloValue& v : instr.outputs) results.push_back(v.aval);
  if (instr.kind == HloKind::kCollective) {
    // XLA prices an all-reduce at one flop per element; every collective reads its operand and writes its result.
    OpCost cost = memory_traffic(CostInputs{operands, results, {}});
    if (instr.collective->kind == CollectiveKind::kAllReduce) cost.flops = aval_elements(results.at(0));
    return cost;
  }
  if (instr.eqn == nullptr) return memory_traffic(CostInputs{operands, results, {}});
  if (instr.kind == HloKind::kReduce) {
    // The init value is the reduce's operand 1 (a constant): read once, like every operand.
    const std::span<const Aval> reduced(operands.data(), operands.size() - 1);
    OpCost cost = equation_cost(*instr.eqn, reduced, results);
    cost.operand_bytes.resize(reduced.size(), 0.0);
    cost.operand_bytes.push_back(aval_bytes(operands.back()));
    return cost;
  }
  return equation_cost(*instr.eqn, operands, results);
}

class Analysis {
 public:
  void add(const OpCost& cost, double bytes_accessed) {
    sum_["flops"] += cost.flops;
    sum_["transcendentals"] += cost.transcendentals;
    sum_["bytes accessed"] += bytes_accessed;
    sum_["bytes accessedout{}"] += cost.output_bytes;
    for (std::size_t i = 0; i < cost.operand_bytes.size(); ++i) {
      sum_["bytes accessed" + std::to_string(i) + "{}"] += cost.operand_bytes[i];
    }
  }

  // XLA reports only the properties an instruction set: zero-valued keys do not appear.
  CostAnalysis result() const {
    CostAnalysis out;
    for (const auto& [key, value] : sum_) {
      if (value != 0) out[key] = value;
    }
    return out;
  }

 private:
  CostAnalysis sum_;
};

// A fusion's cost (HloCostAnalysis::HandleFusion): its instructions' flops and per-operand reads summed, then each
// fusion parameter read once and each value leaving the fusion written once; values inside never touch memory.
void add_fusion(Analysis& analysis, const HloProgram& program, const std::vector<std::size_t>& members,
                const std::map<int64_t, std::set<std::size_t>>& readers) {
  OpCost sub;
  std::set<int64_t> inside;
  for (const std::size_t m : members) {
    sub += instruction_cost(program.instructions[m]);
    for (const HloValue& out : program.instructions[m].outputs) inside.insert(out.id);
  }
  std::vector<double> parameters;
  std::set<int64_t> seen;
  for (const std::size_t m : members) {
    for (const HloValue& in : program.instructions[m].operands) {
      if (in.id == -1 || inside.count(in.id) != 0 || !seen.insert(in.id).second) continue;
      parameters.push_back(aval_bytes(in.aval));
    }
  }
  const std::size_t fusion = program.fusion[members.front()];
  double written = 0;
  for (const std::size_t m : members) {
    for (const HloValue& out : program.instructions[m].outputs) {
      const auto it = readers.find(out.id);
      const bool read_outside =
          it != readers.end() &&
          std::any_of(it->second.begin(), it->second.end(), [&](std::size_t reader) { return reader != fusion; });
      if (read_outside || program.results.count(out.id) != 0) written += aval_bytes(out.aval);
    }
  }
  OpCost cost = sub;
  cost.output_bytes = written;
  if (cost.operand_bytes.size() < parameters.size()) cost.operand_bytes.resize(parameters.size(), 0.0);
  double read = 0;
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    cost.operand_bytes[i] = parameters[i];
    read += parameters[i];
  }
  analysis.add(cost, read + written);
}

bool runs_as_fusion(HloKind kind) { return kind != HloKind::kCollective && kind != HloKind::kOther; }

}  // namespace

CostAnalysis compiled_cost_analysis(const Compiled& compiled) {
  const HloProgram program = compiled_hlo(compiled.program(), compiled.plan());
  std::map<std::size_t, std::vector<std::size_t>> fusions;
  std::map<int64_t, std::set<std::size_t>> readers;
  for (std::size_t i = 0; i < program.instructions.size(); ++i) {
    fusions[program.fusion[i]].push_back(i);
    for (const HloValue& in : program.instructions[i].operands) readers[in.id].insert(program.fusion[i]);
  }
  Analysis analysis;
  for (const auto& [root, members] : fusions) {
    const HloInstruction& first = program.instructions[members.front()];
    if (members.size() == 1 && !runs_as_fusion(first.kind)) {
      const OpCost cost = instruction_cost(first);
      analysis.add(cost, cost.bytes_accessed());
    } else {
      add_fusion(analysis, program, members, readers);
    }
  }
  return analysis.result();
}

CostAnalysis lowered_cost_analysis(const Lowered& lowered) {
  const HloProgram program = lowered_hlo(lowered.program());
  Analysis analysis;
  for (const HloInstruction& instr : program.instructions) {
    const OpCost cost = instruction_cost(instr);
    analysis.add(cost, cost.bytes_accessed());
  }
  return analysis.result();
}

ProgramCostReport compiled_cost_report(const Compiled& compiled, const HardwareSpec* hardware, const CommLog* log) {
  const PartitionPlan& plan = compiled.plan();
  std::vector<Device> devices;
  if (plan.mesh) devices = plan.mesh->devices();
  if (!plan.mesh && plan.device) devices = {*plan.device};
  const HardwareSpec& spec = hardware != nullptr ? *hardware
                             : devices.empty()   ? hardware_for_kind("cpu")
                                                 : hardware_for(devices.front());
  const LocalAvalFn local = [&plan](const Atom& a) { return plan.local_aval(a); };
  if (log != nullptr) return estimate_program_cost(compiled.program(), local, devices, *log, spec);
  return estimate_program_cost(compiled.program(), local, devices, plan.comm_log(), spec);
}

}  // namespace shardscope
