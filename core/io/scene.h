// Layout scenes: named sequences of (devices, mesh, spec, shape) steps, read from JSON.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/python_format.h"
#include "compat/jax_version.h"
#include "sharding/sharding_recipe.h"

namespace shardscope {

struct SceneStep {
  std::string title;
  ShardingRecipe recipe;
  Shape shape;
};

struct Scene {
  std::string title;
  std::optional<JaxVersion> jax_version;
  std::string devices_preset;  // the preset whose device list the scene opens with
  std::vector<SceneStep> steps;
};

// Parses a scene. Errors name the step and field that are wrong and the value received.
[[nodiscard]] Scene parse_scene(const std::string& json_text, const std::string& source_name);

}  // namespace shardscope
