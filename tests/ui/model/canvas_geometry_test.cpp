// Canvas geometry: cells sized by JAX's text geometry, in JAX's colours, hit tests and zoom/pan.
#include "ui/model/canvas_geometry.h"

#include <doctest/doctest.h>

#include "tests/ui/model/fixtures.h"

namespace shardscope::ui {
namespace {

VizLayout colored_layout(const Shape& shape, const Sharding& sharding) {
  VizOptions options;
  options.use_color = true;
  return compute_layout(shape, sharding, options, JaxProfile());
}

}  // namespace

TEST_CASE("a P('x','y') array on a 2x4 mesh is a 2x4 grid with JAX's cell sizes") {
  const Mesh mesh = testing::mesh_2x4();
  const VizLayout layout = colored_layout({8, 8}, testing::named(mesh, "P('x', 'y')"));
  const CanvasGeometry geometry = place_layout(layout, {});
  REQUIRE(geometry.cells.size() == 8);
  // JAX: width int(0.25 * 10 * 2.5) = 6, clamped to min_width 9; colour mode pads label "TPU n" by 2 + 2.
  // Height int(0.5 * 10) = 5 lines: top 1 + 1, bottom 2 + 1, plus the label line = 6 lines.
  for (const CellPlacement& cell : geometry.cells) {
    CHECK(cell.rect.width() == doctest::Approx(9 * 9.0));
    CHECK(cell.rect.height() == doctest::Approx(6 * 18.0));
  }
  CHECK(geometry.width == doctest::Approx(4 * 81.0));
  CHECK(geometry.height == doctest::Approx(2 * 108.0));
  // Row-major placement: cell 5 is row 1, column 1.
  CHECK(geometry.cells[5].rect.x0 == doctest::Approx(81.0));
  CHECK(geometry.cells[5].rect.y0 == doctest::Approx(108.0));
}

TEST_CASE("cells carry tab20b in JAX's stepping order") {
  const VizLayout layout = colored_layout({8, 8}, testing::named(testing::mesh_2x4(), "P('x', 'y')"));
  // The n=8 sequence from JAX's colour algorithm (reference write-up).
  const char* expected[] = {"#393B79", "#D6616B", "#8CA252", "#DE9ED6", "#E7CB94", "#6B6ECF", "#A55194", "#8C6D31"};
  const CanvasGeometry geometry = place_layout(layout, {});
  for (std::size_t i = 0; i < 8; ++i) {
    const CellPlacement& placed = geometry.cells[i];
    CHECK(layout.panels[placed.panel].cells[placed.cell].background.hex() == expected[i]);
  }
}

TEST_CASE("hit testing finds the cell under a point and nothing outside") {
  const VizLayout layout = colored_layout({8, 8}, testing::named(testing::mesh_2x4(), "P('x', 'y')"));
  const CanvasGeometry geometry = place_layout(layout, {});
  // Centre of row 1, column 2: x = 2.5 * 81, y = 1.5 * 108.
  const auto hit = hit_test(geometry, 2.5 * 81, 1.5 * 108);
  REQUIRE(hit);
  CHECK(*hit == 6);
  CHECK_FALSE(hit_test(geometry, -1, 10));
  CHECK_FALSE(hit_test(geometry, 4 * 81 + 1, 10));
}

TEST_CASE("rank-3 arrays become small multiples that wrap") {
  const Mesh mesh = testing::mesh_2x4();
  VizOptions options;
  options.small_multiples = true;
  const VizLayout layout = compute_layout({2, 8, 8}, testing::named(mesh, "P('x', 'y')"), options, JaxProfile());
  REQUIRE(layout.panels.size() == 2);
  const CanvasGeometry wide = place_layout(layout, {});
  CHECK(wide.panels[1].grid.x0 > wide.panels[0].grid.x1);  // side by side
  GeometryOptions narrow;
  narrow.wrap_width = wide.panels[0].grid.width() + 1;
  const CanvasGeometry wrapped = place_layout(layout, narrow);
  CHECK(wrapped.panels[1].grid.y0 > wrapped.panels[0].grid.y1);  // below
  CHECK(wrapped.cells.size() == 8);
}

TEST_CASE("fit centres the content at the largest zoom that shows it whole") {
  const ViewTransform view = ViewTransform::fit(324, 216, 1000, 500, 24, 3.0);
  const double zoom = 452.0 / 216.0;  // height-bound: (500 - 48) / 216
  CHECK(view.zoom == doctest::Approx(zoom));
  CHECK(view.pan_x == doctest::Approx((1000 - 324 * zoom) / 2));
  CHECK(view.pan_y == doctest::Approx((500 - 216 * zoom) / 2));
  CHECK(ViewTransform::fit(10, 10, 1000, 1000, 0, 3.0).zoom == doctest::Approx(3.0));
}

TEST_CASE("zooming about a point keeps that point still") {
  ViewTransform view;
  view.zoom = 2;
  view.pan_x = 10;
  view.pan_y = 20;
  const double cx = view.to_content_x(300);
  const double cy = view.to_content_y(200);
  view.zoom_about(1.5, 300, 200, 0.1, 10);
  CHECK(view.zoom == doctest::Approx(3));
  CHECK(view.to_screen_x(cx) == doctest::Approx(300));
  CHECK(view.to_screen_y(cy) == doctest::Approx(200));
  view.zoom_about(100, 0, 0, 0.1, 10);
  CHECK(view.zoom == doctest::Approx(10));
}

TEST_CASE("block text names the slices a cell holds") {
  const VizLayout layout = colored_layout({8, 8}, testing::named(testing::mesh_2x4(), "P('x', None)"));
  CHECK(block_text(layout.panels[0].at(1, 0), false) == "[4:8, :]");
  const VizLayout vector = colored_layout({8}, testing::named(testing::mesh_2x4(), "P('y')"));
  CHECK(block_text(vector.panels[0].at(0, 3), true) == "[6:8]");
}

TEST_CASE("a small multiple's cell names its whole index: leading slices, then its block") {
  VizOptions options;
  options.small_multiples = true;
  const VizLayout layout = compute_layout({4, 3, 8, 8}, testing::named(testing::mesh_2x4(), "P('x', None, None, 'y')"),
                                          options, JaxProfile());
  REQUIRE(layout.panels.size() == 2);
  // Second block of dim 0 (rows 2:4 over 'x'), all of dims 1 and 2, the second of four column blocks of dim 3.
  CHECK(cell_index_text(layout.panels[1], layout.panels[1].at(0, 1)) == "[2:4, :, :, 2:4]");
  const VizLayout plain = colored_layout({8, 8}, testing::named(testing::mesh_2x4(), "P('x', None)"));
  CHECK(cell_index_text(plain.panels[0], plain.panels[0].at(1, 0)) == "[4:8, :]");
}

}  // namespace shardscope::ui

namespace shardscope::ui {

TEST_CASE("a 16x16 grid is drawn dense: square cells, mesh axes and index ranges along the edges") {
  const DevicePreset preset = make_device_preset("tpu-v5e-256");
  const Mesh mesh = make_mesh({16, 16}, {"data", "model"}, preset.devices, JaxProfile());
  const NamedSharding sharding = testing::named(mesh, "P('data', 'model')");
  const VizLayout layout = colored_layout({256, 256}, sharding);
  GeometryOptions options;
  options.dense_above = 8;
  options.axis_names = drawn_axis_names(sharding, 2);
  CHECK(options.axis_names == std::array<std::string, 2>{"dim 0: data", "dim 1: model"});
  const CanvasGeometry geometry = place_layout(layout, options);
  REQUIRE(geometry.cells.size() == 256);
  for (const CellPlacement& cell : geometry.cells) {
    CHECK(cell.rect.width() == doctest::Approx(48.0));
    CHECK(cell.rect.height() == doctest::Approx(48.0));
  }
  // Row 3, column 5: its grid position is the short label.
  CHECK(geometry.cells[3 * 16 + 5].short_label == "3,5");
  const PanelPlacement& panel = geometry.panels.front();
  // Two axis titles, 16 column and 16 row headers, all outside the grid.
  REQUIRE(panel.axis_labels.size() == 2 + 16 + 16);
  for (const AxisLabel& label : panel.axis_labels) {
    INFO(label.text);
    CHECK((label.rect.x1 <= panel.grid.x0 || label.rect.y1 <= panel.grid.y0));
  }
  CHECK(panel.axis_labels[0].text == "dim 1: model");
  CHECK(panel.axis_labels[1].text == "dim 0: data");
  CHECK(panel.axis_labels[2].text == "0:16");
  CHECK(panel.axis_labels[2].short_text == "0");
  const AxisLabel& last_row = panel.axis_labels.back();
  CHECK(last_row.row);
  CHECK(last_row.text == "240:256");
  CHECK(last_row.rect.y1 == doctest::Approx(panel.grid.y1));
  // Not a strip: as tall as it is wide, give or take the headers.
  CHECK(geometry.height > 0.85 * geometry.width);
}

TEST_CASE("grids up to the threshold keep JAX's character geometry and have no edge labels") {
  const VizLayout layout = colored_layout({8, 8}, testing::named(testing::mesh_2x4(), "P('x', 'y')"));
  GeometryOptions options;
  options.dense_above = 8;
  const CanvasGeometry geometry = place_layout(layout, options);
  CHECK(geometry.cells.front().rect.width() == doctest::Approx(81.0));
  CHECK(geometry.panels.front().axis_labels.empty());
  CHECK(geometry.cells.front().short_label.empty());
}

TEST_CASE("axis names: tuples joined with +, unsharded dimensions by number only") {
  const Mesh mesh = testing::mesh_2x4();
  CHECK(drawn_axis_names(testing::named(mesh, "P(None, ('x', 'y'))"), 2) ==
        std::array<std::string, 2>{"dim 0", "dim 1: x+y"});
  CHECK(drawn_axis_names(testing::named(mesh, "P('x')"), 1) == std::array<std::string, 2>{"", "dim 0: x"});
  CHECK(drawn_axis_names(testing::named(mesh, "P('x', None, 'y')"), 3) ==
        std::array<std::string, 2>{"dim 1", "dim 2: y"});
}

}  // namespace shardscope::ui

namespace shardscope::ui {

TEST_CASE("a 1-D array over 1024 devices wraps into lines headed by their index ranges, not a hairline strip") {
  const Mesh mesh = make_mesh({1024}, {"x"}, make_device_preset("cpu:1024").devices, JaxProfile());
  const NamedSharding sharding = testing::named(mesh, "P('x')");
  GeometryOptions options;
  options.dense_above = 8;
  options.axis_names = drawn_axis_names(sharding, 1);
  const CanvasGeometry geometry = place_layout(colored_layout({2048}, sharding), options);
  REQUIRE(geometry.cells.size() == 1024);
  // ceil(sqrt(2048)) = 46 cells a line, 23 lines: about twice as wide as tall.
  CHECK(geometry.cells[45].rect.y0 == doctest::Approx(geometry.cells[0].rect.y0));
  CHECK(geometry.cells[46].rect.x0 == doctest::Approx(geometry.cells[0].rect.x0));
  CHECK(geometry.cells[46].rect.y0 == doctest::Approx(geometry.cells[0].rect.y1));
  CHECK(geometry.cells[1023].short_label == "1023");
  CHECK(geometry.height > 0.4 * geometry.width);
  const std::vector<AxisLabel>& labels = geometry.panels.front().axis_labels;
  REQUIRE(labels.size() == 1 + 23);
  CHECK(labels[0].text == "dim 0: x");
  CHECK(labels[1].text == "0:92");
  CHECK(labels[1].short_text == "0");
  CHECK(labels.back().text == "2024:2048");
  CHECK(labels.back().short_text == "1012");
}

}  // namespace shardscope::ui
