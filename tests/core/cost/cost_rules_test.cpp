// Cost rules: every primitive has one, and hand-counted flops/bytes for each family (XLA's conventions).
#include "cost/cost_rules.h"

#include <doctest/doctest.h>

#include "ir/primitive.h"
#include "ops/ops.h"
#include "trace/builder.h"

using namespace shardscope;

namespace {

Params dot_numbers(std::vector<int64_t> lc, std::vector<int64_t> rc, std::vector<int64_t> lb, std::vector<int64_t> rb) {
  auto list = [](const std::vector<int64_t>& v) {
    std::vector<ParamValue> items;
    for (const int64_t x : v) items.emplace_back(x);
    return ParamValue::list(items);
  };
  return {{"dimension_numbers",
           ParamValue::tuple({ParamValue::tuple({list(lc), list(rc)}), ParamValue::tuple({list(lb), list(rb)})})},
          {"precision", ParamValue::None{}},
          {"preferred_element_type", DType::kFloat32}};
}

// The cost of the single equation of a one-op program.
OpCost single_op(const std::string& primitive, const std::vector<Aval>& args, Params params,
                 const std::vector<Literal>& literals = {}) {
  JaxprBuilder b;
  std::vector<Atom> inputs;
  for (const Aval& a : args) inputs.emplace_back(b.arg(a));
  for (const Literal& l : literals) inputs.emplace_back(l);
  const std::vector<Atom> out = b.bind(primitive, inputs, std::move(params));
  const JaxprPtr jaxpr = b.build(out);
  REQUIRE(jaxpr->eqns.size() == 1);
  return equation_cost(jaxpr->eqns[0]);
}

const Aval f32_4x8 = Aval::of({4, 8}, DType::kFloat32);

}  // namespace

TEST_CASE("every registered primitive has a cost rule") {
  ensure_core_primitives();
  ensure_cost_rules();
  for (const Primitive* primitive : all_primitives()) {
    CAPTURE(primitive->name);
    CHECK(find_cost_rule(primitive->name) != nullptr);
  }
}

TEST_CASE("dot_general costs two flops per multiply-add, batch dims included") {
  // (8,1024) @ (1024,1024): 2*8*1024*1024 flops; reads both operands, writes (8,1024).
  const OpCost mlp =
      single_op("dot_general", {Aval::of({8, 1024}, DType::kFloat32), Aval::of({1024, 1024}, DType::kFloat32)},
                dot_numbers({1}, {0}, {}, {}));
  CHECK(mlp.flops == 16777216.0);
  CHECK(mlp.transcendentals == 0.0);
  CHECK(mlp.bytes_accessed() == 32768.0 + 4194304.0 + 32768.0);
  // Batched (3,4,5) x (3,5,6) -> (3,4,6): 3*4*6 outputs of 5 multiply-adds each.
  const OpCost batched =
      single_op("dot_general", {Aval::of({3, 4, 5}, DType::kFloat32), Aval::of({3, 5, 6}, DType::kFloat32)},
                dot_numbers({2}, {1}, {0}, {0}));
  CHECK(batched.flops == 720.0);
  // Two contracting dims: (2,3,4) x (3,4,5) -> (2,5), 12 products each.
  const OpCost two =
      single_op("dot_general", {Aval::of({2, 3, 4}, DType::kFloat32), Aval::of({3, 4, 5}, DType::kFloat32)},
                dot_numbers({1, 2}, {0, 1}, {}, {}));
  CHECK(two.flops == 240.0);
}

TEST_CASE("elementwise arithmetic is one flop per element and transcendentals are counted apart") {
  const OpCost sin = single_op("sin", {f32_4x8}, {{"accuracy", ParamValue::None{}}});
  CHECK(sin.flops == 0.0);
  CHECK(sin.transcendentals == 32.0);
  CHECK(sin.bytes_accessed() == 256.0);
  const OpCost add = single_op("add", {f32_4x8, f32_4x8}, {});
  CHECK(add.flops == 32.0);
  CHECK(add.transcendentals == 0.0);
  CHECK(add.operand_bytes == std::vector<double>{128.0, 128.0});
  CHECK(add.output_bytes == 128.0);
  // A scalar literal operand is read as a scalar.
  const OpCost scaled = single_op("mul", {f32_4x8}, {}, {scalar_literal(2.0, DType::kFloat32)});
  CHECK(scaled.flops == 32.0);
  CHECK(scaled.bytes_accessed() == 128.0 + 4.0 + 128.0);
  const OpCost lt = single_op("lt", {f32_4x8, f32_4x8}, {});
  CHECK(lt.flops == 32.0);
  CHECK(lt.output_bytes == 32.0);  // bool results are one byte each
  const OpCost exp = single_op("exp", {Aval::of({10}, DType::kBFloat16)}, {{"accuracy", ParamValue::None{}}});
  CHECK(exp.transcendentals == 10.0);
  CHECK(exp.bytes_accessed() == 40.0);
}

TEST_CASE("integer_pow costs its square-and-multiply chain") {
  // x**2: one multiply; x**5 = x * (x^2)^2: three; x**-3 = 1 / (x * x^2): two multiplies and a divide.
  CHECK(single_op("integer_pow", {f32_4x8}, {{"y", 2}}).flops == 32.0);
  CHECK(single_op("integer_pow", {f32_4x8}, {{"y", 5}}).flops == 96.0);
  CHECK(single_op("integer_pow", {f32_4x8}, {{"y", -3}}).flops == 96.0);
  CHECK(single_op("integer_pow", {f32_4x8}, {{"y", 8}}).flops == 96.0);  // three squarings
}

TEST_CASE("reductions combine every input element beyond the first of each output") {
  const Params axes1 = {{"axes", ParamValue::int_tuple({1})}, {"out_sharding", ParamValue::None{}}};
  const OpCost sum = single_op("reduce_sum", {f32_4x8}, axes1);
  CHECK(sum.flops == 28.0);  // 4 outputs of 8 elements: 7 adds each
  CHECK(sum.bytes_accessed() == 128.0 + 16.0);
  const Params all = {{"axes", ParamValue::int_tuple({0, 1})}, {"out_sharding", ParamValue::None{}}};
  CHECK(single_op("reduce_max", {f32_4x8}, all).flops == 31.0);
  // argmax's reducer is nine ops (value compare, NaN test, eq, index compare, ands/ors, two selects).
  const OpCost argmax =
      single_op("argmax", {f32_4x8}, {{"axes", ParamValue::int_tuple({1})}, {"index_dtype", DType::kInt32}});
  CHECK(argmax.flops == 9.0 * 28.0);
  // cumsum is a reduce-window spanning the axis: 7 combines for each of the 32 results.
  const OpCost cumsum = single_op("cumsum", {f32_4x8}, {{"axis", 1}, {"reverse", false}});
  CHECK(cumsum.flops == 224.0);
}

TEST_CASE("data movement costs bytes and no flops") {
  const OpCost t = single_op("transpose", {f32_4x8}, {{"permutation", ParamValue::int_tuple({1, 0})}});
  CHECK(t.flops == 0.0);
  CHECK(t.bytes_accessed() == 256.0);
  const OpCost b = single_op("broadcast_in_dim", {Aval::of({8}, DType::kFloat32)},
                             {{"shape", ParamValue::int_tuple({4, 8})},
                              {"broadcast_dimensions", ParamValue::int_tuple({1})},
                              {"sharding", ParamValue::None{}}});
  CHECK(b.flops == 0.0);
  CHECK(b.bytes_accessed() == 32.0 + 128.0);
  // A slice reads only the elements it keeps.
  const OpCost s = single_op("slice", {f32_4x8},
                             {{"start_indices", ParamValue::int_tuple({0, 2})},
                              {"limit_indices", ParamValue::int_tuple({2, 6})},
                              {"strides", ParamValue::None{}}});
  CHECK(s.flops == 0.0);
  CHECK(s.operand_bytes == std::vector<double>{32.0});
  CHECK(s.output_bytes == 32.0);
  // stack and unstack copy: every operand read once, every result written once.
  const OpCost stacked = single_op("stack", {f32_4x8, f32_4x8, f32_4x8}, {{"axis", int64_t{1}}});
  CHECK(stacked.flops == 0.0);
  CHECK(stacked.operand_bytes == std::vector<double>{128.0, 128.0, 128.0});
  CHECK(stacked.output_bytes == 384.0);
  const OpCost rows = single_op("unstack", {f32_4x8}, {{"axis", int64_t{0}}});
  CHECK(rows.flops == 0.0);
  CHECK(rows.bytes_accessed() == 128.0 + 128.0);
}

TEST_CASE("a nested jit costs what its body costs") {
  JaxprBuilder inner;
  const Var x = inner.arg(f32_4x8);
  const Atom s = inner.bind1("sin", {x}, {{"accuracy", ParamValue::None{}}});
  const Atom y = inner.bind1("add", {s, x});
  const JaxprPtr body = inner.build({y});
  JaxprBuilder outer;
  const Var a = outer.arg(f32_4x8);
  const std::vector<Atom> out = outer.bind("jit", {a}, {{"jaxpr", ParamValue::JaxprRef(body)}, {"name", "g"}});
  const JaxprPtr program = outer.build(out);
  const OpCost cost = equation_cost(program->eqns.at(0));
  CHECK(cost.flops == 32.0);
  CHECK(cost.transcendentals == 32.0);
  CHECK(cost.bytes_accessed() == 256.0 + 384.0);
  const OpCost whole = jaxpr_cost(*program);
  CHECK(whole.flops == 32.0);
}

TEST_CASE("scatter-add touches the updates' extent three times plus the indices") {
  ensure_cost_rules();
  // operand f32[8], indices i32[3,1], updates f32[3]: 3 adds; 12 B read from the operand, 12 B of
  // indices, 12 B of updates, 12 B written.
  const std::vector<Aval> operands = {Aval::of({8}, DType::kFloat32), Aval::of({3, 1}, DType::kInt32),
                                      Aval::of({3}, DType::kFloat32)};
  const std::vector<Aval> results = {Aval::of({8}, DType::kFloat32)};
  const Params none;
  const CostRule* rule = find_cost_rule("scatter-add");
  REQUIRE(rule != nullptr);
  const OpCost cost = (*rule)(CostInputs{operands, results, none});
  CHECK(cost.flops == 3.0);
  CHECK(cost.operand_bytes == std::vector<double>{12.0, 12.0, 12.0});
  CHECK(cost.output_bytes == 12.0);
  CHECK(cost.bytes_accessed() == 48.0);
}
