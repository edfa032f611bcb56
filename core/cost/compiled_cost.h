// What a compiled program costs: compiled.cost_analysis() in XLA's terms, and shardscope's estimate on hardware.
#pragma once

#include <map>
#include <string>

#include "cost/hardware.h"
#include "cost/program_cost.h"
#include "exec/lowering.h"

namespace shardscope {

// compiled.cost_analysis(): keys "flops", "transcendentals", "bytes accessed", "bytes accessed{i}{}",
// "bytes accessedout{}" (only those that are not zero, as XLA reports them), per device, collectives included,
// elementwise chains fused as XLA:CPU fuses them.
using CostAnalysis = std::map<std::string, double>;
[[nodiscard]] CostAnalysis compiled_cost_analysis(const Compiled& compiled);

// jit(f).lower(...).cost_analysis(): the unpartitioned, unoptimized program, instruction by instruction.
[[nodiscard]] CostAnalysis lowered_cost_analysis(const Lowered& lowered);

// shardscope's estimate of the partition plan on the mesh's hardware (or the given one); `log` is the plan's
// communication log when the caller already made it.
[[nodiscard]] ProgramCostReport compiled_cost_report(const Compiled& compiled, const HardwareSpec* hardware = nullptr,
                                                     const CommLog* log = nullptr);

}  // namespace shardscope
