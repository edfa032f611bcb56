// Selecting a collective animates it on the device view: a ring all-gather over 'y' on a 2x4 TPU v5e mesh draws
// amber arrows between neighbouring chips, fewer at later steps of the line, and none when nothing is selected;
// the frame exported as SVG puts each chunk on the link it travels.
#include "gui_test_support.h"

using namespace gui_test;  // NOLINT(google-build-using-namespace): the helpers are this test's vocabulary

namespace {

// Pixels of the animation's send colour (255, 170, 0) inside the canvas.
long send_pixels(const Workdir& dir, const std::string& shot) {
  const Image image = load_png(dir.file(shot));
  const auto [x0, y0, x1, y1] = canvas_rect(stats_of(dir));
  long count = 0;
  for (int y = y0 + 40; y < y1 && y < image.height; ++y) {  // below the caption line
    for (int x = x0; x < x1 && x < image.width; ++x) {
      const uint32_t p = image.at(x, y);
      const int r = static_cast<int>((p >> 16) & 0xFF);
      const int g = static_cast<int>((p >> 8) & 0xFF);
      const int b = static_cast<int>(p & 0xFF);
      if (r > 235 && g > 150 && g < 190 && b < 40) ++count;
    }
  }
  return count;
}

struct Point {
  double x = 0;
  double y = 0;
};

double attribute(const std::string& element, const std::string& name) {
  const std::regex pattern(" " + name + "=\"([^\"]+)\"");
  std::smatch match;
  REQUIRE_MESSAGE(std::regex_search(element, match, pattern), name << " in " << element);
  return std::stod(match[1].str());
}

std::vector<std::string> elements(const std::string& svg, const std::string& start) {
  std::vector<std::string> out;
  for (std::size_t at = svg.find(start); at != std::string::npos; at = svg.find(start, at + 1)) {
    out.push_back(svg.substr(at, svg.find('>', at) - at));
  }
  return out;
}

// The exported frame: every chunk marker sits on the segment joining the centres of its sender and receiver (give
// or take the sideways shift that keeps opposite sends apart), and those two devices are the ends of a drawn link.
void check_frame_svg(const std::string& svg, std::size_t expected_chunks) {
  std::map<long, Point> centre;
  double box = 0;
  for (const std::string& device : elements(svg, "<rect class=\"device\"")) {
    const double w = attribute(device, "width");
    const double h = attribute(device, "height");
    centre[std::lround(attribute(device, "data-device"))] = {attribute(device, "x") + w / 2,
                                                             attribute(device, "y") + h / 2};
    box = std::min(w, h);
  }
  REQUIRE(centre.size() == 8);
  std::vector<std::pair<Point, Point>> links;
  for (const std::string& link : elements(svg, "<line class=\"link")) {
    links.push_back({{attribute(link, "x1"), attribute(link, "y1")}, {attribute(link, "x2"), attribute(link, "y2")}});
  }
  const std::vector<std::string> chunks = elements(svg, "<rect class=\"chunk\"");
  CHECK(chunks.size() == expected_chunks);
  for (const std::string& chunk : chunks) {
    INFO(chunk);
    const Point a = centre.at(std::lround(attribute(chunk, "data-from")));
    const Point b = centre.at(std::lround(attribute(chunk, "data-to")));
    const Point c{attribute(chunk, "x") + attribute(chunk, "width") / 2,
                  attribute(chunk, "y") + attribute(chunk, "height") / 2};
    const double length = std::hypot(b.x - a.x, b.y - a.y);
    REQUIRE(length > 0);
    const double along = ((c.x - a.x) * (b.x - a.x) + (c.y - a.y) * (b.y - a.y)) / (length * length);
    const double off = std::abs((c.x - a.x) * (b.y - a.y) - (c.y - a.y) * (b.x - a.x)) / length;
    CHECK(along > 0);
    CHECK(along < 1);
    CHECK(off <= 0.15 * box + 0.5);
    // A link joins the two chips: its middle is the middle of the two centres.
    const Point middle{(a.x + b.x) / 2, (a.y + b.y) / 2};
    CHECK(std::any_of(links.begin(), links.end(), [&](const auto& link) {
      return std::hypot((link.first.x + link.second.x) / 2 - middle.x, (link.first.y + link.second.y) / 2 - middle.y) <
             1.0;
    }));
  }
}

}  // namespace

TEST_CASE("a ring all-gather steps across the ICI links of a 2x4 mesh on the device view") {
  Workdir dir;
  dir.write("scene.py", R"(# %%
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ('x', 'y'), axis_types=(jax.sharding.AxisType.Auto,) * 2)
x = jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, P('x', 'y')))
gather = jax.jit(lambda x: jax.lax.with_sharding_constraint(x, NamedSharding(mesh, P('x', None))))
y = gather(x)
)");
  const std::string common =
      "scene.py --devices tpu-v5e-8 --run-all --select y --editor-tab Program --size 1600x1000 "
      "--stats stats.json ";
  const Run first =
      run_gui(dir, common + "--animate-collective 0:0 --screenshot step0.png --export-animation-svg step0.svg");
  INFO(first.out);
  REQUIRE(first.status == 0);
  const long step0 = send_pixels(dir, "step0.png");
  // The same frame as SVG: chunks half way along their links (6 per group of 4 at the first step).
  const std::string svg = read(dir.file("step0.svg"));
  CHECK(svg.find("all-gather over y, step 1/3 (all-gather)") != std::string::npos);
  check_frame_svg(svg, 12);
  // `shardscope explain --animation-frame` draws the same frame without a window: the same chunks, arrows and links.
  const std::string explain = "cd " + quote(dir.path.string()) + " && " + quote(SHARDSCOPE_BINARY) +
                              " explain scene.py --devices tpu-v5e-8 --animation-frame 0:0 cli.svg > cli.txt 2>&1";
  REQUIRE(std::system(explain.c_str()) == 0);
  const std::string cli = read(dir.file("cli.svg"));
  for (const std::string start : {"<rect class=\"chunk\"", "<line class=\"send\"", "<line class=\"link"}) {
    INFO(start);
    std::vector<std::string> window = elements(svg, start);
    std::vector<std::string> headless = elements(cli, start);
    std::sort(window.begin(), window.end());
    std::sort(headless.begin(), headless.end());
    CHECK_FALSE(window.empty());
    CHECK(window == headless);
  }
  const Run last = run_gui(dir, common + "--animate-collective 0:2 --screenshot step2.png");
  REQUIRE(last.status == 0);
  const long step2 = send_pixels(dir, "step2.png");
  const Run none = run_gui(dir, common + "--device-view --screenshot none.png");
  REQUIRE(none.status == 0);
  const long idle = send_pixels(dir, "none.png");
  INFO("send pixels: step 0 " << step0 << ", step 2 " << step2 << ", none " << idle);
  // A line of 4 chips sends 6 chunks per group at the first step and 2 at the last.
  CHECK(step0 > 400);
  CHECK(step2 > 100);
  CHECK(step2 < step0);
  CHECK(idle == 0);
  const Run bad = run_gui(dir, "scene.py --animate-collective x --screenshot bad.png");
  CHECK(bad.status == 2);
  CHECK(bad.out.find("--animate-collective takes N or N:STEP (0-based), got 'x'") != std::string::npos);
  const Run lone = run_gui(dir, "scene.py --export-animation-svg lone.svg");
  CHECK(lone.status == 2);
  CHECK(lone.out.find("--export-animation-svg needs --animate-collective N[:STEP]") != std::string::npos);
}
