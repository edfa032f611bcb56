// A sharding described the way a person picks one (preset, mesh axes, spec text), resolved to core objects.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "device/presets.h"
#include "sharding/sharding.h"

namespace shardscope {

struct ShardingRecipe {
  std::string devices_preset = "tpu-v3-8";
  // Mesh axes and sizes; absent means one axis 'x' over every device of the preset.
  std::optional<std::vector<std::pair<std::string, int64_t>>> mesh_axes;
  std::optional<std::vector<AxisType>> axis_types;  // absent: make_mesh's default for the profile
  // Mesh devices in row-major order by id; absent means make_mesh's order for the preset.
  std::optional<std::vector<int64_t>> device_ids;
  std::optional<std::string> spec_text;  // absent: P() on a mesh, or the default device placement
  std::optional<int64_t> single_device_id;
  std::optional<std::string> memory_kind;
};

struct ResolvedSharding {
  DevicePreset preset;
  Sharding sharding;
};

// Builds the sharding, raising JAX's errors (unknown axis, duplicate axis, mesh size) or a ValueError
// naming the offending value (unknown preset, device id not in the preset).
[[nodiscard]] ResolvedSharding resolve_sharding(const ShardingRecipe& recipe, const JaxProfile& profile);

// "auto,explicit" / "Auto, Explicit" -> axis types; ValueError naming the bad entry.
[[nodiscard]] std::vector<AxisType> parse_axis_types(const std::string& text);

}  // namespace shardscope
