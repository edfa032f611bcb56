// Partitioned execution of scan, while and cond inside a jit: the bodies run on each device's own blocks.
#pragma once

#include <functional>

#include "exec/partition_plan.h"
#include "ir/primitive.h"

namespace shardscope {

// How the caller hands operands over (already moved to the plan's operand layouts) and takes results (in the
// plan's produced layouts).
struct ControlFlowIo {
  std::function<std::vector<DeviceBuffers>()> operands;
  std::function<void(std::size_t result, DeviceBuffers buffers)> produce;
};

// Runs a scan/while/cond equation with the layouts control_flow_factor_rule gave it: per device when its bodies
// are elementwise (carries keep their layout, scan slices xs along the unsharded dim 0, cond runs the branch its
// replicated index picks), otherwise once over the whole operands, each device keeping its block of the results.
// Returns false for every other equation.
bool execute_control_flow(const Eqn& eqn, const EquationPlan& plan, const Mesh& mesh, const ControlFlowIo& io);

}  // namespace shardscope
