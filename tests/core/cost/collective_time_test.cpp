// Collective times against the scaling book's formulas and worked examples (jax-ml/scaling-book, sharding.md,
// "Part 3: Sharded Matrices"), on topologies taken from the presets' real device coordinates.
#include "cost/collective_time.h"

#include <doctest/doctest.h>

#include <functional>

#include "device/presets.h"

using namespace shardscope;

namespace {

// The devices of `preset` whose chip coordinates satisfy `keep`, one device per chip.
std::vector<const Device*> chips(const std::vector<Device>& devices, const std::function<bool(const Device&)>& keep) {
  std::vector<const Device*> out;
  for (const Device& device : devices) {
    if (device.core_on_chip == 0 && keep(device)) out.push_back(&device);
  }
  return out;
}

}  // namespace

TEST_CASE("a ring closes only over a whole torus dimension that has its wraparound link") {
  const std::vector<Device> v5e = make_device_preset("tpu-v5e-256").devices;  // 16x16: both dimensions wrap
  const HardwareSpec& v5e_hw = hardware_for_kind("TPU v5 lite");
  const auto row = chips(v5e, [](const Device& d) { return d.coords[1] == 3; });
  REQUIRE(row.size() == 16);
  const CollectiveTopology full = collective_topology(row, v5e, v5e_hw);
  CHECK(full.physical_axes == 1);
  CHECK(full.wraparound);
  CHECK(full.link == "ICI");
  const auto part = chips(v5e, [](const Device& d) { return d.coords[1] == 3 && d.coords[0] < 4; });
  const CollectiveTopology line = collective_topology(part, v5e, v5e_hw);
  CHECK_FALSE(line.wraparound);
  CHECK(line.link == "ICI, no wraparound");
  const auto square = chips(v5e, [](const Device& d) { return d.coords[0] < 2 && d.coords[1] < 2; });
  CHECK(collective_topology(square, v5e, v5e_hw).physical_axes == 2);
  // A v4 4x4x4 cube wraps on every dimension (optical links close rings at multiples of 4).
  const std::vector<Device> v4 = make_device_preset("tpu-v4-128").devices;
  const auto ring = chips(v4, [](const Device& d) { return d.coords[1] == 0 && d.coords[2] == 0; });
  REQUIRE(ring.size() == 4);
  CHECK(collective_topology(ring, v4, hardware_for_kind("TPU v4")).wraparound);
  // GPUs reach each other through the switch; a group spanning nodes goes over the network.
  const std::vector<Device> gpus = make_device_preset("gpu:16").devices;
  std::vector<const Device*> node;
  for (std::size_t i = 0; i < 8; ++i) node.push_back(&gpus[i]);
  const HardwareSpec& h100 = hardware_for_kind("NVIDIA H100 80GB HBM3");
  CHECK(collective_topology(node, gpus, h100).switched);
  std::vector<const Device*> across = {&gpus[0], &gpus[15]};
  CHECK(collective_topology(across, gpus, h100).crosses_hosts == (gpus[0].process_index != gpus[15].process_index));
}

TEST_CASE("scaling book, sharding.md, Pop Quiz 2: AllGather_Y([E_Y, F]) on a TPU v5e with |Y| = 4") {
  // E = 2048, F = 8192 in bf16: V = 2 * 2048 * 8192 B = 33.5 MB. A 4-chip axis of a v5e has no wraparound
  // link, so the book's answer is 3 hops of the 8.4 MB shard at the one-way 4.5e10 B/s: 3 * 8.4e6 / 4.5e10 = 560 us.
  const HardwareSpec& v5e = hardware_for_kind("TPU v5 lite");
  const std::vector<Device> devices = make_device_preset("tpu-v5e-32").devices;
  const auto axis = chips(devices, [](const Device& d) { return d.coords[0] == 0; });
  REQUIRE(axis.size() == 4);
  const CollectiveTopology topology = collective_topology(axis, devices, v5e);
  CHECK_FALSE(topology.wraparound);
  const double shard = 2.0 * 2048 * 8192 / 4;
  const CollectiveTime big = collective_time(CollectiveKind::kAllGather, 4, 3 * shard, topology, v5e);
  CHECK(big.seconds == doctest::Approx(3 * shard / 4.5e10));
  CHECK(big.seconds == doctest::Approx(560e-6).epsilon(0.01));
  // E = F = 256: each shard is 32 kB, 0.7 us per hop on the wire, so the 3 hops of about 1 us dominate: 3 us.
  const double small_shard = 2.0 * 256 * 256 / 4;
  const CollectiveTime small = collective_time(CollectiveKind::kAllGather, 4, 3 * small_shard, topology, v5e);
  CHECK(small.latency_seconds == doctest::Approx(3e-6));
  CHECK(small.seconds == doctest::Approx(3e-6));
}

TEST_CASE("scaling book, sharding.md, Question 2: AllGathers on a TPU v4p 4x4x4 slice") {
  // Mesh {'X': 4, 'Y': 4, 'Z': 4}, B = 1024, D = 4096 in bf16, wraparound on every axis (W_bidi = 9e10 B/s).
  const HardwareSpec& v4 = hardware_for_kind("TPU v4");
  const std::vector<Device> devices = make_device_preset("tpu-v4-128").devices;
  const auto x_axis = chips(devices, [](const Device& d) { return d.coords[1] == 0 && d.coords[2] == 0; });
  const auto xy_plane = chips(devices, [](const Device& d) { return d.coords[2] == 0; });
  const double b = 1024;
  const double d = 4096;
  // AllGather_X([B_X, D_Y]): V = 2BD / |Y| bytes over one axis: 2 * 1024 * 4096 / (9e10 * 4) = 23 us.
  const double v1 = 2 * b * d / 4;
  const CollectiveTime one_axis =
      collective_time(CollectiveKind::kAllGather, 4, 3 * v1 / 4, collective_topology(x_axis, devices, v4), v4);
  CHECK(one_axis.seconds == doctest::Approx(2 * b * d / (9e10 * 4)));
  CHECK(one_axis.seconds == doctest::Approx(23.3e-6).epsilon(0.01));
  // AllGather_XY([B_X, D_Y]): the whole array, V = 2BD, over two axes' links: 2BD / (2 W) = 46 us.
  const double v2 = 2 * b * d;
  const CollectiveTime two_axes =
      collective_time(CollectiveKind::kAllGather, 16, 15 * v2 / 16, collective_topology(xy_plane, devices, v4), v4);
  CHECK(two_axes.seconds == doctest::Approx(2 * b * d / (2 * 9e10)));
  CHECK(two_axes.seconds == doctest::Approx(46.6e-6).epsilon(0.01));
}

TEST_CASE("scaling book, sharding.md, Question 3: a latency-bound AllGather_X([B_X]) on a v4p 4x4x4 slice") {
  // B = 128 in bf16: 256 B in all. With the wraparound link the gather takes 2 hops of about 1 us.
  const HardwareSpec& v4 = hardware_for_kind("TPU v4");
  const std::vector<Device> devices = make_device_preset("tpu-v4-128").devices;
  const auto x_axis = chips(devices, [](const Device& d) { return d.coords[1] == 0 && d.coords[2] == 0; });
  const CollectiveTime t =
      collective_time(CollectiveKind::kAllGather, 4, 3 * 64.0, collective_topology(x_axis, devices, v4), v4);
  CHECK(t.latency_seconds == doctest::Approx(2e-6));
  CHECK(t.seconds == doctest::Approx(2e-6));
}

TEST_CASE("scaling book, sharding.md summary table: AllReduce is twice an AllGather, AllToAll a quarter") {
  // A 100 MB array on a full 16-chip v5e ring (wraparound): AllGather V / W_bidi = 1e8 / 9e10 = 1.11 ms.
  const HardwareSpec& v5e = hardware_for_kind("TPU v5 lite");
  const std::vector<Device> devices = make_device_preset("tpu-v5e-256").devices;
  const auto ring = chips(devices, [](const Device& d) { return d.coords[1] == 0; });
  const CollectiveTopology topology = collective_topology(ring, devices, v5e);
  const double v = 1e8;
  const double n = 16;
  const CollectiveTime gather = collective_time(CollectiveKind::kAllGather, 16, (n - 1) * v / n, topology, v5e);
  const CollectiveTime scatter = collective_time(CollectiveKind::kReduceScatter, 16, (n - 1) / n * v, topology, v5e);
  const CollectiveTime reduce = collective_time(CollectiveKind::kAllReduce, 16, 2 * (n - 1) / n * v, topology, v5e);
  // all-to-all: each device holds b = V / n and sends (n-1)/n of it.
  const CollectiveTime all_to_all =
      collective_time(CollectiveKind::kAllToAll, 16, (n - 1) / n * (v / n), topology, v5e);
  CHECK(gather.seconds == doctest::Approx(v / 9e10));
  CHECK(scatter.seconds == doctest::Approx(v / 9e10));
  CHECK(reduce.seconds == doctest::Approx(2 * v / 9e10));
  CHECK(all_to_all.seconds == doctest::Approx(v / (4 * 9e10)));
  // A collective-permute sends one shard one hop, one way.
  const CollectiveTime permute = collective_time(CollectiveKind::kCollectivePermute, 16, v / n, topology, v5e);
  CHECK(permute.seconds == doctest::Approx(v / n / 4.5e10));
  // One device per group moves nothing.
  CHECK(collective_time(CollectiveKind::kAllGather, 1, 0, topology, v5e).seconds == 0.0);
}
