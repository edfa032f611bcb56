// The physical TPU torus built from device coordinates, and JAX's assignment of logical mesh axes onto it.
#pragma once

#include <cstdint>
#include <vector>

#include "device/device.h"

namespace shardscope {

// Devices laid out row-major over the physical torus, x major. The shape is (X, Y, cores) for
// TPU v2/v3, (X, Y, Z, cores) for TPU7x/TPU7/TPU8i and two-core v5p, and (X, Y, Z) otherwise.
struct PhysicalTpuMesh {
  std::vector<int64_t> shape;
  std::vector<Device> devices;
};

// jax._src.mesh_utils._get_physical_tpu_mesh: the coordinates must fill a cuboid (not necessarily
// anchored at the origin). The layout follows the kind of the first device. Throws AssertionError
// with JAX's texts for a missing/duplicated device, a v2/v3 device off z=0, or a second core on a
// one-device-per-chip kind.
[[nodiscard]] PhysicalTpuMesh physical_tpu_mesh(const std::vector<Device>& devices);

// Sizes given to each (physical axis, logical axis) pair: matrix[p][l]. Rows multiply to the
// physical shape, columns to the logical shape.
using AxisAssignmentMatrix = std::vector<std::vector<int64_t>>;

struct TorusAssignment {
  // For each position of the logical mesh (row-major), the row-major index into the physical mesh.
  std::vector<int64_t> physical_index;
  AxisAssignmentMatrix matrix;
};

// _create_device_mesh_for_nd_torus: maps each logical axis (last = most network-intensive first)
// onto whole physical axes. When some logical axis fits no subset of the remaining physical axes it
// throws NotImplementedError, or, with `allow_split_physical_axes`, starts over with
// assign_logical_axes_splitting_physical. Sizes must be positive.
[[nodiscard]] TorusAssignment assign_logical_axes_to_torus(const std::vector<int64_t>& physical_shape,
                                                           const std::vector<int64_t>& mesh_shape,
                                                           bool allow_split_physical_axes);

// _create_device_mesh_for_nd_torus_splitting_axes: lets one physical axis serve several logical
// axes. ValueError when the device counts differ.
[[nodiscard]] TorusAssignment assign_logical_axes_splitting_physical(const std::vector<int64_t>& physical_shape,
                                                                     const std::vector<int64_t>& mesh_shape);

// Prime factors in ascending order, with repetition; empty for 1. AssertionError unless positive.
[[nodiscard]] std::vector<int64_t> prime_factors(int64_t value);

// Every way to give a logical axis of `logical_axis_size` a size on each physical axis such that each
// physical axis still divides after `assigned_per_physical_axis` (the product of earlier logical
// axes' sizes on it). Candidates are distinct; their order carries no meaning.
[[nodiscard]] std::vector<std::vector<int64_t>> feasible_logical_axis_assignments(
    const std::vector<int64_t>& physical_shape, const std::vector<int64_t>& assigned_per_physical_axis,
    int64_t logical_axis_size);

// _prefer_first_logical_axis_assignment: whether candidate `first` beats `second`.
[[nodiscard]] bool prefer_first_logical_axis_assignment(const std::vector<int64_t>& first,
                                                        const std::vector<int64_t>& second,
                                                        const std::vector<int64_t>& physical_shape,
                                                        const std::vector<int64_t>& assigned_per_physical_axis);

// _generate_logical_mesh: the physical index behind each logical position once every physical axis
// is split into its per-logical-axis factors (lower logical axes major within a physical axis).
// Only the total sizes must agree, as with numpy's reshape.
[[nodiscard]] std::vector<int64_t> logical_mesh_from_assignment(const std::vector<int64_t>& physical_shape,
                                                                const std::vector<int64_t>& logical_shape,
                                                                const AxisAssignmentMatrix& matrix);

// Row-major source indices of an array of `shape` after numpy's transpose(axes).
[[nodiscard]] std::vector<int64_t> transposed_indices(const std::vector<int64_t>& shape,
                                                      const std::vector<std::size_t>& axes);

}  // namespace shardscope
