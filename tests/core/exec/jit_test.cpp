// jit in Auto mode: the recorded output shardings of JAX's docs and the seeds, the collectives the
// partitioner inserts, and values equal to the single-device reference.
#include "exec/jit.h"

#include <doctest/doctest.h>

#include <cmath>
#include <numeric>

#include "device/presets.h"
#include "exec/interpreter.h"
#include "ops/structural.h"
#include "trace/builder.h"

using namespace shardscope;

namespace {

const JaxProfile kProfile;

Mesh tpu_mesh(std::vector<int64_t> shape, std::vector<std::string> names, const std::string& preset = "tpu-v3-8") {
  return make_mesh(shape, names, make_device_preset(preset).devices, kProfile,
                   std::vector<AxisType>(shape.size(), AxisType::kAuto));
}

BufferPtr iota_f32(const Shape& shape, float scale = 1.0F) {
  std::vector<float> values(static_cast<std::size_t>(product(shape)));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = scale * static_cast<float>(i % 97) - 3.0F;
  return make_buffer(DType::kFloat32, shape, values);
}

Array placed(const BufferPtr& value, const Mesh& mesh, const std::string& spec) {
  return Array::from_host(value, make_named_sharding(mesh, parse_partition_spec(spec), kProfile), kProfile);
}

Array uncommitted(const BufferPtr& value, const Mesh& mesh) {
  return Array::from_host(value, make_single_device_sharding(mesh.devices().front(), kProfile), kProfile);
}

std::string spec_of(const Array& array) { return std::get<NamedSharding>(array.sharding()).spec.repr(kProfile); }

// The sharded run must equal the single-device reference.
void check_matches_reference(const Jaxpr& jaxpr, const std::vector<Array>& args, const JitRun& run) {
  std::vector<BufferPtr> inputs;
  for (const Array& a : args) inputs.push_back(a.gather());
  const std::vector<BufferPtr> expected = evaluate_jaxpr(jaxpr, inputs);
  REQUIRE(expected.size() == run.outputs.size());
  for (std::size_t o = 0; o < expected.size(); ++o) {
    const BufferPtr actual = run.outputs[o].gather();
    REQUIRE(actual->size() == expected[o]->size());
    for (int64_t i = 0; i < actual->size(); ++i) {
      CHECK(actual->element_as_double(i) == doctest::Approx(expected[o]->element_as_double(i)).epsilon(1e-5));
    }
  }
}

Params reduce_axes(std::vector<int64_t> axes) {
  return {{"axes", ParamValue::int_tuple(axes)}, {"out_sharding", ParamValue::None{}}};
}

Params matmul_numbers() {
  return {{"dimension_numbers", ParamValue::tuple({ParamValue::tuple({ParamValue::list({1}), ParamValue::list({0})}),
                                                   ParamValue::tuple({ParamValue::list({}), ParamValue::list({})})})},
          {"precision", ParamValue::None{}},
          {"preferred_element_type", DType::kFloat32}};
}

}  // namespace

TEST_CASE("f_elementwise keeps the input's sharding object and moves nothing") {
  const Mesh mesh = tpu_mesh({2, 4}, {"x", "y"});
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({4, 8}, DType::kFloat32));
  const Atom s = b.bind1("sin", {x});
  const Atom twice = b.bind1("mul", {scalar_literal(2.0, DType::kFloat32), s});
  const Atom out = b.bind1("add", {twice, scalar_literal(1.0, DType::kFloat32)});
  const JaxprPtr jaxpr = b.build({out});
  const Array arr = placed(iota_f32({4, 8}), mesh, "P('x', 'y')");
  const JitRun run = run_jit(*jaxpr, {arr}, {}, kProfile);
  CHECK(run.outputs[0].sharding() == arr.sharding());
  CHECK(run.log.empty());
  check_matches_reference(*jaxpr, {arr}, run);
}

TEST_CASE("f_contract: x.sum(0) of P('x','y') is P('y',) after an all-reduce over x") {
  const Mesh mesh = tpu_mesh({2, 4}, {"x", "y"});  // [[0,1,2,3],[6,7,4,5]]
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({4, 8}, DType::kFloat32));
  const JaxprPtr jaxpr = b.build({b.bind1("reduce_sum", {x}, reduce_axes({0}))});
  std::vector<float> values(32);
  std::iota(values.begin(), values.end(), 0.0F);
  const Array arr = placed(make_buffer(DType::kFloat32, {4, 8}, values), mesh, "P('x', 'y')");
  const JitRun run = run_jit(*jaxpr, {arr}, {}, kProfile);
  CHECK(spec_of(run.outputs[0]) == "P('y',)");
  REQUIRE(run.log.records().size() == 1);
  CHECK(run.log.records()[0].kind == CollectiveKind::kAllReduce);
  CHECK(run.log.records()[0].axes == std::vector<std::string>{"x"});
  CHECK(run.log.records()[0].groups == std::vector<std::vector<int64_t>>{{0, 6}, {1, 7}, {2, 4}, {3, 5}});
  const BufferPtr result = run.outputs[0].gather();
  for (int64_t i = 0; i < 8; ++i) CHECK(result->element_as_double(i) == 48 + 4 * i);
}

TEST_CASE("dot of P('a',None) and P(None,'b') is P('a','b') with no communication") {
  const Mesh mesh = tpu_mesh({4, 2}, {"a", "b"});
  JaxprBuilder b;
  const Var y = b.arg(Aval::of({16, 16}, DType::kFloat32));
  const Var z = b.arg(Aval::of({16, 16}, DType::kFloat32));
  const JaxprPtr jaxpr = b.build({b.bind1("dot_general", {y, z}, matmul_numbers())});
  const std::vector<Array> args = {placed(iota_f32({16, 16}), mesh, "P('a', None)"),
                                   placed(iota_f32({16, 16}, 0.5F), mesh, "P(None, 'b')")};
  const JitRun run = run_jit(*jaxpr, args, {}, kProfile);
  CHECK(spec_of(run.outputs[0]) == "P('a', 'b')");
  CHECK(run.log.empty());
  check_matches_reference(*jaxpr, args, run);
}

TEST_CASE("a contracting dim's axis does not block the result dim that wants the same axis (per-tensor conflicts)") {
  // x: P('a','b') contracts its 'b'-sharded dim with w's unsharded one, while w's kept dim is 'b'-sharded. The
  // result carries no contracting dim, so it takes 'b' on its second dim; x's contracting dim is gathered.
  const Mesh mesh = tpu_mesh({4, 2}, {"a", "b"});
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({8, 8}, DType::kFloat32));
  const Var w = b.arg(Aval::of({8, 8}, DType::kFloat32));
  const JaxprPtr jaxpr = b.build({b.bind1("dot_general", {x, w}, matmul_numbers())});
  const std::vector<Array> args = {placed(iota_f32({8, 8}), mesh, "P('a', 'b')"),
                                   placed(iota_f32({8, 8}, 0.5F), mesh, "P(None, 'b')")};
  const JitRun run = run_jit(*jaxpr, args, {}, kProfile);
  CHECK(spec_of(run.outputs[0]) == "P('a', 'b')");
  REQUIRE(run.log.records().size() == 1);
  CHECK(run.log.records()[0].kind == CollectiveKind::kAllGather);
  check_matches_reference(*jaxpr, args, run);
}

TEST_CASE("a concatenation takes the sharding of the dims it keeps before that of the dim it joins") {
  // a: P('a', None), b: P(None, 'a'), joined on dim 0: the pass-through dim 1 claims 'a' first, as Shardy's
  // pass-through-factors priority does, so the result is P(None, 'a').
  const Mesh mesh = tpu_mesh({4, 2}, {"a", "b"});
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({8, 8}, DType::kFloat32));
  const Var y = b.arg(Aval::of({8, 8}, DType::kFloat32));
  const JaxprPtr jaxpr = b.build({b.bind1("concatenate", {x, y}, {{"dimension", int64_t{0}}})});
  const std::vector<Array> args = {placed(iota_f32({8, 8}), mesh, "P('a', None)"),
                                   placed(iota_f32({8, 8}, 0.5F), mesh, "P(None, 'a')")};
  const JitRun run = run_jit(*jaxpr, args, {}, kProfile);
  CHECK(spec_of(run.outputs[0]) == "P(None, 'a')");
  check_matches_reference(*jaxpr, args, run);
}

TEST_CASE(
    "stack keeps the operands' sharding on their dims and leaves the new dim whole, and unstack gathers its axis") {
  // JAX 0.11.2 (probes_strategies): jnp.stack([a, a]) of P('data', 'model') is P(None, 'data', 'model'), no
  // collectives.
  const Mesh mesh = tpu_mesh({4, 2}, {"a", "b"});
  {
    JaxprBuilder b;
    const Var x = b.arg(Aval::of({8, 8}, DType::kFloat32));
    const Var y = b.arg(Aval::of({8, 8}, DType::kFloat32));
    const JaxprPtr jaxpr = b.build({b.bind1("stack", {x, y}, {{"axis", int64_t{0}}})});
    const std::vector<Array> args = {placed(iota_f32({8, 8}), mesh, "P('a', 'b')"),
                                     placed(iota_f32({8, 8}, 0.5F), mesh, "P('a', 'b')")};
    const JitRun run = run_jit(*jaxpr, args, {}, kProfile);
    CHECK(spec_of(run.outputs[0]) == "P(None, 'a', 'b')");
    CHECK(run.log.empty());
    check_matches_reference(*jaxpr, args, run);
  }
  {
    // The unstacked dim is gathered; the other dim keeps its axis in every result.
    JaxprBuilder b;
    const Var x = b.arg(Aval::of({8, 4}, DType::kFloat32));
    const JaxprPtr jaxpr = b.build(b.bind("unstack", {x}, {{"axis", int64_t{1}}}));
    const std::vector<Array> args = {placed(iota_f32({8, 4}), mesh, "P('a', 'b')")};
    const JitRun run = run_jit(*jaxpr, args, {}, kProfile);
    REQUIRE(run.outputs.size() == 4);
    for (const Array& out : run.outputs) CHECK(spec_of(out) == "P('a',)");
    check_matches_reference(*jaxpr, args, run);
  }
  {
    // A result pinned with an axis on the new dim: the stack still runs with that dim whole (each device holds every
    // operand's block), and the constraint then cuts it.
    JaxprBuilder b;
    const Var x = b.arg(Aval::of({8, 8}, DType::kFloat32));
    const Var y = b.arg(Aval::of({8, 8}, DType::kFloat32));
    const Atom stacked = b.bind1("stack", {x, y}, {{"axis", int64_t{0}}});
    const JaxprPtr jaxpr =
        b.build({b.bind1("sharding_constraint", {stacked},
                         {{"sharding", make_named_sharding(mesh, parse_partition_spec("P('b', 'a')"), kProfile)}})});
    const std::vector<Array> args = {placed(iota_f32({8, 8}), mesh, "P('a', None)"),
                                     placed(iota_f32({8, 8}, 0.5F), mesh, "P('a', None)")};
    const JitRun run = run_jit(*jaxpr, args, {}, kProfile);
    CHECK(spec_of(run.outputs[0]) == "P('b', 'a')");
    check_matches_reference(*jaxpr, args, run);
  }
}

TEST_CASE("a sharded dot whose contraction stays local holds exactly the unsharded product's values") {
  // Irregular values, so that rounding differs wherever the summation does: BLAS sums a small block's
  // elements differently from the same elements inside a bigger product.
  const auto noise = [](const Shape& shape, uint32_t seed) {
    std::vector<float> values(static_cast<std::size_t>(shape[0] * shape[1]));
    uint32_t state = seed;
    for (float& v : values) {
      state = state * 1664525U + 1013904223U;
      v = static_cast<float>(static_cast<int32_t>(state >> 8) % 20011) / 977.0F - 10.0F;
    }
    return make_buffer(DType::kFloat32, shape, values);
  };
  const Mesh mesh = tpu_mesh({4, 2}, {"a", "b"});
  for (const auto& [lhs_spec, rhs_spec] :
       std::vector<std::pair<std::string, std::string>>{{"P('a', None)", "P(None, 'b')"},
                                                        {"P('a', None)", "P()"},
                                                        {"P(('a', 'b'), None)", "P()"},
                                                        {"P()", "P(None, ('b', 'a'))"}}) {
    CAPTURE(lhs_spec);
    CAPTURE(rhs_spec);
    JaxprBuilder b;
    const Var y = b.arg(Aval::of({64, 96}, DType::kFloat32));
    const Var z = b.arg(Aval::of({96, 80}, DType::kFloat32));
    const JaxprPtr jaxpr = b.build({b.bind1("dot_general", {y, z}, matmul_numbers())});
    const BufferPtr lhs = noise({64, 96}, 7);
    const BufferPtr rhs = noise({96, 80}, 11);
    const JitRun run = run_jit(*jaxpr, {placed(lhs, mesh, lhs_spec), placed(rhs, mesh, rhs_spec)}, {}, kProfile);
    CHECK(run.log.empty());
    const BufferPtr expected = evaluate_jaxpr(*jaxpr, {lhs, rhs}).at(0);
    const BufferPtr actual = run.outputs[0].gather();
    int64_t differing = 0;
    for (int64_t i = 0; i < actual->size(); ++i)
      differing += actual->element_as_double(i) != expected->element_as_double(i);
    CHECK(differing == 0);
  }
}

TEST_CASE("a contraction sharded on both operands all-reduces (multi_process.md matmul)") {
  const Mesh mesh = tpu_mesh({8, 2}, {"a", "b"}, "tpu-v5e-16");
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({32, 16}, DType::kFloat32));
  const Var y = b.arg(Aval::of({16, 32}, DType::kFloat32));
  const Atom product_ = b.bind1("dot_general", {x, y}, matmul_numbers());
  const JaxprPtr jaxpr = b.build({b.bind1("max", {product_, scalar_literal(0.0, DType::kFloat32)})});
  const std::vector<Array> args = {placed(iota_f32({32, 16}), mesh, "P('a', 'b')"),
                                   placed(iota_f32({16, 32}, 0.25F), mesh, "P('b', None)")};
  const JitRun run = run_jit(*jaxpr, args, {}, kProfile);
  CHECK(spec_of(run.outputs[0]) == "P('a',)");
  REQUIRE(run.log.records().size() == 1);
  CHECK(run.log.records()[0].kind == CollectiveKind::kAllReduce);
  CHECK(run.log.records()[0].axes == std::vector<std::string>{"b"});
  CHECK(run.log.records()[0].groups.front() == std::vector<int64_t>{0, 1});
  check_matches_reference(*jaxpr, args, run);
}

TEST_CASE("with_sharding_constraint pins values: P() all-gathers, P('y','x') reshards") {
  const Mesh mesh = tpu_mesh({4, 2}, {"x", "y"});
  for (const std::string target : {"P()", "P('y', 'x')"}) {
    CAPTURE(target);
    JaxprBuilder b;
    const Var x = b.arg(Aval::of({8, 8}, DType::kFloat32));
    const Atom plus = b.bind1("add", {x, scalar_literal(1.0, DType::kFloat32)});
    const JaxprPtr jaxpr =
        b.build({b.bind1("sharding_constraint", {plus},
                         {{"sharding", make_named_sharding(mesh, parse_partition_spec(target), kProfile)}})});
    const std::vector<Array> args = {placed(iota_f32({8, 8}), mesh, "P('x', 'y')")};
    const JitRun run = run_jit(*jaxpr, args, {}, kProfile);
    CHECK(spec_of(run.outputs[0]) == (target == "P()" ? "P()" : "P('y', 'x')"));
    CHECK_FALSE(run.log.empty());
    if (target == "P()") CHECK(run.log.count(CollectiveKind::kAllGather) == run.log.records().size());
    check_matches_reference(*jaxpr, args, run);
  }
}

TEST_CASE("device_put inside a program pins its layout and a pinned_host target keeps the result in host memory") {
  const Mesh mesh = tpu_mesh({4, 2}, {"x", "y"});
  for (const std::string memory : {"device", "pinned_host"}) {
    CAPTURE(memory);
    JaxprBuilder b;
    const Var x = b.arg(Aval::of({8, 8}, DType::kFloat32));
    const Atom plus = b.bind1("add", {x, scalar_literal(1.0, DType::kFloat32)});
    const NamedSharding target = make_named_sharding(mesh, parse_partition_spec("P('y', 'x')"), kProfile, memory);
    const std::vector<Atom> put =
        b.bind("device_put", {plus},
               {{"copy_semantics", ParamValue::tuple({ParamValue::Verbatim{"<CopySemantics.ALIAS: 1>"}})},
                {"devices", ParamValue::tuple({target})},
                {"srcs", ParamValue::tuple({ParamValue::None{}})}});
    CHECK((atom_aval(put[0]).memory == MemorySpace::kHost) == (memory == "pinned_host"));
    const JaxprPtr jaxpr = b.build(put);
    const std::vector<Array> args = {placed(iota_f32({8, 8}), mesh, "P('x', 'y')")};
    const JitRun run = run_jit(*jaxpr, args, {}, kProfile);
    CHECK(spec_of(run.outputs[0]) == "P('y', 'x')");
    const auto& named = std::get<NamedSharding>(run.outputs[0].sharding());
    CHECK(named.memory_kind == std::optional<std::string>(memory));
    CHECK_FALSE(run.log.empty());
    check_matches_reference(*jaxpr, args, run);
  }
}

TEST_CASE("seed 000 layer: sigmoid(x @ w + b) with x and w sharded on the contraction") {
  const Mesh mesh = tpu_mesh({8}, {"x"});
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({32}, DType::kFloat32));
  const Var w = b.arg(Aval::of({32, 4}, DType::kFloat32));
  const Var bias = b.arg(Aval::of({4}, DType::kFloat32));
  const Atom xw = b.bind1(
      "dot_general", {x, w},
      {{"dimension_numbers", ParamValue::tuple({ParamValue::tuple({ParamValue::list({0}), ParamValue::list({0})}),
                                                ParamValue::tuple({ParamValue::list({}), ParamValue::list({})})})},
       {"precision", ParamValue::None{}},
       {"preferred_element_type", DType::kFloat32}});
  const JaxprPtr jaxpr = b.build({b.bind1("logistic", {b.bind1("add", {xw, bias})})});
  const std::vector<Array> args = {placed(iota_f32({32}, 0.01F), mesh, "P('x')"),
                                   placed(iota_f32({32, 4}, 0.02F), mesh, "P('x')"),
                                   uncommitted(iota_f32({4}, 0.1F), mesh)};
  const JitRun run = run_jit(*jaxpr, args, {}, kProfile);
  CHECK(spec_of(run.outputs[0]) == "P()");
  CHECK(run.log.count(CollectiveKind::kAllReduce) == 1);
  check_matches_reference(*jaxpr, args, run);
}

TEST_CASE("out_shardings pin the output, memory kind included") {
  const Mesh mesh = tpu_mesh({2, 4}, {"x", "y"});
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({4, 8}, DType::kFloat32));
  const JaxprPtr jaxpr = b.build({x});
  const Array arr = placed(iota_f32({4, 8}), mesh, "P('x', 'y')");
  JitOptions options;
  options.out_shardings = {make_named_sharding(mesh, parse_partition_spec("P('x', 'y')"), kProfile, "pinned_host")};
  const JitRun run = run_jit(*jaxpr, {arr}, options, kProfile);
  CHECK(std::get<NamedSharding>(run.outputs[0].sharding()).memory_kind == "pinned_host");
  check_matches_reference(*jaxpr, {arr}, run);
}

TEST_CASE("programs with only single-device inputs run on that device") {
  const Mesh mesh = tpu_mesh({8}, {"x"});
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({8}, DType::kFloat32));
  const JaxprPtr jaxpr = b.build({b.bind1("sin", {x})});
  const JitRun run = run_jit(*jaxpr, {uncommitted(iota_f32({8}), mesh)}, {}, kProfile);
  CHECK(std::holds_alternative<SingleDeviceSharding>(run.outputs[0].sharding()));
  CHECK_FALSE(run.mesh.has_value());
}

namespace {

JaxprPtr reshape_program(const Shape& in, const Shape& out) {
  JaxprBuilder b;
  const Var x = b.arg(Aval::of(in, DType::kFloat32));
  return b.build({b.bind1("reshape", {x},
                          {{"new_sizes", ParamValue::int_tuple(out)},
                           {"dimensions", ParamValue::None{}},
                           {"sharding", ParamValue::None{}}})});
}

}  // namespace

TEST_CASE("a reshape whose split or merged dim is sharded on a minor factor alone computes it whole") {
  // Found by the differential program fuzzer: the kernel got the operand whole but the local shape of a
  // result sharded on the minor factor ("reshape total size must be unchanged, got new_sizes (2, 1)").
  const Mesh mesh = tpu_mesh({4}, {"x"});
  const NamedSharding minor = make_named_sharding(mesh, parse_partition_spec("P(None, 'x')"), kProfile);
  const JaxprPtr split = reshape_program({8}, {2, 4});
  const std::vector<Array> args = {placed(iota_f32({8}), mesh, "P()")};
  JitOptions options;
  options.out_shardings = {minor};
  const JitRun run = run_jit(*split, args, options, kProfile);
  CHECK(spec_of(run.outputs[0]) == "P(None, 'x')");
  check_matches_reference(*split, args, run);
  // The sharded dim of 8 split 4 ways becomes (2, 4): no axis fits the major factor of 2 whole.
  const JaxprPtr split_sharded = reshape_program({2, 4, 8}, {2, 4, 2, 4});
  const std::vector<Array> sharded = {placed(iota_f32({2, 4, 8}), mesh, "P(None, None, 'x')")};
  check_matches_reference(*split_sharded, sharded, run_jit(*split_sharded, sharded, {}, kProfile));
  // A merge whose minor dim alone is sharded.
  const JaxprPtr merge = reshape_program({2, 4}, {8});
  const std::vector<Array> minor_sharded = {placed(iota_f32({2, 4}), mesh, "P(None, 'x')")};
  check_matches_reference(*merge, minor_sharded, run_jit(*merge, minor_sharded, {}, kProfile));
}

TEST_CASE("an axis that splits a reduced dim and is wanted on a kept dim reduces, then cuts the result") {
  // Found by the differential program fuzzer: the plan asked the operand for the axis on both dims, and the
  // all-reduce then summed blocks of different rows.
  const Mesh mesh = tpu_mesh({2}, {"x"});
  JitOptions options;
  options.out_shardings = {make_named_sharding(mesh, parse_partition_spec("P('x')"), kProfile)};
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({8, 2}, DType::kFloat32));
  const JaxprPtr sum = b.build({b.bind1("reduce_sum", {x}, reduce_axes({1}))});
  const std::vector<Array> args = {placed(iota_f32({8, 2}), mesh, "P(None, 'x')")};
  const JitRun run = run_jit(*sum, args, options, kProfile);
  CHECK(spec_of(run.outputs[0]) == "P('x',)");
  check_matches_reference(*sum, args, run);
  // The same for a contraction: a vector-matrix product over the sharded dim.
  JaxprBuilder d;
  const Var v = d.arg(Aval::of({4}, DType::kFloat32));
  const Var m = d.arg(Aval::of({4, 4}, DType::kFloat32));
  const JaxprPtr dot = d.build({d.bind1("dot_general", {v, m},
                                        {{"dimension_numbers", dot_dimension_numbers_param({0}, {0}, {}, {})},
                                         {"precision", ParamValue::None{}},
                                         {"preferred_element_type", ParamValue::None{}}})});
  const std::vector<Array> operands = {placed(iota_f32({4}), mesh, "P('x')"), placed(iota_f32({4, 4}), mesh, "P('x')")};
  const JitRun product = run_jit(*dot, operands, options, kProfile);
  check_matches_reference(*dot, operands, product);
}
