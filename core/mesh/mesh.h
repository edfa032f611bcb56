// Device meshes: named axes over an n-dimensional array of devices, with JAX's reprs.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compat/jax_version.h"
#include "device/device.h"

namespace shardscope {

enum class AxisType { kAuto, kExplicit, kManual };

// "Auto", "Explicit", "Manual": the repr of jax.sharding.AxisType members.
[[nodiscard]] std::string axis_type_name(AxisType type);

class Mesh {
 public:
  Mesh() = default;
  // `devices` are the mesh's devices in row-major order over `axis_sizes`. Throws ValueError
  // with JAX's message when the names, sizes, types and device count disagree.
  Mesh(std::vector<Device> devices, std::vector<int64_t> axis_sizes, std::vector<std::string> axis_names,
       std::vector<AxisType> axis_types);

  [[nodiscard]] const std::vector<Device>& devices() const { return state().devices; }
  [[nodiscard]] const std::vector<int64_t>& axis_sizes() const { return state().axis_sizes; }
  [[nodiscard]] const std::vector<std::string>& axis_names() const { return state().axis_names; }
  [[nodiscard]] const std::vector<AxisType>& axis_types() const { return state().axis_types; }
  [[nodiscard]] int64_t size() const { return static_cast<int64_t>(devices().size()); }
  [[nodiscard]] std::optional<std::size_t> axis_index(const std::string& name) const;
  [[nodiscard]] int64_t axis_size(const std::string& name) const;  // throws if unknown
  // The product of several axes' sizes (1 for none): how many ways they split a dimension together.
  [[nodiscard]] int64_t axes_size(const std::vector<std::string>& names) const;
  // Position of the flat (row-major) device index along every axis.
  [[nodiscard]] std::vector<int64_t> position_of(std::size_t flat_index) const;
  [[nodiscard]] Platform platform() const;

  // str(mesh): Mesh('x': 2, 'y': 4, axis_types=(Explicit, Explicit)).
  [[nodiscard]] std::string str(const JaxProfile& profile) const;
  // repr(mesh): Mesh(axis_sizes=(2, 4), axis_names=('x', 'y'), axis_types=(Explicit, Explicit)).
  [[nodiscard]] std::string repr(const JaxProfile& profile) const;

  bool operator==(const Mesh& other) const;

 private:
  // Meshes are immutable and copied into every sharding and array, so copies share one state.
  struct State {
    std::vector<Device> devices;
    std::vector<int64_t> axis_sizes;
    std::vector<std::string> axis_names;
    std::vector<AxisType> axis_types;
    bool operator==(const State&) const = default;
  };
  [[nodiscard]] const State& state() const;

  std::shared_ptr<const State> state_;
};

// A mesh without devices: only names, sizes and types (and optionally the device description).
struct AbstractMesh {
  std::vector<int64_t> axis_sizes;
  std::vector<std::string> axis_names;
  std::vector<AxisType> axis_types;
  // Present when derived from a concrete mesh (printed since JAX 0.7.2).
  std::optional<std::string> device_kind;
  std::optional<std::string> platform;
  std::optional<int> num_cores;

  [[nodiscard]] std::string repr() const;
  static AbstractMesh from_mesh(const Mesh& mesh);
};

// mesh_utils.create_device_mesh: arranges `devices` into `mesh_shape` in JAX's per-generation order.
// Throws ValueError / NotImplementedError / AssertionError with JAX's messages.
[[nodiscard]] std::vector<Device> create_device_mesh(const std::vector<int64_t>& mesh_shape,
                                                     const std::vector<Device>& devices,
                                                     bool contiguous_submeshes = false,
                                                     bool allow_split_physical_axes = false);

// jax.make_mesh: takes the first prod(axis_sizes) devices (ValueError if too few), orders them with
// create_device_mesh (splitting physical axes on v5e) and defaults axis types per the profile.
[[nodiscard]] Mesh make_mesh(const std::vector<int64_t>& axis_sizes, const std::vector<std::string>& axis_names,
                             const std::vector<Device>& devices, const JaxProfile& profile,
                             std::optional<std::vector<AxisType>> axis_types = std::nullopt);

}  // namespace shardscope
