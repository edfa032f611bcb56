// Debug effects: a jit over a sharded value calls back once with the whole value, a per-device body once per
// device with its block, inspect_sharding reports the partitioner's spec, and a vmapped callback runs per element.
#include "exec/debug_callbacks.h"

#include <doctest/doctest.h>

#include "device/presets.h"
#include "exec/interpreter.h"
#include "exec/jit.h"
#include "ir/jaxpr_printer.h"
#include "ops/ops.h"
#include "trace/builder.h"
#include "transforms/batching.h"

using namespace shardscope;

namespace {

const JaxProfile kProfile;

Mesh cpu_mesh() {
  return make_mesh({4, 2}, {"a", "b"}, make_device_preset("cpu:8").devices, kProfile,
                   std::vector<AxisType>(2, AxisType::kAuto));
}

BufferPtr iota(int64_t n) {
  std::vector<float> values(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  return make_buffer(DType::kFloat32, {n}, values);
}

std::vector<float> floats(const BufferPtr& buffer) {
  const auto span = buffer->as<float>();
  return {span.begin(), span.end()};
}

struct Recorded {
  std::vector<std::vector<float>> values;
  std::vector<std::optional<int64_t>> devices;
  std::vector<std::string> specs;
};

int64_t recording_callback(Recorded& recorded) {
  DebugCallback callback;
  callback.on_values = [&recorded](std::span<const BufferPtr> values, std::optional<int64_t> device) {
    recorded.values.push_back(floats(values[0]));
    recorded.devices.push_back(device);
  };
  callback.on_sharding = [&recorded](const Mesh* mesh, const PartitionSpec& spec) {
    recorded.specs.push_back(mesh == nullptr ? "one device" : spec.repr(kProfile));
  };
  return register_debug_callback(std::move(callback));
}

Params print_params(int64_t id) { return {{"callback_id", id}, {"partitioned", false}, {"fmt", "x={}"}}; }

}  // namespace

TEST_CASE("a partitioned jit calls back once with the whole value and reports its layout") {
  ensure_core_primitives();
  ensure_debug_primitives();
  Recorded recorded;
  const int64_t id = recording_callback(recorded);
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({8}, DType::kFloat32));
  const Atom doubled = b.bind1("mul", {x, x});
  b.bind("debug_print", {doubled}, print_params(id));
  b.bind("inspect_sharding", {doubled}, {{"callback_id", id}, {"callback", "<function f at 0x1234>"}});
  const JaxprPtr program = b.build({doubled});
  const Mesh mesh = cpu_mesh();
  const Array arg =
      Array::from_host(iota(8), make_named_sharding(mesh, parse_partition_spec("P('a')"), kProfile), kProfile);
  const JitRun run = run_jit(*program, {arg}, JitOptions{}, kProfile);
  REQUIRE(recorded.values.size() == 1);
  CHECK(recorded.values[0] == std::vector<float>{0, 1, 4, 9, 16, 25, 36, 49});
  CHECK(recorded.devices[0] == std::nullopt);
  CHECK(recorded.specs == std::vector<std::string>{"P('a',)"});
  // The hidden id never prints; the address is masked as JAX 0.10.1+ prints it.
  const std::string text = print_jaxpr(*program, kProfile);
  CHECK(text.find("callback_id") == std::string::npos);
  CHECK(text.find("callback=<function f at 0xXXXXXXXX>") != std::string::npos);
}

TEST_CASE("per-device bodies call back once per device with their blocks") {
  ensure_core_primitives();
  ensure_debug_primitives();
  Recorded recorded;
  const int64_t id = recording_callback(recorded);
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({2}, DType::kFloat32));
  b.bind("debug_callback", {x}, print_params(id));
  const JaxprPtr body = b.build({x});
  const Mesh mesh = cpu_mesh();
  DeviceBuffers blocks;
  for (int64_t d = 0; d < 8; ++d) {
    blocks.push_back(make_buffer(DType::kFloat32, {2}, std::vector<float>{float(d), float(d) + 0.5F}));
  }
  CommLog log;
  (void)evaluate_jaxpr_per_device(*body, SpmdContext{&mesh, &log}, {blocks});
  REQUIRE(recorded.values.size() == 8);
  CHECK(recorded.values[3] == std::vector<float>{3.0F, 3.5F});
  CHECK(recorded.devices[3] == 3);
}

TEST_CASE("vmap leaves the batch dims for the kernel, which calls back per element") {
  ensure_core_primitives();
  ensure_debug_primitives();
  Recorded recorded;
  const int64_t id = recording_callback(recorded);
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({}, DType::kFloat32));
  b.bind("debug_print", {x}, print_params(id));
  const JaxprPtr body = b.build({x});
  const JaxprPtr batched = vmap_jaxpr(*body, {Aval::of({3}, DType::kFloat32)}, {0}, {0});
  (void)evaluate_jaxpr(*batched, {iota(3)});
  REQUIRE(recorded.values.size() == 3);
  CHECK(recorded.values[2] == std::vector<float>{2.0F});
  CHECK(recorded.devices[2] == std::nullopt);
}
