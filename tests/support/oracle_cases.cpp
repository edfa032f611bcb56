// Oracle case loading shared by the core conformance tests and the command-line tests.
#include "support/oracle_cases.h"

#include <fstream>
#include <stdexcept>

#include "base/python_format.h"

namespace shardscope::testing {

const nlohmann::json& visualize_cases_document() {
  static const nlohmann::json document = [] {
    std::ifstream file(std::string(SHARDSCOPE_TEST_DATA_DIR) + "/visualize_cases.json");
    if (!file) throw std::runtime_error("missing tests/data/visualize_cases.json");
    return nlohmann::json::parse(file);
  }();
  return document;
}

std::vector<int64_t> flat_device_ids(const nlohmann::json& ids) {
  std::vector<int64_t> flat;
  if (ids.is_number_integer()) return {ids.get<int64_t>()};
  for (const auto& item : ids) {
    const std::vector<int64_t> inner = flat_device_ids(item);
    flat.insert(flat.end(), inner.begin(), inner.end());
  }
  return flat;
}

namespace {
Device dummy_device(int64_t id, const std::string& platform) {
  Device d;
  d.id = id;
  d.platform = platform == "TPU" ? Platform::kTpu : (platform == "GPU" ? Platform::kGpu : Platform::kCpu);
  d.device_kind = platform == "TPU" ? "TPU v3" : "cpu";
  return d;
}
}  // namespace

Sharding case_sharding(const nlohmann::json& test_case, const JaxProfile& profile) {
  const std::string platform = test_case["platform"];
  const auto& mesh_json = test_case["mesh"];
  const std::vector<int64_t> ids = flat_device_ids(mesh_json["device_ids"]);
  if (test_case["spec"].is_null()) return make_single_device_sharding(dummy_device(ids.at(0), platform), profile);
  std::vector<Device> devices;
  for (const int64_t id : ids) devices.push_back(dummy_device(id, platform));
  const std::vector<std::string> names = mesh_json["axis_names"];
  const std::vector<int64_t> sizes = mesh_json["shape"];
  Mesh mesh(devices, sizes, names, std::vector<AxisType>(names.size(), AxisType::kAuto));
  std::vector<SpecEntry> entries;
  for (const auto& entry : test_case["spec"]) {
    if (entry.is_null())
      entries.push_back(SpecEntry::none());
    else if (entry.is_string())
      entries.push_back(SpecEntry::of_axes({entry.get<std::string>()}));
    else
      entries.push_back(SpecEntry::of_axes(entry.get<std::vector<std::string>>()));
  }
  return make_named_sharding(std::move(mesh), PartitionSpec(std::move(entries)), profile);
}

VizOptions case_options(const nlohmann::json& test_case) {
  VizOptions options;
  options.use_color = test_case.value("render_mode", "no_color_plain") == "color";
  const auto& given = test_case["options"];
  if (given.contains("scale")) options.scale = given["scale"].get<double>();
  if (given.contains("min_width")) options.min_width = given["min_width"].get<int>();
  if (given.contains("max_width")) options.max_width = given["max_width"].get<int>();
  return options;
}

std::string case_spec_text(const nlohmann::json& test_case) {
  std::vector<std::string> parts;
  for (const auto& entry : test_case["spec"]) {
    if (entry.is_null()) {
      parts.push_back("None");
    } else if (entry.is_string()) {
      parts.push_back(python_string_repr(entry.get<std::string>()));
    } else {
      std::vector<std::string> names;
      for (const auto& name : entry) names.push_back(python_string_repr(name.get<std::string>()));
      parts.push_back(python_tuple(names));
    }
  }
  return "P(" + join(parts, ", ") + ")";
}

}  // namespace shardscope::testing
