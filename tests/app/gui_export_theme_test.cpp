// Exports match what is shown: the PNG and the SVG share the background, caption and theme chosen.
#include "gui_test_support.h"

using namespace gui_test;  // NOLINT(google-build-using-namespace): the helpers are this test's vocabulary

namespace {

struct Exported {
  Image png;
  std::string svg;
  uint32_t svg_background = 0;
  double svg_height = 0;
};

Exported export_both(const std::string& flags) {
  Workdir dir;
  dir.write("scene.py", kScene);
  const Run run = run_gui(dir,
                          "scene.py --run-all --select x --size 1600x1000 --export-svg x.svg --export-png x.png"
                          " --png-scale 1" +
                              flags);
  INFO(run.out);
  REQUIRE(run.status == 0);
  Exported out;
  out.png = load_png(dir.file("x.png"));
  out.svg = read(dir.file("x.svg"));
  std::smatch match;
  REQUIRE(std::regex_search(out.svg, match, std::regex("class=\"background\"[^>]*fill=\"#([0-9A-F]{6})\"")));
  out.svg_background = static_cast<uint32_t>(std::stoul(match[1].str(), nullptr, 16));
  REQUIRE(std::regex_search(out.svg, match, std::regex("<svg[^>]* height=\"([0-9.]+)\"")));
  out.svg_height = std::stod(match[1].str());
  return out;
}

// Pixels in the caption's line (left of the grid's right edge) that are neither background nor a cell colour.
long caption_pixels(const Image& png, uint32_t background) {
  long count = 0;
  for (int y = 16; y < 34; ++y) {
    for (int x = 16; x < std::min(png.width, 300); ++x) {
      const uint32_t p = png.at(x, y);
      if (p != background && std::find(kEight.begin(), kEight.end(), p) == kEight.end()) ++count;
    }
  }
  return count;
}

}  // namespace

TEST_CASE("PNG and SVG exports share the background, caption and theme (--light/--dark, --caption/--no-caption)") {
  std::map<std::string, uint32_t> backgrounds;
  for (const std::string theme : {"", " --light", " --dark"}) {
    CAPTURE(theme);
    const Exported captioned = export_both(theme);
    const Exported bare = export_both(theme + " --no-caption");
    for (const Exported* e : {&captioned, &bare}) {
      CHECK(e->png.at(2, 2) == e->svg_background);  // the same paper
      CHECK(e->png.at(e->png.width - 3, e->png.height - 3) == e->svg_background);
    }
    backgrounds[theme] = captioned.svg_background;
    // The caption is in both or in neither, and takes the same height in both.
    CHECK(captioned.svg.find("class=\"caption\"") != std::string::npos);
    CHECK(captioned.svg.find(">x: float32[8") != std::string::npos);
    CHECK(bare.svg.find("class=\"caption\"") == std::string::npos);
    CHECK(captioned.png.height - bare.png.height == 24);
    CHECK(captioned.svg_height - bare.svg_height == doctest::Approx(24));
    CHECK(caption_pixels(captioned.png, captioned.svg_background) > 100);
    // Both still show the grid in JAX's colours.
    check_grid(find_colors(bare.png, as_vector(kEight), 0, 0, bare.png.width, bare.png.height), as_vector(kEight), 2, 4,
               500);
    for (const uint32_t colour : kEight) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "#%06X", colour);
      CHECK(bare.svg.find(hex) != std::string::npos);
    }
  }
  // Dark paper by default (as the window), light with --light.
  const auto luminance = [](uint32_t c) { return ((c >> 16) & 0xFF) + ((c >> 8) & 0xFF) + (c & 0xFF); };
  CHECK(luminance(backgrounds[""]) < 200);
  CHECK(luminance(backgrounds[" --light"]) > 600);
  CHECK(backgrounds[" --dark"] == backgrounds[""]);
}
