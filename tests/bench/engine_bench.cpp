// Engine benchmarks against the anchors in tests/bench/README.md (numpy figures come from numpy_baseline.py).
#include <benchmark/benchmark.h>

#include <numeric>

#include "base/thread_pool.h"
#include "device/presets.h"
#include "exec/jit.h"
#include "exec/shard_map.h"
#include "ir/axis_env.h"
#include "ops/vector_math.h"
#include "trace/builder.h"

namespace {

using namespace shardscope;

const JaxProfile kProfile;

Mesh cpu_mesh(int64_t n) {
  return make_mesh({n}, {"x"}, make_device_preset("cpu:" + std::to_string(n)).devices, kProfile,
                   std::vector<AxisType>{AxisType::kAuto});
}

BufferPtr ramp(const Shape& shape) {
  std::vector<float> values(static_cast<std::size_t>(product(shape)));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 1000) * 0.001F;
  return make_buffer(DType::kFloat32, shape, values);
}

// Benchmarks taking a thread count run with the process-wide pool resized to it (0: the hardware's).
class ThreadCount {
 public:
  explicit ThreadCount(const benchmark::State& state) { set_thread_count(static_cast<std::size_t>(state.range(0))); }
  ~ThreadCount() { set_thread_count(0); }
  ThreadCount(const ThreadCount&) = delete;
  ThreadCount& operator=(const ThreadCount&) = delete;
};

// jit(2 * sin(x) + 1) on 32M float32 sharded 8 ways.
void BM_JitSinAffine_32M_8way(benchmark::State& state) {
  const ThreadCount threads(state);
  const Mesh mesh = cpu_mesh(8);
  const int64_t n = 32 * 1024 * 1024;
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({n}, DType::kFloat32));
  const Atom s = b.bind1("sin", {x});
  const Atom twice = b.bind1("mul", {scalar_literal(2.0, DType::kFloat32), s});
  const JaxprPtr jaxpr = b.build({b.bind1("add", {twice, scalar_literal(1.0, DType::kFloat32)})});
  const Array arr =
      Array::from_host(ramp({n}), make_named_sharding(mesh, parse_partition_spec("P('x')"), kProfile), kProfile);
  for (auto _ : state) benchmark::DoNotOptimize(run_jit(*jaxpr, {arr}, {}, kProfile));
  state.SetBytesProcessed(state.iterations() * n * 4);
}
BENCHMARK(BM_JitSinAffine_32M_8way)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime();

// The float32 sin kernel alone on one thread over the same 32M values (no jit, fusion or allocation): what the
// sin program's kernel costs per element, to compare with numpy's bare `np.sin(x, out=y)`.
void BM_SinKernel_32M(benchmark::State& state) {
  const int64_t n = 32 * 1024 * 1024;
  const BufferPtr in = ramp({n});
  std::vector<float> out(static_cast<std::size_t>(n));
  for (auto _ : state) {
    vector_math::apply_rounded(vector_math::Function::kSin, in->as<float>().data(), out.data(), n);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * n * 4);
}
BENCHMARK(BM_SinKernel_32M)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();

// Seed 001's pmap(vmap(dot)) on (8, 1250000, 3): each device does a row-wise dot of its (1250000, 3) block.
void BM_PmapVmapDot_8x1250000x3(benchmark::State& state) {
  const ThreadCount threads(state);
  const Mesh mesh = cpu_mesh(8);
  ShardMapSpec spec;
  spec.mesh = mesh;
  spec.in_specs = {parse_partition_spec("P('x')"), parse_partition_spec("P('x')")};
  spec.out_specs = {parse_partition_spec("P('x')")};
  spec.check_vma = false;
  JaxprBuilder b;
  const Var v = b.arg(Aval::of({1, 1250000, 3}, DType::kFloat32));
  const Var u = b.arg(Aval::of({1, 1250000, 3}, DType::kFloat32));
  const Params numbers = {
      {"dimension_numbers",
       ParamValue::tuple({ParamValue::tuple({ParamValue::list({2}), ParamValue::list({2})}),
                          ParamValue::tuple({ParamValue::list({0, 1}), ParamValue::list({0, 1})})})},
      {"precision", ParamValue::None{}},
      {"preferred_element_type", DType::kFloat32}};
  const JaxprPtr body = b.build({b.bind1("dot_general", {v, u}, numbers)});
  const NamedSharding sharding = make_named_sharding(mesh, parse_partition_spec("P('x')"), kProfile);
  const Array vs = Array::from_host(ramp({8, 1250000, 3}), sharding, kProfile);
  const Array us = Array::from_host(ramp({8, 1250000, 3}), sharding, kProfile);
  for (auto _ : state) benchmark::DoNotOptimize(run_shard_map(*body, spec, {vs, us}, kProfile, nullptr));
}
BENCHMARK(BM_PmapVmapDot_8x1250000x3)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime();

// jit(x @ y) of two 2048x2048 float32 arrays.
JaxprPtr matmul2048() {
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({2048, 2048}, DType::kFloat32));
  const Var y = b.arg(Aval::of({2048, 2048}, DType::kFloat32));
  const Params numbers = {
      {"dimension_numbers", ParamValue::tuple({ParamValue::tuple({ParamValue::list({1}), ParamValue::list({0})}),
                                               ParamValue::tuple({ParamValue::list({}), ParamValue::list({})})})},
      {"precision", ParamValue::None{}},
      {"preferred_element_type", DType::kFloat32}};
  return b.build({b.bind1("dot_general", {x, y}, numbers)});
}

// One device's 2048x2048 float32 matmul.
void BM_Matmul2048(benchmark::State& state) {
  const JaxprPtr jaxpr = matmul2048();
  const Mesh mesh = cpu_mesh(1);
  const Sharding one = make_single_device_sharding(mesh.devices().front(), kProfile);
  const Array a = Array::from_host(ramp({2048, 2048}), one, kProfile);
  for (auto _ : state) benchmark::DoNotOptimize(run_jit(*jaxpr, {a, a}, {}, kProfile));
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * 2048 * 2048 * 2048, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Matmul2048)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();

// A 1024x256 by 256x1024 float32 product: a depth of one packed panel, which runs the fused multiply-add kernel
// (XLA's rounding) instead of BLAS.
void BM_Matmul1024Depth256(benchmark::State& state) {
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({1024, 256}, DType::kFloat32));
  const Var y = b.arg(Aval::of({256, 1024}, DType::kFloat32));
  const Params numbers = {
      {"dimension_numbers", ParamValue::tuple({ParamValue::tuple({ParamValue::list({1}), ParamValue::list({0})}),
                                               ParamValue::tuple({ParamValue::list({}), ParamValue::list({})})})},
      {"precision", ParamValue::None{}},
      {"preferred_element_type", DType::kFloat32}};
  const JaxprPtr jaxpr = b.build({b.bind1("dot_general", {x, y}, numbers)});
  const Mesh mesh = cpu_mesh(1);
  const Sharding one = make_single_device_sharding(mesh.devices().front(), kProfile);
  const Array lhs = Array::from_host(ramp({1024, 256}), one, kProfile);
  const Array rhs = Array::from_host(ramp({256, 1024}), one, kProfile);
  for (auto _ : state) benchmark::DoNotOptimize(run_jit(*jaxpr, {lhs, rhs}, {}, kProfile));
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * 1024 * 256 * 1024, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Matmul1024Depth256)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();

// The same product on a 4x2 mesh, rows of x over 'a' and columns of y over 'b': the contraction stays local,
// so the engine computes the whole product once and cuts it into the eight blocks.
void BM_ShardedMatmul2048_4x2(benchmark::State& state) {
  const JaxprPtr jaxpr = matmul2048();
  const Mesh mesh = make_mesh({4, 2}, {"a", "b"}, make_device_preset("cpu:8").devices, kProfile,
                              std::vector<AxisType>{AxisType::kAuto, AxisType::kAuto});
  const auto placed = [&](const char* spec) {
    return Array::from_host(ramp({2048, 2048}), make_named_sharding(mesh, parse_partition_spec(spec), kProfile),
                            kProfile);
  };
  const Array rows = placed("P('a', None)");
  const Array columns = placed("P(None, 'b')");
  for (auto _ : state) benchmark::DoNotOptimize(run_jit(*jaxpr, {rows, columns}, {}, kProfile));
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * 2048 * 2048 * 2048, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ShardedMatmul2048_4x2)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();

// A small eager op: x + 1 on a (4, 8) array sharded 8 ways.
void BM_SmallShardedAdd_4x8(benchmark::State& state) {
  const ThreadCount threads(state);
  const Mesh mesh = make_mesh({2, 4}, {"x", "y"}, make_device_preset("cpu:8").devices, kProfile,
                              std::vector<AxisType>{AxisType::kAuto, AxisType::kAuto});
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({4, 8}, DType::kFloat32));
  const JaxprPtr jaxpr = b.build({b.bind1("add", {x, scalar_literal(1.0, DType::kFloat32)})});
  const Array arr = Array::from_host(
      ramp({4, 8}), make_named_sharding(mesh, parse_partition_spec("P('x', 'y')"), kProfile), kProfile);
  for (auto _ : state) benchmark::DoNotOptimize(run_jit(*jaxpr, {arr}, {}, kProfile));
}
BENCHMARK(BM_SmallShardedAdd_4x8)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMicrosecond)
    ->MeasureProcessCPUTime();

}  // namespace
