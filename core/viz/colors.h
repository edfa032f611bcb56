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

// Black text on light backgrounds, white otherwise (JAX's luminance rule).
[[nodiscard]] Rgb text_color_for(Rgb background);

}  // namespace shardscope
