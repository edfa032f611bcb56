// The shard-grid layout of visualize_sharding as data: cells, labels, sizes and colours.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sharding/sharding.h"
#include "viz/colors.h"

namespace shardscope {

enum class CellLabelStyle {
  kDeviceIds,     // JAX: "TPU 0,4"
  kChipCoords,    // beyond JAX: physical chip coordinates and core, "TPU (0,0,0)c0"
  kMeshPosition,  // beyond JAX: position in the mesh, "TPU [0,1]"
};

struct VizOptions {
  // JAX's keyword arguments (same defaults).
  bool use_color = true;
  double scale = 1.0;
  int min_width = 9;
  int max_width = 80;
  std::optional<ColorMap> color_map;  // default tab20b

  // Beyond JAX; every one is off by default so the default output is JAX's.
  bool small_multiples = false;  // draw rank != 1, 2 arrays as one grid per block of the leading dims
  bool uneven_shards = false;    // draw shards that do not divide evenly with their true sizes
  CellLabelStyle label_style = CellLabelStyle::kDeviceIds;
  // The window's and diagrams' palette; tab20b (or color_map when given) is JAX's colouring.
  Palette palette = Palette::kTab20b;
};

struct VizCell {
  int64_t row = 0;
  int64_t column = 0;
  std::vector<Device> devices;  // ascending id
  std::string label;
  // Which part of the drawn dimensions the cell holds; fractions of the whole dimension.
  DimSlice row_slice;
  DimSlice column_slice;
  double height_fraction = 1.0;
  double width_fraction = 1.0;
  bool padded = false;  // uneven: the shard's block extends past the end of the array
  // Character geometry (JAX's formulas); padding excludes any centring inside a wider column.
  int pad_top = 0;
  int pad_bottom = 0;
  int pad_left = 0;
  int pad_right = 0;
  Rgb background;
  Rgb text_color;
};

// One grid: the whole picture for rank 1 and 2, one of the small multiples otherwise.
struct VizPanel {
  std::string title;  // empty for a JAX picture; the leading-dims block otherwise
  int64_t rows = 0;
  int64_t columns = 0;
  bool one_dimensional = false;
  std::vector<VizCell> cells;  // row-major
  std::vector<int> column_widths;
  std::vector<int> row_heights;
  [[nodiscard]] const VizCell& at(int64_t row, int64_t column) const {
    return cells[static_cast<std::size_t>(row * columns + column)];
  }
};

struct VizLayout {
  Shape shape;
  Platform platform = Platform::kCpu;
  bool use_color = true;
  int console_width = 80;  // JAX's max_width: rich prints the table on a console this wide
  std::vector<VizPanel> panels;
  std::vector<std::string> notes;  // beyond-JAX remarks printed under the picture
};

// The largest picture visualize_sharding draws: JAX would try to print any size (and a scale of 1e9 never
// finishes), so scale and widths beyond these are a ValueError naming the keyword and the value.
inline constexpr double kMaxVizScale = 100.0;  // cells up to 1000 lines tall
inline constexpr int kMaxVizWidth = 10000;     // columns

// Raises what JAX raises for scale (int(10 * scale): ValueError for NaN, OverflowError for infinity) and a
// ValueError for values beyond the limits above or negative widths.
void check_viz_options(const VizOptions& options);
// The width check alone, for callers holding a wider integer than VizOptions stores (Python's ints).
void check_viz_width(std::string_view name, int64_t value);

// Computes the picture jax.debug.visualize_sharding(shape, sharding, ...) draws. Raises JAX's errors
// (ValueError for ranks other than 1 and 2, IndivisibleError for uneven shards) unless the matching
// beyond-JAX option is set.
[[nodiscard]] VizLayout compute_layout(const Shape& shape, const Sharding& sharding, const VizOptions& options,
                                       const JaxProfile& profile);

}  // namespace shardscope
