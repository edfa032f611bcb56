// Colour maps and JAX's colour sequence for shard grids (tab20b, stepping through the map).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace shardscope {

struct Rgb {
  uint8_t r = 0;
  uint8_t g = 0;
  uint8_t b = 0;
  bool operator==(const Rgb&) const = default;
  [[nodiscard]] std::string hex() const;  // "#393B79"
};

// A colour map takes a value in [0, 1] to red, green and blue in [0, 1], like a matplotlib colormap.
struct RgbFloat {
  double r;
  double g;
  double b;
};
using ColorMap = std::function<RgbFloat(double)>;

// Matplotlib's listed colormaps by name ("tab20b", "tab20c", "tab20"); throws ValueError otherwise.
[[nodiscard]] ColorMap named_color_map(std::string_view name);
[[nodiscard]] std::vector<std::string> color_map_names();
// A listed colormap from "#RRGGBB" strings; throws ValueError naming a malformed entry.
[[nodiscard]] ColorMap listed_color_map(const std::vector<std::string>& hex_colors);

// The n background colours JAX assigns to grid cells in row-major order.
[[nodiscard]] std::vector<Rgb> cell_colors(std::size_t count, const ColorMap& color_map);

// Palettes for the window and exported diagrams (never for JAX's text, which is always its colour map):
// JAX's tab20b stepping, or a categorical set where each shard takes the next colour.
enum class Palette { kTab20b, kDistinct, kColorBlind };

// "tab20b", "distinct" or "colorblind"; throws ValueError naming the choices otherwise.
[[nodiscard]] Palette parse_palette(std::string_view name);
[[nodiscard]] std::string palette_name(Palette palette);
[[nodiscard]] std::vector<std::string> palette_names();
[[nodiscard]] std::size_t palette_size(Palette palette);  // base colours of a categorical palette (0 for tab20b)

// Colours of `count` cells in row-major order of grids `columns` wide. tab20b: JAX's sequence (cell_colors).
// Categorical palettes: each cell the next colour, shifted one colour per row when the width is a multiple of
// the palette so vertical neighbours differ too; past the palette's size a lightness step (lighter, then
// darker) tells repeats apart.
[[nodiscard]] std::vector<Rgb> palette_cell_colors(Palette palette, std::size_t count, std::size_t columns);

// Black text on light backgrounds, white otherwise (JAX's luminance rule).
[[nodiscard]] Rgb text_color_for(Rgb background);

}  // namespace shardscope
