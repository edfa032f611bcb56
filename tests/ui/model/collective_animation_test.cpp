// The device view's collective animation: each step's arrows join ICI neighbours' boxes, opposite sends stay apart,
// and the step wraps around.
#include "ui/model/collective_animation.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <regex>

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

TEST_CASE("an exported frame draws every chunk where the window does, on its arrow between the two devices") {
  // 4x4x4 chips of a v4 torus: groups along x close their ring over the wraparound link.
  const std::vector<Device> devices = make_device_preset("tpu-v4-128").devices;
  CollectiveRecord record;
  record.kind = CollectiveKind::kAllReduce;
  record.axes = {"x"};
  std::map<std::pair<int, int>, std::vector<int64_t>> rows;
  for (const Device& d : devices) rows[{d.coords[1], d.coords[2]}].push_back(d.id);
  for (const auto& [at, ids] : rows) {
    REQUIRE(ids.size() == 4);
    record.groups.push_back(ids);
  }
  const DeviceViewLayout layout = layout_devices(devices);
  const CollectiveFrame frame = collective_frame(layout, record_animations(record, devices), 1);
  REQUIRE_FALSE(frame.arrows.empty());
  const std::string svg = collective_frame_svg(layout, record, frame, 0.25);
  CHECK(svg.find("all-reduce over x, step 2/6 (reduce-scatter)") != std::string::npos);
  CHECK(svg.find("class=\"link wraparound\"") != std::string::npos);
  const std::regex chunk(R"re(<rect class="chunk" data-from="(\d+)" data-to="(\d+)"(?: data-wraparound="true")? )re"
                         R"re(data-cx="([^"]+)" data-cy="([^"]+)")re");
  std::size_t chunks = 0;
  bool wraparound = false;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), chunk); it != std::sregex_iterator(); ++it, ++chunks) {
    const AnimationArrow& arrow = frame.arrows[chunks];
    CHECK(std::stoll((*it)[1].str()) == arrow.from);
    CHECK(std::stoll((*it)[2].str()) == arrow.to);
    // A quarter of the way from the sender's end of the arrow.
    const auto [x, y] = chunk_position(arrow, 0.25);
    CHECK(std::stod((*it)[3].str()) == doctest::Approx(x).epsilon(1e-3));
    CHECK(std::stod((*it)[4].str()) == doctest::Approx(y).epsilon(1e-3));
    CHECK(x == doctest::Approx(arrow.x0 + (arrow.x1 - arrow.x0) / 4));
    wraparound = wraparound || arrow.wraparound;
  }
  CHECK(chunks == frame.arrows.size());
  CHECK(wraparound);  // a closed ring of 4 sends over the link that closes it
  CHECK(chunk_position(frame.arrows[0], 2.0) == std::make_pair(frame.arrows[0].x1, frame.arrows[0].y1));
}

}  // namespace shardscope::ui
