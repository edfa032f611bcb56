// Resharding picks XLA's collective for each kind of layout change and moves the blocks to where the target
// layout puts them: the values read back equal the original array whatever the collective.
#include "spmd/reshard.h"

#include <doctest/doctest.h>

#include "device/presets.h"

using namespace shardscope;

namespace {

const JaxProfile kProfile;

Mesh cpu_mesh(std::vector<int64_t> shape, std::vector<std::string> names) {
  return make_mesh(shape, names, make_device_preset("cpu:" + std::to_string(product(shape))).devices, kProfile);
}

NamedSharding named(const Mesh& mesh, const std::string& spec) {
  return make_named_sharding(mesh, parse_partition_spec(spec), kProfile);
}

Array iota_array(const Shape& shape, const Sharding& sharding) {
  std::vector<float> values(static_cast<std::size_t>(product(shape)));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  return Array::from_host(make_buffer(DType::kFloat32, shape, values), sharding, kProfile);
}

std::vector<float> floats(const BufferPtr& b) {
  const auto s = b->as<float>();
  return {s.begin(), s.end()};
}

}  // namespace

TEST_CASE("swapping equal-sized axes between dims is one collective-permute, other moves keep their collectives") {
  const Mesh square = cpu_mesh({2, 2}, {"x", "y"});
  const auto swap = reshard_steps({{"x"}, {"y"}}, {{"y"}, {"x"}}, square);
  REQUIRE(swap.size() == 1);
  CHECK(swap[0].kind == CollectiveKind::kCollectivePermute);
  CHECK(swap[0].axes == std::vector<std::string>{"x", "y"});
  // Reordering the axes of one dim keeps each dim's block count: a permute too.
  const auto reorder = reshard_steps({{"x", "y"}, {}}, {{"y", "x"}, {}}, square);
  REQUIRE(reorder.size() == 1);
  CHECK(reorder[0].kind == CollectiveKind::kCollectivePermute);

  // 4x2: the dims' block counts change (2 and 4 become 4 and 2), so this is no permute.
  const Mesh oblong = cpu_mesh({4, 2}, {"x", "y"});
  for (const ReshardStep& step : reshard_steps({{"y"}, {"x"}}, {{"x"}, {"y"}}, oblong)) {
    CHECK(step.kind != CollectiveKind::kCollectivePermute);
  }
  // One axis moving from one dim's end to another's: one all-to-all; an axis going away: an all-gather.
  const auto moved = reshard_steps({{"x"}, {}}, {{}, {"x"}}, oblong);
  REQUIRE(moved.size() == 1);
  CHECK(moved[0].kind == CollectiveKind::kAllToAll);
  const auto gathered = reshard_steps({{"x"}, {"y"}}, {{}, {"y"}}, oblong);
  REQUIRE(gathered.size() == 1);
  CHECK(gathered[0].kind == CollectiveKind::kAllGather);
  // A different axis in the same place is a change of devices that no permute of blocks can make.
  CHECK(reshard_steps({{"x"}, {}}, {{"y"}, {}}, square).front().kind == CollectiveKind::kAllGather);
}

TEST_CASE("a permuting reshard moves each block once and only from devices whose block changes") {
  const Mesh mesh = cpu_mesh({2, 2}, {"x", "y"});
  const Array source = iota_array({4, 6}, named(mesh, "P('x', 'y')"));
  CommLog log;
  const Array moved = reshard(source, named(mesh, "P('y', 'x')"), kProfile, &log, "test");
  CHECK(floats(moved.gather()) == floats(source.gather()));
  CHECK(moved.sharding() == Sharding{named(mesh, "P('y', 'x')")});
  REQUIRE(log.records().size() == 1);
  const CollectiveRecord& record = log.records()[0];
  CHECK(record.kind == CollectiveKind::kCollectivePermute);
  // Devices (0,0) and (1,1) hold the same block under both layouts; (0,1) and (1,0) swap 2x3 float blocks.
  CHECK(record.bytes_sent == std::vector<int64_t>{0, 24, 24, 0});
  for (const Array::Shard& shard : moved.shards()) {
    const std::vector<DeviceIndex> wanted = devices_indices_map(moved.sharding(), moved.shape(), kProfile);
    bool found = false;
    for (const DeviceIndex& index : wanted) {
      if (index.device == shard.device) {
        CHECK(index.index == shard.index);
        found = true;
      }
    }
    CHECK(found);
  }
}

TEST_CASE("the axes leaving one dim go in one all-gather over their combined groups, each dim gathers on its own") {
  const Mesh mesh = cpu_mesh({4, 2}, {"data", "model"});
  // A dim tiled over both axes (XLA tiles it once, eight ways) becomes whole with one all-gather of all 8 devices.
  const auto whole = reshard_steps({{"data", "model"}}, {{}}, mesh);
  REQUIRE(whole.size() == 1);
  CHECK(whole[0].kind == CollectiveKind::kAllGather);
  CHECK(whole[0].axes == std::vector<std::string>{"data", "model"});
  // Keeping the major axis gathers only the minor one.
  const auto minor = reshard_steps({{"data", "model"}}, {{"data"}}, mesh);
  REQUIRE(minor.size() == 1);
  CHECK(minor[0].axes == std::vector<std::string>{"model"});
  // Two sharded dims replicate with one all-gather each.
  const auto both = reshard_steps({{"data"}, {"model"}}, {{}, {}}, mesh);
  REQUIRE(both.size() == 2);
  CHECK(both[0].axes == std::vector<std::string>{"data"});
  CHECK(both[1].axes == std::vector<std::string>{"model"});

  // The one collective puts every element back in order and is logged once, over groups of all 8 devices.
  const Array source = iota_array({16}, named(mesh, "P(('data', 'model'))"));
  CommLog log;
  const Array gathered = reshard(source, named(mesh, "P()"), kProfile, &log, "test");
  CHECK(floats(gathered.gather()) == floats(source.gather()));
  REQUIRE(log.records().size() == 1);
  CHECK(log.records()[0].kind == CollectiveKind::kAllGather);
  CHECK(log.records()[0].groups == std::vector<std::vector<int64_t>>{{0, 1, 2, 3, 4, 5, 6, 7}});
  for (const Array::Shard& shard : gathered.shards()) CHECK(floats(shard.data) == floats(source.gather()));
}
