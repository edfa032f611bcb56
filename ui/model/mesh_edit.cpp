// Mesh editor logic.
#include "ui/model/mesh_edit.h"

#include <cctype>
#include <set>

#include "base/error.h"
#include "base/python_format.h"
#include "device/presets.h"

namespace shardscope::ui {
namespace {

bool is_identifier(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) != 0) return false;
  for (const char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_') return false;
  }
  return true;
}

}  // namespace

MeshCheck check_mesh(const MeshDraft& draft, const std::vector<Device>& devices, const JaxProfile& profile) {
  MeshCheck check;
  if (!is_identifier(draft.variable)) {
    check.error_type = "ValueError";
    check.error = "'" + draft.variable + "' is not a Python name for the mesh";
    return check;
  }
  std::set<std::string> seen;
  for (std::size_t a = 0; a < draft.axis_names.size(); ++a) {
    const std::string& name = draft.axis_names[a];
    std::string problem;
    if (name.empty())
      problem = "axis " + std::to_string(a) + " has no name";
    else if (!seen.insert(name).second)
      problem = "axis name " + python_string_repr(name) + " is used twice";
    else if (a < draft.axis_sizes.size() && draft.axis_sizes[a] < 1)
      problem = "axis sizes must be positive";
    if (!problem.empty()) {
      check.error_type = "ValueError";
      check.error = problem;
      check.error_axis = static_cast<int>(a);
      return check;
    }
  }
  try {
    check.mesh = make_mesh(draft.axis_sizes, draft.axis_names, devices, profile,
                           draft.axis_types.empty() ? std::nullopt : std::optional(draft.axis_types));
  } catch (const Error& error) {
    check.error_type = error.python_type();
    check.error = error.what();
  }
  return check;
}

std::string make_mesh_line(const MeshDraft& draft) {
  std::vector<std::string> sizes;
  std::vector<std::string> names;
  std::vector<std::string> types;
  for (const int64_t size : draft.axis_sizes) sizes.push_back(std::to_string(size));
  for (const std::string& name : draft.axis_names) names.push_back(python_string_repr(name));
  for (const AxisType type : draft.axis_types) types.push_back("jax.sharding.AxisType." + axis_type_name(type));
  std::string line = draft.variable + " = jax.make_mesh(" + python_tuple(sizes) + ", " + python_tuple(names);
  if (!types.empty()) line += ", axis_types=" + python_tuple(types);
  return line + ")";
}

PresetSwitch switch_device_preset(const std::string& preset) {
  PresetSwitch out;
  try {
    out.device_count = make_device_preset(preset).devices.size();
  } catch (const Error& error) {
    out.error = error.python_type() + ": " + error.what();
    return out;
  }
  // The preset goes through Python's repr rules: quotes in it cannot reach the code.
  out.source =
      "# shardscope: switch the simulated devices (clears the namespace, as a restart would)\n"
      "for _name in [n for n in globals() if not n.startswith('_')]:\n    del globals()[_name]\n"
      "globals().pop('_name', None)\nimport shardscope\nshardscope.use_devices(" +
      python_string_repr(preset) + ")\ndel shardscope\n";
  return out;
}

}  // namespace shardscope::ui
