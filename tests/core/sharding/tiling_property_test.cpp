// Property: over random meshes, specs and divisible shapes, shards tile the array exactly.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>

#include "device/presets.h"
#include "sharding/sharding.h"

using namespace shardscope;

namespace {

struct RandomCase {
  Mesh mesh;
  PartitionSpec spec;
  Shape shape;
};

RandomCase random_case(std::mt19937& rng) {
  std::uniform_int_distribution<int> axis_count_dist(1, 4);
  const int axis_count = axis_count_dist(rng);
  std::vector<int64_t> sizes;
  std::vector<std::string> names;
  int64_t devices = 1;
  for (int a = 0; a < axis_count; ++a) {
    std::vector<int64_t> options;
    for (const int64_t s : {1, 2, 3, 4}) {
      if (devices * s <= 64) options.push_back(s);
    }
    const int64_t size = options[std::uniform_int_distribution<std::size_t>(0, options.size() - 1)(rng)];
    sizes.push_back(size);
    names.push_back(std::string(1, static_cast<char>('a' + a)));
    devices *= size;
  }
  const Mesh mesh = make_mesh(sizes, names, make_device_preset("cpu:" + std::to_string(devices)).devices, JaxProfile(),
                              std::vector<AxisType>(sizes.size(), AxisType::kExplicit));
  // Deal the mesh axes out to array dimensions (or leave them out), shuffled so tuple order varies.
  const std::size_t rank = std::uniform_int_distribution<std::size_t>(1, 3)(rng);
  std::vector<std::vector<std::string>> per_dim(rank);
  std::vector<std::string> shuffled = names;
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  for (const std::string& name : shuffled) {
    const std::size_t slot = std::uniform_int_distribution<std::size_t>(0, rank)(rng);
    if (slot < rank) per_dim[slot].push_back(name);
  }
  std::vector<SpecEntry> entries;
  Shape shape;
  for (std::size_t d = 0; d < rank; ++d) {
    int64_t shards = 1;
    for (const std::string& axis : per_dim[d]) shards *= mesh.axis_size(axis);
    shape.push_back(shards * std::uniform_int_distribution<int64_t>(1, 3)(rng));
    entries.push_back(SpecEntry::of_axes(per_dim[d]));
  }
  // Trailing None entries are sometimes left out, as people write them.
  while (!entries.empty() && entries.back().is_none() && (rng() % 2 == 0)) entries.pop_back();
  return {mesh, PartitionSpec(entries), shape};
}

}  // namespace

TEST_CASE("random shardings tile their arrays exactly with uniform replication") {
  std::mt19937 rng(20261122);
  const JaxProfile profile;
  for (int iteration = 0; iteration < 400; ++iteration) {
    const RandomCase c = random_case(rng);
    const NamedSharding sharding = make_named_sharding(c.mesh, c.spec, profile);
    CAPTURE(sharding_repr(sharding, profile));
    CAPTURE(python_int_tuple(c.shape));
    const auto map = devices_indices_map(sharding, c.shape, profile);
    REQUIRE(map.size() == static_cast<std::size_t>(c.mesh.size()));

    std::map<std::vector<DimSlice>, int64_t> holders;
    std::map<std::vector<DimSlice>, std::vector<int64_t>> replica_ids;
    for (const DeviceIndex& entry : map) {
      ++holders[entry.index];
      replica_ids[entry.index].push_back(entry.replica_id);
    }
    const Shape tile = shard_shape(sharding, c.shape, profile);
    const int64_t elements = product(c.shape);
    CHECK(static_cast<int64_t>(holders.size()) * product(tile) == elements);
    for (const auto& [index, count] : holders) {
      CHECK(count * static_cast<int64_t>(holders.size()) == c.mesh.size());
      std::vector<int64_t> ids = replica_ids[index];
      std::sort(ids.begin(), ids.end());
      for (std::size_t i = 0; i < ids.size(); ++i) CHECK(ids[i] == static_cast<int64_t>(i));
    }
    // Every element lies in exactly one distinct tile.
    std::vector<int> covered(static_cast<std::size_t>(elements), 0);
    for (const auto& [index, count] : holders) {
      std::vector<int64_t> lo(c.shape.size());
      std::vector<int64_t> hi(c.shape.size());
      for (std::size_t d = 0; d < c.shape.size(); ++d) {
        lo[d] = index[d].full ? 0 : index[d].start;
        hi[d] = index[d].full ? c.shape[d] : index[d].stop;
        CHECK(hi[d] - lo[d] == tile[d]);
      }
      for (int64_t flat = 0; flat < elements; ++flat) {
        int64_t rest = flat;
        bool inside = true;
        for (std::size_t d = c.shape.size(); d-- > 0;) {
          const int64_t coordinate = rest % c.shape[d];
          rest /= c.shape[d];
          inside = inside && coordinate >= lo[d] && coordinate < hi[d];
        }
        if (inside) ++covered[static_cast<std::size_t>(flat)];
      }
    }
    CHECK(std::all_of(covered.begin(), covered.end(), [](int n) { return n == 1; }));
  }
}
