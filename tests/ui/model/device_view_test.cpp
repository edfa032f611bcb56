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

namespace shardscope::ui {
namespace {

bool overlap(const Rect& a, const Rect& b) { return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1; }

// The labels of a preset's device view fitted to a 940x450 canvas (the window's at 1600x1000).
struct FittedLabels {
  DeviceViewLayout layout;
  ViewTransform view;
  std::vector<ViewLabel> labels;
};

FittedLabels fitted(const std::string& preset) {
  FittedLabels out;
  out.layout = layout_devices(make_device_preset(preset).devices, 940.0 / 450.0);
  out.view = ViewTransform::fit(out.layout.width, out.layout.height, 940, 450, 16, 2.0);
  out.labels = place_view_labels(out.layout, out.view, LabelFont{});
  return out;
}

void check_no_overlaps(const FittedLabels& f) {
  for (std::size_t i = 0; i < f.labels.size(); ++i) {
    for (std::size_t j = i + 1; j < f.labels.size(); ++j) {
      INFO(f.labels[i].text << " and " << f.labels[j].text);
      CHECK_FALSE(overlap(f.labels[i].rect, f.labels[j].rect));
    }
  }
  // Host and plane labels cover no device.
  for (const ViewLabel& label : f.labels) {
    if (label.kind == ViewLabel::Kind::kDevice) continue;
    for (const DeviceBox& device : f.layout.devices) {
      const Rect box{f.view.to_screen_x(device.rect.x0), f.view.to_screen_y(device.rect.y0),
                     f.view.to_screen_x(device.rect.x1), f.view.to_screen_y(device.rect.y1)};
      INFO(label.text << " over device " << device.id);
      CHECK_FALSE(overlap(label.rect, box));
    }
  }
}

}  // namespace

TEST_CASE("256 chips: every host label and device id drawn, none overlapping, none over a chip") {
  const FittedLabels f = fitted("tpu-v5e-256");
  REQUIRE(f.layout.devices.size() == 256);
  check_no_overlaps(f);
  const auto count = [&](ViewLabel::Kind kind) {
    return std::count_if(f.labels.begin(), f.labels.end(), [&](const ViewLabel& l) { return l.kind == kind; });
  };
  CHECK(count(ViewLabel::Kind::kHost) == static_cast<long>(f.layout.hosts.size()));
  CHECK(count(ViewLabel::Kind::kDevice) == 256);
  // Legible: no label below the font's minimum size.
  for (const ViewLabel& label : f.labels) CHECK(label.size >= LabelFont{}.min_size);
}

TEST_CASE("1024 chips: planes wrap into rows to fill the canvas, and no labels overlap") {
  for (const std::string preset : {"tpu-v4-2048", "tpu-v3-2048", "gpu:1024", "cpu:1024"}) {
    INFO(preset);
    const FittedLabels f = fitted(preset);
    check_no_overlaps(f);
    // The picture fills the canvas's height and most of its width (a 32x32 slice is square: half of it).
    const double drawn_width = f.layout.width * f.view.zoom;
    const double drawn_height = f.layout.height * f.view.zoom;
    CHECK(drawn_height > 0.9 * (450 - 32));
    CHECK(drawn_width > (preset == "tpu-v3-2048" ? 0.45 : 0.6) * 940);
  }
  // Without an aspect the 16 planes of a v4-2048 stay in one row (the export's layout).
  CHECK(layout_devices(make_device_preset("tpu-v4-2048").devices).plane_rects.back().y0 == doctest::Approx(0.0));
}

TEST_CASE("host label bands sit inside their frames and clear of every chip") {
  const DeviceViewLayout view = layout_devices(make_device_preset("tpu-v5e-256").devices, 2.0);
  for (const HostBox& host : view.hosts) {
    CHECK(inside(host.label_band, host.rect));
    for (const ChipBox& chip : view.chips) CHECK_FALSE(overlap(host.label_band, chip.rect));
  }
}

}  // namespace shardscope::ui
