// The lesson player and presentation mode end to end, and headless runs leaving saved settings alone.
#include "gui_test_support.h"

using namespace gui_test;  // NOLINT(google-build-using-namespace): the helpers are this test's vocabulary

namespace {

const std::string kLesson = std::string(SHARDSCOPE_SOURCE_DIR) + "/scenes/lessons/02_partition_specs.py";
const std::string kLessonFlags = quote(kLesson) + " --devices cpu:8 --jax-version 0.11.2";
constexpr const char* kLessonTitle = "Lesson 2: partition specs and shard grids";

std::array<double, 4> rect_of(const nlohmann::json& value) {
  return {value[0].get<double>(), value[1].get<double>(), value[2].get<double>(), value[3].get<double>()};
}

// Pixels of the theme's text colour, or near it: glyphs drawn there.
long bright_pixels(const Image& image, const std::array<double, 4>& rect) {
  long count = 0;
  for (int y = std::max(0, static_cast<int>(rect[1])); y < std::min(image.height, static_cast<int>(rect[3])); ++y) {
    for (int x = std::max(0, static_cast<int>(rect[0])); x < std::min(image.width, static_cast<int>(rect[2])); ++x) {
      const uint32_t p = image.at(x, y);
      if (((p >> 16) & 0xFF) > 150 && ((p >> 8) & 0xFF) > 150 && (p & 0xFF) > 150) ++count;
    }
  }
  return count;
}

}  // namespace

TEST_CASE("the Scenes tab plays a lesson: its heading in large type, the step's grid beside the prose") {
  Workdir dir;
  const Run run = run_gui(dir, kLessonFlags +
                                   " --lesson-steps 1 --editor-tab Scenes --size 1600x1000 --screenshot shot.png"
                                   " --stats stats.json");
  INFO(run.out);
  REQUIRE(run.status == 0);
  const nlohmann::json stats = stats_of(dir);
  const nlohmann::json& lesson = stats.at("lesson");
  CHECK(lesson.at("title") == kLessonTitle);
  CHECK(lesson.at("step") == 0);
  CHECK(lesson.at("ran") == 1);
  CHECK(lesson.at("steps").get<int>() > 5);
  for (const auto& cell : stats.at("cells")) CHECK(cell.at("status") == "ok");
  const Image shot = load_png(dir.file("shot.png"));
  const auto heading = rect_of(lesson.at("heading_rect"));
  const auto [cx0, cy0, cx1, cy1] = canvas_rect(stats);
  // The heading is in the lower right pane (the tabs), in a face larger than the 15-pixel body text.
  CHECK(heading[0] > cx0);
  CHECK(heading[1] > cy1);
  CHECK(heading[3] - heading[1] > 18);
  CHECK(heading[2] - heading[0] > 250);
  CHECK(bright_pixels(shot, heading) > 400);
  // The step's grid (P('x', 'y') on the 2x4 mesh) is drawn right of the heading's start, in JAX's colours.
  const auto grid = find_colors(shot, as_vector(kEight), static_cast<int>(heading[0]), cy1, shot.width, shot.height);
  check_grid(grid, as_vector(kEight), 2, 4, 150);
  CHECK(grid.at(kEight[0]).x0 > heading[0] + 300);
}

TEST_CASE("a lesson re-runs on another preset up to the step shown") {
  Workdir dir;
  const Run run = run_gui(dir, kLessonFlags +
                                   " --lesson-steps 2 --rerun-on tpu-v3-8 --editor-tab Scenes"
                                   " --size 1600x1000 --screenshot shot.png --stats stats.json");
  INFO(run.out);
  REQUIRE(run.status == 0);
  CHECK(run.out.find("rerun-on tpu-v3-8: ok") != std::string::npos);
  const nlohmann::json stats = stats_of(dir);
  CHECK(stats.at("device_preset") == "tpu-v3-8");
  CHECK(stats.at("lesson").at("step") == 1);
  CHECK(stats.at("lesson").at("ran") == 2);
  // Both steps ran twice: on cpu:8, then on the new preset after the switch.
  const auto& cells = stats.at("cells");
  REQUIRE(cells.size() == 5);
  CHECK(cells[2].at("source").get<std::string>().find("shardscope.use_devices('tpu-v3-8')") != std::string::npos);
  CHECK(cells[3].at("source") == cells[0].at("source"));
  CHECK(cells[3].at("output").get<std::string>().find("TPU 0") != std::string::npos);
  CHECK(cells[0].at("output").get<std::string>().find("CPU 0") != std::string::npos);
  for (const auto& cell : cells) CHECK(cell.at("status") == "ok");
  CHECK(run_gui(dir, kLessonFlags + " --rerun-on tpu-v9-8 --screenshot s.png").out.find("Unknown device preset") !=
        std::string::npos);
}

TEST_CASE("presentation mode fills the screen at 1920x1080 and --ui-scale 1.5 with the lesson readable") {
  std::array<double, 2> heading_heights{};
  const std::array<const char*, 2> scales = {"1", "1.5"};
  for (std::size_t i = 0; i < scales.size(); ++i) {
    CAPTURE(scales[i]);
    Workdir dir;
    const Run run = run_gui(dir, kLessonFlags + " --present --lesson-steps 1 --size 1920x1080 --ui-scale " + scales[i] +
                                     " --screenshot shot.png --stats stats.json");
    INFO(run.out);
    REQUIRE(run.status == 0);
    const nlohmann::json stats = stats_of(dir);
    CHECK(stats.at("present") == true);
    CHECK(rect_of(stats.at("present_rect")) == std::array<double, 4>{0, 0, 1920, 1080});
    const Image shot = load_png(dir.file("shot.png"));
    REQUIRE(shot.width == 1920);
    REQUIRE(shot.height == 1080);
    const auto heading = rect_of(stats.at("lesson").at("heading_rect"));
    heading_heights[i] = heading[3] - heading[1];
    // Large type, on screen, in the left half (the prose column): nothing cut at the edges.
    CHECK(heading[3] - heading[1] > 35);
    CHECK(heading[0] >= 0);
    CHECK(heading[2] <= 1920 / 2 + 1);
    CHECK(heading[3] < 1080);
    CHECK(bright_pixels(shot, heading) > 1500);
    // The step's grid fills much of the right half: every cell large, the whole grid on screen.
    const auto grid = find_colors(shot, as_vector(kEight), 1920 / 2, 0, 1920, 1080);
    check_grid(grid, as_vector(kEight), 2, 4, 8000);
    CHECK(grid.at(kEight[7]).x1 < 1920);
    CHECK(grid.at(kEight[7]).y1 < 1080);
    // No other panel: the console's prompt and the Variables title are not drawn.
    CHECK(stats.at("canvas_rect")[2].get<double>() == 0);
  }
  CHECK(heading_heights[1] > heading_heights[0] * 1.3);
}

TEST_CASE("headless runs leave saved settings and history alone, --persist and interactive runs save") {
  Workdir dir;
  dir.write("scene.py", kScene);
  const std::string settings = "theme = dark\nwindow_width = 1200\n";
  const std::string history = "\"print('kept')\"\n";
  dir.write("config/settings.ini", settings);
  dir.write("config/history.jsonl", history);
  for (const std::string flags : {" --light --run-all --screenshot shot.png", " --run-all --export-svg x.svg",
                                  " --run-all --stats stats.json --apply-spec x \"P('y', None)\""}) {
    CAPTURE(flags);
    const Run run = run_gui(dir, "scene.py --select x --size 1600x1000" + flags);
    INFO(run.out);
    REQUIRE(run.status == 0);
    CHECK(read(dir.file("config/settings.ini")) == settings);
    CHECK(read(dir.file("config/history.jsonl")) == history);
  }
  // With nothing saved yet, a headless run creates nothing.
  fs::remove_all(dir.path / "config");
  fs::create_directories(dir.path / "config");
  REQUIRE(run_gui(dir, "scene.py --run-all --light --screenshot shot.png").status == 0);
  CHECK_FALSE(fs::exists(dir.path / "config" / "settings.ini"));
  CHECK_FALSE(fs::exists(dir.path / "config" / "history.jsonl"));
  // --persist saves as a person's session does, but --light stays a one-run choice.
  REQUIRE(run_gui(dir, "scene.py --run-all --light --persist --screenshot shot.png").status == 0);
  CHECK(read(dir.file("config/history.jsonl")).find("make_mesh((2, 4)") != std::string::npos);
  CHECK(read(dir.file("config/settings.ini")).find("theme = dark\n") != std::string::npos);
}
