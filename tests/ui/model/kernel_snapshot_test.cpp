// The inspection module's JSON read into the window's snapshot: devices, shardings rebuilt from mesh device ids
// and spec entries, bytes per device from the blocks, pytree leaves grouped, the last program's summary.
#include "ui/model/kernel_snapshot.h"

#include <doctest/doctest.h>

#include "base/error.h"

namespace shardscope::ui {
namespace {

using nlohmann::json;

json devices(int count, const std::string& platform = "cpu") {
  json out = json::array();
  for (int i = 0; i < count; ++i) {
    out.push_back({{"id", i},
                   {"platform", platform},
                   {"device_kind", platform},
                   {"process_index", 0},
                   {"coords", nullptr},
                   {"core_on_chip", nullptr}});
  }
  return out;
}

// x: f32[8,4] on a 2 x 2 mesh whose devices are listed out of id order, P('x', None) (so 'y' replicates).
json sharded_array() {
  return {
      {"shape", {8, 4}},
      {"dtype", "float32"},
      {"type", "float32[8@x,4]"},
      {"sharding", "NamedSharding(...)"},
      {"spec", "P('x', None)"},
      {"mesh", {{"x", 2}, {"y", 2}}},
      {"mesh_axis_names", {"x", "y"}},
      {"mesh_device_ids", {3, 2, 1, 0}},
      {"mesh_axis_types", {"Explicit", "Auto"}},
      {"spec_entries", {{"x"}, nullptr}},
      {"memory_kind", "device"},
      {"blocks", {{"0", {{4, 8}, {0, 4}}}, {"1", {{4, 8}, {0, 4}}}, {"2", {{0, 4}, {0, 4}}}, {"3", {{0, 4}, {0, 4}}}}}};
}

}  // namespace

TEST_CASE("a kernel's array is drawn with the mesh, device order and spec the kernel reported") {
  const json inspection = {{"jax_version", "0.4.31"}, {"devices", devices(4)}, {"variables", {{"x", sharded_array()}}}};
  const auto snapshot = snapshot_from_inspection(inspection, 7);
  CHECK(snapshot->revision == 7);
  CHECK(snapshot->profile.version().to_string() == "0.4.31");
  REQUIRE(snapshot->devices.size() == 4);
  REQUIRE(snapshot->variables.size() == 1);
  const VariableInfo& x = snapshot->variables[0];
  CHECK(x.name == "x");
  CHECK(x.aval.shape == Shape{8, 4});
  CHECK(x.type_text == "float32[8@x,4]");
  REQUIRE(x.sharding.has_value());
  const auto& named = std::get<NamedSharding>(*x.sharding);
  CHECK(named.mesh.axis_names() == std::vector<std::string>{"x", "y"});
  CHECK(named.mesh.axis_types() == std::vector<AxisType>{AxisType::kExplicit, AxisType::kAuto});
  std::vector<int64_t> ids;
  for (const Device& device : named.mesh.devices()) ids.push_back(device.id);
  CHECK(ids == std::vector<int64_t>{3, 2, 1, 0});
  CHECK(named.spec.size() == 2);
  CHECK(named.spec.entries()[0].axes == std::vector<std::string>{"x"});
  CHECK(named.spec.entries()[1].is_none());
  CHECK(named.memory_kind == "device");
  // 4 rows x 4 columns x 4 bytes on each device, in the mesh's device order.
  CHECK(x.bytes_per_device == std::vector<int64_t>{64, 64, 64, 64});
  CHECK(!snapshot->program.has_value());
  CHECK(snapshot->kernel == "Jupyter kernel, JAX 0.4.31");
  CHECK(snapshot->meshes.empty());
}

TEST_CASE("meshes bound in the kernel's namespace are listed with their device order, odd ones are left out") {
  const json inspection = {{"jax_version", "0.11.2"},
                           {"devices", devices(4)},
                           {"variables", json::object()},
                           {"meshes",
                            {{"mesh",
                              {{"axis_names", {"data", "model"}},
                               {"axis_sizes", {2, 2}},
                               {"device_ids", {0, 2, 1, 3}},
                               {"axis_types", {"Auto", "Auto"}}}},
                             {"elsewhere", {{"axis_names", {"i"}}, {"axis_sizes", {2}}, {"device_ids", {0, 7}}}},
                             {"wrong_size", {{"axis_names", {"i"}}, {"axis_sizes", {3}}, {"device_ids", {0, 1}}}}}}};
  const auto snapshot = snapshot_from_inspection(inspection, 0);
  REQUIRE(snapshot->meshes.size() == 1);
  CHECK(snapshot->meshes[0].name == "mesh");
  CHECK(snapshot->meshes[0].mesh.axis_sizes() == std::vector<int64_t>{2, 2});
  CHECK(snapshot->meshes[0].mesh.devices()[1].id == 2);
  CHECK(snapshot->meshes[0].mesh.axis_types() == std::vector<AxisType>{AxisType::kAuto, AxisType::kAuto});
}

TEST_CASE("pytree leaves are grouped by tree, odd arrays are kept or skipped, and a program is summarised") {
  json leaf = sharded_array();
  leaf["tree"] = "state";
  leaf["tree_type"] = "dict";
  leaf["path"] = {"['params']", "['w']"};
  json single = {{"shape", {3}}, {"dtype", "int32"}, {"device_id", 2}, {"blocks", {{"2", {{0, 3}}}}}};
  json key = {{"shape", json::array()}, {"dtype", "key<fry>"}};
  json irregular = sharded_array();
  irregular["mesh_device_ids"] = {0, 1, 2, 9};  // a device the kernel did not list
  const json inspection = {
      {"jax_version", "99.0.0"},
      {"devices", devices(4, "tpu")},
      {"variables", {{"state['params']['w']", leaf}, {"ids", single}, {"key", key}, {"odd", irregular}}},
      {"program",
       {{"name", "step"},
        {"collectives", {{"all-reduce", 2}, {"all-gather", 1}}},
        {"memory", {{"temp_size_in_bytes", 128}}},
        {"hlo", "HloModule jit_step"},
        {"lowered", "module @jit_step"}}}};
  const auto snapshot = snapshot_from_inspection(inspection, 1);
  CHECK(snapshot->devices[0].platform == Platform::kTpu);
  REQUIRE(snapshot->trees.size() == 1);
  CHECK(snapshot->trees[0].name == "state");
  CHECK(snapshot->trees[0].type_name == "dict");
  REQUIRE(snapshot->trees[0].leaves.size() == 1);
  CHECK(snapshot->trees[0].leaves[0].tree_path == std::vector<std::string>{"['params']", "['w']"});
  // ids on one device; the PRNG key (no engine dtype) is left out; the irregular mesh is listed without a picture.
  REQUIRE(snapshot->variables.size() == 2);
  const VariableInfo* ids = nullptr;
  const VariableInfo* odd = nullptr;
  for (const VariableInfo& info : snapshot->variables) (info.name == "ids" ? ids : odd) = &info;
  REQUIRE(ids != nullptr);
  REQUIRE(odd != nullptr);
  CHECK(std::get<SingleDeviceSharding>(*ids->sharding).device.id == 2);
  CHECK(ids->bytes_per_device == std::vector<int64_t>{12});
  CHECK(odd->name == "odd");
  CHECK(!odd->sharding.has_value());
  REQUIRE(snapshot->program.has_value());
  CHECK(snapshot->program->name == "step");
  CHECK(snapshot->program->text == "HloModule jit_step");
  CHECK(snapshot->program->lowered == "module @jit_step");
  CHECK(snapshot->program->compiled_summary.find("all-gather x1 all-reduce x2") != std::string::npos);
  CHECK(snapshot->program->compiled_summary.find("temp_size_in_bytes=128") != std::string::npos);
}

TEST_CASE("text that is not an inspection snapshot is a ValueError naming what it got") {
  try {
    (void)snapshot_from_inspection(json{{"hello", 1}}, 0);
    FAIL("expected a ValueError");
  } catch (const Error& error) {
    CHECK(error.python_type() == "ValueError");
    CHECK(std::string(error.what()).find("hello") != std::string::npos);
  }
}

}  // namespace shardscope::ui
