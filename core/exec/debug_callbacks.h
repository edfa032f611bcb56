// Debug effects inside traced programs: debug_callback, debug_print and inspect_sharding equations whose kernels
// hand concrete values (or the sharding the partitioner chose) back to the host that registered a callback.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "array/buffer.h"
#include "ir/jaxpr.h"
#include "ir/primitive.h"
#include "spmd/reshard.h"

namespace shardscope {

// What a debug equation calls. `on_values` gets the operands' values: whole arrays under jit (JAX's maximal
// sharding runs the callback once on the logical value) or one device's blocks in per-device bodies (shard_map,
// pmap), with that device's position in the mesh. `on_sharding` gets the operand's sharding: the mesh and spec
// the partitioner chose; no mesh means a single-device program (replicated).
struct DebugCallback {
  std::function<void(std::span<const BufferPtr> values, std::optional<int64_t> device)> on_values;
  std::function<void(const Mesh* mesh, const PartitionSpec& spec)> on_sharding;
};

// Keeps `callback` for the equations that name its id (the hidden `callback_id` param); ids are never reused.
[[nodiscard]] int64_t register_debug_callback(DebugCallback callback);

// Drops every registered callback (the host calls this before it shuts down: callbacks hold host objects).
void clear_debug_callbacks();

// Registers the debug primitives with their batching and differentiation rules (idempotent).
void ensure_debug_primitives();

// True for the effect equations the partitioned jit executor hands to run_debug_effect (they have no results).
[[nodiscard]] bool is_debug_effect(const Eqn& eqn);

// An operand of a partitioned program: its layout on the mesh and its per-device blocks.
using PlacedOperand = std::pair<Layout, DeviceBuffers>;

// Runs a debug equation of a partitioned jit, `read` giving each operand as placed. Unpartitioned callbacks see
// the whole values (assembled locally), partitioned ones each device's block; inspect_sharding reports the
// operand's layout as a spec on `mesh`.
void run_debug_effect(const Eqn& eqn, const Mesh& mesh, const JaxProfile& profile,
                      const std::function<PlacedOperand(const Atom&)>& read);

}  // namespace shardscope
