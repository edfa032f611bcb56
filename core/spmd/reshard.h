// Resharding between layouts on one mesh with the collectives XLA's partitioner would use.
#pragma once

#include "array/array.h"
#include "ir/primitive.h"
#include "spmd/comm_log.h"

namespace shardscope {

// Per dimension, the mesh axes that shard it (major to minor).
using Layout = std::vector<std::vector<std::string>>;

// The layout of a NamedSharding for an array of rank `rank`; size-1 axes dropped.
[[nodiscard]] Layout dim_axes_of(const NamedSharding& sharding, std::size_t rank);
// The same tiling in the axes of `mesh`, for a sharding on another mesh over the same device order (a
// constraint inside jit may build its own mesh, e.g. 8 devices in one axis where the inputs use 2x4):
// each of its axes becomes the run of `mesh`'s axes that covers the same devices. ValueError when the
// device order differs or an axis does not line up with whole axes of `mesh`.
[[nodiscard]] Layout dim_axes_on(const NamedSharding& sharding, const Mesh& mesh, std::size_t rank);

// A NamedSharding with the layout's spec (trailing unsharded dims kept as None).
[[nodiscard]] NamedSharding sharding_of_layout(const Mesh& mesh, const Layout& layout,
                                               std::optional<std::string> memory_kind);

// One collective of a move between layouts: what it does, over which axes, along which dimension (the gathered
// one, or an all-to-all's split dimension with `concat_dimension`), and the layout before and after it.
struct ReshardStep {
  CollectiveKind kind = CollectiveKind::kAllGather;
  std::vector<std::string> axes;
  int64_t dimension = -1;
  int64_t concat_dimension = -1;
  Layout before;
  Layout after;
};

// The collectives XLA's partitioner uses to go from `from` to `to` on `mesh`: one all-to-all when a group of axes
// moves from the end of one dimension to the end of another; one collective-permute when the same axes tile every
// dimension into as many blocks as before, in another device order (a 2x2 mesh's P('x', 'y') -> P('y', 'x'));
// otherwise one all-gather per dimension of the axes that leave it. Axes that only arrive cost a local
// slice, not a step. Execution (reshard_buffers) and lowering both follow these steps.
[[nodiscard]] std::vector<ReshardStep> reshard_steps(const Layout& from, const Layout& to, const Mesh& mesh);

// Moves per-device blocks of a `shape` array from layout `from` to layout `to` on `mesh`, choosing the
// collectives XLA would (see reshard below). Buffers are in mesh order.
[[nodiscard]] DeviceBuffers reshard_buffers(const Mesh& mesh, const Shape& shape, const Layout& from, const Layout& to,
                                            const DeviceBuffers& buffers, const JaxProfile& profile, CommLog* log,
                                            const std::string& origin);

// The whole `shape` array that per-device blocks laid out as `layout` hold, each block written once. Local
// bookkeeping, not a collective: nothing is logged.
[[nodiscard]] BufferPtr whole_buffer(const Mesh& mesh, DType dtype, const Shape& shape, const Layout& layout,
                                     const DeviceBuffers& buffers, const JaxProfile& profile);

// Moves `array` to `target`: nothing when the layout is the same; a local slice when only axes are
// added; an all-to-all when one set of axes moves between dimensions; otherwise all-gathers of the
// axes that go away followed by local slices. Arrays on other devices are transferred through the host.
[[nodiscard]] Array reshard(const Array& array, const Sharding& target, const JaxProfile& profile, CommLog* log,
                            const std::string& origin = "reshard");

}  // namespace shardscope
