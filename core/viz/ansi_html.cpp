// ANSI SGR text to rich's Jupyter HTML: the styles rich writes and the CSS it writes for each.
#include "viz/ansi_html.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <vector>

namespace shardscope {

namespace {

struct Color {
  int r = 0;
  int g = 0;
  int b = 0;
  bool operator==(const Color&) const = default;
};

struct Style {
  std::optional<Color> foreground;
  std::optional<Color> background;
  bool bold = false;
  bool italic = false;
  bool underline = false;
  bool operator==(const Style&) const = default;
};

// rich's DEFAULT_TERMINAL_THEME: the 16 standard colours as rich resolves them for HTML.
constexpr std::array<Color, 16> kStandardColors = {{{0, 0, 0},
                                                    {128, 0, 0},
                                                    {0, 128, 0},
                                                    {128, 128, 0},
                                                    {0, 0, 128},
                                                    {128, 0, 128},
                                                    {0, 128, 128},
                                                    {192, 192, 192},
                                                    {128, 128, 128},
                                                    {255, 0, 0},
                                                    {0, 255, 0},
                                                    {255, 255, 0},
                                                    {0, 0, 255},
                                                    {255, 0, 255},
                                                    {0, 255, 255},
                                                    {255, 255, 255}}};

// The xterm 256-colour palette: 16 standard colours, a 6x6x6 cube, then 24 greys.
Color palette_color(int index) {
  if (index < 16) return kStandardColors[static_cast<std::size_t>(std::max(index, 0))];
  if (index < 232) {
    const int cube = index - 16;
    const auto level = [](int v) { return v == 0 ? 0 : 55 + v * 40; };
    return {level(cube / 36), level((cube / 6) % 6), level(cube % 6)};
  }
  const int grey = 8 + (std::min(index, 255) - 232) * 10;
  return {grey, grey, grey};
}

std::vector<int> sgr_parameters(std::string_view codes) {
  std::vector<int> out;
  std::size_t start = 0;
  while (start <= codes.size()) {
    const std::size_t end = std::min(codes.find(';', start), codes.size());
    int value = 0;
    std::from_chars(codes.data() + start, codes.data() + end, value);  // an empty parameter is 0
    out.push_back(value);
    start = end + 1;
  }
  return out;
}

void apply_sgr(std::string_view codes, Style& style) {
  const std::vector<int> p = sgr_parameters(codes);
  for (std::size_t i = 0; i < p.size(); ++i) {
    const int code = p[i];
    if (code == 0) {
      style = Style{};
    } else if (code == 1) {
      style.bold = true;
    } else if (code == 3) {
      style.italic = true;
    } else if (code == 4) {
      style.underline = true;
    } else if (code >= 30 && code <= 37) {
      style.foreground = kStandardColors[static_cast<std::size_t>(code - 30)];
    } else if (code >= 90 && code <= 97) {
      style.foreground = kStandardColors[static_cast<std::size_t>(code - 90 + 8)];
    } else if (code >= 40 && code <= 47) {
      style.background = kStandardColors[static_cast<std::size_t>(code - 40)];
    } else if (code >= 100 && code <= 107) {
      style.background = kStandardColors[static_cast<std::size_t>(code - 100 + 8)];
    } else if (code == 39) {
      style.foreground.reset();
    } else if (code == 49) {
      style.background.reset();
    } else if ((code == 38 || code == 48) && i + 1 < p.size()) {
      std::optional<Color>& target = code == 38 ? style.foreground : style.background;
      if (p[i + 1] == 2 && i + 4 < p.size()) {
        target = Color{p[i + 2], p[i + 3], p[i + 4]};
        i += 4;
      } else if (p[i + 1] == 5 && i + 2 < p.size()) {
        target = palette_color(p[i + 2]);
        i += 2;
      }
    }
  }
}

std::string hex(const Color& color) {
  std::array<char, 8> text{};
  std::snprintf(text.data(), text.size(), "#%02x%02x%02x", color.r & 0xff, color.g & 0xff, color.b & 0xff);
  return text.data();
}

// rich's Style.get_html_style, in its order.
std::string css(const Style& style) {
  std::string out;
  const auto add = [&out](const std::string& rule) { out += (out.empty() ? "" : "; ") + rule; };
  if (style.foreground) {
    add("color: " + hex(*style.foreground));
    add("text-decoration-color: " + hex(*style.foreground));
  }
  if (style.background) add("background-color: " + hex(*style.background));
  if (style.bold) add("font-weight: bold");
  if (style.italic) add("font-style: italic");
  if (style.underline) add("text-decoration: underline");
  return out;
}

std::string html_escape(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '&') {
      out += "&amp;";
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else {
      out += c;
    }
  }
  return out;
}

struct Run {
  std::string text;
  std::string css;
};

}  // namespace

std::string ansi_to_jupyter_html(std::string_view ansi_text) {
  std::vector<Run> runs;
  Style style;
  const auto append = [&runs](std::string_view text, const std::string& rule) {
    if (text.empty()) return;
    // rich's Segment.simplify: neighbours of one style are one segment.
    if (!runs.empty() && runs.back().css == rule) {
      runs.back().text += text;
    } else {
      runs.push_back({std::string(text), rule});
    }
  };
  std::size_t position = 0;
  while (position < ansi_text.size()) {
    const std::size_t escape = ansi_text.find("\x1b[", position);
    if (escape == std::string_view::npos) {
      append(ansi_text.substr(position), css(style));
      break;
    }
    append(ansi_text.substr(position, escape - position), css(style));
    std::size_t end = escape + 2;
    while (end < ansi_text.size() && ((ansi_text[end] >= '0' && ansi_text[end] <= '9') || ansi_text[end] == ';')) ++end;
    if (end < ansi_text.size() && ansi_text[end] == 'm')
      apply_sgr(ansi_text.substr(escape + 2, end - escape - 2), style);
    position = end < ansi_text.size() ? end + 1 : end;  // other control sequences show nothing
  }
  std::string code;
  for (const Run& run : runs) {
    code += run.css.empty() ? html_escape(run.text)
                            : "<span style=\"" + run.css + "\">" + html_escape(run.text) + "</span>";
  }
  return "<pre style=\"white-space:pre;overflow-x:auto;line-height:normal;font-family:Menlo,'DejaVu Sans Mono',"
         "consolas,'Courier New',monospace\">" +
         code + "</pre>\n";
}

}  // namespace shardscope
