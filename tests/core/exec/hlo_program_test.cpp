// cost_analysis and memory_analysis against what XLA:CPU reported for the same programs under real JAX 0.11.2:
// the lowered program priced instruction by instruction (scalars broadcast, reductions with an init value), the
// compiled one with elementwise chains fused, parameters read once, and temporaries that cross fusions.
#include "exec/hlo_program.h"

#include <doctest/doctest.h>

#include <cmath>
#include <set>

#include "cost/compiled_cost.h"
#include "device/presets.h"
#include "ops/structural.h"
#include "trace/builder.h"

using namespace shardscope;

namespace {

const JaxProfile kProfile;

Mesh data_model_mesh() {
  return make_mesh({4, 2}, {"data", "model"}, make_device_preset("cpu:8").devices, kProfile,
                   std::vector<AxisType>{AxisType::kAuto, AxisType::kAuto});
}

ShapeDtypeStruct sds(Shape shape, std::optional<Sharding> sharding = std::nullopt) {
  return {std::move(shape), DType::kFloat32, std::move(sharding), false, std::nullopt};
}

Atom f32(double value) { return scalar_literal(value, DType::kFloat32); }

Params reduce_axes(std::vector<int64_t> axes) {
  return {{"axes", ParamValue::int_tuple(axes)}, {"out_sharding", ParamValue::None{}}};
}

Params expand_last(Shape shape) {
  return {{"shape", ParamValue::int_tuple(shape)},
          {"broadcast_dimensions", ParamValue::int_tuple({0})},
          {"sharding", ParamValue::None{}}};
}

// t * 2 + 1 for t: f32[8,8].
JaxprPtr scale_shift() {
  JaxprBuilder b;
  const Var t = b.arg(Aval::of({8, 8}, DType::kFloat32));
  return b.build({b.bind1("add", {b.bind1("mul", {t, f32(2.0)}), f32(1.0)})});
}

// jax.nn.softmax over the last axis of f32[128,64] (max, subtract, exp, sum, divide).
JaxprPtr softmax() {
  JaxprBuilder b;
  const Var a = b.arg(Aval::of({128, 64}, DType::kFloat32));
  const Atom m = b.bind1("max", {f32(-INFINITY), b.bind1("reduce_max", {a}, reduce_axes({1}))});
  const Atom e = b.bind1("exp", {b.bind1("sub", {a, b.bind1("broadcast_in_dim", {m}, expand_last({128, 1}))})},
                         {{"accuracy", ParamValue::None{}}});
  const Atom s = b.bind1("broadcast_in_dim", {b.bind1("reduce_sum", {e}, reduce_axes({1}))}, expand_last({128, 1}));
  return b.build({b.bind1("div", {e, s})});
}

}  // namespace

TEST_CASE("lower().cost_analysis() prices JAX's broadcasts of scalars and reductions' init values") {
  // broadcast 2.0 (4 B in, 256 out), multiply (256+256 in, 256 out), the same for + 1: XLA's numbers.
  const Lowered lowered(scale_shift(), {sds({8, 8})}, {}, kProfile);
  const CostAnalysis cost = lowered_cost_analysis(lowered);
  CHECK(cost == CostAnalysis{{"bytes accessed", 2056.0},
                             {"bytes accessed0{}", 520.0},
                             {"bytes accessed1{}", 512.0},
                             {"bytes accessedout{}", 1024.0},
                             {"flops", 128.0}});
  // The same program compiled on P('data', 'model'): one fused loop over each device's f32[2,4] reads the
  // block once and writes it once; the broadcast constants count on operand 1 only.
  const Mesh mesh = data_model_mesh();
  const NamedSharding sharded = make_named_sharding(mesh, parse_partition_spec("P('data', 'model')"), kProfile);
  const Compiled compiled = Lowered(scale_shift(), {sds({8, 8}, Sharding{sharded})}, {}, kProfile).compile();
  CHECK(compiled_cost_analysis(compiled) == CostAnalysis{{"bytes accessed", 64.0},
                                                         {"bytes accessed0{}", 32.0},
                                                         {"bytes accessed1{}", 64.0},
                                                         {"bytes accessedout{}", 32.0},
                                                         {"flops", 16.0}});
  CHECK(compiled.memory_analysis().temp_size_in_bytes == 0);
}

TEST_CASE("a fused dot reads an operand used twice once") {
  JaxprBuilder b;
  const Var t = b.arg(Aval::of({256, 256}, DType::kFloat32));
  const Params dims{{"dimension_numbers", dot_dimension_numbers_param({1}, {0}, {}, {})},
                    {"precision", ParamValue::None{}},
                    {"preferred_element_type", ParamValue::None{}}};
  const JaxprPtr jaxpr = b.build({b.bind1("dot_general", {t, t}, dims)});
  const Lowered lowered(jaxpr, {sds({256, 256})}, {}, kProfile);
  const CostAnalysis compiled = compiled_cost_analysis(lowered.compile());
  CHECK(compiled.at("bytes accessed") == 524288.0);
  CHECK(compiled.at("bytes accessed0{}") == 262144.0);
  CHECK(compiled.at("bytes accessed1{}") == 262144.0);
  CHECK(compiled.at("flops") == 33554432.0);
  CHECK(lowered_cost_analysis(lowered).at("bytes accessed") == 786432.0);
}

TEST_CASE("softmax fuses into a max, an exp-and-sum that also stores exp, and a divide") {
  const Lowered lowered(softmax(), {sds({128, 64})}, {}, kProfile);
  const Compiled compiled = lowered.compile();
  const CostAnalysis cost = compiled_cost_analysis(compiled);
  CHECK(cost.at("bytes accessed") == 165888.0);
  CHECK(cost.at("bytes accessedout{}") == 66560.0);
  CHECK(cost.at("flops") == 32640.0);
  CHECK(cost.at("transcendentals") == 8192.0);
  // The row maxima and sums cross fusions; exp is written where the result goes.
  CHECK(compiled.memory_analysis().temp_size_in_bytes == 512);
  const HloProgram program = compiled_hlo(compiled.program(), compiled.plan());
  std::set<std::size_t> fusions(program.fusion.begin(), program.fusion.end());
  CHECK(fusions.size() == 3);
}

TEST_CASE("dead equations are not part of the compiled program") {
  JaxprBuilder b;
  const Var t = b.arg(Aval::of({8, 8}, DType::kFloat32));
  (void)b.bind1("reduce_sum", {t}, reduce_axes({0, 1}));
  const JaxprPtr jaxpr = b.build({b.bind1("neg", {t})});
  CHECK(live_equations(*jaxpr) == std::vector<bool>{false, true});
  const Lowered lowered(jaxpr, {sds({8, 8})}, {}, kProfile);
  CHECK(compiled_hlo(lowered.compile().program(), lowered.compile().plan()).instructions.size() == 1);
}

TEST_CASE("t @ t gathers t once per operand and the dot reads the gathered blocks") {
  // On P('data', 'model') the left operand is gathered over 'model' (f32[2,8]) and the right over 'data'
  // (f32[8,4]), each from t's own block: the dot contracts 8 elements per result (XLA: 128 flops).
  JaxprBuilder b;
  const Var t = b.arg(Aval::of({8, 8}, DType::kFloat32));
  const Params dims{{"dimension_numbers", dot_dimension_numbers_param({1}, {0}, {}, {})},
                    {"precision", ParamValue::None{}},
                    {"preferred_element_type", ParamValue::None{}}};
  const JaxprPtr jaxpr = b.build({b.bind1("dot_general", {t, t}, dims)});
  const Mesh mesh = data_model_mesh();
  const NamedSharding sharded = make_named_sharding(mesh, parse_partition_spec("P('data', 'model')"), kProfile);
  const Compiled compiled = Lowered(jaxpr, {sds({8, 8}, Sharding{sharded})}, {}, kProfile).compile();
  CHECK(compiled_cost_analysis(compiled).at("flops") == 128.0);
  const std::string text = compiled.as_text();
  CAPTURE(text);
  CHECK(text.find("all-gather(%p0)") != std::string::npos);
  CHECK(text.find("all-gather(%all-gather") == std::string::npos);
  const HloProgram program = compiled_hlo(compiled.program(), compiled.plan());
  REQUIRE(program.instructions.size() == 3);
  CHECK(program.instructions[2].operands[0].aval.shape == Shape{2, 8});
  CHECK(program.instructions[2].operands[1].aval.shape == Shape{8, 4});
}
