// Lowering and costing from abstract arguments: a 100-layer MLP on the 2048-device TPU v4-4096 preset.
#include <benchmark/benchmark.h>

#include "cost/compiled_cost.h"
#include "device/presets.h"
#include "exec/lowering.h"
#include "trace/builder.h"

namespace {

using namespace shardscope;

const JaxProfile kProfile;

Atom scalar(double value) { return scalar_literal(value, DType::kFloat32); }

Atom dot(JaxprBuilder& b, const Atom& lhs, const Atom& rhs) {
  const ParamValue numbers =
      ParamValue::tuple({ParamValue::tuple({ParamValue::int_tuple({1}), ParamValue::int_tuple({0})}),
                         ParamValue::tuple({ParamValue::int_tuple({}), ParamValue::int_tuple({})})});
  return b.bind1("dot_general", {lhs, rhs},
                 {{"dimension_numbers", numbers},
                  {"out_sharding", ParamValue::None{}},
                  {"precision", ParamValue::None{}},
                  {"preferred_element_type", DType::kFloat32}});
}

// jax.nn.gelu (tanh form) as JAX stages it: a nested jit.
JaxprPtr gelu_program(const Aval& aval) {
  JaxprBuilder b;
  const Var x = b.arg(aval);
  const Atom cube = b.bind1("mul", {x, b.bind1("mul", {x, x})});
  const Atom inner =
      b.bind1("mul", {scalar(0.7978845608), b.bind1("add", {x, b.bind1("mul", {scalar(0.044715), cube})})});
  const Atom half = b.bind1("mul", {scalar(0.5), x});
  return b.build({b.bind1("mul", {half, b.bind1("add", {scalar(1.0), b.bind1("tanh", {inner})})})});
}

// x @ w1 -> gelu -> constraint -> @ w2 + residual, 100 times, on a (256 data, 8 model) mesh of 2048 TPU v4 chips.
void BM_LowerAndCostMlp100_TpuV4_4096(benchmark::State& state) {
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
  std::vector<ShapeDtypeStruct> args{{activations.shape, DType::kFloat32,
                                      make_named_sharding(mesh, parse_partition_spec("P('data', None)"), kProfile)}};
  const JaxprPtr gelu = gelu_program(hidden_aval);
  const NamedSharding constraint = make_named_sharding(mesh, parse_partition_spec("P('data', 'model')"), kProfile);
  for (int layer = 0; layer < kLayers; ++layer) {
    const Var w1 = b.arg(Aval::of({width, hidden}, DType::kFloat32));
    const Var w2 = b.arg(Aval::of({hidden, width}, DType::kFloat32));
    args.push_back({{width, hidden},
                    DType::kFloat32,
                    make_named_sharding(mesh, parse_partition_spec("P(None, 'model')"), kProfile)});
    args.push_back({{hidden, width},
                    DType::kFloat32,
                    make_named_sharding(mesh, parse_partition_spec("P('model', None)"), kProfile)});
    const Atom h = b.bind("jit", {dot(b, x, w1)}, {{"jaxpr", ParamValue::JaxprRef(gelu)}, {"name", "gelu"}}).at(0);
    const Atom pinned = b.bind1("sharding_constraint", {h},
                                {{"layout", ParamValue::None{}},
                                 {"resource_env", ParamValue::None{}},
                                 {"sharding", constraint},
                                 {"unconstrained_dims", ParamValue::FrozenSet{}}});
    x = b.bind1("add", {dot(b, pinned, w2), x});
  }
  const JaxprPtr program = b.build({x});
  LoweringOptions options;
  options.name = "mlp";
  for (auto _ : state) {
    const Lowered lowered(program, args, options, kProfile);
    const Compiled compiled = lowered.compile();
    benchmark::DoNotOptimize(compiled_cost_report(compiled));
  }
}
BENCHMARK(BM_LowerAndCostMlp100_TpuV4_4096)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();

}  // namespace
