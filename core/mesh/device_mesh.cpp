// create_device_mesh and make_mesh: device counts, per-platform orderings, default axis types.
#include <algorithm>

#include "base/error.h"
#include "base/python_format.h"
#include "mesh/mesh.h"
#include "mesh/tpu_mesh.h"

namespace shardscope {

std::vector<Device> create_device_mesh(const std::vector<int64_t>& mesh_shape, const std::vector<Device>& devices,
                                       bool contiguous_submeshes, bool allow_split_physical_axes) {
  if (product(mesh_shape) != static_cast<int64_t>(devices.size())) {
    throw value_error("Number of devices " + std::to_string(devices.size()) + " must equal the product of mesh_shape " +
                      python_int_tuple(mesh_shape));
  }
  if (devices.empty()) return {};
  switch (devices.back().platform) {
    case Platform::kTpu: return tpu_device_mesh(mesh_shape, devices, contiguous_submeshes, allow_split_physical_axes);
    case Platform::kGpu: {
      std::vector<Device> sorted = devices;
      std::stable_sort(sorted.begin(), sorted.end(), [](const Device& a, const Device& b) { return a.id < b.id; });
      return sorted;
    }
    case Platform::kCpu: return devices;
  }
  return devices;
}

Mesh make_mesh(const std::vector<int64_t>& axis_sizes, const std::vector<std::string>& axis_names,
               const std::vector<Device>& devices, const JaxProfile& profile,
               std::optional<std::vector<AxisType>> axis_types) {
  const int64_t needed = product(axis_sizes);
  if (needed > static_cast<int64_t>(devices.size())) {
    throw value_error("Number of devices " + std::to_string(devices.size()) + " must be >= the product of mesh_shape " +
                      python_int_tuple(axis_sizes));
  }
  std::vector<Device> chosen(devices.begin(), devices.begin() + needed);
  bool multi_slice = false;
  for (const Device& d : chosen) {
    if (d.slice_index && chosen.front().slice_index && *d.slice_index != *chosen.front().slice_index) {
      multi_slice = true;
    }
  }
  if (multi_slice) {
    throw value_error(
        "`jax.make_mesh` does not support multi-slice topologies. Please use "
        "jax.experimental.mesh_utils.create_hybrid_device_mesh");
  }
  const bool allow_split =
      !chosen.empty() && (chosen.front().device_kind == "TPU v5 lite" || chosen.front().device_kind == "TPU v5e");
  std::vector<Device> ordered = create_device_mesh(axis_sizes, chosen, false, allow_split);
  if (!axis_types) {
    const AxisType fallback =
        profile.has(JaxFeature::kMakeMeshDefaultsToExplicit) ? AxisType::kExplicit : AxisType::kAuto;
    axis_types = std::vector<AxisType>(axis_sizes.size(), fallback);
  }
  return Mesh(std::move(ordered), axis_sizes, axis_names, *axis_types);
}

}  // namespace shardscope
