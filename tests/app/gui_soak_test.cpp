// The window soak: 20 seconds of seeded random clicks, keys, cells, specs and presets end cleanly, and the
// window still draws the scene's grid afterwards.
#include "gui_test_support.h"

using namespace gui_test;  // NOLINT(google-build-using-namespace): the helpers are this test's vocabulary

TEST_CASE("a 20 s soak of random input and explorer actions ends cleanly and the grid still draws") {
  Workdir dir;
  dir.write("scene.py", kScene);
  const Run run = run_gui(dir, kShot + " --soak 20 --soak-seed 3 --timeout 120");
  INFO(run.out);
  REQUIRE(run.status == 0);
  const nlohmann::json stats = stats_of(dir);
  const nlohmann::json& soak = stats.at("soak");
  INFO(soak.dump());
  // How many actions 20 s holds depends on the frame rate (about 12 a second in the release build on two busy
  // cores, far fewer under a sanitizer): the bounds ask only that both kinds of action kept coming and that most
  // kinds occurred, which a window that froze or stopped taking input would not show.
  int input = 0;
  int explorer = 0;
  int kinds_seen = 0;
  for (const auto& [kind, count] : soak.at("actions").items()) {
    const bool is_input = kind == "click" || kind == "drag" || kind == "wheel" || kind == "type" || kind == "key";
    (is_input ? input : explorer) += count.get<int>();
    kinds_seen += count.get<int>() > 0 ? 1 : 0;
  }
  CHECK(soak.at("actions").size() == 11);
  CHECK(input >= 20);
  CHECK(explorer >= 5);
  CHECK(kinds_seen >= 8);
  // One RSS sample a second (no bound asserted: 20 s is too short to tell growth from noise).
  CHECK(soak.at("rss_kb").size() >= 18);
  for (const auto& kb : soak.at("rss_kb")) CHECK(kb.get<long>() > 0);
  // The scene ran again after the soak: x is selected and its grid drawn, in colour, on the canvas.
  CHECK(stats.at("selected") == "x");
  const Image shot = load_png(dir.file("shot.png"));
  const auto [x0, y0, x1, y1] = canvas_rect(stats);
  long coloured = 0;
  for (int y = std::max(0, y0); y < y1 && y < shot.height; ++y) {
    for (int x = std::max(0, x0); x < x1 && x < shot.width; ++x) {
      const uint32_t p = shot.at(x, y);
      const int r = static_cast<int>((p >> 16) & 0xFF);
      const int g = static_cast<int>((p >> 8) & 0xFF);
      const int b = static_cast<int>(p & 0xFF);
      if (std::max({r, g, b}) - std::min({r, g, b}) > 40) ++coloured;
    }
  }
  CHECK(coloured > 20000);
}
