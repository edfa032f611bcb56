// The canvas at scale: a 16x16 grid with axis labels, 256- and 1024-chip device views without overlapping labels,
// and the slide palettes (which never change JAX's printed text).
#include <cstdio>

#include "gui_test_support.h"

using namespace gui_test;  // NOLINT(google-build-using-namespace): the helpers are this test's vocabulary

namespace {

struct Label {
  std::string text;
  double x0, y0, x1, y1;
};

std::vector<Label> labels_of(const nlohmann::json& stats) {
  std::vector<Label> out;
  for (const auto& entry : stats.at("canvas_labels")) {
    const auto& r = entry.at("rect");
    out.push_back({entry.at("text").get<std::string>(), r[0].get<double>(), r[1].get<double>(), r[2].get<double>(),
                   r[3].get<double>()});
  }
  return out;
}

void check_no_overlaps(const std::vector<Label>& labels) {
  long overlapping = 0;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    for (std::size_t j = i + 1; j < labels.size(); ++j) {
      const Label& a = labels[i];
      const Label& b = labels[j];
      if (a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1) {
        if (overlapping++ < 5) FAIL_CHECK("'" << a.text << "' overlaps '" << b.text << "'");
      }
    }
  }
  CHECK(overlapping == 0);
}

// Pixels inside the label's rect that differ from the canvas background: the glyphs drawn there.
long ink(const Image& shot, const Label& label, uint32_t background) {
  long count = 0;
  for (int y = static_cast<int>(label.y0); y < static_cast<int>(label.y1); ++y) {
    for (int x = static_cast<int>(label.x0); x < static_cast<int>(label.x1); ++x) {
      if (x >= 0 && y >= 0 && x < shot.width && y < shot.height && shot.at(x, y) != background) ++count;
    }
  }
  return count;
}

// The canvas background: its bottom-left corner lies in the fit margin, where nothing is drawn.
uint32_t canvas_background(const Image& shot, const nlohmann::json& stats) {
  const auto [x0, y0, x1, y1] = canvas_rect(stats);
  return shot.at(x0 + 3, y1 - 3);
}

std::string mesh_scene(const std::string& mesh, const std::string& axes, const std::string& shape,
                       const std::string& spec) {
  return "# %%\nimport jax\nimport jax.numpy as jnp\nfrom jax.sharding import NamedSharding, PartitionSpec as P\n"
         "mesh = jax.make_mesh(" +
         mesh + ", " + axes + ")\nx = jax.device_put(jnp.zeros(" + shape + "), NamedSharding(mesh, P" + spec + "))\n";
}

Run run_scene(const Workdir& dir, const std::string& scene, const std::string& args) {
  dir.write("scene.py", scene);
  Run run =
      run_gui(dir, "scene.py --run-all --select x --size 1600x1000 --screenshot shot.png --stats stats.json " + args);
  INFO(run.out);
  REQUIRE(run.status == 0);
  return run;
}

}  // namespace

TEST_CASE("a 16x16 mesh's grid fills the canvas with axis names and index ranges along its edges") {
  Workdir dir;
  run_scene(dir, mesh_scene("(16, 16)", "('data', 'model')", "(256, 256)", "('data', 'model')"),
            "--devices tpu-v5e-256");
  const nlohmann::json stats = stats_of(dir);
  const Image shot = load_png(dir.file("shot.png"));
  const uint32_t background = canvas_background(shot, stats);
  const std::vector<Label> labels = labels_of(stats);
  check_no_overlaps(labels);
  std::map<std::string, Label> by_text;
  for (const Label& label : labels) {
    INFO(label.text);
    // No strip of 256 "TPU n" labels: cells too small for JAX's label show their grid position.
    CHECK(label.text.rfind("TPU", 0) != 0);
    by_text.emplace(label.text, label);
  }
  REQUIRE(by_text.count("dim 0: data") == 1);
  REQUIRE(by_text.count("dim 1: model") == 1);
  CHECK(by_text.count("3,5") == 1);
  // Text pixels where the axis titles and the first and last row and column headers are.
  const auto [cx0, cy0, cx1, cy1] = canvas_rect(stats);
  for (const std::string text : {"dim 0: data", "dim 1: model"}) {
    INFO(text);
    CHECK(ink(shot, by_text.at(text), background) > 20);
  }
  const Label& first_row = by_text.count("0:16") ? by_text.at("0:16") : by_text.at("0");
  CHECK(ink(shot, first_row, background) > 5);
  // Row headers run down the left edge, over most of the canvas's height (not a third of it).
  double top = 1e9;
  double bottom = -1e9;
  for (const Label& label : labels) {
    if (label.text == "0:16" || label.text == "240:256" || label.text == "0" || label.text == "15") {
      top = std::min(top, label.y0);
      bottom = std::max(bottom, label.y1);
    }
  }
  CHECK(bottom - top > 0.6 * (cy1 - cy0));
  CHECK(first_row.x1 < cx0 + 0.5 * (cx1 - cx0));
}

TEST_CASE("the 256-chip device view draws every host label, none overlapping") {
  Workdir dir;
  run_scene(dir, mesh_scene("(16, 16)", "('data', 'model')", "(256, 256)", "('data', 'model')"),
            "--devices tpu-v5e-256 --device-view");
  const nlohmann::json stats = stats_of(dir);
  const Image shot = load_png(dir.file("shot.png"));
  const uint32_t background = canvas_background(shot, stats);
  const std::vector<Label> labels = labels_of(stats);
  check_no_overlaps(labels);
  long hosts = 0;
  long devices = 0;
  for (const Label& label : labels) {
    if (label.text.rfind("host ", 0) == 0) {
      ++hosts;
      INFO(label.text);
      CHECK(ink(shot, label, background) > 10);
    } else if (label.text.find_first_not_of("0123456789") == std::string::npos) {
      ++devices;
    }
  }
  CHECK(hosts == 64);  // a TPU v5e-256 has 64 hosts of 4 chips
  CHECK(devices >= 256);
}

TEST_CASE("1024-chip device views wrap planes to fill the canvas, with no overlapping labels") {
  for (const std::string preset : {"tpu-v4-2048", "gpu:1024"}) {
    INFO(preset);
    Workdir dir;
    run_scene(dir, mesh_scene("(1024,)", "('x',)", "(2048,)", "('x',)"), "--devices " + preset + " --device-view");
    const nlohmann::json stats = stats_of(dir);
    CHECK(stats.at("device_count") == 1024);
    CHECK(stats.at("canvas_error") == "");
    CHECK(stats.at("selected") == "x");
    const std::vector<Label> labels = labels_of(stats);
    check_no_overlaps(labels);
    CHECK_FALSE(labels.empty());
  }
}

TEST_CASE("palettes: 8 shards in 8 distinct colours, and JAX's printed text byte-identical whatever the palette") {
  // Okabe and Ito's set, and the first eight of Kelly's colours of maximum contrast.
  const std::map<std::string, std::vector<uint32_t>> expected = {
      {"colorblind", {0xE69F00, 0x56B4E9, 0x009E73, 0xF0E442, 0x0072B2, 0xD55E00, 0xCC79A7, 0x999999}},
      {"distinct", {0xF3C300, 0x875692, 0xF38400, 0xA1CAF1, 0xBE0032, 0xC2B280, 0x848482, 0x008856}},
      {"tab20b", {kEight.begin(), kEight.end()}}};
  std::map<std::string, std::string> printed;
  for (const auto& [palette, colors] : expected) {
    INFO(palette);
    Workdir dir;
    run_standard_scene(dir, " --palette " + palette + " --export-svg canvas.svg");
    const nlohmann::json stats = stats_of(dir);
    CHECK(stats.at("palette") == palette);
    const Image shot = load_png(dir.file("shot.png"));
    const auto [x0, y0, x1, y1] = canvas_rect(stats);
    // The 2x4 grid in the palette's colours, row-major, each a solid block.
    check_grid(find_colors(shot, colors, x0, y0, x1, y1), colors, 2, 4, 400);
    // The exported diagram carries the palette too.
    char hex[8];
    std::snprintf(hex, sizeof hex, "#%06X", colors.front());
    CHECK(read(dir.file("canvas.svg")).find(hex) != std::string::npos);
    REQUIRE(stats.at("cells").size() == 2);
    printed[palette] = stats.at("cells")[1].at("output").get<std::string>();
  }
  CHECK(printed.at("tab20b").find("TPU 0") != std::string::npos);
  CHECK(printed.at("colorblind") == printed.at("tab20b"));
  CHECK(printed.at("distinct") == printed.at("tab20b"));
  // A palette the window does not know is a usage error.
  Workdir dir;
  dir.write("scene.py", kScene);
  const Run bad = run_gui(dir, "scene.py --palette rainbow --screenshot shot.png");
  CHECK(bad.status == 2);
  CHECK(bad.out.find("--palette takes tab20b, distinct or colorblind") != std::string::npos);
}

TEST_CASE("viz --palette colours the SVG diagram and prints JAX's picture unchanged") {
  Workdir dir;
  const std::string viz = quote(SHARDSCOPE_BINARY) + " viz --shape 8,8 --mesh x=2,y=4 --spec \"P('x', 'y')\" --color";
  const auto run = [&](const std::string& extra, const std::string& out) {
    return std::system(("cd " + quote(dir.path.string()) + " && " + viz + extra + " > " + out + " 2>&1").c_str());
  };
  REQUIRE(run(" --svg jax.svg", "jax.txt") == 0);
  REQUIRE(run(" --svg blind.svg --palette colorblind", "blind.txt") == 0);
  CHECK(read(dir.file("jax.txt")) == read(dir.file("blind.txt")));
  CHECK(read(dir.file("jax.txt")).find("\x1b[38;2;") != std::string::npos);
  CHECK(read(dir.file("blind.svg")).find("#E69F00") != std::string::npos);
  CHECK(read(dir.file("jax.svg")).find("#E69F00") == std::string::npos);
}
