// Resolves a ShardingRecipe into a preset's devices, a mesh and a sharding.
#include "sharding/sharding_recipe.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "base/error.h"
#include "base/text_parse.h"

namespace shardscope {
namespace {

const Device& device_by_id(const DevicePreset& preset, int64_t id) {
  const auto it =
      std::find_if(preset.devices.begin(), preset.devices.end(), [id](const Device& d) { return d.id == id; });
  if (it == preset.devices.end()) {
    throw value_error("Device id " + std::to_string(id) + " is not in preset " + preset.name + " (ids 0.." +
                      std::to_string(preset.devices.size() - 1) + ")");
  }
  return *it;
}

}  // namespace

std::vector<AxisType> parse_axis_types(const std::string& text) {
  std::vector<AxisType> types;
  for (std::string name : split(text, ',')) {
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (name == "auto")
      types.push_back(AxisType::kAuto);
    else if (name == "explicit")
      types.push_back(AxisType::kExplicit);
    else if (name == "manual")
      types.push_back(AxisType::kManual);
    else
      throw value_error("Unknown axis type '" + name + "' in '" + text + "': use auto, explicit or manual");
  }
  return types;
}

ResolvedSharding resolve_sharding(const ShardingRecipe& recipe, const JaxProfile& profile) {
  DevicePreset preset = make_device_preset(recipe.devices_preset);
  if (recipe.single_device_id) {
    if (recipe.mesh_axes || recipe.spec_text || recipe.device_ids) {
      throw value_error("A single-device sharding takes no mesh, spec or device ids");
    }
    Device device = device_by_id(preset, *recipe.single_device_id);
    return {std::move(preset), make_single_device_sharding(std::move(device), profile, recipe.memory_kind)};
  }
  if (!recipe.mesh_axes && !recipe.spec_text && !recipe.device_ids) {
    // An array made without a sharding lives on the first device.
    Device first = preset.devices.front();
    return {std::move(preset), make_single_device_sharding(std::move(first), profile, recipe.memory_kind)};
  }
  std::vector<std::string> names;
  std::vector<int64_t> sizes;
  if (recipe.mesh_axes) {
    for (const auto& [name, size] : *recipe.mesh_axes) {
      names.push_back(name);
      sizes.push_back(size);
    }
  } else {
    names = {"x"};
    sizes = {static_cast<int64_t>(recipe.device_ids ? recipe.device_ids->size() : preset.devices.size())};
  }
  Mesh mesh;
  if (recipe.device_ids) {
    std::set<int64_t> seen;
    std::vector<Device> devices;
    for (const int64_t id : *recipe.device_ids) {
      if (!seen.insert(id).second) throw value_error("Device id " + std::to_string(id) + " is listed twice");
      devices.push_back(device_by_id(preset, id));
    }
    if (static_cast<int64_t>(devices.size()) != product(sizes)) {
      throw value_error("The mesh " + python_int_tuple(sizes) + " needs " + std::to_string(product(sizes)) +
                        " device ids, got " + std::to_string(devices.size()));
    }
    const AxisType fallback =
        profile.has(JaxFeature::kMakeMeshDefaultsToExplicit) ? AxisType::kExplicit : AxisType::kAuto;
    mesh = Mesh(std::move(devices), sizes, names,
                recipe.axis_types.value_or(std::vector<AxisType>(sizes.size(), fallback)));
  } else {
    mesh = make_mesh(sizes, names, preset.devices, profile, recipe.axis_types);
  }
  PartitionSpec spec = recipe.spec_text ? parse_partition_spec(*recipe.spec_text) : PartitionSpec();
  NamedSharding named = make_named_sharding(std::move(mesh), std::move(spec), profile, recipe.memory_kind);
  return {std::move(preset), std::move(named)};
}

}  // namespace shardscope
