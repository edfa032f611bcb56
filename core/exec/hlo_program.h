// The HLO program XLA analyses for a jaxpr, as shardscope models it: each equation lowered to the instructions
// JAX emits for it (a scalar or size-1 operand broadcast to the result's shape first, reductions with an init
// value), the partitioner's collectives around them, and XLA:CPU's loop fusion of elementwise producers into
// their consumers. What cost_analysis prices and memory_analysis's temporaries are counted on.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <vector>

#include "exec/lowering.h"

namespace shardscope {

enum class HloKind {
  kBroadcast,    // broadcast_in_dim, or the broadcast JAX's lowering adds for a scalar operand
  kReshape,      // the reshape that drops size-1 dims before such a broadcast
  kElementwise,  // one result element per operand element (compare, convert and select included)
  kReduce,       // reduce_* with its init value
  kDot,
  kCollective,
  kOther,
};

// A value an instruction reads or writes: a jaxpr variable's id, a value the lowering adds (ids below -1), or a
// constant (-1, never counted as read).
struct HloValue {
  int64_t id = -1;
  Aval aval;
};

struct HloInstruction {
  HloKind kind = HloKind::kOther;
  const Eqn* eqn = nullptr;                       // the equation it lowers (null for added broadcasts/collectives)
  const PlannedCollective* collective = nullptr;  // for kCollective
  std::vector<HloValue> operands;
  std::vector<HloValue> outputs;
};

struct HloProgram {
  std::vector<HloInstruction> instructions;
  // The fusion each instruction belongs to (its own index when it runs alone): XLA:CPU fuses an elementwise
  // producer, or a broadcast of a scalar, into a consumer that is elementwise, a broadcast or a reduction when
  // that consumer's fusion is the producer's only user; dots, collectives and loops run as they are.
  std::vector<std::size_t> fusion;
  std::set<int64_t> parameters;        // the program's arguments
  std::set<int64_t> results;           // what it returns
  std::shared_ptr<const Jaxpr> owner;  // the inlined program `eqn` points into, when calls were inlined
};

// Which equations the compiled program keeps: XLA removes code whose results nothing uses (a forward value that
// only grad's residuals needed, a slice taken for its shape), and with it the collectives it would take.
[[nodiscard]] std::vector<bool> live_equations(const Jaxpr& jaxpr);

// The unpartitioned program (global types, calls inlined, nothing fused): what jit(f).lower(...) hands XLA.
[[nodiscard]] HloProgram lowered_hlo(const Jaxpr& jaxpr);

// One device's program of a compiled plan: local types, the plan's collectives, dead code removed, fused.
[[nodiscard]] HloProgram compiled_hlo(const Jaxpr& jaxpr, const PartitionPlan& plan);

// Peak bytes of values that cross fusions and are neither arguments nor results, a value's buffer freed once
// its last reader starts (XLA's buffer assignment lets a result reuse an operand's buffer).
[[nodiscard]] int64_t hlo_temp_bytes(const HloProgram& program);

}  // namespace shardscope
