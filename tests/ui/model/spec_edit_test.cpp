// Spec editor logic: JAX's errors for bad specs, and the replayable device_put line for good ones.
#include "ui/model/spec_edit.h"

#include <doctest/doctest.h>

#include "base/error.h"
#include "tests/ui/model/fixtures.h"

namespace shardscope::ui {
namespace {

SpecDraft draft(std::vector<std::vector<std::string>> dims) {
  SpecDraft d;
  d.dims = std::move(dims);
  return d;
}

NamespaceNames short_names() { return {"NamedSharding", "P", "jax.device_put"}; }

}  // namespace

TEST_CASE("a valid spec checks out and writes the device_put line") {
  const Mesh mesh = testing::mesh_2x4();
  const SpecDraft d = draft({{"y"}, {}});
  const SpecCheck check = check_spec({8, 8}, mesh, d, JaxProfile());
  REQUIRE(check.ok());
  CHECK(check.sharding->spec == parse_partition_spec("P('y', None)"));
  CHECK(device_put_line("x", "mesh", d, short_names()) == "x = jax.device_put(x, NamedSharding(mesh, P('y', None)))");
  // A Flax parameter's box is immutable: the line rebinds the box around the moved value.
  CHECK(device_put_line("v['params']['kernel'].value", "mesh", d, short_names(), true) ==
        "v['params']['kernel'] = v['params']['kernel'].replace_boxed(jax.device_put(v['params']['kernel'].value, "
        "NamedSharding(mesh, P('y', None))))");
  // An attribute that merely happens to be called `value` is assigned as any other array.
  CHECK(device_put_line("s.value", "mesh", d, short_names()) ==
        "s.value = jax.device_put(s.value, NamedSharding(mesh, P('y', None)))");
}

TEST_CASE("an axis used twice is JAX's DuplicateSpecError, on the second dimension") {
  const SpecCheck check = check_spec({8, 8}, testing::mesh_2x4(), draft({{"x"}, {"x"}}), JaxProfile());
  REQUIRE_FALSE(check.ok());
  CHECK(check.error_type == "DuplicateSpecError");
  CHECK(check.error ==
        "A single NamedSharding spec specification can map every mesh axis to at most one positional dimension, "
        "but P('x', 'x') has duplicate entries for `x`");
  CHECK(check.error_dim == 1);
}

TEST_CASE("an unknown axis is JAX's ValueError on its dimension") {
  const SpecCheck check = check_spec({8, 8}, testing::mesh_2x4(), draft({{}, {"z"}}), JaxProfile());
  REQUIRE_FALSE(check.ok());
  CHECK(check.error_type == "ValueError");
  CHECK(check.error == "Resource axis: z of P(None, 'z') is not found in mesh: ('x', 'y').");
  CHECK(check.error_dim == 1);
}

TEST_CASE("an indivisible dimension is an IndivisibleError on that dimension") {
  const SpecCheck check = check_spec({6, 8}, testing::mesh_2x4(), draft({{"y"}, {}}), JaxProfile());
  REQUIRE_FALSE(check.ok());
  CHECK(check.error_type == "IndivisibleError");
  CHECK(check.error.find("array axis 0 is partitioned 4 times, but the dimension size is 6") != std::string::npos);
  CHECK(check.error_dim == 0);
}

TEST_CASE("a spec longer than the array's rank is rejected") {
  const SpecCheck check = check_spec({8}, testing::mesh_2x4(), draft({{"x"}, {"y"}}), JaxProfile());
  REQUIRE_FALSE(check.ok());
  CHECK(check.error_type == "ValueError");
}

TEST_CASE("ordered tuples and memory kinds reach the Python line") {
  SpecDraft d = draft({{"y", "x"}, {}});
  d.memory_kind = "pinned_host";
  CHECK(device_put_line("w", "w.sharding.mesh", d, {}) ==
        "w = jax.device_put(w, jax.sharding.NamedSharding(w.sharding.mesh, "
        "jax.sharding.PartitionSpec(('y', 'x'), None), memory_kind='pinned_host'))");
  const SpecCheck check = check_spec({8, 8}, testing::mesh_2x4(), d, JaxProfile());
  REQUIRE(check.ok());
  CHECK(check.sharding->memory_kind == "pinned_host");
}

TEST_CASE("a draft starts from the array's sharding, without the default memory kind") {
  const Mesh mesh = testing::mesh_2x4();
  const SpecDraft d = SpecDraft::from_sharding(testing::named(mesh, "P('x', 'y')"), 2, JaxProfile());
  CHECK(d.dims == std::vector<std::vector<std::string>>{{"x"}, {"y"}});
  CHECK_FALSE(d.memory_kind);
  const SpecDraft short_spec = SpecDraft::from_sharding(testing::named(mesh, "P('x')"), 3, JaxProfile());
  CHECK(short_spec.dims == std::vector<std::vector<std::string>>{{"x"}, {}, {}});
}

TEST_CASE("the mesh is named by the variable bound to it, else reached through the array") {
  const Mesh mesh = testing::mesh_2x4();
  const Mesh other = make_mesh({8}, {"d"}, make_device_preset("tpu-v3-8").devices, JaxProfile());
  CHECK(mesh_expression("x", mesh, {{"other", other}, {"mesh", mesh}}) == "mesh");
  CHECK(mesh_expression("x", mesh, {{"other", other}}) == "x.sharding.mesh");
  CHECK(spec_call_text(parse_partition_spec("P()"), "P") == "P()");
}

TEST_CASE("the notation bar shows every notation and reads each back to a draft") {
  const Mesh mesh = testing::mesh_2x4();
  const ShapedArray aval{{8, 8}, DType::kFloat32, false};
  const std::vector<std::string> texts = notation_texts(aval, mesh, draft({{"y"}, {}}), JaxProfile());
  REQUIRE(texts.size() == std::size(kNotationKinds));
  CHECK(texts[0] == "P('y', None)");
  CHECK(texts[1] == "float32[8@y,8]");
  CHECK(texts[2] == "A[I_y, J]");
  CHECK(texts[3] == "#sdy.sharding<@mesh, [{\"y\"}, {}]>");
  CHECK(texts[4] == "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
  for (std::size_t i = 0; i < texts.size(); ++i) {
    CHECK(draft_from_notation(kNotationKinds[i], texts[i], mesh, {8, 8}).dims ==
          std::vector<std::vector<std::string>>{{"y"}, {}});
  }
  CHECK(draft_from_notation(NotationKind::kShardy, "#sdy.sharding<@mesh, [{?}, {\"x\"}]>", mesh, {8, 8}).dims ==
        std::vector<std::vector<std::string>>{{}, {"x"}});
  try {
    (void)draft_from_notation(NotationKind::kBook, "A[I, J]{U_y}", mesh, {8, 8});
    FAIL("unreduced axes were placed");
  } catch (const Error& error) {
    CHECK(std::string(error.what()) ==
          "scaling book 'A[I, J]{U_y}': device_put cannot place an array unreduced over 'y'");
  }
}

TEST_CASE("the notation bar keeps typed text and its error until the sharding changes") {
  NotationBar bar;
  bar.sync("x", {"P('x')", "t", "b", "s", "h"});
  REQUIRE(bar.rows.size() == 5);
  NotationRow* hlo = bar.row(NotationKind::kHlo);
  REQUIRE(hlo != nullptr);
  hlo->text = "{devices=[2,4]<=[7]}";
  hlo->error = "ValueError: ...";
  bar.sync("x", {"P('x')", "t", "b", "s", "h"});
  CHECK(bar.row(NotationKind::kHlo)->text == "{devices=[2,4]<=[7]}");
  CHECK(bar.row(NotationKind::kHlo)->error == "ValueError: ...");
  bar.sync("x", {"P('y')", "t", "b", "s", "h2"});
  CHECK(bar.row(NotationKind::kHlo)->text == "h2");
  CHECK(bar.row(NotationKind::kHlo)->error.empty());
  bar.row(NotationKind::kBook)->text = "typed";
  bar.sync("z", {"P('y')", "t", "b", "s", "h2"});  // another array: its own texts
  CHECK(bar.row(NotationKind::kBook)->text == "b");
}

}  // namespace shardscope::ui
