// Builds a ShardingRecipe from "key value" lines through the same parsers and checks the command line uses.
#pragma once

#include <map>
#include <string>

#include "base/checked_math.h"
#include "base/text_parse.h"
#include "compat/jax_version.h"
#include "sharding/sharding_recipe.h"

namespace shardscope::fuzz {

inline ShardingRecipe recipe_from(const std::map<std::string, std::string>& fields) {
  ShardingRecipe recipe;
  const auto field = [&](const char* key) -> const std::string* {
    const auto it = fields.find(key);
    return it == fields.end() ? nullptr : &it->second;
  };
  if (const auto* v = field("devices")) recipe.devices_preset = *v;
  if (const auto* v = field("mesh")) {
    auto axes = parse_axis_sizes(*v, "--mesh");
    std::vector<int64_t> sizes;
    for (const auto& axis : axes) sizes.push_back(axis.second);
    (void)checked_product(sizes, "--mesh");
    recipe.mesh_axes = axes;
  }
  if (const auto* v = field("axis_types")) recipe.axis_types = parse_axis_types(*v);
  if (const auto* v = field("device_ids")) {
    recipe.device_ids = parse_int_list(*v, "--device-ids");
    (void)checked_product(*recipe.device_ids, "--device-ids");
  }
  if (const auto* v = field("spec")) recipe.spec_text = *v;
  if (const auto* v = field("single")) {
    const std::vector<int64_t> id = parse_int_list(*v, "--single-device");
    if (id.size() == 1) recipe.single_device_id = id[0];
  }
  if (const auto* v = field("memory_kind")) recipe.memory_kind = *v;
  return recipe;
}

inline JaxProfile profile_from(const std::map<std::string, std::string>& fields) {
  const auto it = fields.find("version");
  return it == fields.end() ? JaxProfile() : JaxProfile(JaxVersion::parse(it->second));
}

}  // namespace shardscope::fuzz
