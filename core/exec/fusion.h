// Fusion of elementwise chains: a run of elementwise equations is evaluated one cache-sized chunk at
// a time, so each input is read from memory once and only values used outside the run are written.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "ir/jaxpr.h"
#include "ir/primitive.h"

namespace shardscope {

// Equations [begin, end) of a jaxpr that can run chunk by chunk: every one is elementwise with one
// result of `shape`, and every operand is rank 0 or has `shape` too.
// How a group runs: its equations over a table of value slots (group inputs first, then each result).
// An add or sub of a product made in the same group, which XLA:CPU's code generator contracts into one fused
// multiply-add (rounded once): out = fma(±product_lhs, product_rhs, ±addend). Operands as in FusionStep.
struct FusedMultiplyAdd {
  std::ptrdiff_t product_lhs = 0;
  std::ptrdiff_t product_rhs = 0;
  std::ptrdiff_t addend = 0;
  bool negate_product = false;
  bool negate_addend = false;
};

struct FusionStep {
  std::size_t eqn = 0;                   // index into the jaxpr's equations
  std::vector<std::ptrdiff_t> operands;  // slot >= 0, or -1 - index into FusionGroup::literals
  std::size_t out_slot = 0;
  std::optional<FusedMultiplyAdd> fma;  // set when the step runs as a contracted multiply-add
  bool only_feeds_contraction = false;  // a product that only contracted steps read: skipped when they run
};

struct FusionGroup {
  std::size_t begin = 0;
  std::size_t end = 0;
  Shape shape;               // the (global) shape every non-scalar value of the group has
  std::vector<Var> inputs;   // values from outside the group, in first-use order
  std::vector<Var> outputs;  // values of the group used after it (or returned), in program order
  std::vector<FusionStep> steps;
  std::vector<BufferPtr> literals;        // the literal operands as scalar buffers, made once
  std::vector<std::size_t> output_slots;  // where each of `outputs` lives in the slot table
  std::size_t slots = 0;
};

// Splits `jaxpr` into maximal fusion groups (a group may hold a single equation).
[[nodiscard]] std::vector<FusionGroup> plan_fusion(const Jaxpr& jaxpr);

// The group starting at equation `index`, if any.
[[nodiscard]] const FusionGroup* group_starting_at(const std::vector<FusionGroup>& groups, std::size_t index);

// Whether a fusion group reads an input as a scalar (its one value broadcast): rank 0, or one element ([1],
// [1, 1]) in a group of larger values, whatever the input's layout.
[[nodiscard]] bool reads_as_scalar(const Aval& aval, const Shape& group_shape);

// Runs the group on several sets of local buffers at once (one set per device). inputs[i][d] is
// group.inputs[i] on device d: rank 0, or the device's local block (all of one shape per device).
// Chunks of every device run on the thread pool when the work is big enough. Returns outputs[o][d].
[[nodiscard]] std::vector<DeviceBuffers> run_fusion_group(const Jaxpr& jaxpr, const FusionGroup& group,
                                                          const std::vector<DeviceBuffers>& inputs);

// Whether an equation touches enough elements for its devices' kernels to be worth running in parallel.
[[nodiscard]] bool large_equation(const Eqn& eqn);

// Elements per chunk: operands and intermediates of a chunk stay in the core's L2 cache.
inline constexpr int64_t kFusionChunkElements = 16384;

}  // namespace shardscope
