// Colour maps and the colour sequence of visualize_sharding.
#include "viz/colors.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "base/error.h"
#include "base/python_format.h"

namespace shardscope {
namespace {

using Listed20 = std::array<uint32_t, 20>;

constexpr Listed20 kTab20b = {0x393B79, 0x5254A3, 0x6B6ECF, 0x9C9EDE, 0x637939, 0x8CA252, 0xB5CF6B,
                              0xCEDB9C, 0x8C6D31, 0xBD9E39, 0xE7BA52, 0xE7CB94, 0x843C39, 0xAD494A,
                              0xD6616B, 0xE7969C, 0x7B4173, 0xA55194, 0xCE6DBD, 0xDE9ED6};
constexpr Listed20 kTab20c = {0x3182BD, 0x6BAED6, 0x9ECAE1, 0xC6DBEF, 0xE6550D, 0xFD8D3C, 0xFDAE6B,
                              0xFDD0A2, 0x31A354, 0x74C476, 0xA1D99B, 0xC7E9C0, 0x756BB1, 0x9E9AC8,
                              0xBCBDDC, 0xDADAEB, 0x636363, 0x969696, 0xBDBDBD, 0xD9D9D9};
constexpr Listed20 kTab20 = {0x1F77B4, 0xAEC7E8, 0xFF7F0E, 0xFFBB78, 0x2CA02C, 0x98DF8A, 0xD62728,
                             0xFF9896, 0x9467BD, 0xC5B0D5, 0x8C564B, 0xC49C94, 0xE377C2, 0xF7B6D2,
                             0x7F7F7F, 0xC7C7C7, 0xBCBD22, 0xDBDB8D, 0x17BECF, 0x9EDAE5};

// Okabe and Ito's colour-blind-safe qualitative set ("Color Universal Design", Okabe & Ito 2008,
// https://jfly.uni-koeln.de/color/), its black taken as a mid grey so cells stand out on a dark canvas.
constexpr std::array<uint32_t, 8> kOkabeIto = {0xE69F00, 0x56B4E9, 0x009E73, 0xF0E442,
                                               0x0072B2, 0xD55E00, 0xCC79A7, 0x999999};
// Kelly's colours of maximum contrast (K. L. Kelly, "Twenty-two colors of maximum contrast", Color Engineering
// 3(6), 1965), without white and black, in Kelly's order so neighbouring shards get the most different hues.
constexpr std::array<uint32_t, 20> kKelly = {0xF3C300, 0x875692, 0xF38400, 0xA1CAF1, 0xBE0032, 0xC2B280, 0x848482,
                                             0x008856, 0xE68FAC, 0x0067A5, 0xF99379, 0x604E97, 0xF6A600, 0xB3446C,
                                             0xDCD300, 0x882D17, 0x8DB600, 0x654522, 0xE25822, 0x2B3D26};

Rgb rgb_of(uint32_t packed) {
  return {static_cast<uint8_t>((packed >> 16) & 0xFF), static_cast<uint8_t>((packed >> 8) & 0xFF),
          static_cast<uint8_t>(packed & 0xFF)};
}

// Lightness steps for repeats: level 1 mixes 40% white in, level 2 30% black.
Rgb lightness_step(Rgb c, std::size_t level) {
  const auto mix = [](uint8_t v, double target, double t) {
    return static_cast<uint8_t>(std::lround(static_cast<double>(v) * (1 - t) + target * t));
  };
  if (level == 1) return {mix(c.r, 255, 0.4), mix(c.g, 255, 0.4), mix(c.b, 255, 0.4)};
  if (level == 2) return {mix(c.r, 0, 0.3), mix(c.g, 0, 0.3), mix(c.b, 0, 0.3)};
  return c;
}

RgbFloat unpack(uint32_t packed) {
  return {static_cast<double>((packed >> 16) & 0xFF) / 255.0, static_cast<double>((packed >> 8) & 0xFF) / 255.0,
          static_cast<double>(packed & 0xFF) / 255.0};
}

// Matplotlib's ListedColormap lookup: index floor(v * N), with v == 1.0 on the last entry.
ColorMap listed(std::vector<RgbFloat> entries) {
  return [entries = std::move(entries)](double value) {
    const auto n = static_cast<double>(entries.size());
    double scaled = std::floor(value * n);
    scaled = std::clamp(scaled, 0.0, n - 1);
    return entries[static_cast<std::size_t>(scaled)];
  };
}

ColorMap from_palette(const Listed20& palette) {
  std::vector<RgbFloat> entries;
  for (const uint32_t packed : palette) entries.push_back(unpack(packed));
  return listed(std::move(entries));
}

uint8_t to_channel(double component) {
  // Python's int(c * 255) truncates toward zero.
  return static_cast<uint8_t>(std::clamp(std::trunc(component * 255.0), 0.0, 255.0));
}

}  // namespace

std::string Rgb::hex() const {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out = "#";
  for (const uint8_t c : {r, g, b}) {
    out += kDigits[c >> 4];
    out += kDigits[c & 0xF];
  }
  return out;
}

ColorMap named_color_map(std::string_view name) {
  if (name == "tab20b") return from_palette(kTab20b);
  if (name == "tab20c") return from_palette(kTab20c);
  if (name == "tab20") return from_palette(kTab20);
  throw value_error("Unknown colour map '" + std::string(name) + "'; available: " + join(color_map_names(), ", ") +
                    ", or a comma-separated list of #RRGGBB colours");
}

std::vector<std::string> color_map_names() { return {"tab20b", "tab20c", "tab20"}; }

ColorMap listed_color_map(const std::vector<std::string>& hex_colors) {
  if (hex_colors.empty()) throw value_error("A colour list needs at least one #RRGGBB colour");
  std::vector<RgbFloat> entries;
  for (const std::string& text : hex_colors) {
    const bool well_formed =
        text.size() == 7 && text[0] == '#' && text.find_first_not_of("0123456789abcdefABCDEF", 1) == std::string::npos;
    if (!well_formed) throw value_error("Malformed colour '" + text + "': expected #RRGGBB");
    entries.push_back(unpack(static_cast<uint32_t>(std::stoul(text.substr(1), nullptr, 16))));
  }
  return listed(std::move(entries));
}

std::vector<Rgb> cell_colors(std::size_t count, const ColorMap& color_map) {
  std::vector<Rgb> colors;
  colors.reserve(count);
  if (count == 0) return colors;
  // numpy.linspace(0, 1, n): i * (1 / (n - 1)), with the last value exactly 1.0.
  const double step_value = count > 1 ? 1.0 / static_cast<double>(count - 1) : 0.0;
  const std::size_t stride = count / 2 + (count % 2 == 0 ? 1 : 0);
  std::size_t index = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const double value = (count > 1 && index == count - 1) ? 1.0 : static_cast<double>(index) * step_value;
    const RgbFloat c = color_map(value);
    colors.push_back({to_channel(c.r), to_channel(c.g), to_channel(c.b)});
    index = (index + stride) % count;
  }
  return colors;
}

Palette parse_palette(std::string_view name) {
  if (name == "tab20b") return Palette::kTab20b;
  if (name == "distinct") return Palette::kDistinct;
  if (name == "colorblind") return Palette::kColorBlind;
  throw value_error("Unknown palette '" + std::string(name) + "'; available: " + join(palette_names(), ", "));
}

std::string palette_name(Palette palette) {
  switch (palette) {
    case Palette::kTab20b: return "tab20b";
    case Palette::kDistinct: return "distinct";
    case Palette::kColorBlind: return "colorblind";
  }
  return "tab20b";
}

std::vector<std::string> palette_names() { return {"tab20b", "distinct", "colorblind"}; }

std::size_t palette_size(Palette palette) {
  switch (palette) {
    case Palette::kTab20b: return 0;
    case Palette::kDistinct: return kKelly.size();
    case Palette::kColorBlind: return kOkabeIto.size();
  }
  return 0;
}

std::vector<Rgb> palette_cell_colors(Palette palette, std::size_t count, std::size_t columns) {
  if (palette == Palette::kTab20b) return cell_colors(count, named_color_map("tab20b"));
  const uint32_t* base = palette == Palette::kDistinct ? kKelly.data() : kOkabeIto.data();
  const std::size_t n = palette_size(palette);
  columns = std::max<std::size_t>(1, columns);
  std::vector<Rgb> colors;
  colors.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t row = i / columns;
    const std::size_t hue = (i + (columns % n == 0 ? row : 0)) % n;
    colors.push_back(lightness_step(rgb_of(base[hue]), (i / n) % 3));
  }
  return colors;
}

Rgb text_color_for(Rgb background) {
  const double luminance = 0.299 * background.r + 0.587 * background.g + 0.114 * background.b;
  return luminance > 186 ? Rgb{0, 0, 0} : Rgb{255, 255, 255};
}

}  // namespace shardscope
