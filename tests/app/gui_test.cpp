// The explorer window end to end: the real binary under Xvfb, its screenshots and exports checked by pixels.
#include <doctest/doctest.h>
#include <stb/stb_image.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// JAX's tab20b sequences for 8 and 4 cells (reference write-up of visualize_sharding's colours).
constexpr std::array<uint32_t, 8> kEight = {0x393B79, 0xD6616B, 0x8CA252, 0xDE9ED6,
                                            0xE7CB94, 0x6B6ECF, 0xA55194, 0x8C6D31};
constexpr std::array<uint32_t, 4> kFour = {0x393B79, 0xDE9ED6, 0xAD494A, 0xB5CF6B};

constexpr const char* kScene = R"(# %%
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ('x', 'y'))

# %%
x = jax.device_put(jnp.arange(64.0).reshape(8, 8), NamedSharding(mesh, P('x', 'y')))
jax.debug.visualize_array_sharding(x)
)";

struct Workdir {
  fs::path path;
  Workdir() {
    path = fs::temp_directory_path() /
           ("shardscope_gui_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter()++));
    fs::remove_all(path);
    fs::create_directories(path / "config");
  }
  ~Workdir() { fs::remove_all(path); }
  static int& counter() {
    static int n = 0;
    return n;
  }
  [[nodiscard]] std::string file(const std::string& name) const { return (path / name).string(); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(file(name)) << text; }
};

std::string read(const std::string& path) {
  std::ifstream file(path);
  std::stringstream buffer;
  buffer << file.rdbuf();
  return buffer.str();
}

std::string quote(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct Run {
  int status = -1;
  std::string out;
};

// The window's process loads the GL driver with dlopen and unloads it at exit, so LeakSanitizer sees the
// driver's allocations as coming from an unknown module that no suppression can name: the window runs
// without leak checking in the sanitizer build (address and UB checks stay on).
const std::string kLeakCheckOff = "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1";

// Runs `shardscope gui ARGS` under a private X server; stdout and stderr are captured.
Run run_gui(const Workdir& dir, const std::string& args, const std::string& prefix = "") {
  const std::string out = dir.file("out.txt");
  const std::string command = "cd " + quote(dir.path.string()) + " && " + kLeakCheckOff +
                              " SHARDSCOPE_CONFIG_DIR=" + quote(dir.file("config")) +
                              " xvfb-run -a -s '-screen 0 1920x1200x24' " + prefix + quote(SHARDSCOPE_BINARY) +
                              " gui " + args + " > " + quote(out) + " 2>&1";
  const int raw = std::system(command.c_str());
  Run run;
  run.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  run.out = read(out);
  return run;
}

struct Image {
  int width = 0;
  int height = 0;
  std::vector<unsigned char> rgb;
  [[nodiscard]] uint32_t at(int x, int y) const {
    const std::size_t i =
        (static_cast<std::size_t>(y) * static_cast<std::size_t>(width) + static_cast<std::size_t>(x)) * 3;
    return (uint32_t{rgb[i]} << 16) | (uint32_t{rgb[i + 1]} << 8) | rgb[i + 2];
  }
};

Image load_png(const std::string& path) {
  Image image;
  int channels = 0;
  unsigned char* data = stbi_load(path.c_str(), &image.width, &image.height, &channels, 3);
  REQUIRE_MESSAGE(data != nullptr, "cannot decode " << path);
  image.rgb.assign(data, data + static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height) * 3);
  stbi_image_free(data);
  return image;
}

struct Region {
  long count = 0;
  double cx = 0;
  double cy = 0;
  int x0 = 1 << 30, y0 = 1 << 30, x1 = -1, y1 = -1;
};

// Where each colour appears (exactly) inside [x0, x1) x [y0, y1).
std::map<uint32_t, Region> find_colors(const Image& image, const std::vector<uint32_t>& colors, int x0, int y0, int x1,
                                       int y1) {
  std::map<uint32_t, Region> found;
  for (const uint32_t c : colors) found[c];
  for (int y = std::max(0, y0); y < std::min(image.height, y1); ++y) {
    for (int x = std::max(0, x0); x < std::min(image.width, x1); ++x) {
      auto it = found.find(image.at(x, y));
      if (it == found.end()) continue;
      Region& r = it->second;
      ++r.count;
      r.cx += x;
      r.cy += y;
      r.x0 = std::min(r.x0, x);
      r.y0 = std::min(r.y0, y);
      r.x1 = std::max(r.x1, x + 1);
      r.y1 = std::max(r.y1, y + 1);
    }
  }
  for (auto& [c, r] : found) {
    if (r.count > 0) {
      r.cx /= static_cast<double>(r.count);
      r.cy /= static_cast<double>(r.count);
    }
  }
  return found;
}

// Colours laid out as `rows` x `columns` in row-major order, each a solid block.
void check_grid(const std::map<uint32_t, Region>& found, const std::vector<uint32_t>& order, int rows, int columns,
                long min_pixels) {
  for (const uint32_t c : order) {
    INFO("colour #" << std::hex << c);
    CHECK(found.at(c).count >= min_pixels);
  }
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < columns; ++c) {
      const Region& cell = found.at(order[static_cast<std::size_t>(r * columns + c)]);
      if (c > 0) {
        const Region& left = found.at(order[static_cast<std::size_t>(r * columns + c - 1)]);
        CHECK(std::abs(cell.cy - left.cy) < 3);
        CHECK(cell.cx > left.cx + 10);
      }
      if (r > 0) {
        const Region& above = found.at(order[static_cast<std::size_t>((r - 1) * columns + c)]);
        CHECK(std::abs(cell.cx - above.cx) < 3);
        CHECK(cell.cy > above.cy + 10);
      }
    }
  }
}

std::vector<uint32_t> as_vector(const auto& colors) { return {colors.begin(), colors.end()}; }

nlohmann::json stats_of(const Workdir& dir) { return nlohmann::json::parse(read(dir.file("stats.json"))); }

std::array<int, 4> canvas_rect(const nlohmann::json& stats) {
  const auto& r = stats.at("canvas_rect");
  return {static_cast<int>(r[0].get<double>()), static_cast<int>(r[1].get<double>()),
          static_cast<int>(r[2].get<double>()), static_cast<int>(r[3].get<double>())};
}

bool history_has(const nlohmann::json& stats, const std::string& line) {
  for (const auto& entry : stats.at("history")) {
    if (entry.get<std::string>() == line) return true;
  }
  return false;
}

const std::string kShot = "scene.py --run-all --select x --size 1600x1000 --screenshot shot.png --stats stats.json";

// Runs the standard scene with kShot and `extra` arguments; the window must exit cleanly.
Run run_standard_scene(const Workdir& dir, const std::string& extra) {
  dir.write("scene.py", kScene);
  Run run = run_gui(dir, kShot + extra);
  INFO(run.out);
  REQUIRE(run.status == 0);
  return run;
}

}  // namespace

TEST_CASE("the window shows the console, variables and a 2x4 grid in JAX's colours") {
  Workdir dir;
  dir.write("scene.py", kScene);
  const Run run = run_gui(dir, kShot);
  INFO(run.out);
  REQUIRE(run.status == 0);
  const Image shot = load_png(dir.file("shot.png"));
  CHECK(shot.width == 1600);
  CHECK(shot.height == 1000);
  const nlohmann::json stats = stats_of(dir);
  const auto [x0, y0, x1, y1] = canvas_rect(stats);
  CHECK(x0 > shot.width / 3);  // the canvas is right of the console
  check_grid(find_colors(shot, as_vector(kEight), x0, y0, x1, y1), as_vector(kEight), 2, 4, 1500);
  // The console (top left) shows text: many bright pixels on the dark background.
  long bright = 0;
  for (int y = 40; y < shot.height / 2; ++y) {
    for (int x = 0; x < x0 - 10; ++x) {
      const uint32_t p = shot.at(x, y);
      if (((p >> 16) & 0xFF) > 170 && ((p >> 8) & 0xFF) > 170 && (p & 0xFF) > 170) ++bright;
    }
  }
  CHECK(bright > 2000);
  // visualize_array_sharding's picture appears inline in the console too, in the same colours.
  const auto inline_grid = find_colors(shot, as_vector(kEight), 0, 0, x0 - 10, shot.height);
  check_grid(inline_grid, as_vector(kEight), 2, 4, 100);
  for (const auto& cell : stats.at("cells")) CHECK(cell.at("status") == "ok");
}

TEST_CASE("the program view shows the last jit program and the all-reduce the partitioner inserted") {
  Workdir dir;
  // x @ w contracts the dimension both operands shard over 'y': each device holds a (4, 4) partial sum that the
  // partitioner all-reduces over 'y' in two groups of four devices.
  dir.write("scene.py", R"(# %%
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ('x', 'y'), axis_types=(jax.sharding.AxisType.Auto,) * 2)
x = jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, P('x', 'y')))
w = jax.device_put(jnp.ones((16, 4)), NamedSharding(mesh, P('y', None)))
layer = jax.jit(lambda x, w: jnp.dot(x, w))
y = layer(x, w)
)");
  const Run run = run_gui(
      dir,
      "scene.py --run-all --select y --editor-tab Program --size 1600x1000 --screenshot shot.png --stats stats.json");
  INFO(run.out);
  REQUIRE(run.status == 0);
  const nlohmann::json stats = stats_of(dir);
  INFO(stats.dump(1));
  REQUIRE(stats.contains("program"));
  CHECK(stats.at("program").at("name") == "<lambda>");
  CHECK(stats.at("program").at("text").get<std::string>().find("dot_general") != std::string::npos);
  REQUIRE(stats.at("program").at("collectives").size() == 1);
  const std::string collective = stats.at("program").at("collectives")[0].get<std::string>();
  // The default preset is a TPU v3-8, whose make_mesh order puts devices 6,7,4,5 on the second row.
  CHECK(collective.find("all-reduce over ('y',) groups {0,1,2,3},{6,7,4,5}: 96 B sent per device") == 0);
  // The editors pane (below the canvas) shows the program text and the collectives table: many text pixels.
  const Image shot = load_png(dir.file("shot.png"));
  const auto [x0, y0, x1, y1] = canvas_rect(stats);
  long bright = 0;
  for (int y = y1 + 40; y < shot.height; ++y) {
    for (int x = x0; x < shot.width; ++x) {
      const uint32_t p = shot.at(x, y);
      if (((p >> 16) & 0xFF) > 170 && ((p >> 8) & 0xFF) > 170 && (p & 0xFF) > 170) ++bright;
    }
  }
  CHECK(bright > 3000);
}

TEST_CASE("--ui-scale enlarges fonts and widgets for HiDPI screens") {
  std::array<int, 2> canvas_tops{};
  std::array<int, 2> canvas_widths{};
  const std::array<const char*, 2> scales = {"1", "1.5"};
  for (std::size_t i = 0; i < scales.size(); ++i) {
    Workdir dir;
    (void)run_standard_scene(dir, std::string(" --ui-scale ") + scales[i]);
    const auto [x0, y0, x1, y1] = canvas_rect(stats_of(dir));
    canvas_tops[i] = y0;
    canvas_widths[i] = x1 - x0;
  }
  // The canvas starts below the menu bar, the pane title and the toolbar, all one and a half times as tall.
  CHECK(canvas_tops[1] > canvas_tops[0] * 13 / 10);
  CHECK(canvas_widths[1] > canvas_widths[0] * 8 / 10);  // the layout still fits the window
}

TEST_CASE("the mesh editor switches the device preset, clearing the namespace, and refuses unknown presets") {
  {
    Workdir dir;
    (void)run_standard_scene(dir, " --switch-devices tpu-v4-16 --editor-tab Mesh");
    const nlohmann::json stats = stats_of(dir);
    INFO(stats.dump(1));
    CHECK(stats.at("device_preset") == "tpu-v4-16");
    CHECK(stats.at("device_count") == 8);
    for (const auto& cell : stats.at("cells")) CHECK(cell.at("status") == "ok");
    CHECK(stats.at("cells").back().at("source").get<std::string>().find("set_device_preset('tpu-v4-16')") !=
          std::string::npos);
    bool in_history = false;  // the switch is replayable code in the console history
    for (const auto& entry : stats.at("history")) {
      in_history |= entry.get<std::string>().find("_shardscope.set_device_preset('tpu-v4-16')") != std::string::npos;
    }
    CHECK(in_history);
  }
  {
    Workdir dir;
    const Run run = run_standard_scene(dir, " --switch-devices tpu-v9-8");
    CHECK(run.out.find("switch-devices tpu-v9-8: ValueError: Unknown device preset 'tpu-v9-8'") != std::string::npos);
    const nlohmann::json stats = stats_of(dir);
    CHECK(stats.at("device_preset") == "tpu-v3-8");
    CHECK(stats.at("cells").size() == 2);  // only the scene's cells ran
  }
}

TEST_CASE("re-sharding through the spec editor redraws the canvas and writes the device_put line") {
  Workdir dir;
  dir.write("scene.py", kScene);
  const Run run = run_gui(dir, kShot + " --apply-spec x \"P('y', None)\"");
  INFO(run.out);
  REQUIRE(run.status == 0);
  const Image shot = load_png(dir.file("shot.png"));
  const nlohmann::json stats = stats_of(dir);
  const auto [x0, y0, x1, y1] = canvas_rect(stats);
  // P('y', None) on the 2x4 mesh: four row blocks over 'y', replicated over 'x'.
  check_grid(find_colors(shot, as_vector(kFour), x0, y0, x1, y1), as_vector(kFour), 4, 1, 1500);
  CHECK(find_colors(shot, {0xD6616B}, x0, y0, x1, y1).at(0xD6616B).count == 0);
  const std::string line = "x = jax.device_put(x, NamedSharding(mesh, P('y', None)))";
  CHECK(history_has(stats, line));
  CHECK(std::filesystem::exists(dir.file("config/history.jsonl")));
  CHECK(read(dir.file("config/history.jsonl")).find("P('y', None)") != std::string::npos);
  const auto& cells = stats.at("cells");
  CHECK(cells.back().at("source") == line);
  CHECK(cells.back().at("from_gui") == true);
  CHECK(cells.back().at("status") == "ok");
}

TEST_CASE("an invalid spec shows JAX's error and changes nothing") {
  Workdir dir;
  dir.write("scene.py", kScene);
  const Run run = run_gui(dir, kShot + " --apply-spec x \"P('x', 'x')\"");
  INFO(run.out);
  REQUIRE(run.status == 0);
  CHECK(run.out.find("DuplicateSpecError: A single NamedSharding spec specification can map every mesh axis to at "
                     "most one positional dimension, but P('x', 'x') has duplicate entries for `x`") !=
        std::string::npos);
  const Image shot = load_png(dir.file("shot.png"));
  const nlohmann::json stats = stats_of(dir);
  const auto [x0, y0, x1, y1] = canvas_rect(stats);
  check_grid(find_colors(shot, as_vector(kEight), x0, y0, x1, y1), as_vector(kEight), 2, 4, 1500);
  CHECK(stats.at("cells").size() == 2);  // only the scene's cells ran
  for (const auto& entry : stats.at("history"))
    CHECK(entry.get<std::string>().find("P('x', 'x')") == std::string::npos);
}

TEST_CASE("a long cell keeps frames coming and Stop interrupts it") {
  for (const char* body : {"import time\nfor _ in range(3000):\n    time.sleep(0.01)\n",
                           "import time\nstart = time.time()\nwhile time.time() - start < 30:\n    pass\n",
                           // One engine call of about 200 x 17 GFLOP (tens of seconds): Stop must reach the engine,
                           // which holds the GIL until the program returns.
                           "def many(x):\n    for _ in range(200):\n        x = jnp.tanh(x @ x)\n    return x\n"
                           "y = jax.jit(many)(jnp.ones((2048, 2048)))\n"}) {
    INFO(body);
    Workdir dir;
    dir.write("scene.py", std::string(kScene) + "\n# %%\n" + body);
    const Run run = run_gui(dir, kShot + " --interrupt-after 2");
    INFO(run.out);
    REQUIRE(run.status == 0);
    const nlohmann::json stats = stats_of(dir);
    INFO(stats.dump(1));
    // Frames keep coming while the cell runs (about 60 a second on a quiet machine; a frozen window gives none).
    CHECK(stats.at("while_busy").at("frames").get<int>() >= 10);
    CHECK(stats.at("while_busy").at("max_gap_ms").get<double>() < 750);
    CHECK(stats.at("cells_seconds").get<double>() < 12);
    const auto& last = stats.at("cells").back();
    CHECK(last.at("status") == "interrupted");
    CHECK(last.at("output").get<std::string>().find("KeyboardInterrupt") != std::string::npos);
    // The session goes on: the earlier arrays are still drawn.
    const Image shot = load_png(dir.file("shot.png"));
    const auto [x0, y0, x1, y1] = canvas_rect(stats);
    check_grid(find_colors(shot, as_vector(kEight), x0, y0, x1, y1), as_vector(kEight), 2, 4, 1500);
  }
}

TEST_CASE("exported SVG and PNG show what the window shows") {
  Workdir dir;
  dir.write("scene.py", kScene);
  const Run run = run_gui(dir, kShot + " --export-svg grid.svg --export-png grid.png --png-scale 2");
  INFO(run.out);
  REQUIRE(run.status == 0);
  const Image shot = load_png(dir.file("shot.png"));
  const auto [x0, y0, x1, y1] = canvas_rect(stats_of(dir));
  const auto window = find_colors(shot, as_vector(kEight), x0, y0, x1, y1);
  const Image png = load_png(dir.file("grid.png"));
  const auto exported = find_colors(png, as_vector(kEight), 0, 0, png.width, png.height);
  check_grid(exported, as_vector(kEight), 2, 4, 4000);
  // Same cell proportions in the window and the PNG.
  const Region& a = window.at(kEight[0]);
  const Region& b = exported.at(kEight[0]);
  const double window_aspect = static_cast<double>(a.x1 - a.x0) / (a.y1 - a.y0);
  const double png_aspect = static_cast<double>(b.x1 - b.x0) / (b.y1 - b.y0);
  CHECK(window_aspect == doctest::Approx(png_aspect).epsilon(0.05));
  // The SVG has the eight cells in the same colours and order, with the same proportions.
  const std::string svg = read(dir.file("grid.svg"));
  const std::regex rect(
      R"re(<rect class="cell" x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)" height="([0-9.]+)" fill="#([0-9A-F]{6})")re");
  std::vector<std::array<double, 4>> boxes;
  std::vector<uint32_t> fills;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), rect); it != std::sregex_iterator(); ++it) {
    boxes.push_back({std::stod((*it)[1]), std::stod((*it)[2]), std::stod((*it)[3]), std::stod((*it)[4])});
    fills.push_back(static_cast<uint32_t>(std::stoul((*it)[5], nullptr, 16)));
  }
  REQUIRE(fills.size() == 8);
  CHECK(fills == as_vector(kEight));
  CHECK(boxes[0][2] / boxes[0][3] == doctest::Approx(png_aspect).epsilon(0.05));
  CHECK(boxes[1][0] > boxes[0][0]);
  CHECK(boxes[4][1] > boxes[0][1]);
}

TEST_CASE("shardscope with no arguments opens the window on the default scene") {
  Workdir dir;
  // Interactive mode: an interrupt after the scene has run closes the window cleanly.
  const std::string command = "cd " + quote(dir.path.string()) + " && " + kLeakCheckOff +
                              " SHARDSCOPE_CONFIG_DIR=" + quote(dir.file("config")) +
                              " xvfb-run -a -s '-screen 0 1920x1200x24' timeout --preserve-status -s INT 20 " +
                              quote(SHARDSCOPE_BINARY) + " > " + quote(dir.file("out.txt")) + " 2>&1";
  const int raw = std::system(command.c_str());
  INFO(read(dir.file("out.txt")));
  CHECK(WIFEXITED(raw));
  CHECK(WEXITSTATUS(raw) == 0);
  // The terminal scene did not run; the window ran the default scene's cells and saved their history.
  CHECK(read(dir.file("out.txt")).find("Sharding an 8192x8192") == std::string::npos);
  CHECK(read(dir.file("config/history.jsonl")).find("make_mesh((2, 4)") != std::string::npos);
}
