// Settings file: a few `key = value` lines, tolerant of anything unexpected.
#include "ui/model/settings.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "ui/model/history.h"

namespace shardscope::ui {
namespace {

std::string trim(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  const auto end = text.find_last_not_of(" \t\r");
  return text.substr(begin, end - begin + 1);
}

template <typename T>
bool parse_number(const std::string& text, T* out) {
  std::istringstream stream(text);
  T value{};
  if (!(stream >> value) || !stream.eof()) return false;
  *out = value;
  return true;
}

}  // namespace

Settings Settings::parse(const std::string& text) {
  Settings settings;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const auto equals = line.find('=');
    if (line.empty() || line[0] == '#' || equals == std::string::npos) continue;
    const std::string key = trim(line.substr(0, equals));
    const std::string value = trim(line.substr(equals + 1));
    if (key == "theme" && (value == "dark" || value == "light")) settings.dark_theme = value == "dark";
    int number = 0;
    float real = 0;
    if (key == "window_width" && parse_number(value, &number) && number >= 320) settings.window_width = number;
    if (key == "window_height" && parse_number(value, &number) && number >= 240) settings.window_height = number;
    if (key == "font_size" && parse_number(value, &real) && real >= 8 && real <= 48) settings.font_size = real;
    if (key == "console_fraction" && parse_number(value, &real) && real >= 0.2f && real <= 0.9f) {
      settings.console_fraction = real;
    }
    if (key == "left_fraction" && parse_number(value, &real) && real >= 0.2f && real <= 0.8f) {
      settings.left_fraction = real;
    }
    if (key == "last_scene") settings.last_scene = value;
    if (key == "palette") {
      for (const std::string& name : palette_names()) {
        if (value == name) settings.palette = parse_palette(name);
      }
    }
  }
  return settings;
}

std::string Settings::serialize() const {
  std::ostringstream out;
  out << "# shardscope window settings\n";
  out << "theme = " << (dark_theme ? "dark" : "light") << "\n";
  out << "window_width = " << window_width << "\n";
  out << "window_height = " << window_height << "\n";
  out << "font_size = " << font_size << "\n";
  out << "console_fraction = " << console_fraction << "\n";
  out << "left_fraction = " << left_fraction << "\n";
  out << "last_scene = " << last_scene << "\n";
  out << "palette = " << palette_name(palette) << "\n";
  return out.str();
}

Settings load_settings(const std::string& path) {
  std::ifstream file(path);
  if (!file) return {};
  std::stringstream buffer;
  buffer << file.rdbuf();
  return Settings::parse(buffer.str());
}

bool save_settings(const Settings& settings, const std::string& path) {
  return write_file_atomically(path, settings.serialize());
}

std::string default_config_dir() {
  if (const char* dir = std::getenv("SHARDSCOPE_CONFIG_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) return std::string(xdg) + "/shardscope";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.config/shardscope";
  return ".shardscope";
}

}  // namespace shardscope::ui
