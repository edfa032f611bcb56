// Settings kept between runs (theme, window size, font size, last scene), as `key = value` lines.
#pragma once

#include <string>

#include "viz/colors.h"

namespace shardscope::ui {

struct Settings {
  bool dark_theme = true;
  int window_width = 1600;
  int window_height = 1000;
  float font_size = 15.0f;
  float console_fraction = 0.62f;  // share of the height the console and canvas take above the lower panels
  float left_fraction = 0.40f;     // share of the width the console and variables take left of the canvas
  std::string last_scene;
  Palette palette = Palette::kTab20b;  // the canvas's and exports' colours (JAX's text keeps tab20b)

  // Unknown keys and malformed values are ignored, keeping the defaults: an old or hand-edited file
  // never stops the window from opening.
  static Settings parse(const std::string& text);
  [[nodiscard]] std::string serialize() const;
};

[[nodiscard]] Settings load_settings(const std::string& path);
[[nodiscard]] bool save_settings(const Settings& settings, const std::string& path);

// Where settings and history live: $SHARDSCOPE_CONFIG_DIR, else $XDG_CONFIG_HOME/shardscope, else
// ~/.config/shardscope.
[[nodiscard]] std::string default_config_dir();

}  // namespace shardscope::ui
