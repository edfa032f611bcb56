// SVG exports in the window's colours: background, text and cell borders as chosen, white paper by default.
#include <doctest/doctest.h>

#include "sharding/sharding_recipe.h"
#include "viz/svg_renderer.h"

using namespace shardscope;

namespace {

VizLayout grid_2x4() {
  ShardingRecipe recipe;
  recipe.devices_preset = "cpu:8";
  recipe.mesh_axes = std::vector<std::pair<std::string, int64_t>>{{"x", 2}, {"y", 4}};
  recipe.spec_text = "P('x', 'y')";
  return compute_layout({8, 8}, resolve_sharding(recipe, JaxProfile()).sharding, VizOptions{}, JaxProfile());
}

}  // namespace

TEST_CASE("an SVG takes the background, text and border colours it is given") {
  const VizLayout layout = grid_2x4();
  const std::string paper = render_svg(layout, {.caption = "x: float32[8,8]"});
  CHECK(paper.find("class=\"background\" width=\"100%\" height=\"100%\" fill=\"#FFFFFF\"") != std::string::npos);
  CHECK(paper.find("class=\"caption\" x=\"8\" y=\"21.5\" fill=\"#202020\">x: float32[8,8]") != std::string::npos);

  SvgRenderOptions dark;
  dark.caption = "x: float32[8,8]";
  dark.background = Rgb{26, 27, 31};
  dark.text = Rgb{225, 225, 230};
  dark.border = Rgb{26, 27, 31};
  const std::string svg = render_svg(layout, dark);
  CHECK(svg.find("fill=\"#1A1B1F\"/>") != std::string::npos);
  CHECK(svg.find("fill=\"#FFFFFF\"/>") == std::string::npos);  // no white paper
  CHECK(svg.find("stroke=\"#FFFFFF\"") == std::string::npos);  // no white borders
  CHECK(svg.find("fill=\"#E1E1E6\">x: float32[8,8]") != std::string::npos);
  CHECK(svg.find("stroke=\"#1A1B1F\"") != std::string::npos);
  // Without a caption there is no caption element and the grid starts at the top margin.
  const std::string bare = render_svg(layout, {});
  CHECK(bare.find("class=\"caption\"") == std::string::npos);
  CHECK(bare.find("<rect class=\"cell\" x=\"8\" y=\"8\"") != std::string::npos);
}
