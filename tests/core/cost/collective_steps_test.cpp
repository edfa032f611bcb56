// Ring steps: on a closed torus ring chunks travel both ways and use the wraparound link; on a line they do not;
// in every case a member only forwards chunks it already holds and ends with every chunk (all-gather).
#include "cost/collective_steps.h"

#include <doctest/doctest.h>

#include <map>
#include <set>

#include "cost/hardware.h"
#include "device/presets.h"

using namespace shardscope;

namespace {

// Members whose chip coordinates differ only in `axis` and agree with device 0 elsewhere, one per chip.
std::vector<const Device*> line_of_chips(const std::vector<Device>& devices, std::size_t axis) {
  std::vector<const Device*> group;
  for (const Device& d : devices) {
    bool same = d.core_on_chip == 0;
    for (std::size_t a = 0; a < 3; ++a) same = same && (a == axis || d.coords[a] == devices.front().coords[a]);
    if (same) group.push_back(&d);
  }
  return group;
}

// Replays an all-gather: every member starts with its own chunk; a transfer needs the chunk at the sender.
void check_all_gather_delivers(const CollectiveAnimation& a) {
  std::map<int64_t, std::set<int64_t>> held;
  for (std::size_t i = 0; i < a.ring.size(); ++i) held[a.ring[i]].insert(static_cast<int64_t>(i));
  for (const CollectiveStep& step : a.steps) {
    std::vector<std::pair<int64_t, int64_t>> arrivals;
    for (const ChunkTransfer& t : step.transfers) {
      CHECK(held[t.from].count(t.chunk) == 1);
      arrivals.emplace_back(t.to, t.chunk);
    }
    for (const auto& [to, chunk] : arrivals) held[to].insert(chunk);
  }
  for (const int64_t id : a.ring) CHECK(held[id].size() == a.ring.size());
}

}  // namespace

TEST_CASE("a ring all-gather on a closed TPU v4 torus ring sends both ways and uses the wraparound link") {
  const DevicePreset preset = make_device_preset("tpu-v4-128");  // 64 chips, 4x4x4: every dimension closes
  const std::vector<const Device*> group = line_of_chips(preset.devices, 2);
  REQUIRE(group.size() == 4);
  const HardwareSpec& hardware = hardware_for(preset.devices.front());
  const CollectiveTopology topology = collective_topology(group, preset.devices, hardware);
  REQUIRE(topology.wraparound);
  const CollectiveAnimation a = collective_animation(CollectiveKind::kAllGather, group, topology);
  CHECK(a.wraparound);
  REQUIRE(a.steps.size() == 3);
  CHECK(a.steps[0].transfers.size() == 8);  // every member to both neighbours
  // Ring order follows the z coordinate, so consecutive members are ICI neighbours.
  for (std::size_t i = 0; i < a.ring.size(); ++i) {
    for (const Device* d : group) {
      if (d->id == a.ring[i]) CHECK(d->coords[2] == static_cast<int>(i));
    }
  }
  int wraps = 0;
  for (const ChunkTransfer& t : a.steps[0].transfers) {
    if (!t.wraparound) continue;
    ++wraps;
    CHECK(((t.from == a.ring.back() && t.to == a.ring.front()) || (t.from == a.ring.front() && t.to == a.ring.back())));
  }
  CHECK(wraps == 2);
  check_all_gather_delivers(a);

  const CollectiveAnimation reduce = collective_animation(CollectiveKind::kAllReduce, group, topology);
  REQUIRE(reduce.steps.size() == 6);
  CHECK(reduce.steps.front().phase == "reduce-scatter");
  CHECK(reduce.steps.back().phase == "all-gather");
}

TEST_CASE("without the wraparound link the chunks flow along a line and never cross from end to end") {
  const DevicePreset preset = make_device_preset("tpu-v5e-8");  // 2x4 chips: v5e closes its rings only at 16
  const std::vector<const Device*> group = line_of_chips(preset.devices, 0);
  REQUIRE(group.size() >= 2);
  const CollectiveTopology topology = collective_topology(group, preset.devices, hardware_for(preset.devices.front()));
  REQUIRE_FALSE(topology.wraparound);
  const CollectiveAnimation a = collective_animation(CollectiveKind::kAllGather, group, topology);
  CHECK_FALSE(a.wraparound);
  CHECK(a.steps.size() == group.size() - 1);
  for (const CollectiveStep& step : a.steps) {
    for (const ChunkTransfer& t : step.transfers) CHECK_FALSE(t.wraparound);
  }
  check_all_gather_delivers(a);
  const CollectiveAnimation permute = collective_animation(CollectiveKind::kCollectivePermute, group, topology);
  REQUIRE(permute.steps.size() == 1);
  CHECK(permute.steps[0].transfers.size() == group.size() - 1);
}
