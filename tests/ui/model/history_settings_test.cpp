// Console history (navigation, file round trip) and the settings file.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "ui/model/history.h"
#include "ui/model/settings.h"

namespace shardscope::ui {
namespace {

std::string temporary_path(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("shardscope_ui_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

}  // namespace

TEST_CASE("history skips blanks and repeats and keeps a bounded number of entries") {
  History history(3);
  history.add("a = 1");
  history.add("a = 1");
  history.add("   \n");
  history.add("b = 2");
  history.add("c = 3");
  history.add("d = 4");
  CHECK(history.entries() == std::vector<std::string>{"b = 2", "c = 3", "d = 4"});
}

TEST_CASE("Up walks back from the newest entry, Down returns to the unfinished input") {
  History history;
  history.add("first");
  history.add("second");
  CHECK(history.older("draft") == std::optional<std::string>("second"));
  CHECK(history.older("ignored") == std::optional<std::string>("first"));
  CHECK_FALSE(history.older("ignored"));
  CHECK(history.newer() == std::optional<std::string>("second"));
  CHECK(history.newer() == std::optional<std::string>("draft"));
  CHECK_FALSE(history.newer());
}

TEST_CASE("history survives a save and load, multi-line cells included") {
  const std::string path = temporary_path("history.jsonl");
  History history;
  history.add("def f(x):\n    return x * 2\n");
  history.add("x = jax.device_put(x, NamedSharding(mesh, P('y', None)))");
  REQUIRE(history.save(path));
  History loaded;
  loaded.load(path);
  CHECK(loaded.entries() == history.entries());
  std::ofstream(path, std::ios::app) << "not json\n";
  History tolerant;
  tolerant.load(path);
  CHECK(tolerant.entries().size() == 2);
  History missing;
  missing.load(path + ".absent");
  CHECK(missing.entries().empty());
}

TEST_CASE("settings round-trip and ignore what they do not understand") {
  Settings settings;
  settings.dark_theme = false;
  settings.window_width = 1280;
  settings.window_height = 720;
  settings.font_size = 17;
  settings.last_scene = "scenes/default.py";
  settings.console_fraction = 0.5f;
  settings.left_fraction = 0.3f;
  const Settings back = Settings::parse(settings.serialize());
  CHECK_FALSE(back.dark_theme);
  CHECK(back.window_width == 1280);
  CHECK(back.window_height == 720);
  CHECK(back.font_size == doctest::Approx(17));
  CHECK(back.last_scene == "scenes/default.py");
  CHECK(back.console_fraction == doctest::Approx(0.5));
  CHECK(back.left_fraction == doctest::Approx(0.3));
  const Settings odd = Settings::parse("theme = purple\nwindow_width = 12\nfont_size = x\nmystery = 1\nno equals\n");
  CHECK(odd.dark_theme);
  CHECK(odd.window_width == 1600);
  CHECK(odd.font_size == doctest::Approx(15));
  // A splitter dragged past the limits in a hand-edited file falls back to the default layout.
  CHECK(Settings::parse("left_fraction = 0.95\n").left_fraction == doctest::Approx(0.40));
  // The palette is kept by name; an unknown one keeps JAX's tab20b.
  settings.palette = Palette::kColorBlind;
  CHECK(Settings::parse(settings.serialize()).palette == Palette::kColorBlind);
  CHECK(Settings::parse("palette = rainbow\n").palette == Palette::kTab20b);
  const std::string path = temporary_path("settings.ini");
  REQUIRE(save_settings(settings, path));
  CHECK(load_settings(path).window_width == 1280);
}

}  // namespace shardscope::ui
