// rich's fitting of over-wide shard grids: the derived rich 13.3.1 outputs and the arithmetic behind them.
#include "viz/table_fit.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "support/oracle_cases.h"
#include "viz/text_renderer.h"

using namespace shardscope;
using shardscope::testing::case_options;
using shardscope::testing::case_sharding;
using shardscope::testing::visualize_cases_document;

namespace {

struct CellSpec {
  std::string label;
  int top = 0;
  int right = 0;
  int bottom = 0;
  int left = 0;
  Rgb background;
  Rgb text_color;
};

// A one-panel layout straight from cell contents, bypassing JAX's geometry, so rich's behaviour
// can be pinned on shapes JAX's formulas rarely produce.
VizLayout layout_of(const std::vector<std::vector<CellSpec>>& grid, bool use_color, int console_width) {
  VizPanel panel;
  panel.rows = static_cast<int64_t>(grid.size());
  panel.columns = static_cast<int64_t>(grid.front().size());
  for (std::size_t r = 0; r < grid.size(); ++r) {
    for (std::size_t c = 0; c < grid[r].size(); ++c) {
      const CellSpec& spec = grid[r][c];
      VizCell cell;
      cell.row = static_cast<int64_t>(r);
      cell.column = static_cast<int64_t>(c);
      cell.label = spec.label;
      cell.pad_top = spec.top;
      cell.pad_right = spec.right;
      cell.pad_bottom = spec.bottom;
      cell.pad_left = spec.left;
      cell.background = spec.background;
      cell.text_color = spec.text_color;
      panel.cells.push_back(cell);
    }
  }
  VizLayout layout;
  layout.use_color = use_color;
  layout.console_width = console_width;
  layout.panels.push_back(panel);
  return layout;
}

std::vector<std::string> texts(const std::vector<WrappedLine>& lines) {
  std::vector<std::string> out;
  for (const WrappedLine& line : lines) out.push_back(line.text);
  return out;
}

}  // namespace

TEST_CASE("all 7 derived rich 13.3.1 outputs reproduce byte for byte") {
  const auto& cases = visualize_cases_document()["derived_cases"];
  REQUIRE(cases.size() == 7);
  const JaxProfile profile;
  for (const auto& test_case : cases) {
    const std::string id = test_case["id"];
    CAPTURE(id);
    const VizLayout layout = compute_layout(test_case["array_shape"].get<Shape>(), case_sharding(test_case, profile),
                                            case_options(test_case), profile);
    const std::string field = test_case["render_mode"] == "color" ? "expected_ansi" : "expected";
    CHECK(render_text(layout) == test_case[field].get<std::string>());
  }
}

TEST_CASE("tables that fit keep JAX's natural column widths and row heights") {
  const JaxProfile profile;
  for (const auto& test_case : visualize_cases_document()["cases"]) {
    CAPTURE(test_case["id"].get<std::string>());
    const VizLayout layout = compute_layout(test_case["array_shape"].get<Shape>(), case_sharding(test_case, profile),
                                            case_options(test_case), profile);
    for (const VizPanel& panel : layout.panels) {
      const FittedTable table = fit_table(panel, layout.console_width, layout.use_color);
      CHECK(table.column_widths == panel.column_widths);
      CHECK(table.row_heights == panel.row_heights);
    }
  }
}

TEST_CASE("ratio_reduce rounds shares half to even and skips slots with no maximum") {
  // 49 cells off 16 columns of 7: shares of 3, except 7/2 = 3.5 which rounds to 4.
  std::vector<int> expected(16, 4);
  expected[14] = 3;
  CHECK(ratio_reduce(49, std::vector<int>(16, 1), std::vector<int>(16, 7), std::vector<int>(16, 7)) == expected);
  CHECK(ratio_reduce(5, {1, 1}, {9, 9}, {9, 9}) == std::vector<int>{7, 6});  // 2.5 -> 2, then 3
  CHECK(ratio_reduce(3, {1, 1}, {9, 9}, {5, 5}) == std::vector<int>{3, 4});  // 1.5 -> 2, then 1
  CHECK(ratio_reduce(4, {1, 1, 1}, {0, 9, 9}, {5, 5, 5}) == std::vector<int>{5, 3, 3});
  CHECK(ratio_reduce(7, {0, 0}, {3, 3}, {4, 4}) == std::vector<int>{4, 4});
  CHECK(ratio_reduce(9, {1, 1}, {2, 9}, {5, 5}) == std::vector<int>{3, -2});  // a capped slot leaves the rest
}

TEST_CASE("collapse_widths shrinks the widest columns towards the next widest") {
  CHECK(collapse_widths({10, 4, 8}, 14) == std::vector<int>{5, 4, 5});
  CHECK(collapse_widths({12, 12, 5}, 20) == std::vector<int>{8, 7, 5});
  CHECK(collapse_widths({3, 3}, 1) == std::vector<int>{1, 0});
  CHECK(collapse_widths({1, 1, 1}, 0) == std::vector<int>{0, 0, 0});
  CHECK(collapse_widths({9, 9, 2}, 100) == std::vector<int>{9, 9, 2});
}

TEST_CASE("fit_column_widths keeps fitting widths and otherwise fills exactly the room left") {
  CHECK(fit_column_widths({7, 9, 5}, 80) == std::vector<int>{7, 9, 5});
  std::vector<int> sixteen(16, 4);
  sixteen[14] = 3;
  CHECK(fit_column_widths(std::vector<int>(16, 7), 63) == sixteen);
  // No room at all: every column ends at zero cells.
  CHECK(fit_column_widths({7, 7, 7}, 0) == std::vector<int>{0, 0, 0});
  // A label longer than the console is cut to the console.
  CHECK(fit_column_widths({203}, 78) == std::vector<int>{78});
}

TEST_CASE("wrap_label breaks at spaces, ellipsizes long words and pads to the width") {
  CHECK(texts(wrap_label("CPU 0", 5)) == std::vector<std::string>{"CPU 0"});
  CHECK(texts(wrap_label("CPU 0", 2)) == std::vector<std::string>{"C…", "0 "});
  CHECK(texts(wrap_label("CPU 10", 3)) == std::vector<std::string>{"CPU", "10 "});
  CHECK(texts(wrap_label("CPU 0,1", 4)) == std::vector<std::string>{"CPU ", "0,1 "});
  const std::vector<WrappedLine> narrow = wrap_label("CPU 10,11", 4);
  REQUIRE(narrow.size() == 2);
  CHECK(narrow[1].text == "10,…");
  CHECK(narrow[1].ellipsis_replaced_digit);
  const std::vector<WrappedLine> single = wrap_label("CPU 11", 1);
  REQUIRE(single.size() == 2);
  CHECK(single[0].text == "…");
  CHECK_FALSE(single[0].ellipsis_replaced_digit);
  CHECK(single[1].ellipsis_replaced_digit);
  // A first word wider than the line still starts the first line.
  CHECK(texts(wrap_label("ABCDEFG H", 3)) == std::vector<std::string>{"AB…", "H  "});
}

TEST_CASE("colour rows even out with unstyled blank lines") {
  const Rgb blue{1, 2, 3};
  const Rgb tan{4, 5, 6};
  const Rgb white{255, 255, 255};
  const Rgb black{0, 0, 0};
  const VizLayout layout =
      layout_of({{CellSpec{"CPU 0", 0, 1, 0, 1, blue, white}, CellSpec{"CPU 1", 1, 1, 1, 1, tan, black}}}, true, 80);
  const std::string a = "\x1b[38;2;255;255;255;48;2;1;2;3m";
  const std::string b = "\x1b[38;2;0;0;0;48;2;4;5;6m";
  const std::string reset = "\x1b[0m";
  const std::string expected = a + " " + reset + a + "CPU 0" + reset + a + " " + reset + b + "       " + reset + "\n" +
                               "       " + b + " " + reset + b + "CPU 1" + reset + b + " " + reset + "\n" + "       " +
                               b + "       " + reset + "\n";
  CHECK(render_text(layout) == expected);
}

TEST_CASE("a colour cell narrower than its column is centred with runs of its own") {
  const Rgb blue{1, 2, 3};
  const Rgb tan{4, 5, 6};
  const Rgb white{255, 255, 255};
  const Rgb black{0, 0, 0};
  const VizLayout layout = layout_of(
      {{CellSpec{"CPU 0", 0, 1, 1, 1, blue, white}}, {CellSpec{"CPU 10,11", 1, 2, 0, 2, tan, black}}}, true, 80);
  const std::string a = "\x1b[38;2;255;255;255;48;2;1;2;3m";
  const std::string b = "\x1b[38;2;0;0;0;48;2;4;5;6m";
  const std::string reset = "\x1b[0m";
  const std::string expected = a + " " + reset + a + "   " + reset + a + "CPU 0" + reset + a + "   " + reset + a + " " +
                               reset + "\n" + a + "             " + reset + "\n" + b + "             " + reset + "\n" +
                               b + "  " + reset + b + "CPU 10,11" + reset + b + "  " + reset + "\n";
  CHECK(render_text(layout) == expected);
}

TEST_CASE("borders wider than the console are cut at its edge") {
  std::vector<CellSpec> row;
  for (int i = 0; i < 10; ++i) row.push_back(CellSpec{"CPU " + std::to_string(i), 0, 1, 0, 1, Rgb{}, Rgb{}});
  CHECK(render_text(layout_of({row}, false, 7)) == "┌┬┬┬┬┬┬\n│││││││\n└┴┴┴┴┴┴\n");
  // Colour mode has no borders; three cells in two cells of console leave nothing to draw.
  const std::vector<CellSpec> coloured(3, CellSpec{"CPU 0", 0, 1, 0, 1, Rgb{1, 2, 3}, Rgb{255, 255, 255}});
  CHECK(render_text(layout_of({coloured}, true, 2)) == "  \n");
}

TEST_CASE("highlighted numbers cut by an ellipsis keep the ellipsis in their colour") {
  const VizLayout layout =
      layout_of({{CellSpec{"CPU 10,11,12", 0, 0, 0, 0, Rgb{}, Rgb{}}, CellSpec{"CPU 10,11", 0, 0, 0, 0, Rgb{}, Rgb{}}}},
                false, 12);
  const std::string cyan = "\x1b[1;36m";
  const std::string reset = "\x1b[0m";
  CHECK(render_text(layout, TextRenderOptions{true}) == "┌─────┬────┐\n│CPU  │CPU │\n│" + cyan + "10" + reset + "," +
                                                            cyan + "1…" + reset + "│" + cyan + "10" + reset + "," +
                                                            cyan + "…" + reset + "│\n└─────┴────┘\n");
  CHECK(render_text(layout) == "┌─────┬────┐\n│CPU  │CPU │\n│10,1…│10,…│\n└─────┴────┘\n");
}
