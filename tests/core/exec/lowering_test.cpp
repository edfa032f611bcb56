// lower()/compile(): HloSharding strings in XLA's documented format, the same shardings and collectives
// as an actual run_jit, hand-counted cost and memory analyses, and JAX's argument errors.
#include "exec/lowering.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "base/error.h"
#include "cost/compiled_cost.h"
#include "device/presets.h"
#include "exec/jit.h"
#include "trace/builder.h"

using namespace shardscope;

namespace {

const JaxProfile kProfile;

Mesh mesh_of(const std::string& preset, std::vector<int64_t> shape, std::vector<std::string> names) {
  return make_mesh(shape, names, make_device_preset(preset).devices, kProfile,
                   std::vector<AxisType>(shape.size(), AxisType::kAuto));
}

NamedSharding named(const Mesh& mesh, const std::string& spec) {
  return make_named_sharding(mesh, parse_partition_spec(spec), kProfile);
}

ShapeDtypeStruct sds(Shape shape, std::optional<Sharding> sharding = std::nullopt) {
  return {std::move(shape), DType::kFloat32, std::move(sharding), false, std::nullopt};
}

Params reduce_axes(std::vector<int64_t> axes) {
  return {{"axes", ParamValue::int_tuple(axes)}, {"out_sharding", ParamValue::None{}}};
}

Array filled(const Shape& shape, const Sharding& sharding) {
  std::vector<float> values(static_cast<std::size_t>(product(shape)));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 13);
  return Array::from_host(make_buffer(DType::kFloat32, shape, values), sharding, kProfile);
}

// x.sum(0) for x: f32[4,8].
JaxprPtr sum0_program() {
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({4, 8}, DType::kFloat32));
  return b.build({b.bind1("reduce_sum", {x}, reduce_axes({0}))});
}

}  // namespace

TEST_CASE("HloSharding text lists tile dims then mesh positions, replication last") {
  const Mesh mesh = mesh_of("cpu:8", {2, 4}, {"x", "y"});
  CHECK(hlo_sharding_text(mesh, {{"x"}, {"y"}}) == "{devices=[2,4]0,1,2,3,4,5,6,7}");
  CHECK(hlo_sharding_text(mesh, {{"y"}, {"x"}}) == "{devices=[4,2]0,4,1,5,2,6,3,7}");
  CHECK(hlo_sharding_text(mesh, {{"x"}, {}}) == "{devices=[2,1,4]0,1,2,3,4,5,6,7 last_tile_dim_replicate}");
  CHECK(hlo_sharding_text(mesh, {{}, {"y"}}) == "{devices=[1,4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}");
  CHECK(hlo_sharding_text(mesh, {{"x", "y"}, {}}) == "{devices=[8,1]0,1,2,3,4,5,6,7}");
  CHECK(hlo_sharding_text(mesh, {{"y", "x"}}) == "{devices=[8]0,4,1,5,2,6,3,7}");
  CHECK(hlo_sharding_text(mesh, {{}, {}}) == "{replicated}");
  CHECK(hlo_sharding_text(mesh, {}) == "{replicated}");
  // Numbers are positions in the mesh's device list, not device ids (TPU v3 meshes permute ids).
  const Mesh tpu = mesh_of("tpu-v3-8", {2, 4}, {"x", "y"});
  CHECK(tpu.devices()[4].id != 4);
  CHECK(hlo_sharding_text(tpu, {{"x"}, {"y"}}) == "{devices=[2,4]0,1,2,3,4,5,6,7}");
}

TEST_CASE("lower().as_text() is marked as shardscope's and annotates every value's sharding") {
  const Mesh mesh = mesh_of("cpu:8", {2, 4}, {"x", "y"});
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({8, 4}, DType::kFloat32));
  const Atom s = b.bind1("sin", {x}, {{"accuracy", ParamValue::None{}}});
  const JaxprPtr jaxpr = b.build({s});
  const Lowered lowered(jaxpr, {sds({8, 4}, named(mesh, "P('x', 'y')"))}, {}, kProfile);
  const std::string text = lowered.as_text();
  CAPTURE(text);
  CHECK(text.rfind("# shardscope lowering", 0) == 0);
  CHECK(text.find("module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32}") !=
        std::string::npos);
  CHECK(text.find("%arg0: tensor<8x4xf32> {mhlo.sharding = \"{devices=[2,4]0,1,2,3,4,5,6,7}\"}") != std::string::npos);
  CHECK(text.find("-> (tensor<8x4xf32> {jax.result_info = \"result\", mhlo.sharding = "
                  "\"{devices=[2,4]0,1,2,3,4,5,6,7}\"})") != std::string::npos);
  CHECK(text.find("\"sin\"(%arg0)") != std::string::npos);
  CHECK(text.find("return %0 : tensor<8x4xf32>") != std::string::npos);
}

TEST_CASE("compile() reports the shardings and collectives an actual jit run produces") {
  const Mesh mesh = mesh_of("tpu-v3-8", {2, 4}, {"x", "y"});
  struct Case {
    std::string spec;
    std::vector<int64_t> axes;
  };
  for (const Case& c : std::vector<Case>{
           {"P('x', 'y')", {0}}, {"P('x', 'y')", {1}}, {"P('y', 'x')", {0, 1}}, {"P(None, 'x')", {0}}, {"P()", {1}}}) {
    CAPTURE(c.spec);
    JaxprBuilder b;
    const Var x = b.arg(Aval::of({4, 8}, DType::kFloat32));
    const Atom s = b.bind1("sin", {x}, {{"accuracy", ParamValue::None{}}});
    const JaxprPtr jaxpr = b.build({s, b.bind1("reduce_sum", {s}, reduce_axes(c.axes))});
    const NamedSharding in = named(mesh, c.spec);
    const Compiled compiled = Lowered(jaxpr, {sds({4, 8}, in)}, {}, kProfile).compile();
    const JitRun run = run_jit(*jaxpr, {filled({4, 8}, in)}, {}, kProfile);
    REQUIRE(compiled.input_shardings().size() == 1);
    CHECK(compiled.input_shardings()[0] == Sharding{in});
    REQUIRE(compiled.output_shardings().size() == run.outputs.size());
    for (std::size_t o = 0; o < run.outputs.size(); ++o)
      CHECK(compiled.output_shardings()[o] == run.outputs[o].sharding());
    const CommLog planned = compiled.plan().comm_log();
    REQUIRE(planned.records().size() == run.log.records().size());
    for (std::size_t r = 0; r < planned.records().size(); ++r) {
      CHECK(planned.records()[r].kind == run.log.records()[r].kind);
      CHECK(planned.records()[r].axes == run.log.records()[r].axes);
      CHECK(planned.records()[r].groups == run.log.records()[r].groups);
      CHECK(planned.records()[r].bytes_sent == run.log.records()[r].bytes_sent);
    }
  }
}

TEST_CASE("a sharding constraint that replicates all-gathers in the compiled text") {
  const Mesh mesh = mesh_of("cpu:8", {2, 4}, {"x", "y"});
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({8, 4}, DType::kFloat32));
  const Atom c = b.bind1("sharding_constraint", {x},
                         {{"sharding", named(mesh, "P()")},
                          {"layout", ParamValue::None{}},
                          {"context_mesh", mesh},
                          {"unconstrained_dims", ParamValue::FrozenSet{}}});
  const JaxprPtr jaxpr = b.build({c});
  const NamedSharding in = named(mesh, "P('x',)");
  const Compiled compiled = Lowered(jaxpr, {sds({8, 4}, in)}, {}, kProfile).compile();
  const std::string text = compiled.as_text();
  CAPTURE(text);
  CHECK(text.rfind("# shardscope compiled program", 0) == 0);
  CHECK(text.find("all-gather") != std::string::npos);
  CHECK(text.find("replica_groups={{0,4},{1,5},{2,6},{3,7}}") != std::string::npos);
  CHECK(text.find("collective-permute") == std::string::npos);
  CHECK(text.find("f32[4,4] parameter(0)") != std::string::npos);
  // The gathered value feeds the constraint.
  CHECK(text.find("%all-gather.0 = f32[8,4] all-gather(%p0)") != std::string::npos);
  CHECK(text.find("sharding_constraint(%all-gather.0)") != std::string::npos);
}

TEST_CASE("cost_analysis sums per-device equation costs and the all-reduce") {
  // x.sum(0) on P('x','y') over 2x4: each device reduces (2,2) -> (2,): 2 adds, 16+8 bytes; the all-reduce
  // over x of f32[2]: 2 flops, 8+8 bytes.
  const Mesh mesh = mesh_of("tpu-v3-8", {2, 4}, {"x", "y"});
  const Compiled compiled = Lowered(sum0_program(), {sds({4, 8}, named(mesh, "P('x', 'y')"))}, {}, kProfile).compile();
  const CostAnalysis cost = compiled_cost_analysis(compiled);
  CHECK(cost.at("flops") == 4.0);
  CHECK(cost.count("transcendentals") == 0);  // XLA leaves out the properties nothing set
  CHECK(cost.at("bytes accessed") == 40.0);
  CHECK(cost.at("bytes accessedout{}") == 16.0);
  CHECK(cost.at("bytes accessed0{}") == 24.0);
  // The reduced value is what the program returns.
  CHECK(compiled.as_text().find("tuple(%all-reduce.1)") != std::string::npos);
  const ProgramCostReport report = compiled_cost_report(compiled);
  REQUIRE(report.collectives.size() == 1);
  CHECK(report.collectives[0].kind == CollectiveKind::kAllReduce);
  CHECK(report.collectives[0].max_bytes_sent == 8);
}

TEST_CASE("memory_analysis counts per-device arguments, outputs and the peak of live temporaries") {
  // x: f32[8,4] on P('x','y') is (4,1) = 16 B per device; sin and mul fuse into the reduction, so the only
  // temporary is its partial sum (4 B) on its way into the all-reduce; the scalar output is 4 B.
  const Mesh mesh = mesh_of("cpu:8", {2, 4}, {"x", "y"});
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({8, 4}, DType::kFloat32));
  const Atom s = b.bind1("sin", {x}, {{"accuracy", ParamValue::None{}}});
  const Atom m = b.bind1("mul", {s, s});
  const JaxprPtr jaxpr = b.build({b.bind1("reduce_sum", {m}, reduce_axes({0, 1}))});
  const Compiled compiled = Lowered(jaxpr, {sds({8, 4}, named(mesh, "P('x', 'y')"))}, {}, kProfile).compile();
  const MemoryAnalysis memory = compiled.memory_analysis();
  CHECK(memory.argument_size_in_bytes == 16);
  CHECK(memory.output_size_in_bytes == 4);
  CHECK(memory.temp_size_in_bytes == 4);
  CHECK(memory.alias_size_in_bytes == 0);
}

TEST_CASE("wrong argument counts and types raise JAX's errors") {
  const Mesh mesh = mesh_of("cpu:8", {2, 4}, {"x", "y"});
  CHECK_THROWS_AS((void)Lowered(sum0_program(), {}, {}, kProfile), Error);
  const Compiled compiled = Lowered(sum0_program(), {sds({4, 8}, named(mesh, "P('x', 'y')"))}, {}, kProfile).compile();
  try {
    compiled.check_call_args({Aval::of({4, 8}, DType::kFloat32), Aval::of({4, 8}, DType::kFloat32)});
    FAIL("expected a TypeError");
  } catch (const Error& e) {
    CHECK(e.python_type() == "TypeError");
    CHECK(std::string(e.what()) == "Computation compiled for 1 inputs but called with 2");
  }
  try {
    compiled.check_call_args({Aval::of({4, 4}, DType::kInt32)});
    FAIL("expected a TypeError");
  } catch (const Error& e) {
    CHECK(e.python_type() == "TypeError");
    CHECK(std::string(e.what()) ==
          "Argument types differ from the types for which this computation was compiled. Perhaps you are calling "
          "the compiled executable with a different enable_x64 mode than when it was AOT compiled? The mismatches "
          "are:\nArgument 'args[0]' compiled with float32[4,8] and called with int32[4,4]");
  }
  CHECK_NOTHROW(compiled.check_call_args({Aval::of({4, 8}, DType::kFloat32)}));
}

TEST_CASE("calling the compiled program gives the jit result") {
  const Mesh mesh = mesh_of("cpu:8", {2, 4}, {"x", "y"});
  const NamedSharding in = named(mesh, "P('x', 'y')");
  const Compiled compiled = Lowered(sum0_program(), {sds({4, 8}, in)}, {}, kProfile).compile();
  const JitRun run = compiled.call({filled({4, 8}, in)});
  const BufferPtr result = run.outputs.at(0).gather();
  // Column sums of (i % 13) over a 4x8 row-major array.
  for (int64_t j = 0; j < 8; ++j) {
    double expected = 0;
    for (int64_t i = 0; i < 4; ++i) expected += static_cast<double>((i * 8 + j) % 13);
    CHECK(result->element_as_double(j) == expected);
  }
  CHECK(run.outputs[0].sharding() == compiled.output_shardings()[0]);
}

TEST_CASE("an argsort moves its keys and index operand aside but not its unread sorted values back") {
  // jnp.argsort: a sort of (x, iota) whose sorted values nothing reads; XLA's dead code elimination drops their
  // all-to-all back, so three all-to-alls remain (real JAX 0.11.2, p08_uneven argsort0).
  const Mesh mesh = mesh_of("cpu:8", {4, 2}, {"data", "model"});
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({8, 8}, DType::kFloat32));
  const Var index = b.arg(Aval::of({8, 8}, DType::kInt32));
  const std::vector<Atom> sorted =
      b.bind("sort", {x, index}, {{"dimension", int64_t{0}}, {"is_stable", true}, {"num_keys", int64_t{1}}});
  const JaxprPtr jaxpr = b.build({sorted.at(1)});
  const NamedSharding in = named(mesh, "P('data', 'model')");
  ShapeDtypeStruct index_arg = sds({8, 8}, in);
  index_arg.dtype = DType::kInt32;
  const Compiled compiled = Lowered(jaxpr, {sds({8, 8}, in), index_arg}, {}, kProfile).compile();
  const CommLog planned = compiled.plan().comm_log();
  REQUIRE(planned.records().size() == 3);
  for (const CollectiveRecord& record : planned.records()) {
    CHECK(record.kind == CollectiveKind::kAllToAll);
    CHECK(record.axes == std::vector<std::string>{"data"});
    // Each device's 2x4 block of 4-byte elements: three quarters of it leave for the other 'data' shards.
    CHECK(record.bytes_sent == std::vector<int64_t>(8, 24));
  }
}

TEST_CASE("a concatenation along a sharded dim moves that dim's axes aside once per value and back") {
  // XLA's HandleConcatenate: the result's axes on the concatenated dim move onto the next dim that splits evenly
  // over them (all-to-all per distinct operand), the blocks concatenate locally, and the result moves back.
  const Mesh mesh = mesh_of("cpu:8", {4, 2}, {"data", "model"});
  const NamedSharding in = named(mesh, "P('data', 'model')");
  const auto concatenated = [&](bool same) {
    JaxprBuilder b;
    const Var x = b.arg(Aval::of({8, 8}, DType::kFloat32));
    const Var y = b.arg(Aval::of({same ? int64_t{8} : int64_t{4}, 8}, DType::kFloat32));
    const JaxprPtr jaxpr =
        b.build({b.bind1("concatenate", {x, same ? Atom{x} : Atom{y}}, {{"dimension", int64_t{0}}})});
    return Lowered(jaxpr, {sds({8, 8}, in), sds({same ? int64_t{8} : int64_t{4}, 8}, in)}, {}, kProfile)
        .compile()
        .plan()
        .comm_log();
  };
  SUBCASE("two values: one all-to-all each, and one back") {
    const CommLog planned = concatenated(false);
    REQUIRE(planned.records().size() == 3);
    // x's 2x4 blocks and y's 1x4 blocks send three quarters; the (12, 8) result's 12x1 blocks come back.
    const std::vector<int64_t> bytes{24, 12, 36};
    for (std::size_t i = 0; i < 3; ++i) {
      CHECK(planned.records()[i].kind == CollectiveKind::kAllToAll);
      CHECK(planned.records()[i].axes == std::vector<std::string>{"data"});
      CHECK(planned.records()[i].bytes_sent == std::vector<int64_t>(8, bytes[i]));
    }
  }
  SUBCASE("one value twice: its all-to-all serves both operands") {
    const CommLog planned = concatenated(true);
    REQUIRE(planned.records().size() == 2);
    for (const CollectiveRecord& record : planned.records()) CHECK(record.kind == CollectiveKind::kAllToAll);
  }
}

TEST_CASE("a sort along a sharded dim moves that dim's axes onto another dim and back with all-to-alls") {
  const Mesh mesh = mesh_of("cpu:8", {4, 2}, {"data", "model"});
  for (const std::string spec : {"P('data', 'model')", "P('data', None)"}) {
    CAPTURE(spec);
    JaxprBuilder b;
    const Var x = b.arg(Aval::of({8, 8}, DType::kFloat32));
    const JaxprPtr jaxpr =
        b.build({b.bind1("sort", {x}, {{"dimension", int64_t{0}}, {"is_stable", true}, {"num_keys", int64_t{1}}})});
    const NamedSharding in = named(mesh, spec);
    const Compiled compiled = Lowered(jaxpr, {sds({8, 8}, in)}, {}, kProfile).compile();
    const CommLog planned = compiled.plan().comm_log();
    REQUIRE(planned.records().size() == 2);
    for (const CollectiveRecord& record : planned.records()) {
      CHECK(record.kind == CollectiveKind::kAllToAll);
      CHECK(record.axes == std::vector<std::string>{"data"});
    }
    // The sorted result keeps the operand's layout, and the run moves data exactly as planned.
    const Array input = filled({8, 8}, in);
    const JitRun run = run_jit(*jaxpr, {input}, {}, kProfile);
    REQUIRE(run.outputs.size() == 1);
    CHECK(run.outputs[0].sharding() == Sharding{in});
    REQUIRE(run.log.records().size() == 2);
    CHECK(run.log.records()[0].bytes_sent == planned.records()[0].bytes_sent);
    const BufferPtr whole_buffer = input.gather();
    const BufferPtr sorted_buffer = run.outputs[0].gather();
    const auto whole = whole_buffer->as<float>();
    const auto sorted = sorted_buffer->as<float>();
    for (std::size_t column = 0; column < 8; ++column) {
      std::vector<float> expected;
      for (std::size_t row = 0; row < 8; ++row) expected.push_back(whole[row * 8 + column]);
      std::sort(expected.begin(), expected.end());
      for (std::size_t row = 0; row < 8; ++row) CHECK(sorted[row * 8 + column] == expected[row]);
    }
  }
}
