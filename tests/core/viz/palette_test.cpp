// Palettes for the window and diagrams: distinct colours per shard, neighbours that differ, JAX's text untouched.
#include <doctest/doctest.h>

#include <set>

#include "base/error.h"
#include "sharding/sharding_recipe.h"
#include "viz/layout.h"
#include "viz/svg_renderer.h"

using namespace shardscope;

namespace {

VizLayout grid(const std::string& preset, std::vector<std::pair<std::string, int64_t>> axes, const std::string& spec,
               const Shape& shape, Palette palette) {
  ShardingRecipe recipe;
  recipe.devices_preset = preset;
  recipe.mesh_axes = std::move(axes);
  recipe.spec_text = spec;
  VizOptions options;
  options.palette = palette;
  return compute_layout(shape, resolve_sharding(recipe, JaxProfile()).sharding, options, JaxProfile());
}

std::vector<std::string> backgrounds(const VizLayout& layout) {
  std::vector<std::string> out;
  for (const VizPanel& panel : layout.panels) {
    for (const VizCell& cell : panel.cells) out.push_back(cell.background.hex());
  }
  return out;
}

}  // namespace

TEST_CASE("an 8-shard grid takes 8 distinct colours under the distinct and colour-blind palettes") {
  for (const Palette palette : {Palette::kDistinct, Palette::kColorBlind}) {
    INFO(palette_name(palette));
    for (const auto& [axes, spec] : std::vector<std::pair<std::vector<std::pair<std::string, int64_t>>, std::string>>{
             {{{"x", 2}, {"y", 4}}, "P('x', 'y')"}, {{{"x", 8}}, "P('x')"}, {{{"x", 8}}, "P(None, 'x')"}}) {
      const std::vector<std::string> colors = backgrounds(grid("tpu-v3-8", axes, spec, {8, 8}, palette));
      REQUIRE(colors.size() == 8);
      CHECK(std::set<std::string>(colors.begin(), colors.end()).size() == 8);
    }
  }
  // The colour-blind palette is Okabe and Ito's, in their order.
  const std::vector<std::string> okabe_ito =
      backgrounds(grid("tpu-v3-8", {{"x", 8}}, "P('x')", {8}, Palette::kColorBlind));
  CHECK(okabe_ito == std::vector<std::string>{"#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00",
                                              "#CC79A7", "#999999"});
}

TEST_CASE("tab20b stays JAX's sequence, and explicit colour maps win over a palette") {
  const std::vector<std::string> jax = {"#393B79", "#D6616B", "#8CA252", "#DE9ED6",
                                        "#E7CB94", "#6B6ECF", "#A55194", "#8C6D31"};
  CHECK(backgrounds(grid("tpu-v3-8", {{"x", 2}, {"y", 4}}, "P('x', 'y')", {8, 8}, Palette::kTab20b)) == jax);
  ShardingRecipe recipe;
  recipe.mesh_axes = std::vector<std::pair<std::string, int64_t>>{{"x", 8}};
  recipe.spec_text = "P('x')";
  VizOptions options;
  options.palette = Palette::kColorBlind;
  options.color_map = named_color_map("tab20b");
  const VizLayout layout = compute_layout({8}, resolve_sharding(recipe, JaxProfile()).sharding, options, JaxProfile());
  CHECK(backgrounds(layout).front() == "#393B79");
}

TEST_CASE("past the palette's size, neighbouring shards still differ (hue, then a lightness step)") {
  for (const Palette palette : {Palette::kDistinct, Palette::kColorBlind}) {
    INFO(palette_name(palette));
    // 16x16 over 256 chips; 8 wide (a multiple of Okabe-Ito's 8) over 64.
    for (const auto& [preset, rows, columns] : std::vector<std::tuple<std::string, int64_t, int64_t>>{
             {"tpu-v5e-256", 16, 16}, {"tpu-v5e-64", 8, 8}, {"tpu-v5e-32", 4, 8}}) {
      INFO(preset);
      const VizLayout layout =
          grid(preset, {{"data", rows}, {"model", columns}}, "P('data', 'model')", {rows * 4, columns * 4}, palette);
      const VizPanel& panel = layout.panels.front();
      REQUIRE(panel.rows == rows);
      REQUIRE(panel.columns == columns);
      std::set<std::string> all;
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < columns; ++c) {
          const Rgb here = panel.at(r, c).background;
          all.insert(here.hex());
          if (c + 1 < columns) CHECK(here != panel.at(r, c + 1).background);
          if (r + 1 < rows) CHECK(here != panel.at(r + 1, c).background);
        }
      }
      // Three lightness steps of every base colour before any repeats.
      CHECK(all.size() == std::min<std::size_t>(static_cast<std::size_t>(rows * columns), 3 * palette_size(palette)));
    }
  }
}

TEST_CASE("palette names parse, and an unknown one is a ValueError naming the choices") {
  for (const std::string& name : palette_names()) CHECK(palette_name(parse_palette(name)) == name);
  try {
    (void)parse_palette("rainbow");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("tab20b, distinct, colorblind") != std::string::npos);
  }
}

TEST_CASE("a palette colours the SVG diagram") {
  const VizLayout blind = grid("tpu-v3-8", {{"x", 2}, {"y", 4}}, "P('x', 'y')", {8, 8}, Palette::kColorBlind);
  const std::string svg = render_svg(blind, SvgRenderOptions{});
  CHECK(svg.find("#E69F00") != std::string::npos);
  CHECK(svg.find("#393B79") == std::string::npos);
}
