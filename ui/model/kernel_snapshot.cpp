// Reads the inspection module's JSON into the window's snapshot: devices, arrays with their NamedSharding
// rebuilt from the mesh's device ids and the spec's entries, pytree leaves grouped by tree, the last program.
#include "ui/model/kernel_snapshot.h"

#include <map>

#include "base/dtype.h"
#include "base/error.h"

namespace shardscope::ui {

namespace {

using nlohmann::json;

Platform platform_of(const std::string& name) {
  if (name == "tpu") return Platform::kTpu;
  if (name == "gpu" || name == "cuda" || name == "rocm") return Platform::kGpu;
  return Platform::kCpu;
}

Device device_of(const json& record) {
  Device device;
  device.id = record.at("id").get<int64_t>();
  device.platform = platform_of(record.value("platform", std::string("cpu")));
  device.device_kind = record.value("device_kind", std::string());
  device.process_index = record.value("process_index", 0);
  if (const auto coords = record.find("coords"); coords != record.end() && coords->is_array()) {
    for (std::size_t i = 0; i < 3 && i < coords->size(); ++i) device.coords[i] = (*coords)[i].get<int>();
  }
  if (const auto core = record.find("core_on_chip"); core != record.end() && core->is_number_integer()) {
    device.core_on_chip = core->get<int>();
  }
  return device;
}

AxisType axis_type_of(const std::string& name) {
  if (name.ends_with("Explicit")) return AxisType::kExplicit;
  if (name.ends_with("Manual")) return AxisType::kManual;
  return AxisType::kAuto;
}

Mesh mesh_of(const std::vector<Device>& devices, const std::vector<int64_t>& sizes,
             const std::vector<std::string>& names, const json* listed_types) {
  std::vector<AxisType> types(names.size(), AxisType::kAuto);
  if (listed_types != nullptr && listed_types->size() == names.size()) {
    for (std::size_t i = 0; i < names.size(); ++i) types[i] = axis_type_of((*listed_types)[i].get<std::string>());
  }
  return Mesh(devices, sizes, names, types);
}

// The array's NamedSharding when the record names its mesh (device ids in mesh order, axis names and sizes) and
// its spec entry by entry; a single device's sharding when it names one device. Nothing otherwise.
std::optional<Sharding> sharding_of(const json& record, const std::map<int64_t, Device>& devices) {
  const auto device = [&](const json& id) -> std::optional<Device> {
    const auto found = devices.find(id.get<int64_t>());
    return found == devices.end() ? std::nullopt : std::optional<Device>(found->second);
  };
  std::optional<std::string> memory_kind;
  if (const auto kind = record.find("memory_kind"); kind != record.end() && kind->is_string()) {
    memory_kind = kind->get<std::string>();
  }
  if (record.contains("mesh_device_ids") && record.contains("spec_entries") && record.contains("mesh")) {
    std::vector<Device> mesh_devices;
    for (const json& id : record.at("mesh_device_ids")) {
      const auto found = device(id);
      if (!found) return std::nullopt;
      mesh_devices.push_back(*found);
    }
    std::vector<std::string> names;
    std::vector<int64_t> sizes;
    for (const json& name : record.at("mesh_axis_names")) {
      names.push_back(name.get<std::string>());
      sizes.push_back(record.at("mesh").at(names.back()).get<int64_t>());
    }
    std::vector<SpecEntry> entries;
    for (const json& entry : record.at("spec_entries")) {
      if (entry.is_null()) {
        entries.push_back(SpecEntry::none());
      } else {
        entries.push_back(SpecEntry::of_axes(entry.get<std::vector<std::string>>()));
      }
    }
    const auto listed = record.find("mesh_axis_types");
    return NamedSharding{mesh_of(mesh_devices, sizes, names, listed == record.end() ? nullptr : &*listed),
                         PartitionSpec(std::move(entries)), memory_kind};
  }
  if (const auto id = record.find("device_id"); id != record.end()) {
    if (const auto found = device(*id)) return SingleDeviceSharding{*found, memory_kind};
  }
  return std::nullopt;
}

// Bytes each device holds, from the blocks devices_indices_map gave, in the sharding's device order.
std::vector<int64_t> bytes_per_device(const json& record, const std::optional<Sharding>& sharding,
                                      std::size_t itemsize) {
  std::vector<int64_t> bytes;
  const auto blocks = record.find("blocks");
  if (blocks == record.end() || !sharding) return bytes;
  for (const Device& device : sharding_devices(*sharding)) {
    const auto block = blocks->find(std::to_string(device.id));
    if (block == blocks->end()) continue;
    int64_t elements = 1;
    for (const json& bounds : *block) {
      const int64_t start = bounds.at(0).is_null() ? 0 : bounds.at(0).get<int64_t>();
      const int64_t stop = bounds.at(1).get<int64_t>();
      elements *= stop - start;
    }
    bytes.push_back(elements * static_cast<int64_t>(itemsize));
  }
  return bytes;
}

std::optional<VariableInfo> variable_of(const std::string& name, const json& record,
                                        const std::map<int64_t, Device>& devices) {
  const auto dtype = parse_dtype(record.value("dtype", std::string()));
  if (!dtype) return std::nullopt;  // PRNG keys and dtypes the engine has no name for
  VariableInfo info;
  info.name = name;
  info.aval.shape = record.at("shape").get<Shape>();
  info.aval.dtype = *dtype;
  try {
    info.sharding = sharding_of(record, devices);
  } catch (const Error&) {
    info.sharding.reset();  // a mesh the engine cannot represent: listed without a picture
  }
  info.type_text = record.value("type", info.aval.str_short(false));
  info.sharding_text = record.value("sharding", std::string());
  info.bytes_per_device = bytes_per_device(record, info.sharding, dtype_size(*dtype));
  if (record.contains("path")) info.tree_path = record.at("path").get<std::vector<std::string>>();
  return info;
}

ProgramInfo program_of(const json& record) {
  ProgramInfo program;
  program.name = record.value("name", std::string("jit"));
  program.kind = "jit";
  if (record.contains("error")) {
    program.compiled_summary =
        "This program could not be lowered again from its argument types: " + record.at("error").get<std::string>();
    return program;
  }
  program.text = record.value("hlo", std::string());
  program.lowered = record.value("lowered", std::string());
  std::string summary = "Collectives in compile().as_text():";
  const json collectives = record.value("collectives", json::object());
  if (collectives.empty()) summary += " none";
  for (const auto& [kind, count] : collectives.items()) summary += " " + kind + " x" + std::to_string(count.get<int>());
  if (const auto memory = record.find("memory"); memory != record.end() && memory->is_object()) {
    summary += "\nmemory_analysis():";
    for (const auto& [key, value] : memory->items()) summary += " " + key + "=" + value.dump();
  }
  program.compiled_summary = summary;
  return program;
}

}  // namespace

std::shared_ptr<SessionSnapshot> snapshot_from_inspection(const json& inspection, std::uint64_t revision) {
  if (!inspection.is_object() || !inspection.contains("devices") || !inspection.contains("variables")) {
    throw value_error("not an inspection snapshot (no devices or variables): " + inspection.dump().substr(0, 200));
  }
  auto snapshot = std::make_shared<SessionSnapshot>();
  snapshot->revision = revision;
  try {
    snapshot->profile = JaxProfile(JaxVersion::parse(inspection.value("jax_version", std::string())));
  } catch (const Error&) {
    snapshot->profile = JaxProfile();  // a version newer than any profile reads as the newest
  }
  std::map<int64_t, Device> by_id;
  for (const json& record : inspection.at("devices")) {
    snapshot->devices.push_back(device_of(record));
    by_id[snapshot->devices.back().id] = snapshot->devices.back();
  }
  std::map<std::string, std::size_t> tree_index;
  for (const auto& [name, record] : inspection.at("variables").items()) {
    auto info = variable_of(name, record, by_id);
    if (!info) continue;
    if (!record.contains("tree")) {
      snapshot->variables.push_back(std::move(*info));
      continue;
    }
    const std::string tree = record.at("tree").get<std::string>();
    auto [at, added] = tree_index.emplace(tree, snapshot->trees.size());
    if (added) snapshot->trees.push_back({tree, record.value("tree_type", std::string()), {}, 0});
    snapshot->trees[at->second].leaves.push_back(std::move(*info));
  }
  const json meshes = inspection.value("meshes", json::object());  // kept alive: items() refers to it
  for (const auto& [name, record] : meshes.items()) {
    try {
      std::vector<Device> mesh_devices;
      for (const json& id : record.at("device_ids")) mesh_devices.push_back(by_id.at(id.get<int64_t>()));
      const auto listed = record.find("axis_types");
      snapshot->meshes.push_back({name, mesh_of(mesh_devices, record.at("axis_sizes").get<std::vector<int64_t>>(),
                                                record.at("axis_names").get<std::vector<std::string>>(),
                                                listed == record.end() ? nullptr : &*listed)});
    } catch (const std::exception&) {
      continue;  // a mesh over devices the kernel did not list, or one the engine cannot represent
    }
  }
  snapshot->kernel = "Jupyter kernel, JAX " + inspection.value("jax_version", std::string("(unknown version)"));
  if (const auto program = inspection.find("program"); program != inspection.end() && program->is_object()) {
    snapshot->program = program_of(*program);
  }
  return snapshot;
}

}  // namespace shardscope::ui
