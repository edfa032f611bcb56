// Device view layout: chips by coordinates, cores inside chips, hosts, links and torus wraparounds.
#include "ui/model/device_view.h"

#include <doctest/doctest.h>

#include <set>

#include "device/presets.h"
#include "tests/ui/model/fixtures.h"

namespace shardscope::ui {
namespace {

bool inside(const Rect& inner, const Rect& outer) {
  return inner.x0 >= outer.x0 && inner.y0 >= outer.y0 && inner.x1 <= outer.x1 && inner.y1 <= outer.y1;
}

}  // namespace

TEST_CASE("a TPU v3-8 is four chips in a 2x2 grid with two cores each") {
  const std::vector<Device> devices = make_device_preset("tpu-v3-8").devices;
  const DeviceViewLayout view = layout_devices(devices);
  REQUIRE(view.chips.size() == 4);
  REQUIRE(view.devices.size() == 8);
  for (const Device& d : devices) {
    const auto box =
        std::find_if(view.devices.begin(), view.devices.end(), [&](const DeviceBox& b) { return b.id == d.id; });
    const auto chip =
        std::find_if(view.chips.begin(), view.chips.end(), [&](const ChipBox& c) { return c.coords == d.coords; });
    REQUIRE(box != view.devices.end());
    REQUIRE(chip != view.chips.end());
    CHECK(inside(box->rect, chip->rect));
    // Core 0 on the left half, core 1 on the right.
    const double middle = (chip->rect.x0 + chip->rect.x1) / 2;
    CHECK((d.core_on_chip == 0 ? box->rect.x1 <= middle : box->rect.x0 >= middle));
    // Larger x coordinates are further right, larger y further down.
    CHECK(chip->rect.x0 ==
          doctest::Approx(view.chips.front().rect.x0 + (d.coords[0] - view.chips.front().coords[0]) * 128.0));
  }
  // A 2x2 grid has 2 horizontal and 2 vertical neighbour links and no wraparound.
  CHECK(view.links.size() == 4);
  CHECK(std::none_of(view.links.begin(), view.links.end(), [](const Link& l) { return l.wraparound; }));
  CHECK(view.hosts.size() == 1);
}

TEST_CASE("multi-host slices get one frame per host around its chips") {
  const std::vector<Device> devices = make_device_preset("tpu-v5e-16").devices;
  const DeviceViewLayout view = layout_devices(devices);
  REQUIRE(view.hosts.size() == 4);
  for (const Device& d : devices) {
    const auto box =
        std::find_if(view.devices.begin(), view.devices.end(), [&](const DeviceBox& b) { return b.id == d.id; });
    CHECK(inside(box->rect, view.hosts[static_cast<std::size_t>(d.process_index)].rect));
  }
  // 4x4 chips: 3 links per row and column, 4 rows and 4 columns; v5e is not a torus.
  CHECK(view.links.size() == 24);
}

TEST_CASE("3-D torus generations show wraparound links on axes of four or more chips") {
  const DevicePreset preset = make_device_preset("tpu-v4-128");
  REQUIRE(preset.chip_bounds == std::array<int, 3>{4, 4, 4});
  const DeviceViewLayout view = layout_devices(preset.devices);
  CHECK(view.chips.size() == 64);
  const auto wraps = std::count_if(view.links.begin(), view.links.end(), [](const Link& l) { return l.wraparound; });
  CHECK(wraps == 32);  // one x wrap per (y, z) row and one y wrap per (x, z) column
  CHECK(view.plane_titles.size() == 4);
}

TEST_CASE("GPUs sit eight to a node") {
  const DeviceViewLayout view = layout_devices(make_device_preset("gpu:16").devices);
  CHECK(view.devices.size() == 16);
  CHECK(view.hosts.size() == 2);
  CHECK(view.hosts[0].label == "node 0");
}

TEST_CASE("every device takes the colour of the cell holding its shard") {
  const Mesh mesh = testing::mesh_2x4();
  VizOptions options;
  const VizLayout layout = compute_layout({8, 8}, testing::named(mesh, "P('x', None)"), options, JaxProfile());
  const std::map<int64_t, Rgb> colors = device_colors(layout);
  CHECK(colors.size() == 8);
  // Two cells (n=2): JAX's stepping gives both the first tab20b colour.
  std::set<std::string> distinct;
  for (const auto& [id, color] : colors) distinct.insert(color.hex());
  CHECK(distinct == std::set<std::string>{"#393B79"});
}

}  // namespace shardscope::ui
