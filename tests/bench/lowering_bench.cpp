// Lowering and costing from abstract arguments: a 100-layer MLP on the 2048-device TPU v4-4096 preset.
#include <benchmark/benchmark.h>

#include "cost/compiled_cost.h"
#include "cost/explain.h"
#include "device/presets.h"
#include "exec/lowering.h"
#include "trace/builder.h"

namespace {

using namespace shardscope;

const JaxProfile kProfile;

Atom scalar(DType dtype, double value) { return scalar_literal(value, dtype); }

// dot_general with JAX's dimension_numbers ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)).
Atom dot_general(JaxprBuilder& b, const Atom& lhs, const Atom& rhs, const std::vector<int64_t>& lhs_contract,
                 const std::vector<int64_t>& rhs_contract, const std::vector<int64_t>& lhs_batch = {},
                 const std::vector<int64_t>& rhs_batch = {}, DType result = DType::kFloat32) {
  const ParamValue numbers =
      ParamValue::tuple({ParamValue::tuple({ParamValue::int_tuple(lhs_contract), ParamValue::int_tuple(rhs_contract)}),
                         ParamValue::tuple({ParamValue::int_tuple(lhs_batch), ParamValue::int_tuple(rhs_batch)})});
  return b.bind1("dot_general", {lhs, rhs},
                 {{"dimension_numbers", numbers},
                  {"out_sharding", ParamValue::None{}},
                  {"precision", ParamValue::None{}},
                  {"preferred_element_type", result}});
}

Atom dot(JaxprBuilder& b, const Atom& lhs, const Atom& rhs) { return dot_general(b, lhs, rhs, {1}, {0}); }

Atom constrain(JaxprBuilder& b, const Atom& value, const NamedSharding& sharding) {
  return b.bind1("sharding_constraint", {value},
                 {{"layout", ParamValue::None{}},
                  {"resource_env", ParamValue::None{}},
                  {"sharding", sharding},
                  {"unconstrained_dims", ParamValue::FrozenSet{}}});
}

// jax.nn.gelu (tanh form) as JAX stages it: a nested jit.
JaxprPtr gelu_program(const Aval& aval) {
  JaxprBuilder b;
  const Var x = b.arg(aval);
  const Atom cube = b.bind1("mul", {x, b.bind1("mul", {x, x})});
  const Atom inner = b.bind1("mul", {scalar(aval.dtype, 0.7978845608),
                                     b.bind1("add", {x, b.bind1("mul", {scalar(aval.dtype, 0.044715), cube})})});
  const Atom half = b.bind1("mul", {scalar(aval.dtype, 0.5), x});
  return b.build({b.bind1("mul", {half, b.bind1("add", {scalar(aval.dtype, 1.0), b.bind1("tanh", {inner})})})});
}

ShapeDtypeStruct placed(Shape shape, DType dtype, const NamedSharding& sharding) {
  ShapeDtypeStruct out;
  out.shape = std::move(shape);
  out.dtype = dtype;
  out.sharding = sharding;
  return out;
}

struct BenchProgram {
  JaxprPtr program;
  std::vector<ShapeDtypeStruct> args;
  LoweringOptions options;
};

// x @ w1 -> gelu -> constraint -> @ w2 + residual, 100 times, on a (256 data, 8 model) mesh of 2048 TPU v4 chips.
BenchProgram mlp100_on_tpu_v4_4096() {
  const DevicePreset preset = make_device_preset("tpu-v4-4096");
  const Mesh mesh = make_mesh({256, 8}, {"data", "model"}, preset.devices, kProfile,
                              std::vector<AxisType>{AxisType::kAuto, AxisType::kAuto});
  const int64_t batch = 8192;
  const int64_t width = 4096;
  const int64_t hidden = 16384;
  constexpr int kLayers = 100;
  JaxprBuilder b;
  const Aval activations = Aval::of({batch, width}, DType::kFloat32);
  const Aval hidden_aval = Aval::of({batch, hidden}, DType::kFloat32);
  Atom x = b.arg(activations);
  std::vector<ShapeDtypeStruct> args{
      placed(activations.shape, DType::kFloat32,
             make_named_sharding(mesh, parse_partition_spec("P('data', None)"), kProfile))};
  const JaxprPtr gelu = gelu_program(hidden_aval);
  const NamedSharding constraint = make_named_sharding(mesh, parse_partition_spec("P('data', 'model')"), kProfile);
  for (int layer = 0; layer < kLayers; ++layer) {
    const Var w1 = b.arg(Aval::of({width, hidden}, DType::kFloat32));
    const Var w2 = b.arg(Aval::of({hidden, width}, DType::kFloat32));
    args.push_back(placed({width, hidden}, DType::kFloat32,
                          make_named_sharding(mesh, parse_partition_spec("P(None, 'model')"), kProfile)));
    args.push_back(placed({hidden, width}, DType::kFloat32,
                          make_named_sharding(mesh, parse_partition_spec("P('model', None)"), kProfile)));
    const Atom h = b.bind("jit", {dot(b, x, w1)}, {{"jaxpr", ParamValue::JaxprRef(gelu)}, {"name", "gelu"}}).at(0);
    x = b.bind1("add", {dot(b, constrain(b, h, constraint), w2), x});
  }
  LoweringOptions options;
  options.name = "mlp";
  return {b.build({x}), std::move(args), std::move(options)};
}

void BM_LowerAndCostMlp100_TpuV4_4096(benchmark::State& state) {
  const BenchProgram p = mlp100_on_tpu_v4_4096();
  for (auto _ : state) {
    const Lowered lowered(p.program, p.args, p.options, kProfile);
    const Compiled compiled = lowered.compile();
    benchmark::DoNotOptimize(compiled_cost_report(compiled));
  }
}
BENCHMARK(BM_LowerAndCostMlp100_TpuV4_4096)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();

// What `shardscope explain` does per program: lowering, then every row with its reason, totals and memory fit.
void BM_LowerAndExplainMlp100_TpuV4_4096(benchmark::State& state) {
  const BenchProgram p = mlp100_on_tpu_v4_4096();
  for (auto _ : state) {
    const Lowered lowered(p.program, p.args, p.options, kProfile);
    benchmark::DoNotOptimize(explain_compiled(lowered.compile(), "mlp"));
  }
}
BENCHMARK(BM_LowerAndExplainMlp100_TpuV4_4096)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();

// A 70B-parameter-class decoder (80 layers, d_model 8192, d_ff 28672, 64 heads of 128, bfloat16 weights) on 1024
// TPU v5p chips as a (64 data, 16 model) mesh, from abstract arguments: per layer the q/k/v projections (heads over
// 'model'), scores and attention as batched dot_generals with an exp between, the output projection, and the MLP
// x @ w1 -> gelu -> @ w2, each block with its residual add. Shaped like the real program's matmuls and
// collectives; the softmax's normalisation and the norms are left out.
BenchProgram transformer70b_on_tpu_v5p_1024() {
  const DevicePreset preset = make_device_preset("tpu-v5p-2048");  // 1024 chips (v5p sizes count TensorCores)
  const Mesh mesh = make_mesh({64, 16}, {"data", "model"}, preset.devices, kProfile,
                              std::vector<AxisType>{AxisType::kAuto, AxisType::kAuto});
  const int64_t batch = 256;
  const int64_t seq = 2048;
  const int64_t d_model = 8192;
  const int64_t d_ff = 28672;
  const int64_t heads = 64;
  const int64_t head_dim = 128;
  constexpr int kLayers = 80;
  constexpr DType kBf16 = DType::kBFloat16;
  const auto sharding = [&](const char* spec) {
    return make_named_sharding(mesh, parse_partition_spec(spec), kProfile);
  };
  JaxprBuilder b;
  std::vector<ShapeDtypeStruct> args;
  const auto weight = [&](Shape shape, const char* spec) {
    const Var w = b.arg(Aval::of(shape, kBf16));
    args.push_back(placed(std::move(shape), kBf16, sharding(spec)));
    return w;
  };
  Atom x = b.arg(Aval::of({batch, seq, d_model}, kBf16));
  args.push_back(placed({batch, seq, d_model}, kBf16, sharding("P('data', None, None)")));
  const JaxprPtr gelu = gelu_program(Aval::of({batch, seq, d_ff}, kBf16));
  const NamedSharding activations = sharding("P('data', None, None)");
  for (int layer = 0; layer < kLayers; ++layer) {
    const Var wq = weight({d_model, heads, head_dim}, "P(None, 'model', None)");
    const Var wk = weight({d_model, heads, head_dim}, "P(None, 'model', None)");
    const Var wv = weight({d_model, heads, head_dim}, "P(None, 'model', None)");
    const Var wo = weight({heads, head_dim, d_model}, "P('model', None, None)");
    const Var w1 = weight({d_model, d_ff}, "P(None, 'model')");
    const Var w2 = weight({d_ff, d_model}, "P('model', None)");
    // [B,S,D] x [D,H,Dh] -> [B,S,H,Dh]
    const Atom q = dot_general(b, x, wq, {2}, {0}, {}, {}, kBf16);
    const Atom k = dot_general(b, x, wk, {2}, {0}, {}, {}, kBf16);
    const Atom v = dot_general(b, x, wv, {2}, {0}, {}, {}, kBf16);
    // scores [B,H,S,S], batch (B, H), contracting Dh
    const Atom scores = b.bind1("exp", {dot_general(b, q, k, {3}, {3}, {0, 2}, {0, 2}, kBf16)});
    // attention [B,H,S,Dh], batch (B, H), contracting the key positions
    const Atom attended = dot_general(b, scores, v, {3}, {1}, {0, 1}, {0, 2}, kBf16);
    // [B,H,S,Dh] x [H,Dh,D] -> [B,S,D]
    const Atom projected = dot_general(b, attended, wo, {1, 3}, {0, 1}, {}, {}, kBf16);
    x = constrain(b, b.bind1("add", {projected, x}), activations);
    const Atom h = b.bind("jit", {dot_general(b, x, w1, {2}, {0}, {}, {}, kBf16)},
                          {{"jaxpr", ParamValue::JaxprRef(gelu)}, {"name", "gelu"}})
                       .at(0);
    x = constrain(b, b.bind1("add", {dot_general(b, h, w2, {2}, {0}, {}, {}, kBf16), x}), activations);
  }
  LoweringOptions options;
  options.name = "transformer";
  return {b.build({x}), std::move(args), std::move(options)};
}

void BM_LowerAndExplainTransformer70B_TpuV5p_1024(benchmark::State& state) {
  const BenchProgram p = transformer70b_on_tpu_v5p_1024();
  for (auto _ : state) {
    const Lowered lowered(p.program, p.args, p.options, kProfile);
    benchmark::DoNotOptimize(explain_compiled(lowered.compile(), "transformer"));
  }
}
BENCHMARK(BM_LowerAndExplainTransformer70B_TpuV5p_1024)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime();

}  // namespace
