// The Program tab's Timeline view: a jit program with an all-reduce drawn as compute and communication segments
// whose widths follow the estimated times, the same times `shardscope explain --timeline` writes.
#include "gui_test_support.h"

using namespace gui_test;  // NOLINT(google-build-using-namespace): the helpers are this test's vocabulary

namespace {

// x @ w contracts the dim both operands shard over 'y': each device holds a partial sum, all-reduced over 'y'. In
// bf16 at these sizes the local product is compute-bound on a TPU v3, and the all-reduce takes about four times as
// long.
constexpr const char* kAllReduceScene = R"(# %%
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ('x', 'y'), axis_types=(jax.sharding.AxisType.Auto,) * 2)
x = jax.device_put(jnp.ones((1024, 2048), jnp.bfloat16), NamedSharding(mesh, P('x', 'y')))
w = jax.device_put(jnp.ones((2048, 512), jnp.bfloat16), NamedSharding(mesh, P('y', None)))
y = jax.jit(lambda x, w: jnp.dot(x, w))(x, w)
)";

// Columns of [x0, x1) where some pixel of rows [y0, y1) has one of `colors` (labels may cover part of a column).
int colored_columns(const Image& image, const std::vector<uint32_t>& colors, int x0, int x1, int y0, int y1) {
  int columns = 0;
  for (int x = std::max(0, x0); x < std::min(image.width, x1); ++x) {
    for (int y = std::max(0, y0); y < std::min(image.height, y1); ++y) {
      if (std::find(colors.begin(), colors.end(), image.at(x, y)) != colors.end()) {
        ++columns;
        break;
      }
    }
  }
  return columns;
}

// Row -> seconds of the serial schedule in explain's timeline SVG (every lane repeats the same intervals).
std::map<int, double> serial_seconds(const std::string& svg) {
  const std::size_t begin = svg.find("data-schedule=\"serial\"");
  const std::size_t end = svg.find("data-schedule=\"overlapped\"");
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  const std::string serial = svg.substr(begin, end - begin);
  const std::regex interval(R"re(data-row="(\d+)" data-start-s="[^"]+" data-seconds="([^"]+)")re");
  std::map<int, double> out;
  for (auto it = std::sregex_iterator(serial.begin(), serial.end(), interval); it != std::sregex_iterator(); ++it) {
    out[std::stoi((*it)[1].str())] = std::stod((*it)[2].str());
  }
  return out;
}

constexpr uint32_t kCompute = 0x4E79A7;
constexpr uint32_t kMemory = 0xF28E2B;
constexpr uint32_t kCollective = 0xE15759;

}  // namespace

TEST_CASE("the Timeline view draws compute and all-reduce segments as wide as their estimated times") {
  Workdir dir;
  dir.write("scene.py", kAllReduceScene);
  const Run run = run_gui(dir,
                          "scene.py --run-all --editor-tab Program --program-view Timeline --size 1600x1000 "
                          "--screenshot shot.png --stats stats.json");
  INFO(run.out);
  REQUIRE(run.status == 0);
  const nlohmann::json stats = stats_of(dir);
  REQUIRE(stats.contains("timeline"));
  const nlohmann::json& timeline = stats.at("timeline");
  CHECK(timeline.at("schedule") == "serial");
  REQUIRE(timeline.at("lanes").size() == 8);  // tpu-v3-8: one lane per device
  CHECK(timeline.at("lanes")[0].at("label") == "device 0");

  // Lane 0's segments: the all-reduce on the communication track, equations on the compute track.
  double compute_seconds = 0;  // compute- and memory-bound equations
  double collective_seconds = 0;
  std::map<int, double> window_seconds;
  for (const auto& segment : timeline.at("segments")) {
    if (segment.at("lane") != 0) continue;
    window_seconds[segment.at("row").get<int>()] = segment.at("seconds").get<double>();
    (segment.at("category") == "collective" ? collective_seconds : compute_seconds) +=
        segment.at("seconds").get<double>();
  }
  INFO("compute " << compute_seconds << " s, collectives " << collective_seconds << " s");
  REQUIRE(collective_seconds > 0);
  REQUIRE(compute_seconds > 0);

  // The screenshot: columns of each colour inside lane 0's tracks, in the ratio of the estimated times.
  const Image shot = load_png(dir.file("shot.png"));
  const auto track = [&](const char* name) {
    const auto& r = timeline.at("lanes")[0].at(name);
    return std::array<int, 4>{static_cast<int>(r[0].get<double>()), static_cast<int>(r[1].get<double>()),
                              static_cast<int>(r[2].get<double>()) + 1, static_cast<int>(r[3].get<double>()) + 1};
  };
  const auto [cx0, cy0, cx1, cy1] = track("compute");
  const auto [mx0, my0, mx1, my1] = track("communication");
  const int compute_px = colored_columns(shot, {kCompute, kMemory}, cx0, cx1, cy0, cy1);
  const int collective_px = colored_columns(shot, {kCollective}, mx0, mx1, my0, my1);
  INFO("compute " << compute_px << " px, collective " << collective_px << " px over a " << (cx1 - cx0) << " px track");
  const double px_per_s = timeline.at("px_per_s").get<double>();
  CHECK(collective_px >= 10);
  CHECK(compute_px >= 10);
  // Each segment is rounded to whole pixels: a couple of pixels of slack per segment.
  const auto segments = static_cast<double>(window_seconds.size());
  CHECK(std::abs(compute_px + collective_px - (compute_seconds + collective_seconds) * px_per_s) <= 2 * segments + 2);
  CHECK(static_cast<double>(compute_px) / collective_px ==
        doctest::Approx(compute_seconds / collective_seconds).epsilon(0.1));
  // The whole schedule fills the track: nothing of the two colours outside lane 0's tracks on its rows.
  CHECK(colored_columns(shot, {kCollective}, 0, mx0 - 2, my0, my1) == 0);

  // The same segment times as `shardscope explain --timeline` writes for this program.
  const std::string explain = "cd " + quote(dir.path.string()) + " && " + quote(SHARDSCOPE_BINARY) +
                              " explain scene.py --timeline timeline.svg > explain.txt 2>&1";
  REQUIRE(std::system(explain.c_str()) == 0);
  const std::map<int, double> cli_seconds = serial_seconds(read(dir.file("timeline.svg")));
  INFO(read(dir.file("explain.txt")));
  REQUIRE(cli_seconds.size() == window_seconds.size());
  for (const auto& [row, seconds] : window_seconds) {
    INFO("row " << row);
    REQUIRE(cli_seconds.count(row) == 1);
    CHECK(cli_seconds.at(row) == doctest::Approx(seconds).epsilon(1e-5));
  }
  CHECK(read(dir.file("explain.txt")).find("all-reduce") != std::string::npos);

  // The overlapped schedule is one flag away; a bad schedule name is a usage error.
  const Run overlapped =
      run_gui(dir,
              "scene.py --run-all --editor-tab Program --program-view Timeline --timeline-schedule overlapped "
              "--size 1600x1000 --stats stats.json");
  REQUIRE(overlapped.status == 0);
  const nlohmann::json overlapped_stats = stats_of(dir);
  CHECK(overlapped_stats.at("timeline").at("schedule") == "overlapped");
  CHECK(overlapped_stats.at("timeline").at("total_s").get<double>() <= timeline.at("total_s").get<double>() + 1e-12);
  const Run bad = run_gui(dir, "scene.py --timeline-schedule sideways --screenshot bad.png");
  CHECK(bad.status == 2);
  CHECK(bad.out.find("--timeline-schedule takes serial or overlapped, got 'sideways'") != std::string::npos);
}

TEST_CASE("the README's explain session shows what explain prints and the timeline it writes") {
  Workdir dir;
  const std::string root = SHARDSCOPE_SOURCE_DIR;
  const std::string readme = read(root + "/README.md");
  const std::string command =
      "$ ./shardscope explain examples/explain_layer.py --devices tpu-v5e-8 --timeline docs/explain-timeline.svg\n";
  const std::size_t begin = readme.find(command);
  REQUIRE(begin != std::string::npos);
  const std::string excerpt = readme.substr(begin + command.size(), readme.find("```", begin) - begin - command.size());
  const std::string run = "cd " + quote(root) + " && " + quote(SHARDSCOPE_BINARY) +
                          " explain examples/explain_layer.py --devices tpu-v5e-8 --timeline " +
                          quote(dir.file("timeline.svg")) + " > " + quote(dir.file("out.txt")) + " 2>&1";
  REQUIRE(std::system(run.c_str()) == 0);
  const std::string output = "\n" + read(dir.file("out.txt"));
  // Every line shown begins a line explain prints (the README cuts the reason column); "..." stands for the rest.
  std::istringstream lines(excerpt);
  int shown = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line == "  ..." || line.rfind("wrote timeline ", 0) == 0) continue;
    INFO(line);
    CHECK(output.find("\n" + line) != std::string::npos);
    ++shown;
  }
  CHECK(shown >= 10);
  // The picture in docs/ is the one the command writes.
  CHECK(read(root + "/docs/explain-timeline.svg") == read(dir.file("timeline.svg")));
}
