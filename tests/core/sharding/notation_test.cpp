// A sharding's notations: the scaling book's subscripts, Shardy's attribute and XLA's HloSharding text, checked
// against what real JAX 0.11.2 printed (tests/data/real_jax: #sdy.sharding, sdy.mesh, {devices=[4,2]<=[8]}) and
// XLA's iota rules for transposed and replicated tilings.
#include "sharding/notation.h"

#include <doctest/doctest.h>

#include "device/presets.h"

using namespace shardscope;

namespace {

const JaxProfile kProfile;

Mesh cpu_mesh(std::vector<int64_t> shape, std::vector<std::string> names) {
  const std::size_t rank = shape.size();
  return make_mesh(shape, names, make_device_preset("cpu:8").devices, kProfile,
                   std::vector<AxisType>(rank, AxisType::kAuto));
}

std::string hlo(const Mesh& mesh, const std::string& spec, std::size_t rank, bool iota = true) {
  return hlo_sharding_notation(mesh, spec_dim_axes(parse_partition_spec(spec), rank), iota);
}

}  // namespace

TEST_CASE("the scaling book's notation subscripts each dim by its mesh axes") {
  CHECK(book_notation({{"X"}, {"Y"}}) == "A[I_X, J_Y]");
  CHECK(book_notation({{"X", "Y"}, {}}) == "A[I_{XY}, J]");
  CHECK(book_notation({{"data", "model"}, {}}, {}, "W") == "W[I_{data,model}, J]");
  CHECK(book_notation({{}, {"model"}}) == "A[I, J_{model}]");
  CHECK(book_notation({{"X"}, {}}, {"Y"}) == "A[I_X, J]{U_Y}");
  CHECK(book_notation({}) == "A[]");
}

TEST_CASE("Shardy's attribute and mesh as JAX 0.11's lowering prints them") {
  const Mesh mesh = cpu_mesh({4, 2}, {"data", "model"});
  // Both lines as real JAX 0.11.2 printed them for P('data', 'model') on this mesh.
  CHECK(shardy_notation(spec_dim_axes(parse_partition_spec("P('data', 'model')"), 2)) ==
        "#sdy.sharding<@mesh, [{\"data\"}, {\"model\"}]>");
  CHECK(shardy_mesh_notation(mesh) == "sdy.mesh @mesh = <[\"data\"=4, \"model\"=2]>");
  CHECK(shardy_notation(spec_dim_axes(parse_partition_spec("P(('data', 'model'))"), 3)) ==
        "#sdy.sharding<@mesh, [{\"data\", \"model\"}, {}, {}]>");
  CHECK(shardy_notation({{}, {}}, {"model"}) == "#sdy.sharding<@mesh, [{}, {}], unreduced={\"model\"}>");
}

TEST_CASE("HloSharding text: iota tile assignments, transposes and replicated tails") {
  const Mesh mesh = cpu_mesh({4, 2}, {"data", "model"});
  // As real JAX 0.11.2's compiled HLO printed the parameter's sharding.
  CHECK(hlo(mesh, "P('data', 'model')", 2) == "{devices=[4,2]<=[8]}");
  CHECK(hlo(mesh, "P('model', 'data')", 2) == "{devices=[2,4]<=[4,2]T(1,0)}");
  CHECK(hlo(mesh, "P('data')", 2) == "{devices=[4,1,2]<=[8] last_tile_dim_replicate}");
  CHECK(hlo(mesh, "P(None, 'data')", 2) == "{devices=[1,4,2]<=[8] last_tile_dim_replicate}");
  CHECK(hlo(mesh, "P('model')", 2) == "{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}");
  CHECK(hlo(mesh, "P()", 2) == "{replicated}");
  CHECK(hlo(mesh, "P(('data', 'model'))", 1) == "{devices=[8]<=[8]}");
  CHECK(hlo(mesh, "P(('model', 'data'))", 1) == "{devices=[8]<=[4,2]T(1,0)}");
  // Axes that stay neighbours merge into one reshape dim; size-1 axes drop out.
  const Mesh cube = cpu_mesh({2, 2, 2}, {"x", "y", "z"});
  CHECK(hlo(cube, "P(('y', 'z'), 'x')", 2) == "{devices=[4,2]<=[2,4]T(1,0)}");
  CHECK(hlo(cube, "P('z', 'x')", 2) == "{devices=[2,2,2]<=[4,2]T(1,0) last_tile_dim_replicate}");
  const Mesh with_unit = cpu_mesh({1, 4, 2}, {"pod", "data", "model"});
  CHECK(hlo(with_unit, "P('model', 'data')", 2) == "{devices=[2,4]<=[4,2]T(1,0)}");
  // Before JAX 0.4.16's XLA: the explicit device list.
  CHECK(hlo(mesh, "P('data', 'model')", 2, false) == "{devices=[4,2]0,1,2,3,4,5,6,7}");
  CHECK(hlo(mesh, "P('model', 'data')", 2, false) == "{devices=[2,4]0,2,4,6,1,3,5,7}");
}

TEST_CASE("all notations of a NamedSharding, per profile") {
  const Mesh mesh = cpu_mesh({4, 2}, {"data", "model"});
  const NamedSharding sharding = make_named_sharding(mesh, parse_partition_spec("P('data', 'model')"), kProfile);
  const ShardingNotations now = sharding_notations(sharding, 2, kProfile);
  CHECK(now.spec == "P('data', 'model')");
  CHECK(now.book == "A[I_{data}, J_{model}]");
  CHECK(now.hlo == "{devices=[4,2]<=[8]}");
  const ShardingNotations old = sharding_notations(sharding, 2, JaxProfile(JaxVersion{0, 4, 1}));
  CHECK(old.hlo == "{devices=[4,2]0,1,2,3,4,5,6,7}");
  const std::string text = notations_text(now);
  CHECK(text.rfind("# shardscope notations (beyond JAX)\n", 0) == 0);
  CHECK(text.find("Shardy:        #sdy.sharding<@mesh, [{\"data\"}, {\"model\"}]>\n") != std::string::npos);
}
