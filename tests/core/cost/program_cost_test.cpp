// Program cost reports: hardware rows match their cited specs, per-device roofline times and alpha-beta
// collective times equal hand computations.
#include "cost/program_cost.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "base/error.h"
#include "device/presets.h"
#include "exec/shard_map.h"
#include "ir/axis_env.h"
#include "trace/builder.h"

using namespace shardscope;

namespace {

const JaxProfile kProfile;

Mesh tpu_mesh(std::vector<int64_t> shape, std::vector<std::string> names, const std::string& preset) {
  return make_mesh(shape, names, make_device_preset(preset).devices, kProfile,
                   std::vector<AxisType>(shape.size(), AxisType::kAuto));
}

CollectiveRecord record(CollectiveKind kind, std::vector<std::vector<int64_t>> groups, int64_t bytes_each) {
  CollectiveRecord r;
  r.kind = kind;
  r.axes = {"x"};
  r.groups = std::move(groups);
  for (const auto& g : r.groups) {
    for (const int64_t id : g) {
      r.device_ids.push_back(id);
      r.bytes_sent.push_back(bytes_each);
      r.bytes_received.push_back(bytes_each);
    }
  }
  return r;
}

}  // namespace

TEST_CASE("hardware rows carry the cited per-device figures") {
  // TPU v3: 1.4e14 bf16 FLOP/s, 9e11 B/s HBM, 2e11 B/s bidirectional ICI per chip; two JAX devices per chip.
  const HardwareSpec& v3 = hardware_for_kind("TPU v3");
  CHECK(v3.matmul_flops == doctest::Approx(7e13));
  CHECK(v3.memory_bandwidth == doctest::Approx(4.5e11));
  CHECK(v3.link_bandwidth == doctest::Approx(1e11));
  // v5e: one core per chip, 1.97e14 FLOP/s, 8.1e11 B/s, 9e10 B/s ICI, 16 GB.
  const HardwareSpec& v5e = hardware_for_kind("TPU v5 lite");
  CHECK(v5e.matmul_flops == doctest::Approx(1.97e14));
  CHECK(v5e.memory_bandwidth == doctest::Approx(8.1e11));
  CHECK(v5e.memory_capacity == doctest::Approx(16e9));
  CHECK(v5e.link_one_way == doctest::Approx(4.5e10));
  CHECK(v5e.wraps(16));
  CHECK_FALSE(v5e.wraps(8));
  const HardwareSpec& v5p = hardware_for_kind("TPU v5");
  CHECK(v5p.memory_capacity == doctest::Approx(96e9));
  CHECK(v5p.wraps(4));
  CHECK(v5p.wraps(16));
  CHECK_FALSE(v5p.wraps(2));
  CHECK(hardware_for_kind("NVIDIA H200").memory_capacity == doctest::Approx(141e9));
  // Every figure group names its source.
  for (const HardwareSpec& row : hardware_table()) {
    CAPTURE(row.name);
    CHECK_FALSE(row.compute_source.empty());
    CHECK_FALSE(row.memory_source.empty());
    CHECK_FALSE(row.interconnect_source.empty());
    CHECK_FALSE(row.host_source.empty());
    CHECK(row.link_one_way > 0);
    CHECK(row.host_link_bandwidth > 0);
  }
  CHECK(v5e.link_bandwidth == doctest::Approx(9e10));
  // H100: NVLink 18 x 25 GB/s egress, 3.35 TB/s HBM.
  const HardwareSpec& h100 = hardware_for_kind("NVIDIA H100 80GB HBM3");
  CHECK(h100.link_bandwidth == doctest::Approx(4.5e11));
  CHECK(h100.memory_bandwidth == doctest::Approx(3.35e12));
  CHECK(hardware_for_kind("Tesla V100-SXM2-16GB").name == "V100");
  CHECK(hardware_for_kind("NVIDIA A100-SXM4-40GB").name == "A100");
  // Every preset's device kind has a row.
  for (const char* preset :
       {"tpu-v2-8", "tpu-v3-8", "tpu-v4-8", "tpu-v5e-8", "tpu-v5p-8", "tpu-v6e-8", "gpu:8", "cpu:4"}) {
    CAPTURE(preset);
    CHECK_NOTHROW((void)hardware_for(make_device_preset(preset).devices.front()));
  }
  CHECK_THROWS_AS((void)hardware_for_kind("abacus"), Error);
}

TEST_CASE("a collective takes the larger of its hops' latency and its bytes over the links") {
  const HardwareSpec& h100 = hardware_for_kind("NVIDIA H100 80GB HBM3");
  // all-gather of 1 MB blocks over 8 GPUs through the switch: each sends 7 blocks: 7 hops of 5 us against
  // 7 MB / 450 GB/s = 15.6 us, so latency-bound.
  const CollectiveEstimate ag =
      estimate_collective(record(CollectiveKind::kAllGather, {{0, 1, 2, 3, 4, 5, 6, 7}}, 7 * 1000000), h100);
  CHECK(ag.group_size == 8);
  CHECK(ag.latency_seconds == doctest::Approx(7 * 5e-6));
  CHECK(ag.bandwidth_seconds == doctest::Approx(7e6 / 4.5e11));
  CHECK(ag.seconds == doctest::Approx(7 * 5e-6));
  // all-reduce of 800 MB over 8: 2*7/8 * 800 MB sent in 14 steps: bandwidth-bound.
  const CollectiveEstimate ar =
      estimate_collective(record(CollectiveKind::kAllReduce, {{0, 1, 2, 3, 4, 5, 6, 7}}, 1400000000), h100);
  CHECK(ar.seconds == doctest::Approx(1.4e9 / 4.5e11));
  const CollectiveEstimate cp =
      estimate_collective(record(CollectiveKind::kCollectivePermute, {{0, 1}, {2, 3}}, 4096), h100);
  CHECK(cp.seconds == doctest::Approx(5e-6));
}

TEST_CASE("a jit run's report prices local shapes and the all-reduce the partitioner inserted") {
  // x.sum(0) with x: f32[4,8] on P('x','y') over a 2x4 TPU v3 mesh: each device reduces a (2,2) block
  // to (2,) (2 adds, 16 B read, 8 B written), then an all-reduce over x (n=2) sends 2*(1/2)*8 = 8 B.
  const Mesh mesh = tpu_mesh({2, 4}, {"x", "y"}, "tpu-v3-8");
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({4, 8}, DType::kFloat32));
  const JaxprPtr jaxpr = b.build(
      {b.bind1("reduce_sum", {x}, {{"axes", ParamValue::int_tuple({0})}, {"out_sharding", ParamValue::None{}}})});
  const Array arr =
      Array::from_host(make_buffer(DType::kFloat32, {4, 8}, std::vector<float>(32, 1.0F)),
                       make_named_sharding(mesh, parse_partition_spec("P('x', 'y')"), kProfile), kProfile);
  const JitRun run = run_jit(*jaxpr, {arr}, {}, kProfile);
  const ProgramCostReport report = estimate_jit_cost(*jaxpr, run);
  CHECK(report.hardware.name == "TPU v3");
  REQUIRE(report.equations.size() == 1);
  const EquationEstimate& e = report.equations[0];
  CHECK(e.local_result == "f32[2]");
  CHECK(e.cost.flops == 2.0);
  CHECK(e.cost.bytes_accessed() == 24.0);
  CHECK(e.memory_seconds == doctest::Approx(24.0 / 4.5e11));
  CHECK(e.compute_seconds == doctest::Approx(2.0 / 7e13));
  CHECK(e.memory_bound());
  REQUIRE(report.collectives.size() == 1);
  const CollectiveEstimate& c = report.collectives[0];
  CHECK(c.kind == CollectiveKind::kAllReduce);
  CHECK(c.group_size == 2);
  CHECK(c.max_bytes_sent == 8);
  // Its two devices are one chip's two TensorCores or two neighbouring chips; either way a few bytes are
  // latency-bound or nearly free, and every device pays the same.
  const double comm = c.seconds;
  CHECK(comm == doctest::Approx(std::max(c.latency_seconds, c.bandwidth_seconds)));
  CHECK(comm < 5e-6);
  REQUIRE(report.devices.size() == 8);
  for (const DeviceEstimate& d : report.devices) {
    CHECK(d.communication_seconds == doctest::Approx(comm));
    CHECK(d.compute_seconds == doctest::Approx(24.0 / 4.5e11));
  }
  CHECK(report.total_seconds == doctest::Approx(comm + 24.0 / 4.5e11));
  const std::string text = report.to_text();
  CHECK(text.rfind("# shardscope estimate (not JAX output): TPU v3, 8 device(s)", 0) == 0);
  CHECK(text.find("all-reduce") != std::string::npos);
  CHECK(text.find("reduce_sum") != std::string::npos);
}

TEST_CASE("a program with no collectives costs its compute only") {
  // (8,1024) @ (1024,1024) on one H100: 2*8*1024*1024 flops at 495 TFLOP/s vs 4.26 MB at 3.35 TB/s.
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({8, 1024}, DType::kFloat32));
  const Var w = b.arg(Aval::of({1024, 1024}, DType::kFloat32));
  auto list = [](int64_t v) { return ParamValue::list({ParamValue(v)}); };
  const Atom y = b.bind1(
      "dot_general", {x, w},
      {{"dimension_numbers", ParamValue::tuple({ParamValue::tuple({list(1), list(0)}),
                                                ParamValue::tuple({ParamValue::list({}), ParamValue::list({})})})},
       {"precision", ParamValue::None{}},
       {"preferred_element_type", DType::kFloat32}});
  const JaxprPtr jaxpr = b.build({y});
  const HardwareSpec& h100 = hardware_for_kind("NVIDIA H100 80GB HBM3");
  const std::vector<Device> one = {make_device_preset("gpu:1").devices.front()};
  const ProgramCostReport report = estimate_program_cost(
      *jaxpr, [](const Atom& a) { return atom_aval(a); }, one, CommLog{}, h100);
  const double bytes = (8.0 * 1024 + 1024.0 * 1024 + 8.0 * 1024) * 4;
  CHECK(report.equations.at(0).compute_seconds == doctest::Approx(16777216.0 / 4.95e14));
  CHECK(report.equations.at(0).memory_seconds == doctest::Approx(bytes / 3.35e12));
  CHECK(report.total_seconds == doctest::Approx(bytes / 3.35e12));
  CHECK(report.communication_seconds == 0.0);
}

TEST_CASE("a shard_map report prices the per-device body and its psum") {
  // Seed 000: psum(x.sum(), 'x') with x: int32[32] on P('x') over 8 TPU v3 cores. Each device sums 4
  // elements (3 adds, 16 B read, 4 B written); the psum is 1 flop on a 4 B scalar and an all-reduce over 8
  // devices sending 2*7/8*4 = 7 B each (14 ring steps).
  ShardMapSpec spec;
  spec.mesh = make_mesh({8}, {"x"}, make_device_preset("tpu-v3-8").devices, kProfile);
  spec.in_specs = {parse_partition_spec("P('x')")};
  spec.out_specs = {PartitionSpec()};
  JaxprPtr body;
  {
    const AxisEnvScope axes({{"x", 8}});
    JaxprBuilder b;
    const Var x = b.arg(shard_map_local_aval(Aval::of({32}, DType::kInt32), spec.in_specs[0], spec.mesh, true));
    const Atom total =
        b.bind1("reduce_sum", {x}, {{"axes", ParamValue::int_tuple({0})}, {"out_sharding", ParamValue::None{}}});
    body = b.build({b.bind1("psum_invariant", {total}, {{"axes", ParamValue::name_tuple({"x"})}})});
  }
  std::vector<int32_t> values(32);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int32_t>(i);
  const Array x = Array::from_host(make_buffer(DType::kInt32, {32}, values),
                                   make_single_device_sharding(spec.mesh.devices().front(), kProfile), kProfile);
  CommLog log;
  (void)run_shard_map(*body, spec, {x}, kProfile, &log);
  const ProgramCostReport report = estimate_shard_map_cost(*body, spec.mesh, log);
  REQUIRE(report.equations.size() == 2);
  CHECK(report.equations[0].cost.flops == 3.0);
  CHECK(report.equations[0].cost.bytes_accessed() == 20.0);
  CHECK(report.equations[1].cost.flops == 1.0);
  CHECK(report.equations[1].cost.bytes_accessed() == 8.0);
  REQUIRE(report.collectives.size() == 1);
  CHECK(report.collectives[0].max_bytes_sent == 7);
  // Eight v3 cores are four chips in a 2x2 square: the ring spans both torus dimensions, 2 chips each,
  // without wraparound (a v3 torus closes only at the full pod), so 2 x (1 + 1) hops of 1 us.
  CHECK(report.collectives[0].topology.physical_axes == 2);
  CHECK_FALSE(report.collectives[0].topology.wraparound);
  CHECK(report.collectives[0].seconds == doctest::Approx(4 * 1e-6));
  CHECK(report.per_device.flops == 4.0);
  CHECK(report.communication_seconds == doctest::Approx(4 * 1e-6));
}

TEST_CASE("all-reduces combined into one pay one latency: the group takes max(latency, the members' bandwidth)") {
  const HardwareSpec& h100 = hardware_for_kind("NVIDIA H100 80GB HBM3");
  const std::vector<Device> gpus = make_device_preset("gpu:8").devices;
  const std::vector<std::vector<int64_t>> all = {{0, 1, 2, 3, 4, 5, 6, 7}};
  const CollectiveEstimate alone = estimate_collective(record(CollectiveKind::kAllReduce, all, 4096), h100);
  REQUIRE(alone.latency_seconds > alone.bandwidth_seconds);  // small buffers: latency-bound
  const auto cost_of = [&](bool combine) {
    CommLog log;
    for (int i = 0; i < 3; ++i) {
      CollectiveRecord r = record(CollectiveKind::kAllReduce, all, 4096);
      if (combine) r.combined = 7;
      log.add(r);
    }
    return estimate_program_cost(
        Jaxpr{}, [](const Atom& a) { return atom_aval(a); }, gpus, log, h100);
  };
  const ProgramCostReport separate = cost_of(false);
  const ProgramCostReport combined = cost_of(true);
  CHECK(separate.communication_seconds == doctest::Approx(3 * alone.seconds));
  // One latency, three buffers' bandwidth (still latency-bound): the first row carries the group's time.
  const double group = std::max(alone.latency_seconds, 3 * alone.bandwidth_seconds);
  CHECK(combined.communication_seconds == doctest::Approx(group));
  REQUIRE(combined.collectives.size() == 3);
  CHECK(combined.collectives[0].latency_seconds == doctest::Approx(alone.latency_seconds));
  CHECK(combined.collectives[1].latency_seconds == 0.0);
  CHECK(combined.collectives[2].seconds == doctest::Approx(alone.bandwidth_seconds));
  for (const DeviceEstimate& d : combined.devices) CHECK(d.communication_seconds == doctest::Approx(group));
}
