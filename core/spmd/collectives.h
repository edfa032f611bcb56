// Collectives on simulated devices: data really moves between per-device buffers, and each call is logged.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "array/buffer.h"
#include "ir/primitive.h"
#include "mesh/mesh.h"
#include "spmd/comm_log.h"

namespace shardscope {

enum class ReduceOp { kSum, kMax, kMin };

// Flat mesh indices grouped so that each group's members differ only along `axes`; members are
// ordered by their index along `axes` (major to minor in the order given), groups by the rest.
[[nodiscard]] std::vector<std::vector<std::size_t>> axis_groups(const Mesh& mesh, const std::vector<std::string>& axes);

// The index of each device along `axes` (axis_index), mesh order.
[[nodiscard]] std::vector<int64_t> axis_indices(const Mesh& mesh, const std::vector<std::string>& axes);

// psum / pmax / pmin: every member of a group gets the reduction of the group, summed in axis order.
[[nodiscard]] DeviceBuffers all_reduce(const Mesh& mesh, const std::vector<std::string>& axes,
                                       const DeviceBuffers& values, ReduceOp op, CommLog* log,
                                       const std::string& origin);

// all_gather: concatenates (tiled) or stacks (untiled, new axis at `dimension`) the group's values.
[[nodiscard]] DeviceBuffers all_gather(const Mesh& mesh, const std::vector<std::string>& axes,
                                       const DeviceBuffers& values, int64_t dimension, bool tiled, CommLog* log,
                                       const std::string& origin);

// psum_scatter: sums over the group, then member i keeps block i of `dimension` (tiled) or index i (untiled).
[[nodiscard]] DeviceBuffers reduce_scatter(const Mesh& mesh, const std::vector<std::string>& axes,
                                           const DeviceBuffers& values, int64_t dimension, bool tiled, CommLog* log,
                                           const std::string& origin);

// all_to_all: member i splits its value into n blocks along split_dimension, sends block j to member j,
// and concatenates what it receives along concat_dimension.
[[nodiscard]] DeviceBuffers all_to_all(const Mesh& mesh, const std::vector<std::string>& axes,
                                       const DeviceBuffers& values, int64_t split_dimension, int64_t concat_dimension,
                                       CommLog* log, const std::string& origin);

// A ppermute perm as Python prints the tuple of pairs: `((0, 1), (1, 0))`.
[[nodiscard]] std::string permutation_repr(const std::vector<std::pair<int64_t, int64_t>>& permutation);
// The perm's pairs with negative indices wrapped into [0, n); ValueError (JAX's text) when a source or a
// destination repeats, and for indices outside the axis.
[[nodiscard]] std::vector<std::pair<int64_t, int64_t>> normalized_permutation(
    const std::vector<std::pair<int64_t, int64_t>>& permutation, int64_t n);

// ppermute: (source, destination) pairs of axis indices; devices that receive nothing get zeros.
[[nodiscard]] DeviceBuffers collective_permute(const Mesh& mesh, const std::vector<std::string>& axes,
                                               const DeviceBuffers& values,
                                               const std::vector<std::pair<int64_t, int64_t>>& permutation,
                                               CommLog* log, const std::string& origin);

}  // namespace shardscope
