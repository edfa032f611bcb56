// Helpers of the window's end-to-end tests: a private X server per run, PNG decoding, colour regions.
#pragma once

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

namespace gui_test {

namespace fs = std::filesystem;

// JAX's tab20b sequences for 8 and 4 cells (reference write-up of visualize_sharding's colours).
inline constexpr std::array<uint32_t, 8> kEight = {0x393B79, 0xD6616B, 0x8CA252, 0xDE9ED6,
                                                   0xE7CB94, 0x6B6ECF, 0xA55194, 0x8C6D31};
inline constexpr std::array<uint32_t, 4> kFour = {0x393B79, 0xDE9ED6, 0xAD494A, 0xB5CF6B};

inline constexpr const char* kScene = R"(# %%
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

inline std::string read(const std::string& path) {
  std::ifstream file(path);
  std::stringstream buffer;
  buffer << file.rdbuf();
  return buffer.str();
}

inline std::string quote(const std::string& text) {
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
inline const std::string kLeakCheckOff = "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1";

// Runs `shardscope gui ARGS` under a private X server; stdout and stderr are captured.
inline Run run_gui(const Workdir& dir, const std::string& args, const std::string& prefix = "") {
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

inline Image load_png(const std::string& path) {
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
inline std::map<uint32_t, Region> find_colors(const Image& image, const std::vector<uint32_t>& colors, int x0, int y0,
                                              int x1, int y1) {
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
inline void check_grid(const std::map<uint32_t, Region>& found, const std::vector<uint32_t>& order, int rows,
                       int columns, long min_pixels) {
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

inline std::vector<uint32_t> as_vector(const auto& colors) { return {colors.begin(), colors.end()}; }

inline nlohmann::json stats_of(const Workdir& dir) { return nlohmann::json::parse(read(dir.file("stats.json"))); }

inline std::array<int, 4> canvas_rect(const nlohmann::json& stats) {
  const auto& r = stats.at("canvas_rect");
  return {static_cast<int>(r[0].get<double>()), static_cast<int>(r[1].get<double>()),
          static_cast<int>(r[2].get<double>()), static_cast<int>(r[3].get<double>())};
}

inline bool history_has(const nlohmann::json& stats, const std::string& line) {
  for (const auto& entry : stats.at("history")) {
    if (entry.get<std::string>() == line) return true;
  }
  return false;
}

inline const std::string kShot =
    "scene.py --run-all --select x --size 1600x1000 --screenshot shot.png --stats stats.json";

// Runs the standard scene with kShot and `extra` arguments; the window must exit cleanly.
inline Run run_standard_scene(const Workdir& dir, const std::string& extra) {
  dir.write("scene.py", kScene);
  Run run = run_gui(dir, kShot + extra);
  INFO(run.out);
  REQUIRE(run.status == 0);
  return run;
}

}  // namespace gui_test
