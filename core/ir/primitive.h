// Primitives: each is defined once, with every rule the engine needs, and registered by name.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "array/buffer.h"
#include "ir/jaxpr.h"

namespace shardscope {

// One local value per device of a mesh, in mesh (row-major) order.
using DeviceBuffers = std::vector<BufferPtr>;

class Mesh;
class CommLog;

// What a collective needs to run: the mesh its axes refer to and where to log traffic.
struct SpmdContext {
  const Mesh* mesh = nullptr;
  CommLog* log = nullptr;
};

// Which kind of host call a primitive is (Primitive::host_call).
enum class HostCall {
  kNone,
  kDebug,         // debug_callback, debug_print, inspect_sharding: ordered effects that return nothing
  kPureCallback,  // pure_callback: no effect; dropped when its results are unused
  kIoCallback,    // io_callback: an effect with results
};

struct Primitive {
  std::string name;
  bool multiple_results = false;
  // Operands of the result's shape (or scalars) map dim to dim: one sharding factor per dim.
  bool elementwise = false;
  // A call back into the host (Python): it runs once, when the program runs (never while it is traced), its
  // results are replicated, and all but a pure callback are effects that differentiation and remat keep.
  HostCall host_call = HostCall::kNone;

  // Shape/dtype rule: output avals from input avals and params (raises JAX's errors).
  std::function<std::vector<Aval>(std::span<const Aval>, const Params&)> abstract_eval;
  // Kernel on one device's local buffers.
  std::function<std::vector<BufferPtr>(std::span<const BufferPtr>, std::span<const Aval>, const Params&)> impl;
  // Collectives run across all devices at once instead of per device (psum, all_gather, ...).
  std::function<std::vector<DeviceBuffers>(const SpmdContext&, std::span<const DeviceBuffers>, std::span<const Aval>,
                                           const Params&)>
      collective_impl;
  // Kernel for one block of the global result (`block`: one slice per result dim) from whole operands, for
  // values whose elements depend on their global position (random bits, split keys): the partitioner
  // lets each device compute only its own block.
  std::function<std::vector<BufferPtr>(std::span<const BufferPtr>, std::span<const Aval>, const Params&,
                                       std::span<const DimSlice> block)>
      block_impl;
  // Which params print, in order; empty means all, sorted by key (JAX's default).
  std::function<Params(const Eqn&, const JaxProfile&)> printed_params;
  // The name jaxprs show, when it changed across JAX versions (jit was xla_call, then pjit); empty: `name`.
  std::function<std::string(const JaxProfile&)> printed_name;
};

// The registry of every primitive, looked up by name; returns nullptr for unknown names.
[[nodiscard]] const Primitive* find_primitive(const std::string& name);
// Registers a primitive (names are unique; re-registering replaces the rules).
const Primitive& register_primitive(Primitive primitive);
[[nodiscard]] std::vector<const Primitive*> all_primitives();

}  // namespace shardscope
