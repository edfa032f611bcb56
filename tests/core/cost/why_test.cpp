// Why: the chain from a collective or a value back through the equations that passed the mesh axes on to the
// argument, constraint or out_shardings that pinned them.
#include "cost/why.h"

#include <doctest/doctest.h>

#include "base/error.h"
#include "core/cost/cost_test_programs.h"
#include "device/presets.h"
#include "sharding/partition_spec.h"
#include "trace/builder.h"

using namespace shardscope;
using cost_test::arg;
using cost_test::kProfile;

namespace {

Mesh mesh_2x4() { return cost_test::mesh_2x4("tpu-v3-8"); }

// constraint(tanh(x @ w) * 2, P(None, 'y')), x: f32[8,16] on P('x', 'y'), w: f32[16,4] on P('y', None).
Compiled layer(const Mesh& mesh) {
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({8, 16}, DType::kFloat32));
  const Var w = b.arg(Aval::of({16, 4}, DType::kFloat32));
  const Atom dot = b.bind1("dot_general", {x, w}, cost_test::matmul_params());
  const Atom t = b.bind1("tanh", {dot});
  const Atom c = b.bind1("sharding_constraint", {t},
                         {{"sharding", make_named_sharding(mesh, parse_partition_spec("P(None, 'y')"), kProfile)},
                          {"layout", ParamValue::None{}},
                          {"context_mesh", mesh},
                          {"unconstrained_dims", ParamValue::FrozenSet{}}});
  return Lowered(b.build({c}), {arg({8, 16}, mesh, "P('x', 'y')"), arg({16, 4}, mesh, "P('y', None)")}, {}, kProfile)
      .compile();
}

std::size_t find_collective(const Compiled& compiled, CollectiveKind kind) {
  const auto& collectives = compiled.plan().collectives;
  for (std::size_t i = 0; i < collectives.size(); ++i) {
    if (collectives[i].kind == kind) return i;
  }
  FAIL("no such collective");
  return 0;
}

}  // namespace

TEST_CASE("the constraint's all-gather is traced back through tanh and dot_general to argument 0") {
  const Compiled compiled = layer(mesh_2x4());
  const WhyAnswer why = why_collective(compiled, find_collective(compiled, CollectiveKind::kAllGather));
  const std::string text = why.text();
  CAPTURE(text);
  CHECK(why.subject == "all-gather over 'x' for eq 2 (sharding_constraint) of %1");
  REQUIRE(why.steps.size() >= 6);
  CHECK(why.steps[0].text == "sharding_constraint needs operand 0 as P(None, 'y'), but it is P('x', None)");
  CHECK(why.steps[0].equation == 2);
  CHECK(text.find("the target P(None, 'y') is the layout sharding_constraint asks for") != std::string::npos);
  // The operand's chain, one equation at a time, ending at the argument the caller laid out.
  CHECK(text.find("%1 (tanh) f32[8,4] is P('x', None)\n") != std::string::npos);
  CHECK(text.find("dim 0 over 'x': tanh (eq 1) passes on the sharding of its operand 0") != std::string::npos);
  CHECK(text.find("%0 (dot_general) f32[8,4] is P('x', None)\n") != std::string::npos);
  CHECK(text.find("dim 0 over 'x': dot_general (eq 0) passes on the sharding of its operand 0") != std::string::npos);
  CHECK(text.find("%arg0 f32[8,16] is P('x', 'y'): the caller passed argument 0 laid out so (committed)") !=
        std::string::npos);
  // Deeper steps explain the ones above them.
  for (std::size_t s = 1; s < why.steps.size(); ++s) CHECK(why.steps[s].depth <= why.steps[s - 1].depth + 2);
  CHECK(why.steps.back().depth > why.steps.front().depth);
}

TEST_CASE("the contraction's all-reduce names the operands that carry the reduced axis") {
  const Compiled compiled = layer(mesh_2x4());
  const WhyAnswer why = why_collective(compiled, find_collective(compiled, CollectiveKind::kAllReduce));
  const std::string text = why.text();
  CAPTURE(text);
  CHECK(why.subject == "all-reduce over 'y' for eq 0 (dot_general) of %0");
  CHECK(why.steps[0].text.rfind("dot_general contracts a dim sharded over 'y'", 0) == 0);
  CHECK(text.find("operand 0 carries 'y' on the reduced dim:") != std::string::npos);
  CHECK(text.find("operand 1 carries 'y' on the reduced dim:") != std::string::npos);
  CHECK(text.find("%arg1 f32[16,4] is P('y', None): the caller passed argument 1 laid out so") != std::string::npos);
}

TEST_CASE("a result's layout: the constraint pins it, an unsharded value says nothing shards it") {
  const Compiled compiled = layer(mesh_2x4());
  const WhyAnswer out = why_output(compiled, 0);
  CHECK(out.subject == "result 0, %2 (sharding_constraint) f32[8,4] is P(None, 'y')");
  REQUIRE(out.steps.size() == 1);
  CHECK(out.steps[0].text ==
        "%2 (sharding_constraint) f32[8,4] is P(None, 'y'): the sharding constraint (eq 2) asks for it");
  CHECK(out.steps[0].equation == 2);

  const Mesh mesh = mesh_2x4();
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({8, 4}, DType::kFloat32));
  const Atom s = b.bind1("sin", {x});
  const Compiled plain = Lowered(b.build({s}), {arg({8, 4}, mesh, "P()")}, {}, kProfile).compile();
  const WhyAnswer none = why_output(plain, 0);
  REQUIRE(none.steps.size() == 1);
  CHECK(none.steps[0].text ==
        "%0 (sin) f32[8,4] is P(): no argument, constraint or operand shards it, so every device holds all of it");
}

TEST_CASE("out-of-range questions are errors naming the count and the index") {
  const Compiled compiled = layer(mesh_2x4());
  CHECK_THROWS_WITH_AS(why_collective(compiled, 9), "the program has 2 collectives; got index 9", Error);
  CHECK_THROWS_WITH_AS(why_output(compiled, 3), "the program has 1 results; got index 3", Error);
}
