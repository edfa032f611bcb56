// PmapSharding's text per JAX version: Unstacked before 0.4.34, Chunked after, none outside 0.4.1-0.7.x.
#include "sharding/pmap_sharding.h"

#include <doctest/doctest.h>

#include "device/presets.h"

using namespace shardscope;

namespace {

Sharding stacked(const JaxProfile& profile, const std::string& spec, int64_t n = 8) {
  std::vector<Device> devices = make_device_preset("cpu:8").devices;
  devices.resize(static_cast<std::size_t>(n));
  const Mesh mesh = make_mesh({n}, {"i"}, devices, profile, std::vector<AxisType>{AxisType::kAuto});
  return make_named_sharding(mesh, parse_partition_spec(spec), profile);
}

}  // namespace

TEST_CASE("old pmap outputs print PmapSharding with JAX's ShardingSpec") {
  const JaxProfile v0430(JaxVersion{0, 4, 30});
  const auto layout = pmap_sharding_layout(stacked(v0430, "P('i')"), 1, v0430);
  REQUIRE(layout.has_value());
  CHECK(sharding_spec_repr(*layout) == "ShardingSpec((Unstacked(8),), (ShardedAxis(axis=0),))");
  CHECK(pmap_sharding_str(*layout) ==
        "PmapSharding(sharding_spec=ShardingSpec((Unstacked(8),), (ShardedAxis(axis=0),)), "
        "device_ids=[0, 1, 2, 3, 4, 5, 6, 7], device_platform=CPU, device_shape=(8,))");
  CHECK(pmap_shard_shape(*layout, {8}) == Shape{});
  // From 0.4.34 the shards keep their leading 1, and a rank-2 output's second dim is unsharded.
  const JaxProfile v0435(JaxVersion{0, 4, 35});
  const auto chunked = pmap_sharding_layout(stacked(v0435, "P('i', None)", 4), 2, v0435);
  REQUIRE(chunked.has_value());
  CHECK(sharding_spec_repr(*chunked) == "ShardingSpec((Chunked(4), NoSharding()), (ShardedAxis(axis=0),))");
  CHECK(pmap_shard_shape(*chunked, {4, 3}) == Shape{1, 3});
  // out_axes=1 stacks on the second dim.
  const auto second = pmap_sharding_layout(stacked(v0430, "P(None, 'i')", 2), 2, v0430);
  REQUIRE(second.has_value());
  CHECK(sharding_spec_repr(*second) == "ShardingSpec((NoSharding(), Unstacked(2)), (ShardedAxis(axis=0),))");
}

TEST_CASE("no PmapSharding before jax.Array or once pmap is jit of shard_map") {
  const JaxProfile old(JaxVersion{0, 3, 25});
  CHECK_FALSE(pmap_sharding_layout(stacked(old, "P('i')"), 1, old).has_value());
  const JaxProfile merged(JaxVersion{0, 8, 0});
  CHECK_FALSE(pmap_sharding_layout(stacked(merged, "P('i')"), 1, merged).has_value());
  const JaxProfile v07(JaxVersion{0, 7, 1});
  CHECK(pmap_sharding_layout(stacked(v07, "P('i')"), 1, v07).has_value());
  // A sharding that is not a stacked one-axis mesh has none.
  CHECK_FALSE(pmap_sharding_layout(stacked(v07, "P()"), 1, v07).has_value());
}
