// Scene JSON reading with errors that point at the offending step and field.
#include "io/scene.h"

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/text_parse.h"
#include "io/json_errors.h"

namespace shardscope {
namespace {

using nlohmann::json;

std::string string_field(const json& object, const char* key, const std::string& where) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string()) {
    throw value_error(where + ": '" + key + "' must be a string" +
                      (it == object.end() ? std::string(" (missing)") : ", got " + it->dump()));
  }
  return it->get<std::string>();
}

std::optional<std::string> optional_string(const json& object, const char* key, const std::string& where) {
  if (!object.contains(key)) return std::nullopt;
  return string_field(object, key, where);
}

Shape shape_field(const json& step, const std::string& where) {
  const auto it = step.find("shape");
  if (it == step.end()) throw value_error(where + ": 'shape' is missing");
  if (it->is_string()) return parse_int_list(it->get<std::string>(), where + " shape");
  if (!it->is_array()) throw value_error(where + ": 'shape' must be a list of sizes, got " + it->dump());
  Shape shape;
  for (const json& size : *it) {
    if (!size.is_number_integer() || size.get<int64_t>() < 0) {
      throw value_error(where + ": 'shape' must hold non-negative integers, got " + it->dump());
    }
    shape.push_back(size.get<int64_t>());
  }
  return shape;
}

}  // namespace

Scene parse_scene(const std::string& json_text, const std::string& source_name) {
  json document;
  try {
    document = json::parse(json_text);
  } catch (const json::exception& e) {
    // Not only parse_error: a number too large for a double is out_of_range.406.
    throw value_error("Scene " + source_name + " is not valid JSON: " + json_error_text(e));
  }
  if (!document.is_object()) throw value_error("Scene " + source_name + " must be a JSON object");
  Scene scene;
  scene.title = optional_string(document, "title", source_name).value_or(source_name);
  if (auto version = optional_string(document, "jax_version", source_name)) {
    scene.jax_version = JaxVersion::parse(*version);
  }
  scene.devices_preset = optional_string(document, "devices", source_name).value_or("tpu-v3-8");
  const auto steps = document.find("steps");
  if (steps == document.end() || !steps->is_array()) {
    throw value_error("Scene " + source_name + ": 'steps' must be a list");
  }
  for (std::size_t i = 0; i < steps->size(); ++i) {
    const json& step = (*steps)[i];
    const std::string where = "Scene " + source_name + " step " + std::to_string(i + 1);
    if (!step.is_object()) throw value_error(where + " must be a JSON object, got " + step.dump());
    SceneStep parsed;
    parsed.title = optional_string(step, "title", where).value_or("step " + std::to_string(i + 1));
    parsed.shape = shape_field(step, where);
    parsed.recipe.devices_preset = optional_string(step, "devices", where).value_or(scene.devices_preset);
    if (auto mesh = optional_string(step, "mesh", where))
      parsed.recipe.mesh_axes = parse_axis_sizes(*mesh, where + " mesh");
    if (auto types = optional_string(step, "axis_types", where)) parsed.recipe.axis_types = parse_axis_types(*types);
    if (auto ids = optional_string(step, "device_ids", where))
      parsed.recipe.device_ids = parse_int_list(*ids, where + " device_ids");
    parsed.recipe.spec_text = optional_string(step, "spec", where);
    parsed.recipe.memory_kind = optional_string(step, "memory_kind", where);
    if (step.contains("single_device")) {
      if (!step["single_device"].is_number_integer()) {
        throw value_error(where + ": 'single_device' must be a device id, got " + step["single_device"].dump());
      }
      parsed.recipe.single_device_id = step["single_device"].get<int64_t>();
    }
    scene.steps.push_back(std::move(parsed));
  }
  return scene;
}

}  // namespace shardscope
