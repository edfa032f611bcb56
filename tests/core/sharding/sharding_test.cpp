// NamedSharding / SingleDeviceSharding: validation errors, reprs, shard shapes, device indices.
#include "sharding/sharding.h"

#include <doctest/doctest.h>

#include "base/error.h"
#include "device/presets.h"
#include "sharding/sharding_recipe.h"

using namespace shardscope;

namespace {
NamedSharding on_cpu_mesh(const std::string& spec, const JaxProfile& profile = JaxProfile(),
                          std::vector<AxisType> types = {AxisType::kExplicit, AxisType::kExplicit}) {
  const Mesh mesh = make_mesh({4, 2}, {"x", "y"}, make_device_preset("cpu:8").devices, profile, types);
  return make_named_sharding(mesh, parse_partition_spec(spec), profile);
}
}  // namespace

TEST_CASE("reprs for the newest JAX and the seeds' versions") {
  CHECK(sharding_repr(on_cpu_mesh("P('x', 'y')"), JaxProfile()) ==
        "NamedSharding(mesh=Mesh('x': 4, 'y': 2, axis_types=(Explicit, Explicit)), spec=P('x', 'y'), "
        "memory_kind=device)");
  const JaxProfile seed002(JaxVersion{0, 6, 0});
  const Mesh cpu_mesh = make_mesh({2, 4}, {"x", "y"}, make_device_preset("cpu:12").devices, seed002);
  CHECK(sharding_repr(make_named_sharding(cpu_mesh, parse_partition_spec("P('x', 'y')"), seed002), seed002) ==
        "NamedSharding(mesh=Mesh('x': 2, 'y': 4, axis_types=(Auto, Auto)), spec=PartitionSpec('x', 'y'), "
        "memory_kind=unpinned_host)");
  CHECK(sharding_repr(make_single_device_sharding(make_device_preset("cpu:12").devices[0], seed002), seed002) ==
        "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=unpinned_host)");
  const JaxProfile seed000(JaxVersion{0, 4, 35});
  const auto tpu = make_device_preset("tpu-v2-8").devices;
  CHECK(sharding_repr(make_named_sharding(make_mesh({2, 4}, {"x", "y"}, tpu, seed000),
                                          parse_partition_spec("P('x', 'y')"), seed000),
                      seed000) ==
        "NamedSharding(mesh=Mesh('x': 2, 'y': 4), spec=PartitionSpec('x', 'y'), memory_kind=device)");
  const JaxProfile seed003(JaxVersion{0, 4, 26});
  CHECK(sharding_repr(make_single_device_sharding(tpu[0], seed003), seed003) ==
        "SingleDeviceSharding(device=TpuDevice(id=0, process_index=0, coords=(0,0,0), core_on_chip=0))");
}

TEST_CASE(
    "CPU shardings name their memory kind from jax 0.4.32 (jax_enable_memories on by default), device from 0.7.1") {
  const auto cpu = make_device_preset("cpu:8").devices;
  CHECK(sharding_repr(make_single_device_sharding(cpu[0], JaxProfile(JaxVersion{0, 4, 31})),
                      JaxProfile(JaxVersion{0, 4, 31})) == "SingleDeviceSharding(device=CpuDevice(id=0))");
  CHECK(sharding_repr(make_single_device_sharding(cpu[0], JaxProfile(JaxVersion{0, 4, 34})),
                      JaxProfile(JaxVersion{0, 4, 34})) ==
        "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=unpinned_host)");
  // jax 0.7.1 made `device` the default memory of CPU devices.
  CHECK(sharding_repr(make_single_device_sharding(cpu[0], JaxProfile(JaxVersion{0, 7, 0})),
                      JaxProfile(JaxVersion{0, 7, 0})) ==
        "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=unpinned_host)");
  CHECK(sharding_repr(make_single_device_sharding(cpu[0], JaxProfile(JaxVersion{0, 7, 1})),
                      JaxProfile(JaxVersion{0, 7, 1})) ==
        "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)");
}

TEST_CASE("memory kinds are checked against the platform") {
  const Mesh mesh = make_mesh({8}, {"x"}, make_device_preset("tpu-v3-8").devices, JaxProfile());
  CHECK(make_named_sharding(mesh, parse_partition_spec("P('x')"), JaxProfile(), "pinned_host").memory_kind ==
        "pinned_host");
  const Mesh gpu = make_mesh({2}, {"x"}, make_device_preset("gpu:2").devices, JaxProfile());
  CHECK_THROWS_WITH_AS(
      (void)make_named_sharding(gpu, PartitionSpec(), JaxProfile(), "unpinned_host"),
      "Could not find memory addressable by device NVIDIA H100 80GB HBM3. Device NVIDIA H100 80GB "
      "HBM3 can address the following memory kinds: device, pinned_host. Got memory kind: unpinned_host",
      Error);
}

TEST_CASE("unknown and duplicate axes raise JAX's errors") {
  CHECK_THROWS_WITH_AS((void)on_cpu_mesh("P('z')"), "Resource axis: z of P('z',) is not found in mesh: ('x', 'y').",
                       Error);
  try {
    (void)on_cpu_mesh("P('x', ('y', 'x'))");
    FAIL("expected DuplicateSpecError");
  } catch (const Error& e) {
    CHECK(e.python_type() == "DuplicateSpecError");
    CHECK(std::string(e.what()) ==
          "A single NamedSharding spec specification can map every mesh axis to at most one positional dimension, "
          "but P('x', ('y', 'x')) has duplicate entries for `x`");
  }
  CHECK_THROWS_WITH_AS((void)on_cpu_mesh("P(P.UNCONSTRAINED)"),
                       "P(UNCONSTRAINED,) cannot contain `P.UNCONSTRAINED` when no mesh axis_types are `Auto`. Got "
                       "mesh axis_types: (Explicit, Explicit)",
                       Error);
  CHECK_NOTHROW((void)on_cpu_mesh("P(P.UNCONSTRAINED)", JaxProfile(), {AxisType::kAuto, AxisType::kAuto}));
}

TEST_CASE("shard shapes match JAX's test values") {
  const Shape shape{8, 4};
  const JaxProfile p;
  CHECK(shard_shape(on_cpu_mesh("P('x', 'y')"), shape, p) == Shape{2, 2});
  CHECK(shard_shape(on_cpu_mesh("P('x')"), shape, p) == Shape{2, 4});
  CHECK(shard_shape(on_cpu_mesh("P('y')"), shape, p) == Shape{4, 4});
  CHECK(shard_shape(on_cpu_mesh("P(None, 'y')"), shape, p) == Shape{8, 2});
  CHECK(shard_shape(on_cpu_mesh("P(None, 'x')"), shape, p) == Shape{8, 1});
  CHECK(shard_shape(on_cpu_mesh("P(('x', 'y'))"), shape, p) == Shape{1, 4});
  CHECK(shard_shape(on_cpu_mesh("P()"), shape, p) == Shape{8, 4});
  CHECK_THROWS_WITH_AS(
      (void)shard_shape(on_cpu_mesh("P('x', 'y', None)"), shape, p),
      doctest::Contains("is only valid for values of rank at least 3, but was applied to a value of rank 2."), Error);
  CHECK_THROWS_WITH_AS((void)shard_shape(on_cpu_mesh("P('x')"), Shape{}, p),
                       doctest::Contains("For scalars the PartitionSpec should be P()"), Error);
}

TEST_CASE("devices_indices_map follows the spec's axis order, with replica ids") {
  const ResolvedSharding resolved =
      resolve_sharding(ShardingRecipe{"tpu-v3-8", std::vector<std::pair<std::string, int64_t>>{{"a", 4}, {"b", 2}},
                                      std::nullopt, std::nullopt, "P(('a', 'b'), None)", std::nullopt, std::nullopt},
                       JaxProfile());
  const auto map = devices_indices_map(resolved.sharding, {8192, 8192}, JaxProfile());
  REQUIRE(map.size() == 8);
  // make_mesh((4, 2)) on v3-8 is [[0,1],[2,3],[6,7],[4,5]]; device 6 is at a=2, b=0 -> block 4.
  CHECK(map[4].device.id == 6);
  CHECK(map[4].index[0] == DimSlice{false, 4096, 5120, 4});
  CHECK(map[4].index[1].full);
  CHECK(map[4].index[1].repr() == "slice(None, None, None)");
  const NamedSharding replicated_b = on_cpu_mesh("P('x', None)");
  const auto by_rows = devices_indices_map(replicated_b, {8, 4}, JaxProfile());
  CHECK(by_rows[0].replica_id == 0);
  CHECK(by_rows[1].replica_id == 1);
  CHECK(by_rows[1].index == by_rows[0].index);
  CHECK(by_rows[2].index[0].repr() == "slice(2, 4, None)");
  CHECK(is_fully_replicated(on_cpu_mesh("P()")));
  CHECK_FALSE(is_fully_replicated(replicated_b));
}

TEST_CASE("padded cuts give ceil-sized blocks, the last ones short or empty") {
  const auto map = devices_indices_map(on_cpu_mesh("P(('x', 'y'))"), {5}, JaxProfile(), ShardCut::kPadded);
  CHECK(map[0].index[0] == DimSlice{false, 0, 1, 0});
  CHECK(map[4].index[0] == DimSlice{false, 4, 5, 4});
  CHECK(map[7].index[0] == DimSlice{false, 5, 5, 7});
}
