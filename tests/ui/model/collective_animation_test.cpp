// The device view's collective animation: each step's arrows join ICI neighbours' boxes, opposite sends stay apart,
// and the step wraps around.
#include "ui/model/collective_animation.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <map>

#include "device/presets.h"
#include "mesh/mesh.h"

namespace shardscope::ui {

TEST_CASE("a ring all-gather over 'y' on a 2x4 TPU v5e mesh moves chunks between neighbouring chips") {
  const JaxProfile profile;
  const Mesh mesh = make_mesh({2, 4}, {"x", "y"}, make_device_preset("tpu-v5e-8").devices, profile,
                              std::vector<AxisType>{AxisType::kAuto, AxisType::kAuto});
  CollectiveRecord record;
  record.kind = CollectiveKind::kAllGather;
  record.axes = {"y"};
  for (int64_t row = 0; row < 2; ++row) {
    std::vector<int64_t> ids;
    for (int64_t col = 0; col < 4; ++col) ids.push_back(mesh.devices()[static_cast<std::size_t>(row * 4 + col)].id);
    record.groups.push_back(ids);
  }
  const std::vector<Device>& devices = mesh.devices();
  const std::vector<CollectiveAnimation> animations = record_animations(record, devices);
  REQUIRE(animations.size() == 2);
  const DeviceViewLayout layout = layout_devices(devices);
  const CollectiveFrame frame = collective_frame(layout, animations, 0);
  CHECK(frame.steps == 3);
  CHECK(frame.caption.rfind("step 1/3 (all-gather): line (no wraparound link)", 0) == 0);
  // A line of 4: three sends each way per group at the first step.
  REQUIRE(frame.arrows.size() == 12);
  std::map<int64_t, Device> by_id;
  for (const Device& d : devices) by_id.emplace(d.id, d);
  for (const AnimationArrow& arrow : frame.arrows) {
    const Device& a = by_id.at(arrow.from);
    const Device& b = by_id.at(arrow.to);
    CHECK(std::abs(a.coords[0] - b.coords[0]) + std::abs(a.coords[1] - b.coords[1]) == 1);
    CHECK_FALSE(arrow.wraparound);
    // The arrow points from the sender's box towards the receiver's.
    const auto box = [&](int64_t id) {
      for (const DeviceBox& d : layout.devices) {
        if (d.id == id) return d.rect;
      }
      return Rect{};
    };
    const Rect from = box(arrow.from);
    const Rect to = box(arrow.to);
    const double dx = (to.x0 + to.x1) / 2 - (from.x0 + from.x1) / 2;
    const double dy = (to.y0 + to.y1) / 2 - (from.y0 + from.y1) / 2;
    CHECK((arrow.x1 - arrow.x0) * dx + (arrow.y1 - arrow.y0) * dy > 0);
  }
  // The two sends between the same pair are drawn apart.
  for (const AnimationArrow& a : frame.arrows) {
    for (const AnimationArrow& b : frame.arrows) {
      if (a.from == b.to && a.to == b.from) CHECK(std::hypot(a.x0 - b.x1, a.y0 - b.y1) > 1.0);
    }
  }
  CHECK(collective_frame(layout, animations, 4).step == 1);
  CHECK(collective_frame(layout, animations, -1).step == 2);
}

}  // namespace shardscope::ui
