// The mesh editor's logic: a draft mesh (axis names, sizes, types), validated with make_mesh, as Python.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compat/jax_version.h"
#include "mesh/mesh.h"
#include "ui/session.h"

namespace shardscope::ui {

struct MeshDraft {
  std::string variable = "mesh";
  std::vector<std::string> axis_names;
  std::vector<int64_t> axis_sizes;
  std::vector<AxisType> axis_types;
};

struct MeshCheck {
  std::optional<Mesh> mesh;
  std::string error_type;
  std::string error;
  int error_axis = -1;  // the axis the error is about; -1 for the whole mesh
  [[nodiscard]] bool ok() const { return mesh.has_value(); }
};

// Checks what jax.make_mesh checks (and that names are identifiers, unique, sizes positive) on `devices`.
[[nodiscard]] MeshCheck check_mesh(const MeshDraft& draft, const std::vector<Device>& devices,
                                   const JaxProfile& profile);

// mesh = jax.make_mesh((2, 4), ('x', 'y'), axis_types=(jax.sharding.AxisType.Explicit, ...))
[[nodiscard]] std::string make_mesh_line(const MeshDraft& draft);

// Switching the session to another device preset: the code the console runs (a notebook restart: the
// namespace is cleared, then the devices change), or the preset's error (ValueError naming it) if unknown.
struct PresetSwitch {
  std::string source;  // empty when `error` is set
  std::string error;
  std::size_t device_count = 0;
};
[[nodiscard]] PresetSwitch switch_device_preset(const std::string& preset);

}  // namespace shardscope::ui
