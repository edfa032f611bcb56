// TPU device orderings for create_device_mesh: per-generation ring handlers, then the physical-torus assignment.
#include "mesh/tpu_mesh.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <string>

#include "base/error.h"
#include "base/python_format.h"
#include "mesh/tpu_axis_assignment.h"

namespace shardscope {
namespace {

// Positions (into a tray's device list) that walk the tray's chips as a ring, so all-reduces over a
// mesh axis follow physical links.
constexpr std::array<std::size_t, 8> kTrayRingOrder{0, 1, 2, 3, 6, 7, 4, 5};
constexpr std::array<std::size_t, 4> kTray2x2RingOrder{0, 1, 3, 2};
constexpr std::array<std::size_t, 16> kTray4x4RingOrder{0, 1, 2, 3, 7, 6, 5, 9, 10, 11, 15, 14, 13, 12, 8, 4};
constexpr std::array<std::size_t, 8> kV5eTrayRingOrder{0, 1, 2, 3, 7, 6, 5, 4};
constexpr std::array<std::size_t, 8> kV5eTrayIotaOrder{0, 4, 2, 6, 1, 5, 3, 7};
constexpr std::array<std::size_t, 8> kV5p2x2x2Order{0, 1, 3, 2, 6, 7, 5, 4};
constexpr std::array<std::size_t, 8> kTpu7xTray2x2x2RingOrder{0, 1, 2, 3, 6, 7, 4, 5};

using Handler = std::optional<std::vector<Device>> (*)(const std::vector<int64_t>&, const std::vector<Device>&);

// The handlers' reshape to mesh_shape: the flat order is kept, but numpy still rejects negative sizes.
std::vector<Device> reshaped(std::vector<Device> devices, const std::vector<int64_t>& mesh_shape) {
  if (std::any_of(mesh_shape.begin(), mesh_shape.end(), [](int64_t v) { return v < 0; })) {
    throw value_error("can only specify one unknown dimension");
  }
  return devices;
}

template <std::size_t N>
std::vector<Device> pick(const std::vector<Device>& devices, const std::array<std::size_t, N>& positions) {
  std::vector<Device> picked;
  picked.reserve(N);
  for (const std::size_t position : positions) picked.push_back(devices.at(position));
  return picked;
}

// The chip bounds the v5e/v5p handlers read: JAX takes the largest coords *tuple* (lexicographic),
// not the per-axis maximum, which differs for irregular device subsets.
std::array<int, 3> lexicographic_max_bounds(const std::vector<Device>& devices) {
  std::array<int, 3> largest = devices.front().coords;
  for (const Device& d : devices) largest = std::max(largest, d.coords);
  return {largest[0] + 1, largest[1] + 1, largest[2] + 1};
}

// Devices ordered x-minor (by z, then y, then x); ties keep their given order.
std::vector<Device> sorted_x_minor(const std::vector<Device>& devices) {
  std::vector<Device> sorted = devices;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Device& a, const Device& b) {
    return std::array<int, 3>{a.coords[2], a.coords[1], a.coords[0]} <
           std::array<int, 3>{b.coords[2], b.coords[1], b.coords[0]};
  });
  return sorted;
}

std::optional<std::vector<Device>> tpu_v2_v3_mesh(const std::vector<int64_t>& mesh_shape,
                                                  const std::vector<Device>& devices) {
  if (devices.size() == 8) return reshaped(pick(devices, kTrayRingOrder), mesh_shape);
  if (mesh_shape.empty()) throw Error("IndexError", "tuple index out of range");
  if (mesh_shape.back() == 8) {
    // Each run of 8 along the last axis is one tray, walked as a ring.
    std::vector<Device> ordered = reshaped(devices, mesh_shape);
    for (std::size_t row = 0; row < devices.size() / 8; ++row) {
      for (std::size_t j = 0; j < 8; ++j) ordered[row * 8 + j] = devices[row * 8 + kTrayRingOrder[j]];
    }
    return ordered;
  }
  return reshaped(devices, mesh_shape);
}

std::optional<std::vector<Device>> tpu_v4i_v8i_mesh(const std::vector<int64_t>& mesh_shape,
                                                    const std::vector<Device>& devices) {
  if (devices.size() == 4) return reshaped(pick(devices, kTray2x2RingOrder), mesh_shape);
  return std::nullopt;
}

std::optional<std::vector<Device>> tpu_v5e_mesh(const std::vector<int64_t>& mesh_shape,
                                                const std::vector<Device>& devices) {
  const auto [bound_x, bound_y, bound_z] = lexicographic_max_bounds(devices);
  const std::vector<Device> sequential = sorted_x_minor(devices);
  if (bound_x == 2 && bound_y == 2 && bound_z == 1 && devices.size() == 4) {
    return reshaped(pick(sequential, kTray2x2RingOrder), mesh_shape);
  }
  if (devices.size() == 8) {
    const bool cube = bound_x == 2 && bound_y == 2 && bound_z == 2;
    return reshaped(pick(sequential, cube ? kV5eTrayIotaOrder : kV5eTrayRingOrder), mesh_shape);
  }
  // The 4x4 ring only pays off when one mesh axis spans every device.
  if (bound_x == 4 && bound_y == 4 && bound_z == 1 && devices.size() == 16 && !mesh_shape.empty() &&
      *std::max_element(mesh_shape.begin(), mesh_shape.end()) == 16) {
    return reshaped(pick(sequential, kTray4x4RingOrder), mesh_shape);
  }
  return std::nullopt;
}

std::optional<std::vector<Device>> tpu_v5p_mesh(const std::vector<int64_t>& mesh_shape,
                                                const std::vector<Device>& devices) {
  const auto [bound_x, bound_y, bound_z] = lexicographic_max_bounds(devices);
  if (bound_x == 2 && bound_y == 2 && bound_z == 2 && devices.size() == 8) {
    return reshaped(pick(sorted_x_minor(devices), kV5p2x2x2Order), mesh_shape);
  }
  return std::nullopt;
}

std::optional<std::vector<Device>> tpu7x_mesh(const std::vector<int64_t>& mesh_shape,
                                              const std::vector<Device>& devices) {
  if (devices.size() % 8 != 0 || devices.size() > 32) return std::nullopt;
  // One ring over a 2x2 plane (cores included), repeated along z; wider x/y planes need the torus path.
  const std::vector<int64_t> physical_shape = physical_tpu_mesh(devices).shape;
  if (physical_shape[0] > 2 || physical_shape[1] > 2) return std::nullopt;
  std::vector<Device> ordered;
  ordered.reserve(devices.size());
  for (std::size_t group = 0; group < devices.size(); group += 8) {
    for (const std::size_t position : kTpu7xTray2x2x2RingOrder) ordered.push_back(devices[group + position]);
  }
  return reshaped(std::move(ordered), mesh_shape);
}

Handler handler_for(const std::string& device_kind) {
  static const std::map<std::string, Handler> handlers{
      {"TPU v2", &tpu_v2_v3_mesh},    {"TPU v3", &tpu_v2_v3_mesh},    {"TPU v4 lite", &tpu_v4i_v8i_mesh},
      {"TPU v5 lite", &tpu_v5e_mesh}, {"TPU v5e", &tpu_v5e_mesh},     {"TPU v5p", &tpu_v5p_mesh},
      {"TPU v5", &tpu_v5p_mesh},      {"TPU v6 lite", &tpu_v5e_mesh}, {"TPU7x", &tpu7x_mesh},
      {"TPU7", &tpu7x_mesh},          {"TPU8i", &tpu_v4i_v8i_mesh},
  };
  const auto found = handlers.find(device_kind);
  return found == handlers.end() ? nullptr : found->second;
}

struct TransposeTrick {
  std::vector<int64_t> mesh_shape;
  std::vector<std::size_t> axes;
};

// Physical topologies where permuting the physical axes first makes every process's devices a
// contiguous block of the logical mesh, with the (size-1-free) mesh shapes it works for.
const std::vector<std::pair<std::vector<int64_t>, std::vector<TransposeTrick>>>& transpose_tricks() {
  static const std::vector<std::pair<std::vector<int64_t>, std::vector<TransposeTrick>>> tricks{
      {{2, 2, 1}, {{{2, 2}, {0, 1, 2}}}},  {{2, 2, 4}, {{{4, 4}, {0, 1, 2}}}},
      {{4, 4, 4}, {{{16, 4}, {0, 2, 1}}}}, {{4, 8, 8}, {{{64, 4}, {0, 2, 1}}, {{4, 64}, {0, 2, 1}}}},
      {{8, 8, 8}, {{{64, 8}, {0, 2, 1}}}}, {{8, 16, 16}, {{{256, 8}, {0, 2, 1}}, {{8, 256}, {0, 2, 1}}}},
  };
  return tricks;
}

PhysicalTpuMesh transpose_for_contiguous_submeshes(const PhysicalTpuMesh& physical,
                                                   const std::vector<int64_t>& mesh_shape) {
  const auto& tricks = transpose_tricks();
  const auto topology =
      std::find_if(tricks.begin(), tricks.end(), [&](const auto& entry) { return entry.first == physical.shape; });
  if (topology == tricks.end()) {
    throw value_error("create_device_mesh cannot create contiguous submeshes for physical mesh topology " +
                      python_int_tuple(physical.shape));
  }
  std::vector<int64_t> nontrivial_shape;
  for (const int64_t size : mesh_shape) {
    if (size != 1) nontrivial_shape.push_back(size);
  }
  const auto trick = std::find_if(topology->second.begin(), topology->second.end(),
                                  [&](const TransposeTrick& t) { return t.mesh_shape == nontrivial_shape; });
  if (trick == topology->second.end()) {
    std::vector<std::string> available;
    for (const TransposeTrick& t : topology->second) available.push_back(python_int_tuple(t.mesh_shape));
    throw value_error("create_device_mesh cannot create contiguous submeshes for mesh_shape " +
                      python_int_tuple(mesh_shape) + " and physical mesh topology " + python_int_tuple(physical.shape) +
                      ". Available mesh_shapes: " + python_list(available));
  }
  PhysicalTpuMesh transposed;
  for (const std::size_t axis : trick->axes) transposed.shape.push_back(physical.shape[axis]);
  for (const int64_t index : transposed_indices(physical.shape, trick->axes)) {
    transposed.devices.push_back(physical.devices[static_cast<std::size_t>(index)]);
  }
  return transposed;
}

}  // namespace

std::vector<Device> tpu_device_mesh(const std::vector<int64_t>& mesh_shape, const std::vector<Device>& devices,
                                    bool contiguous_submeshes, bool allow_split_physical_axes) {
  if (devices.empty()) return {};
  // JAX picks the handler by the last device's kind but lays out the torus by the first one's.
  if (const Handler handler = handler_for(devices.back().device_kind)) {
    if (std::optional<std::vector<Device>> ordered = handler(mesh_shape, devices)) return std::move(*ordered);
  }
  PhysicalTpuMesh physical = physical_tpu_mesh(devices);
  if (contiguous_submeshes) physical = transpose_for_contiguous_submeshes(physical, mesh_shape);
  const TorusAssignment assignment =
      assign_logical_axes_to_torus(physical.shape, mesh_shape, allow_split_physical_axes);
  std::vector<Device> ordered;
  ordered.reserve(assignment.physical_index.size());
  for (const int64_t index : assignment.physical_index) {
    ordered.push_back(physical.devices[static_cast<std::size_t>(index)]);
  }
  return ordered;
}

}  // namespace shardscope
