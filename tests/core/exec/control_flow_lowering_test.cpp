// scan, while and cond under jit on a [data, model] mesh, and the dot partitioning their bodies rely on: the layouts
// the bodies give carries and ys, the collectives the partitioned bodies run, values equal to the unsharded loop,
// and no collectives for dead code.
#include <doctest/doctest.h>

#include <algorithm>

#include "device/presets.h"
#include "exec/lowering.h"
#include "exec/partition_plan.h"
#include "ops/control_flow.h"
#include "ops/structural.h"
#include "spmd/reshard.h"
#include "trace/builder.h"

using namespace shardscope;

namespace {

const JaxProfile kProfile;

Mesh data_model_mesh() {
  return make_mesh({4, 2}, {"data", "model"}, make_device_preset("cpu:8").devices, kProfile,
                   std::vector<AxisType>{AxisType::kAuto, AxisType::kAuto});
}

NamedSharding named(const Mesh& mesh, const std::string& spec) {
  return make_named_sharding(mesh, parse_partition_spec(spec), kProfile);
}

Params reduce_axes(std::vector<int64_t> axes) {
  return {{"axes", ParamValue::int_tuple(axes)}, {"out_sharding", ParamValue::None{}}};
}

Atom f32(double value) { return scalar_literal(value, DType::kFloat32); }

Array filled(const Shape& shape, const Sharding& sharding) {
  std::vector<float> values(static_cast<std::size_t>(product(shape)));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) / 16.0F;
  return Array::from_host(make_buffer(DType::kFloat32, shape, values), sharding, kProfile);
}

std::vector<std::string> kinds(const Compiled& compiled) {
  std::vector<std::string> out;
  for (const PlannedCollective& c : compiled.plan().collectives) out.push_back(collective_name(c.kind));
  std::sort(out.begin(), out.end());
  return out;
}

std::string spec_of(const Sharding& sharding) { return layout_text(dim_axes_of(std::get<NamedSharding>(sharding), 1)); }

// lax.scan(lambda c, x: (c * 0.5 + x, (c * 0.5 + x).sum()), zeros(8), xs) for xs: f32[8,8].
JaxprPtr scan_with_sum() {
  JaxprBuilder body;
  const Var c = body.arg(Aval::of({8}, DType::kFloat32));
  const Var x = body.arg(Aval::of({8}, DType::kFloat32));
  const Atom h = body.bind1("add", {body.bind1("mul", {c, f32(0.5)}), x});
  const JaxprPtr body_jaxpr = body.build({h, body.bind1("reduce_sum", {h}, reduce_axes({0}))});
  JaxprBuilder b;
  const Var xs = b.arg(Aval::of({8, 8}, DType::kFloat32));
  const Atom zeros = b.bind1("broadcast_in_dim", {f32(0.0)},
                             {{"shape", ParamValue::int_tuple({8})},
                              {"broadcast_dimensions", ParamValue::int_tuple({})},
                              {"sharding", ParamValue::None{}}});
  ScanLayout layout;
  layout.num_carry = 1;
  layout.num_xs = 1;
  layout.length = 8;
  return b.build(b.bind("scan", {zeros, xs}, scan_params(body_jaxpr, layout)));
}

// lax.while_loop(lambda c: c.sum() < 1e5, lambda c: c * 2 + 1, a) for a: f32[8,8].
JaxprPtr while_with_sum_in_cond() {
  JaxprBuilder cond;
  const Var cc = cond.arg(Aval::of({8, 8}, DType::kFloat32));
  const JaxprPtr cond_jaxpr =
      cond.build({cond.bind1("lt", {cond.bind1("reduce_sum", {cc}, reduce_axes({0, 1})), f32(1e5)})});
  JaxprBuilder body;
  const Var bc = body.arg(Aval::of({8, 8}, DType::kFloat32));
  const JaxprPtr body_jaxpr = body.build({body.bind1("add", {body.bind1("mul", {bc, f32(2.0)}), f32(1.0)})});
  JaxprBuilder b;
  const Var a = b.arg(Aval::of({8, 8}, DType::kFloat32));
  return b.build(b.bind("while", {a}, while_params(cond_jaxpr, body_jaxpr, WhileLayout{})));
}

// lax.scan(lambda c, _: (tanh(c @ w), None), init, None, length=3) for init, w: f32[8,8].
JaxprPtr scan_matmul_carry() {
  JaxprBuilder body;
  const Var w = body.arg(Aval::of({8, 8}, DType::kFloat32));
  const Var c = body.arg(Aval::of({8, 8}, DType::kFloat32));
  const Params matmul{{"dimension_numbers", dot_dimension_numbers_param({1}, {0}, {}, {})},
                      {"precision", ParamValue::None{}},
                      {"preferred_element_type", DType::kFloat32}};
  const JaxprPtr body_jaxpr =
      body.build({body.bind1("tanh", {body.bind1("dot_general", {c, w}, matmul)}, {{"accuracy", ParamValue::None{}}})});
  JaxprBuilder b;
  const Var init = b.arg(Aval::of({8, 8}, DType::kFloat32));
  const Var weights = b.arg(Aval::of({8, 8}, DType::kFloat32));
  ScanLayout layout;
  layout.num_consts = 1;
  layout.num_carry = 1;
  layout.length = 3;
  return b.build(b.bind("scan", {weights, init}, scan_params(body_jaxpr, layout)));
}

}  // namespace

TEST_CASE("a loop carry takes the sharding its body yields, as Shardy's data-flow edges give it") {
  // init on P('data', None), w on P(None, 'model'): the body's c @ w is P('data', 'model'), so the carry (and the
  // result) is too, and the body gathers c's 'model' half where it contracts it; JAX gives the same.
  const Mesh mesh = data_model_mesh();
  const JaxprPtr jaxpr = scan_matmul_carry();
  const NamedSharding rows = named(mesh, "P('data', None)");
  const NamedSharding cols = named(mesh, "P(None, 'model')");
  const Compiled compiled = Lowered(jaxpr,
                                    {{{8, 8}, DType::kFloat32, Sharding{rows}, false, std::nullopt},
                                     {{8, 8}, DType::kFloat32, Sharding{cols}, false, std::nullopt}},
                                    {}, kProfile)
                                .compile();
  CHECK(compiled.output_shardings()[0] == Sharding{named(mesh, "P('data', 'model')")});
  CHECK(kinds(compiled) == std::vector<std::string>{"all-gather"});
  const JitRun run = run_jit(*jaxpr, {filled({8, 8}, rows), filled({8, 8}, cols)}, {}, kProfile);
  CHECK(run.outputs[0].sharding() == Sharding{named(mesh, "P('data', 'model')")});
  const JitRun whole =
      run_jit(*jaxpr, {filled({8, 8}, named(mesh, "P()")), filled({8, 8}, named(mesh, "P()"))}, {}, kProfile);
  const BufferPtr got = run.outputs[0].gather();
  const BufferPtr want = whole.outputs[0].gather();
  for (int64_t i = 0; i < got->size(); ++i) CHECK(got->element_as_double(i) == want->element_as_double(i));
}

TEST_CASE("a scan carry takes the xs sharding its body adds it to, the body's sum is all-reduced inside") {
  const Mesh mesh = data_model_mesh();
  const JaxprPtr jaxpr = scan_with_sum();
  const NamedSharding in = named(mesh, "P('data', 'model')");
  const Compiled compiled =
      Lowered(jaxpr, {{{8, 8}, DType::kFloat32, Sharding{in}, false, std::nullopt}}, {}, kProfile).compile();
  REQUIRE(compiled.output_shardings().size() == 2);
  CHECK(spec_of(compiled.output_shardings()[0]) == "P('model')");
  CHECK(spec_of(compiled.output_shardings()[1]) == "P(None)");
  // xs is gathered along the scanned dim (each iteration indexes it); the carry's sum runs over 'model'.
  CHECK(kinds(compiled) == std::vector<std::string>{"all-gather", "all-reduce"});
  const JitRun run = run_jit(*jaxpr, {filled({8, 8}, in)}, {}, kProfile);
  CHECK(spec_of(run.outputs[0].sharding()) == "P('model')");
  // Values equal the unsharded loop's.
  const JitRun whole = run_jit(*jaxpr, {filled({8, 8}, named(mesh, "P()"))}, {}, kProfile);
  for (std::size_t o = 0; o < 2; ++o) {
    const BufferPtr got = run.outputs[o].gather();
    const BufferPtr want = whole.outputs[o].gather();
    for (int64_t i = 0; i < got->size(); ++i)
      CHECK(got->element_as_double(i) == doctest::Approx(want->element_as_double(i)));
  }
}

TEST_CASE("a while carry keeps its sharding, a sum over two sharded dims in cond is two all-reduces") {
  const Mesh mesh = data_model_mesh();
  const JaxprPtr jaxpr = while_with_sum_in_cond();
  const NamedSharding in = named(mesh, "P('data', 'model')");
  const Compiled compiled =
      Lowered(jaxpr, {{{8, 8}, DType::kFloat32, Sharding{in}, false, std::nullopt}}, {}, kProfile).compile();
  CHECK(compiled.output_shardings()[0] == Sharding{in});
  CHECK(kinds(compiled) == std::vector<std::string>{"all-reduce", "all-reduce"});
  const JitRun run = run_jit(*jaxpr, {filled({8, 8}, in)}, {}, kProfile);
  CHECK(run.outputs[0].sharding() == Sharding{in});
  // The predicate sees the whole sum: the loop stops after the same iteration as the unsharded one (sum 194496).
  double total = 0;
  const BufferPtr got = run.outputs[0].gather();
  for (int64_t i = 0; i < got->size(); ++i) total += got->element_as_double(i);
  CHECK(total == doctest::Approx(194496.0));
}

TEST_CASE("equations whose results nothing uses take no collectives in the compiled program") {
  const Mesh mesh = data_model_mesh();
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({8, 8}, DType::kFloat32));
  (void)b.bind1("reduce_sum", {x}, reduce_axes({0, 1}));  // dead: only its shape mattered
  const JaxprPtr jaxpr = b.build({b.bind1("mul", {x, f32(2.0)})});
  const NamedSharding in = named(mesh, "P('data', 'model')");
  const Compiled compiled =
      Lowered(jaxpr, {{{8, 8}, DType::kFloat32, Sharding{in}, false, std::nullopt}}, {}, kProfile).compile();
  CHECK(kinds(compiled).empty());
}

TEST_CASE("a dot whose contraction one operand splits keeps it split when that operand outweighs the result block") {
  // XLA's dot partitioner: x [8,16] on P('data', None), w [16,8] on P('model', None). Per 'data' group the
  // result block is 2x8 = 16 elements and w is 128, so x is sliced on K locally and the partial products are
  // all-reduced over 'model' (real JAX 0.11.2 on 8 CPU devices: one all-reduce); a small w is all-gathered.
  const Mesh mesh = data_model_mesh();
  const auto dot_program = [](int64_t m, int64_t k, int64_t n) {
    JaxprBuilder b;
    const Var x = b.arg(Aval::of({m, k}, DType::kFloat32));
    const Var w = b.arg(Aval::of({k, n}, DType::kFloat32));
    const Params matmul{{"dimension_numbers", dot_dimension_numbers_param({1}, {0}, {}, {})},
                        {"precision", ParamValue::None{}},
                        {"preferred_element_type", DType::kFloat32}};
    return b.build({b.bind1("dot_general", {x, w}, matmul)});
  };
  const NamedSharding rows = named(mesh, "P('data', None)");
  const NamedSharding split_k = named(mesh, "P('model', None)");
  const auto compile = [&](const JaxprPtr& jaxpr, const Shape& x, const Shape& w) {
    return Lowered(jaxpr,
                   {{x, DType::kFloat32, Sharding{rows}, false, std::nullopt},
                    {w, DType::kFloat32, Sharding{split_k}, false, std::nullopt}},
                   {}, kProfile)
        .compile();
  };
  const JaxprPtr wide = dot_program(8, 16, 8);
  const Compiled kept = compile(wide, {8, 16}, {16, 8});
  CHECK(kinds(kept) == std::vector<std::string>{"all-reduce"});
  CHECK(kept.output_shardings()[0] == Sharding{rows});
  const JitRun run = run_jit(*wide, {filled({8, 16}, rows), filled({16, 8}, split_k)}, {}, kProfile);
  const JitRun whole =
      run_jit(*wide, {filled({8, 16}, named(mesh, "P()")), filled({16, 8}, named(mesh, "P()"))}, {}, kProfile);
  const BufferPtr got = run.outputs[0].gather();
  const BufferPtr want = whole.outputs[0].gather();
  for (int64_t i = 0; i < got->size(); ++i)
    CHECK(got->element_as_double(i) == doctest::Approx(want->element_as_double(i)));
  // x [64,8] @ w [8,8]: the result block (16x8 = 128) outweighs w (64), so w is gathered instead.
  CHECK(kinds(compile(dot_program(64, 8, 8), {64, 8}, {8, 8})) == std::vector<std::string>{"all-gather"});
}
