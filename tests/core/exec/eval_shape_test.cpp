// eval_shape: shapes from shape rules only (arrays far bigger than memory), JAX's ShapeDtypeStruct repr,
// shardings as JAX reports them, and Auto propagation's choice alongside.
#include "exec/eval_shape.h"

#include <doctest/doctest.h>

#include "base/error.h"
#include "device/presets.h"
#include "trace/builder.h"

using namespace shardscope;

namespace {

const JaxProfile kProfile;

ShapeDtypeStruct sds(Shape shape, std::optional<Sharding> sharding = std::nullopt, DType dtype = DType::kFloat32) {
  return {std::move(shape), dtype, std::move(sharding), false, std::nullopt};
}

JaxprPtr matmul_program(int64_t m, int64_t k, int64_t n) {
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({m, k}, DType::kFloat32));
  const Var w = b.arg(Aval::of({k, n}, DType::kFloat32));
  auto list = [](int64_t v) { return ParamValue::list({ParamValue(v)}); };
  const Atom y = b.bind1(
      "dot_general", {x, w},
      {{"dimension_numbers", ParamValue::tuple({ParamValue::tuple({list(1), list(0)}),
                                                ParamValue::tuple({ParamValue::list({}), ParamValue::list({})})})},
       {"precision", ParamValue::None{}},
       {"preferred_element_type", DType::kFloat32}});
  return b.build({b.bind1("tanh", {y}, {{"accuracy", ParamValue::None{}}})});
}

}  // namespace

TEST_CASE("ShapeDtypeStruct prints as JAX prints it") {
  // flax-nnx-key-concepts cell 8: print(jax.eval_shape(lambda x: x, x)) for a (4, 4) float32 array.
  CHECK(sds({4, 4}).repr(kProfile) == "ShapeDtypeStruct(shape=(4, 4), dtype=float32)");
  // flax-nnx-key-concepts cell 9: a bias of shape (8190,).
  CHECK(sds({8190}).repr(kProfile) == "ShapeDtypeStruct(shape=(8190,), dtype=float32)");
  ShapeDtypeStruct weak = sds({}, std::nullopt, DType::kInt32);
  weak.weak_type = true;
  CHECK(weak.repr(kProfile) == "ShapeDtypeStruct(shape=(), dtype=int32, weak_type=True)");
}

TEST_CASE("eval_shape describes arrays far bigger than memory without running kernels") {
  // A (1e6 x 1e6) @ (1e6 x 5e5) f32 matmul: 4 TB of input, evaluated from shape rules alone.
  const JaxprPtr program = matmul_program(1000000, 1000000, 500000);
  const auto out = eval_shape(*program, {sds({1000000, 1000000}), sds({1000000, 500000})}, kProfile);
  REQUIRE(out.size() == 1);
  CHECK(out[0].repr(kProfile) == "ShapeDtypeStruct(shape=(1000000, 500000), dtype=float32)");
  CHECK_FALSE(out[0].propagated_sharding.has_value());
}

TEST_CASE("abstract evaluation re-runs the shape rules on new argument types") {
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({4, 8}, DType::kFloat32));
  const JaxprPtr program =
      b.build({b.bind1("reduce_sum", {b.bind1("sin", {x}, {{"accuracy", ParamValue::None{}}})},
                       {{"axes", ParamValue::int_tuple({1})}, {"out_sharding", ParamValue::None{}}})});
  const std::vector<Aval> out = abstract_eval_jaxpr(*program, {Aval::of({16, 8}, DType::kBFloat16)});
  REQUIRE(out.size() == 1);
  CHECK(out[0].shape == Shape{16});
  CHECK(out[0].dtype == DType::kBFloat16);
  CHECK_THROWS_AS((void)abstract_eval_jaxpr(*program, {}), Error);
  // sin rejects integers, as JAX's dtype rule does.
  CHECK_THROWS_AS((void)abstract_eval_jaxpr(*program, {Aval::of({4, 8}, DType::kInt32)}), Error);
}

TEST_CASE("shardings: none before compilation unless given, Auto propagation's choice alongside") {
  const Mesh mesh = make_mesh({2, 4}, {"x", "y"}, make_device_preset("cpu:8").devices, kProfile,
                              std::vector<AxisType>(2, AxisType::kAuto));
  const NamedSharding rows = make_named_sharding(mesh, parse_partition_spec("P('x', None)"), kProfile);
  const NamedSharding cols = make_named_sharding(mesh, parse_partition_spec("P(None, 'y')"), kProfile);
  const JaxprPtr program = matmul_program(8, 16, 32);
  const auto out = eval_shape(*program, {sds({8, 16}, rows), sds({16, 32}, cols)}, kProfile);
  REQUIRE(out.size() == 1);
  CHECK_FALSE(out[0].sharding.has_value());
  REQUIRE(out[0].propagated_sharding.has_value());
  // Rows from x, columns from w: P('x', 'y') with no communication.
  const auto& chosen = std::get<NamedSharding>(*out[0].propagated_sharding);
  CHECK(chosen.spec.repr(kProfile) == "P('x', 'y')");
  // With out_shardings, the output reports exactly what was asked for.
  EvalShapeOptions options;
  options.out_shardings = {Sharding{rows}};
  const auto pinned = eval_shape(*program, {sds({8, 16}, rows), sds({16, 32}, cols)}, kProfile, options);
  REQUIRE(pinned[0].sharding.has_value());
  CHECK(*pinned[0].sharding == Sharding{rows});
  CHECK(pinned[0].repr(kProfile) ==
        "ShapeDtypeStruct(shape=(8, 32), dtype=float32, sharding=" + sharding_repr(Sharding{rows}, kProfile) + ")");
}
