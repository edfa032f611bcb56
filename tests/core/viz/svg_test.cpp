// SVG diagrams: well-formed XML, one rectangle per cell, the ANSI picture's colours; beyond-JAX layouts.
#include <doctest/doctest.h>
#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>

#include <regex>

#include "base/error.h"
#include "device/presets.h"
#include "sharding/sharding_recipe.h"
#include "support/oracle_cases.h"
#include "viz/svg_renderer.h"
#include "viz/text_renderer.h"

using namespace shardscope;

namespace {

struct ParsedSvg {
  std::vector<std::string> cell_fills;
  std::size_t text_count = 0;
};

ParsedSvg parse_svg(const std::string& svg) {
  xmlDocPtr document = xmlReadMemory(svg.data(), static_cast<int>(svg.size()), "diagram.svg", nullptr, XML_PARSE_NONET);
  REQUIRE_MESSAGE(document != nullptr, "SVG is not well-formed XML");
  xmlXPathContextPtr context = xmlXPathNewContext(document);
  xmlXPathRegisterNs(context, reinterpret_cast<const xmlChar*>("s"),
                     reinterpret_cast<const xmlChar*>("http://www.w3.org/2000/svg"));
  ParsedSvg parsed;
  xmlXPathObjectPtr cells =
      xmlXPathEvalExpression(reinterpret_cast<const xmlChar*>("//s:rect[@class='cell']"), context);
  for (int i = 0; cells->nodesetval != nullptr && i < cells->nodesetval->nodeNr; ++i) {
    xmlChar* fill = xmlGetProp(cells->nodesetval->nodeTab[i], reinterpret_cast<const xmlChar*>("fill"));
    parsed.cell_fills.emplace_back(reinterpret_cast<const char*>(fill));
    xmlFree(fill);
  }
  xmlXPathObjectPtr texts = xmlXPathEvalExpression(reinterpret_cast<const xmlChar*>("//s:text"), context);
  parsed.text_count = texts->nodesetval == nullptr ? 0 : static_cast<std::size_t>(texts->nodesetval->nodeNr);
  xmlXPathFreeObject(texts);
  xmlXPathFreeObject(cells);
  xmlXPathFreeContext(context);
  xmlFreeDoc(document);
  return parsed;
}

// Background colours of the ANSI output, in order of first appearance per cell.
std::vector<std::string> ansi_backgrounds_per_cell(const VizLayout& layout) {
  std::vector<std::string> colors;
  for (const VizPanel& panel : layout.panels) {
    for (const VizCell& cell : panel.cells) colors.push_back(cell.background.hex());
  }
  return colors;
}

}  // namespace

TEST_CASE("every colour oracle case gives well-formed SVG with the ANSI colours") {
  const JaxProfile profile;
  for (const auto& test_case : shardscope::testing::visualize_cases_document()["cases"]) {
    CAPTURE(test_case["id"].get<std::string>());
    VizOptions options = shardscope::testing::case_options(test_case);
    options.use_color = true;
    const VizLayout layout = compute_layout(test_case["array_shape"].get<Shape>(),
                                            shardscope::testing::case_sharding(test_case, profile), options, profile);
    const ParsedSvg svg = parse_svg(render_svg(layout, SvgRenderOptions{9, 18, "caption <&> \"quoted\""}));
    const std::size_t cells = layout.panels.at(0).cells.size();
    CHECK(svg.cell_fills.size() == cells);
    CHECK(svg.text_count == cells + 1);
    CHECK(svg.cell_fills == ansi_backgrounds_per_cell(layout));
    if (test_case["render_mode"] == "color") {
      // The same colours appear, in the same order, as 48;2;R;G;B runs of JAX's recorded output.
      const std::string ansi = test_case["expected_ansi"];
      const std::regex background(";48;2;(\\d+);(\\d+);(\\d+)m");
      std::vector<std::string> seen;
      for (auto it = std::sregex_iterator(ansi.begin(), ansi.end(), background); it != std::sregex_iterator(); ++it) {
        const Rgb rgb{static_cast<uint8_t>(std::stoi((*it)[1])), static_cast<uint8_t>(std::stoi((*it)[2])),
                      static_cast<uint8_t>(std::stoi((*it)[3]))};
        if (std::find(seen.begin(), seen.end(), rgb.hex()) == seen.end()) seen.push_back(rgb.hex());
      }
      std::vector<std::string> distinct;
      for (const std::string& fill : svg.cell_fills) {
        if (std::find(distinct.begin(), distinct.end(), fill) == distinct.end()) distinct.push_back(fill);
      }
      std::sort(seen.begin(), seen.end());
      std::sort(distinct.begin(), distinct.end());
      CHECK(seen == distinct);
    }
  }
}

TEST_CASE("tab20b colour sequences match JAX's") {
  const ColorMap tab20b = named_color_map("tab20b");
  const auto hexes = [&](std::size_t n) {
    std::vector<std::string> out;
    for (const Rgb& c : cell_colors(n, tab20b)) out.push_back(c.hex());
    return out;
  };
  CHECK(hexes(2) == std::vector<std::string>{"#393B79", "#393B79"});
  CHECK(hexes(3) == std::vector<std::string>{"#393B79", "#E7BA52", "#DE9ED6"});
  CHECK(hexes(8) == std::vector<std::string>{"#393B79", "#D6616B", "#8CA252", "#DE9ED6", "#E7CB94", "#6B6ECF",
                                             "#A55194", "#8C6D31"});
  CHECK(hexes(16) == std::vector<std::string>{"#393B79", "#843C39", "#6B6ECF", "#D6616B", "#8CA252", "#A55194",
                                              "#8C6D31", "#DE9ED6", "#E7BA52", "#5254A3", "#AD494A", "#637939",
                                              "#7B4173", "#B5CF6B", "#CE6DBD", "#BD9E39"});
  CHECK(text_color_for(Rgb{0xB5, 0xCF, 0x6B}) == Rgb{0, 0, 0});
  CHECK(text_color_for(Rgb{0x39, 0x3B, 0x79}) == Rgb{255, 255, 255});
  CHECK_THROWS_AS((void)listed_color_map({"#12345"}), Error);
  CHECK(cell_colors(1, listed_color_map({"#102030"}))[0] == Rgb{0x10, 0x20, 0x30});
}

namespace {
ResolvedSharding cpu_sharding(const std::string& mesh_preset, std::vector<std::pair<std::string, int64_t>> axes,
                              const std::string& spec) {
  ShardingRecipe recipe;
  recipe.devices_preset = mesh_preset;
  recipe.mesh_axes = std::move(axes);
  recipe.spec_text = spec;
  return resolve_sharding(recipe, JaxProfile());
}
}  // namespace

TEST_CASE("rank-3 arrays draw as small multiples only when asked") {
  const ResolvedSharding r = cpu_sharding("cpu:8", {{"x", 2}, {"y", 4}}, "P('x', None, 'y')");
  VizOptions options;
  options.use_color = false;
  CHECK_THROWS_WITH_AS((void)compute_layout({4, 3, 8}, r.sharding, options, JaxProfile()),
                       "`visualize_sharding` only works for shapes with 1 and 2 dimensions.", Error);
  options.small_multiples = true;
  const VizLayout layout = compute_layout({4, 3, 8}, r.sharding, options, JaxProfile());
  REQUIRE(layout.panels.size() == 2);
  CHECK(layout.panels[0].title == "[0:2, :, :]");
  CHECK(layout.panels[1].title == "[2:4, :, :]");
  CHECK(layout.panels[1].columns == 4);
  CHECK(layout.panels[1].cells[0].label == "CPU 4");
  const std::string text = render_text(layout);
  CHECK(text.find("[2:4, :, :]\n┌") != std::string::npos);
  CHECK(text.find("shardscope: rank-3 array (4, 3, 8) drawn as 2 grid(s)") != std::string::npos);
  CHECK(parse_svg(render_svg(layout)).cell_fills.size() == 8);
}

TEST_CASE("uneven shards draw with true sizes and a visible mark when asked") {
  const ResolvedSharding r = cpu_sharding("cpu:4", {{"x", 4}}, "P('x')");
  VizOptions options;
  options.use_color = false;
  CHECK_THROWS_AS((void)compute_layout({10}, r.sharding, options, JaxProfile()), Error);
  options.uneven_shards = true;
  const VizLayout layout = compute_layout({10}, r.sharding, options, JaxProfile());
  const VizPanel& panel = layout.panels.at(0);
  REQUIRE(panel.cells.size() == 4);
  CHECK(panel.cells[0].label == "CPU 0");
  CHECK(panel.cells[3].label == "CPU 3*");
  CHECK(panel.cells[3].width_fraction == doctest::Approx(0.1));
  CHECK(panel.cells[0].width_fraction == doctest::Approx(0.3));
  CHECK(render_text(layout).find("axis 0: 10 split 4 ways in blocks of 3") != std::string::npos);
}

TEST_CASE("cells can be labelled by chip coordinates or mesh position") {
  const ResolvedSharding r = cpu_sharding("tpu-v3-8", {{"a", 4}, {"b", 2}}, "P('a', 'b')");
  VizOptions options;
  options.use_color = false;
  options.label_style = CellLabelStyle::kChipCoords;
  const VizLayout coords = compute_layout({8, 8}, r.sharding, options, JaxProfile());
  CHECK(coords.panels[0].at(2, 0).label == "TPU (1,1,0)c0");
  options.label_style = CellLabelStyle::kMeshPosition;
  const VizLayout mesh = compute_layout({8, 8}, r.sharding, options, JaxProfile());
  CHECK(mesh.panels[0].at(2, 1).label == "TPU [2,1]");
}

TEST_CASE("text that is not UTF-8 or holds control codes still gives well-formed SVG") {
  // Found by fuzzing: a mesh axis named in another encoding (`--mesh $'\xe9'=2`) reached the caption raw.
  CHECK(xml_escape("a\xE9"
                   "b") ==
        "a\xEF\xBF\xBD"
        "b");
  CHECK(xml_escape("\x01x\x7F\t") == "\xEF\xBF\xBDx\x7F\t");
  CHECK(xml_escape("\xC3\xA9<\xED\xA0\x80\xF0\x9F\x98\x80") ==
        "\xC3\xA9&lt;\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xF0\x9F\x98\x80");
  CHECK(xml_escape("\xC0\xAF") == "\xEF\xBF\xBD\xEF\xBF\xBD");  // an overlong '/'
  const ResolvedSharding r = cpu_sharding("cpu:2", {{"\xE9\x01", 2}}, "P('\xE9\x01')");
  VizOptions options;
  const VizLayout layout = compute_layout({4, 4}, r.sharding, options, JaxProfile());
  CHECK(parse_svg(render_svg(layout, SvgRenderOptions{9, 18, sharding_repr(r.sharding, JaxProfile())}))
            .cell_fills.size() == 2);
}

TEST_CASE("a long thin array's cells are as wide as max_width allows") {
  // Found by fuzzing: the base width of a (8, 888888888888888888) array overflowed an int (undefined
  // behaviour; the cells came out min_width wide). JAX's Python ints clamp to max_width.
  const ResolvedSharding r = cpu_sharding("tpu-v3-8", {{"a", 4}, {"b", 2}}, "P('a', 'b')");
  VizOptions options;
  options.use_color = false;
  const VizLayout wide = compute_layout({8, 8000}, r.sharding, options, JaxProfile());
  const VizLayout huge = compute_layout({8, 888888888888888888}, r.sharding, options, JaxProfile());
  CHECK(huge.panels.at(0).column_widths == wide.panels.at(0).column_widths);
  CHECK(huge.panels.at(0).at(0, 0).pad_left == wide.panels.at(0).at(0, 0).pad_left);
  CHECK(huge.panels.at(0).at(0, 0).pad_left > 20);
}

TEST_CASE("a hugely negative scale draws as any scale below zero does") {
  // Found by fuzzing: int(10 * scale) overflowed an int for scale=-966666665 (undefined behaviour).
  const ResolvedSharding r = cpu_sharding("tpu-v3-8", {{"a", 4}, {"b", 2}}, "P('a', 'b')");
  VizOptions options;
  options.use_color = false;
  options.scale = -966666665;
  check_viz_options(options);
  const VizLayout huge = compute_layout({8, 8}, r.sharding, options, JaxProfile());
  options.scale = -1;
  const VizLayout small = compute_layout({8, 8}, r.sharding, options, JaxProfile());
  CHECK(render_text(huge) == render_text(small));
}
