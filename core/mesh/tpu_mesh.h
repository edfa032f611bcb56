// TPU device orderings for create_device_mesh: per-generation handlers and the physical-torus assignment.
#pragma once

#include <cstdint>
#include <vector>

#include "device/device.h"

namespace shardscope {

// Orders TPU `devices` (already checked: prod(mesh_shape) == devices.size()) into `mesh_shape`,
// returned row-major. Reproduces jax._src.mesh_utils for TPU device kinds.
[[nodiscard]] std::vector<Device> tpu_device_mesh(const std::vector<int64_t>& mesh_shape,
                                                  const std::vector<Device>& devices, bool contiguous_submeshes,
                                                  bool allow_split_physical_axes);

}  // namespace shardscope
