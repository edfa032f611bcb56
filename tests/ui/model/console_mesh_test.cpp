// Console text rules (when Enter continues, what Tab completes) and the mesh editor's checks.
#include <doctest/doctest.h>

#include "device/presets.h"
#include "ui/model/console_text.h"
#include "ui/model/mesh_edit.h"

namespace shardscope::ui {

TEST_CASE("Enter continues open blocks, brackets and strings, and runs complete code") {
  CHECK(needs_more_input("def f(x):"));
  CHECK(needs_more_input("for i in range(3):  # loop"));
  CHECK(needs_more_input("y = f(1,"));
  CHECK(needs_more_input("s = '''first line"));
  CHECK(needs_more_input("x = 1 + \\"));
  CHECK_FALSE(needs_more_input("x = 1"));
  CHECK_FALSE(needs_more_input("x = ')' + \"(\""));
  CHECK_FALSE(needs_more_input("# a comment:"));
  CHECK_FALSE(needs_more_input("d = {'a': 1}"));
  CHECK_FALSE(needs_more_input("def f(x):\n    return x\n"));
}

TEST_CASE("new lines keep the indentation and indent after a block header") {
  CHECK(continuation_indent("def f(x):") == "    ");
  CHECK(continuation_indent("def f(x):\n    if x:") == "        ");
  CHECK(continuation_indent("def f(x):\n    y = x") == "    ");
}

TEST_CASE("Tab completes the dotted name before the cursor") {
  CHECK(completion_stem("y = jnp.ara", 11) == "jnp.ara");
  CHECK(completion_stem("f(x_v", 5) == "x_v");
  CHECK(completion_stem("f(x) ", 5).empty());
  CHECK(completion_stem("jax.numpy", 3) == "jax");
  CHECK(common_prefix({"jnp.arange", "jnp.array", "jnp.argmax"}) == "jnp.ar");
  CHECK(common_prefix({}).empty());
}

TEST_CASE("the mesh editor accepts a 2x4 mesh and writes make_mesh") {
  MeshDraft draft{"mesh", {"x", "y"}, {2, 4}, {AxisType::kExplicit, AxisType::kAuto}};
  const MeshCheck check = check_mesh(draft, make_device_preset("tpu-v3-8").devices, JaxProfile());
  REQUIRE(check.ok());
  CHECK(check.mesh->axis_sizes() == std::vector<int64_t>{2, 4});
  CHECK(make_mesh_line(draft) ==
        "mesh = jax.make_mesh((2, 4), ('x', 'y'), axis_types=(jax.sharding.AxisType.Explicit, "
        "jax.sharding.AxisType.Auto))");
  draft.axis_types.clear();
  CHECK(make_mesh_line(draft) == "mesh = jax.make_mesh((2, 4), ('x', 'y'))");
}

TEST_CASE("the mesh editor points at the axis in error and passes make_mesh's own errors on") {
  const std::vector<Device> devices = make_device_preset("tpu-v3-8").devices;
  const MeshCheck twice = check_mesh({"mesh", {"x", "x"}, {2, 4}, {}}, devices, JaxProfile());
  REQUIRE_FALSE(twice.ok());
  CHECK(twice.error_axis == 1);
  const MeshCheck too_big = check_mesh({"mesh", {"x", "y"}, {4, 4}, {}}, devices, JaxProfile());
  REQUIRE_FALSE(too_big.ok());
  CHECK(too_big.error_type == "ValueError");
  CHECK(too_big.error_axis == -1);
  const MeshCheck bad_name = check_mesh({"2mesh", {"x"}, {8}, {}}, devices, JaxProfile());
  CHECK_FALSE(bad_name.ok());
}

TEST_CASE("switching the device preset clears the namespace and names the preset, or reports JAX-style errors") {
  const PresetSwitch v4 = switch_device_preset("tpu-v4-8");
  CHECK(v4.error.empty());
  CHECK(v4.device_count == 4);  // a v4-8 slice: 4 chips, one device each (megacore)
  CHECK(v4.source.find("del globals()[_name]") != std::string::npos);
  CHECK(v4.source.find("shardscope.use_devices('tpu-v4-8')") != std::string::npos);
  CHECK(v4.source.find("_shardscope") == std::string::npos);  // generated lines use public modules only
  // A quote in the text cannot break out of the string literal.
  const PresetSwitch odd = switch_device_preset("cpu:2') or print('x");
  CHECK(odd.source.empty());
  CHECK(odd.error.rfind("ValueError: Unknown device preset", 0) == 0);
  const PresetSwitch cpus = switch_device_preset("cpu:16");
  CHECK(cpus.device_count == 16);
}

}  // namespace shardscope::ui
