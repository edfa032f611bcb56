// Collectives move real data between per-device buffers and log participants and bytes.
#include "spmd/collectives.h"

#include <doctest/doctest.h>

#include <functional>

#include "base/error.h"
#include "device/presets.h"

using namespace shardscope;

namespace {

Mesh v3_mesh() { return make_mesh({2, 4}, {"x", "y"}, make_device_preset("tpu-v3-8").devices, JaxProfile()); }
Mesh cpu_mesh(std::vector<int64_t> shape, std::vector<std::string> names) {
  return make_mesh(shape, names, make_device_preset("cpu:" + std::to_string(product(shape))).devices, JaxProfile());
}

// Device i holds `values(i)` as a float32 vector.
DeviceBuffers per_device(const Mesh& mesh, const std::function<std::vector<float>(std::size_t)>& values) {
  DeviceBuffers out;
  for (std::size_t i = 0; i < mesh.devices().size(); ++i) {
    const std::vector<float> v = values(i);
    out.push_back(make_buffer(DType::kFloat32, {static_cast<int64_t>(v.size())}, v));
  }
  return out;
}

std::vector<float> floats(const BufferPtr& b) {
  const auto s = b->as<float>();
  return {s.begin(), s.end()};
}

}  // namespace

TEST_CASE("groups are the devices that differ only along the axes") {
  const Mesh mesh = v3_mesh();  // [[0,1,2,3],[6,7,4,5]]
  const auto groups = axis_groups(mesh, {"x"});
  std::vector<std::vector<int64_t>> ids;
  for (const auto& g : groups) {
    std::vector<int64_t> members;
    for (const std::size_t m : g) members.push_back(mesh.devices()[m].id);
    ids.push_back(members);
  }
  CHECK(ids == std::vector<std::vector<int64_t>>{{0, 6}, {1, 7}, {2, 4}, {3, 5}});
  CHECK(axis_indices(mesh, {"y"}) == std::vector<int64_t>{0, 1, 2, 3, 0, 1, 2, 3});
  CHECK(axis_indices(mesh, {"y", "x"}) == std::vector<int64_t>{0, 2, 4, 6, 1, 3, 5, 7});
  CHECK_THROWS_WITH_AS((void)axis_groups(mesh, {"z"}), doctest::Contains("unbound axis name: z"), Error);
}

TEST_CASE("psum sums each group in axis order and logs a ring all-reduce") {
  const Mesh mesh = cpu_mesh({2, 4}, {"x", "y"});
  CommLog log;
  const DeviceBuffers out = all_reduce(mesh, {"y"},
                                       per_device(mesh,
                                                  [](std::size_t i) {
                                                    return std::vector<float>{static_cast<float>(i), 1.0F};
                                                  }),
                                       ReduceOp::kSum, &log, "psum");
  CHECK(floats(out[0]) == std::vector<float>{6, 4});
  CHECK(floats(out[5]) == std::vector<float>{22, 4});
  CHECK(out[4] == out[7]);  // group members share the reduced buffer
  REQUIRE(log.records().size() == 1);
  const CollectiveRecord& record = log.records()[0];
  CHECK(record.kind == CollectiveKind::kAllReduce);
  CHECK(record.groups == std::vector<std::vector<int64_t>>{{0, 1, 2, 3}, {4, 5, 6, 7}});
  CHECK(record.bytes_sent[0] == 2 * 3 * 8 / 4);
  CHECK(record.summary() == "all-reduce over ('y',) groups {0,1,2,3},{4,5,6,7}: 12 B sent per device (psum)");
  const DeviceBuffers maxed = all_reduce(
      mesh, {"x", "y"}, per_device(mesh, [](std::size_t i) { return std::vector<float>{-static_cast<float>(i)}; }),
      ReduceOp::kMax, nullptr, "pmax");
  CHECK(floats(maxed[3]) == std::vector<float>{0});
}

TEST_CASE("all_gather concatenates or stacks") {
  const Mesh mesh = cpu_mesh({4}, {"x"});
  const DeviceBuffers values = per_device(mesh, [](std::size_t i) {
    return std::vector<float>{static_cast<float>(2 * i), static_cast<float>(2 * i + 1)};
  });
  CommLog log;
  const DeviceBuffers tiled = all_gather(mesh, {"x"}, values, 0, true, &log, "all_gather");
  CHECK(tiled[2]->shape() == Shape{8});
  CHECK(floats(tiled[2]) == std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(log.records()[0].bytes_received[1] == 3 * 8);
  const DeviceBuffers stacked = all_gather(mesh, {"x"}, values, 0, false, nullptr, "");
  CHECK(stacked[0]->shape() == Shape{4, 2});
  const DeviceBuffers stacked_last = all_gather(mesh, {"x"}, values, 1, false, nullptr, "");
  CHECK(stacked_last[0]->shape() == Shape{2, 4});
  CHECK(floats(stacked_last[0]) == std::vector<float>{0, 2, 4, 6, 1, 3, 5, 7});
}

TEST_CASE("psum_scatter leaves each member its block of the sum") {
  const Mesh mesh = cpu_mesh({4}, {"x"});
  const DeviceBuffers values =
      per_device(mesh, [](std::size_t i) { return std::vector<float>{1, 2, 3, 4, 5, 6, 7, static_cast<float>(i)}; });
  const DeviceBuffers tiled = reduce_scatter(mesh, {"x"}, values, 0, true, nullptr, "");
  CHECK(floats(tiled[0]) == std::vector<float>{4, 8});
  CHECK(floats(tiled[3]) == std::vector<float>{28, 6});
  const DeviceBuffers four = per_device(mesh, [](std::size_t) { return std::vector<float>{1, 2, 3, 4}; });
  const DeviceBuffers untiled = reduce_scatter(mesh, {"x"}, four, 0, false, nullptr, "");
  CHECK(untiled[2]->shape() == Shape{});
  CHECK(floats(untiled[2]) == std::vector<float>{12});
  CHECK_THROWS_AS((void)reduce_scatter(mesh, {"x"}, values, 0, false, nullptr, ""), Error);
}

TEST_CASE("all_to_all transposes blocks between members") {
  const Mesh mesh = cpu_mesh({2}, {"x"});
  DeviceBuffers values = {make_buffer<float>(DType::kFloat32, {2, 2}, {0, 1, 2, 3}),
                          make_buffer<float>(DType::kFloat32, {2, 2}, {4, 5, 6, 7})};
  CommLog log;
  const DeviceBuffers out = all_to_all(mesh, {"x"}, values, 0, 1, &log, "all_to_all");
  CHECK(out[0]->shape() == Shape{1, 4});
  CHECK(floats(out[0]) == std::vector<float>{0, 1, 4, 5});
  CHECK(floats(out[1]) == std::vector<float>{2, 3, 6, 7});
  CHECK(log.count(CollectiveKind::kAllToAll) == 1);
  CHECK(log.records()[0].bytes_sent[0] == 8);
}

TEST_CASE("ppermute shifts around a ring and zero-fills devices that receive nothing") {
  const Mesh mesh = cpu_mesh({4}, {"x"});
  const DeviceBuffers values =
      per_device(mesh, [](std::size_t i) { return std::vector<float>{static_cast<float>(i) + 1}; });
  const DeviceBuffers ring = collective_permute(mesh, {"x"}, values, {{0, 1}, {1, 2}, {2, 3}, {3, 0}}, nullptr, "");
  CHECK(floats(ring[0]) == std::vector<float>{4});
  CHECK(floats(ring[1]) == std::vector<float>{1});
  CommLog log;
  const DeviceBuffers partial = collective_permute(mesh, {"x"}, values, {{0, 2}}, &log, "ppermute");
  CHECK(floats(partial[2]) == std::vector<float>{1});
  CHECK(floats(partial[1]) == std::vector<float>{0});
  CHECK(log.records()[0].bytes_sent == std::vector<int64_t>{4, 0, 0, 0});
  CHECK_THROWS_WITH_AS((void)collective_permute(mesh, {"x"}, values, {{0, 1}, {2, 1}}, nullptr, ""),
                       doctest::Contains("unique"), Error);
  CHECK_THROWS_AS((void)collective_permute(mesh, {"x"}, values, {{0, 4}}, nullptr, ""), Error);
}

TEST_CASE("ppermute perms wrap negative indices and report duplicates with JAX's text") {
  CHECK(normalized_permutation({{-1, 0}, {0, -3}}, 4) == std::vector<std::pair<int64_t, int64_t>>{{3, 0}, {0, 1}});
  CHECK(permutation_repr({{0, 1}}) == "((0, 1),)");
  // Duplicates are found after wrapping: -1 and 3 name the same device.
  CHECK_THROWS_WITH_AS((void)normalized_permutation({{0, 3}, {1, -1}}, 4),
                       "ppermute sources and destinations must be unique, got ((0, 3), (1, -1)).", Error);
  CHECK_THROWS_AS((void)normalized_permutation({{0, 4}}, 4), Error);
}

TEST_CASE("each collective logs its HLO kind over the axes it ran on") {
  const Mesh mesh = cpu_mesh({2, 4}, {"x", "y"});
  const DeviceBuffers values = per_device(mesh, [](std::size_t i) {
    return std::vector<float>{static_cast<float>(i), 1, 2, 3};
  });
  CommLog log;
  (void)all_reduce(mesh, {"y"}, values, ReduceOp::kMax, &log, "pmax");
  (void)all_gather(mesh, {"x", "y"}, values, 0, true, &log, "all_gather");
  (void)reduce_scatter(mesh, {"y"}, values, 0, true, &log, "psum_scatter");
  (void)all_to_all(mesh, {"y"}, values, 0, 0, &log, "all_to_all");
  (void)collective_permute(mesh, {"x"}, values, {{0, 1}, {1, 0}}, &log, "ppermute");
  std::vector<std::string> kinds;
  for (const CollectiveRecord& record : log.records()) kinds.push_back(collective_name(record.kind));
  CHECK(kinds ==
        std::vector<std::string>{"all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute"});
  CHECK(log.records()[1].axes == std::vector<std::string>{"x", "y"});
  // A tiled reduce-scatter over 4 members sends 3/4 of its 16-byte value.
  CHECK(log.records()[2].bytes_sent == std::vector<int64_t>(8, 12));
  // The permute over 'x' swaps the two rows of the mesh: every device sends its whole value once.
  CHECK(log.records()[4].bytes_sent == std::vector<int64_t>(8, 16));
}
