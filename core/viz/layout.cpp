// Builds the shard-grid layout with JAX's geometry, colours and labels, plus the beyond-JAX variants.
#include "viz/layout.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "base/error.h"

namespace shardscope {
namespace {

// Python's divmod for a positive divisor (floor division).
std::pair<int, int> floor_divmod(int value, int divisor) {
  int quotient = value / divisor;
  int remainder = value % divisor;
  if (remainder < 0) {
    remainder += divisor;
    --quotient;
  }
  return {quotient, remainder};
}

std::string platform_prefix(Platform platform) {
  std::string name = platform_name(platform);
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return name;
}

std::string device_label_part(const Device& device, CellLabelStyle style, const Sharding& sharding) {
  switch (style) {
    case CellLabelStyle::kDeviceIds: return std::to_string(device.id);
    case CellLabelStyle::kChipCoords: {
      if (device.platform != Platform::kTpu) return std::to_string(device.id);
      const auto& c = device.coords;
      return "(" + std::to_string(c[0]) + "," + std::to_string(c[1]) + "," + std::to_string(c[2]) + ")c" +
             std::to_string(device.core_on_chip);
    }
    case CellLabelStyle::kMeshPosition: {
      const auto* named = std::get_if<NamedSharding>(&sharding);
      if (named == nullptr) return "[]";
      const auto& devices = named->mesh.devices();
      const auto it = std::find(devices.begin(), devices.end(), device);
      std::vector<std::string> coords;
      for (const int64_t p : named->mesh.position_of(static_cast<std::size_t>(it - devices.begin()))) {
        coords.push_back(std::to_string(p));
      }
      return "[" + join(coords, ",") + "]";
    }
  }
  return std::to_string(device.id);
}

std::string cell_label(const std::vector<Device>& devices, Platform platform, CellLabelStyle style,
                       const Sharding& sharding) {
  std::vector<std::string> parts;
  parts.reserve(devices.size());
  for (const Device& d : devices) parts.push_back(device_label_part(d, style, sharding));
  return platform_prefix(platform) + " " + join(parts, ",");
}

std::string slice_text(const DimSlice& slice) {
  return slice.full ? ":" : std::to_string(slice.start) + ":" + std::to_string(slice.stop);
}

struct PanelBuilder {
  std::vector<DimSlice> leading;  // the block of the leading dims this panel shows
  std::map<std::pair<int64_t, int64_t>, VizCell> cells;
};

// JAX's per-cell character geometry; colour mode trades the borders for one more unit of padding.
// `base_width` is a Python int in JAX, unbounded: a long thin array's is far beyond an int, so the width is
// clamped to the options before it becomes one.
void size_cell(VizCell& cell, bool one_dimensional, int base_height, double base_width, const VizOptions& options) {
  const double wide = std::trunc(cell.width_fraction * base_width * 2.5);
  const int width = static_cast<int>(
      std::min(std::max(wide, static_cast<double>(options.min_width)), static_cast<double>(options.max_width)));
  const int height = one_dimensional ? 1 : static_cast<int>(cell.height_fraction * base_height);
  const int label_length = static_cast<int>(cell.label.size());
  auto [left, left_remainder] = floor_divmod(width - label_length - 2, 2);
  int right = left + left_remainder;
  auto [top, top_remainder] = floor_divmod(height - 2, 2);
  int bottom = top + top_remainder;
  if (options.use_color) {
    ++top;
    ++bottom;
    ++left;
    ++right;
  }
  cell.pad_top = std::max(top, 0);
  cell.pad_right = std::max(right, 0);
  cell.pad_bottom = std::max(bottom, 0);
  cell.pad_left = std::max(left, 0);
}

void finish_panel(VizPanel& panel) {
  panel.column_widths.assign(static_cast<std::size_t>(panel.columns), 0);
  panel.row_heights.assign(static_cast<std::size_t>(panel.rows), 0);
  for (const VizCell& cell : panel.cells) {
    auto& width = panel.column_widths[static_cast<std::size_t>(cell.column)];
    auto& height = panel.row_heights[static_cast<std::size_t>(cell.row)];
    width = std::max(width, cell.pad_left + static_cast<int>(cell.label.size()) + cell.pad_right);
    height = std::max(height, cell.pad_top + 1 + cell.pad_bottom);
  }
}

}  // namespace

namespace {
std::string shown(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}
}  // namespace

void check_viz_options(const VizOptions& options) {
  if (std::isnan(options.scale)) throw value_error("cannot convert float NaN to integer");
  if (std::isinf(options.scale)) throw Error("OverflowError", "cannot convert float infinity to integer");
  if (options.scale > kMaxVizScale) {
    throw value_error("visualize_sharding: scale=" + shown(options.scale) + " would draw cells more than " +
                      std::to_string(static_cast<int>(10 * kMaxVizScale)) + " lines tall; use a scale of at most " +
                      shown(kMaxVizScale));
  }
  check_viz_width("min_width", options.min_width);
  check_viz_width("max_width", options.max_width);
}

void check_viz_width(std::string_view name, int64_t value) {
  if (value < 0 || value > kMaxVizWidth) {
    throw value_error("visualize_sharding: " + std::string(name) + "=" + std::to_string(value) +
                      " is out of range; use a width from 0 to " + std::to_string(kMaxVizWidth) + " columns");
  }
}

VizLayout compute_layout(const Shape& shape, const Sharding& sharding, const VizOptions& options,
                         const JaxProfile& profile) {
  check_viz_options(options);
  const std::size_t rank = shape.size();
  if ((rank > 2 || rank < 1) && !options.small_multiples) {
    throw value_error("`visualize_sharding` only works for shapes with 1 and 2 dimensions.");
  }
  const ShardCut cut = options.uneven_shards ? ShardCut::kPadded : ShardCut::kEven;
  // A scalar is drawn as a one-element vector when small multiples are requested.
  const Shape drawn_shape = rank == 0 ? Shape{1} : shape;
  const std::vector<DeviceIndex> indices = devices_indices_map(sharding, rank == 0 ? Shape{} : shape, profile, cut);
  const std::size_t drawn_rank = drawn_shape.size();
  const bool one_dimensional = drawn_rank == 1;
  const std::size_t leading_dims = drawn_rank > 2 ? drawn_rank - 2 : 0;
  const int64_t row_extent = one_dimensional ? 1 : drawn_shape[leading_dims];
  const int64_t column_extent = one_dimensional ? drawn_shape[0] : drawn_shape[leading_dims + 1];
  if (row_extent == 0 || column_extent == 0) {
    throw value_error("Cannot draw the sharding of an array with a zero-size dimension; got shape " +
                      python_int_tuple(shape));
  }

  // JAX draws every scale at or below 0 alike (no height, min_width wide); clamped so int(10 * scale) fits an int.
  const int base_height = static_cast<int>(10 * std::max(options.scale, -kMaxVizScale));
  const double aspect_ratio = static_cast<double>(one_dimensional ? 1 : column_extent) /
                              static_cast<double>(one_dimensional ? column_extent : row_extent);
  const double base_width = std::trunc(base_height * aspect_ratio);
  const Platform platform = sharding_platform(sharding);
  const std::vector<int64_t> blocks = tiling_factors(sharding, drawn_rank);

  std::map<std::vector<int64_t>, PanelBuilder> panels;
  for (const DeviceIndex& entry : indices) {
    std::vector<DimSlice> index = entry.index;
    index.resize(drawn_rank);
    std::vector<int64_t> panel_key;
    std::vector<DimSlice> leading;
    for (std::size_t d = 0; d < leading_dims; ++d) {
      panel_key.push_back(index[d].block);
      leading.push_back(index[d]);
    }
    const DimSlice row_slice = one_dimensional ? DimSlice{} : index[leading_dims];
    const DimSlice column_slice = one_dimensional ? index[0] : index[leading_dims + 1];
    PanelBuilder& builder = panels[panel_key];
    builder.leading = leading;
    VizCell& cell = builder.cells[{row_slice.block, column_slice.block}];
    cell.row = row_slice.block;
    cell.column = column_slice.block;
    cell.row_slice = row_slice;
    cell.column_slice = column_slice;
    const auto length = [](const DimSlice& s, int64_t extent) { return s.full ? extent : s.stop - s.start; };
    cell.height_fraction = static_cast<double>(length(row_slice, row_extent)) / static_cast<double>(row_extent);
    cell.width_fraction = static_cast<double>(length(column_slice, column_extent)) / static_cast<double>(column_extent);
    for (std::size_t d = 0; d < drawn_rank && d < entry.index.size(); ++d) {
      const DimSlice& s = entry.index[d];
      if (!s.full && s.stop - s.start < (drawn_shape[d] + blocks[d] - 1) / blocks[d]) cell.padded = true;
    }
    cell.devices.push_back(entry.device);
  }

  VizLayout layout;
  layout.shape = shape;
  layout.platform = platform;
  layout.use_color = options.use_color;
  layout.console_width = options.max_width;
  std::size_t total_cells = 0;
  for (auto& [key, builder] : panels) {
    VizPanel panel;
    panel.one_dimensional = one_dimensional;
    for (auto& [position, cell] : builder.cells) {
      std::sort(cell.devices.begin(), cell.devices.end(), [](const Device& a, const Device& b) { return a.id < b.id; });
      cell.label = cell_label(cell.devices, platform, options.label_style, sharding) + (cell.padded ? "*" : "");
      size_cell(cell, one_dimensional, base_height, base_width, options);
      panel.rows = std::max(panel.rows, cell.row + 1);
      panel.columns = std::max(panel.columns, cell.column + 1);
      panel.cells.push_back(std::move(cell));
    }
    if (static_cast<int64_t>(panel.cells.size()) != panel.rows * panel.columns) {
      throw value_error("The shards of this sharding do not form a grid (" + std::to_string(panel.cells.size()) +
                        " cells for " + std::to_string(panel.rows) + "x" + std::to_string(panel.columns) + ")");
    }
    if (leading_dims > 0) {
      std::vector<std::string> parts;
      for (const DimSlice& s : builder.leading) parts.push_back(slice_text(s));
      parts.insert(parts.end(), 2, ":");
      panel.title = "[" + join(parts, ", ") + "]";
    } else if (rank == 0) {
      panel.title = "[] (scalar)";
    }
    finish_panel(panel);
    total_cells += panel.cells.size();
    layout.panels.push_back(std::move(panel));
  }

  // Colours run through all cells of all panels, row-major, so each shard gets its own.
  if (options.use_color) {
    const ColorMap color_map = options.color_map ? *options.color_map : named_color_map("tab20b");
    const std::size_t columns = layout.panels.empty() ? 1 : static_cast<std::size_t>(layout.panels.front().columns);
    const std::vector<Rgb> colors = options.color_map || options.palette == Palette::kTab20b
                                        ? cell_colors(total_cells, color_map)
                                        : palette_cell_colors(options.palette, total_cells, columns);
    std::size_t next = 0;
    for (VizPanel& panel : layout.panels) {
      for (VizCell& cell : panel.cells) {
        cell.background = colors[next++];
        cell.text_color = text_color_for(cell.background);
      }
    }
  }

  if (leading_dims > 0 || rank == 0) {
    layout.notes.push_back("shardscope: rank-" + std::to_string(rank) + " array " + python_int_tuple(shape) +
                           " drawn as " + std::to_string(layout.panels.size()) +
                           " grid(s) of its last two dimensions (JAX draws only ranks 1 and 2)");
  }
  const bool any_padded = std::any_of(layout.panels.begin(), layout.panels.end(), [](const VizPanel& p) {
    return std::any_of(p.cells.begin(), p.cells.end(), [](const VizCell& c) { return c.padded; });
  });
  if (any_padded) {
    std::vector<std::string> per_dim;
    for (std::size_t d = 0; d < drawn_rank; ++d) {
      if (blocks[d] > 1 && drawn_shape[d] % blocks[d] != 0) {
        per_dim.push_back("axis " + std::to_string(d) + ": " + std::to_string(drawn_shape[d]) + " split " +
                          std::to_string(blocks[d]) + " ways in blocks of " +
                          std::to_string((drawn_shape[d] + blocks[d] - 1) / blocks[d]));
      }
    }
    layout.notes.push_back("shardscope: uneven shards drawn with their true sizes; * marks a padded shard (" +
                           join(per_dim, "; ") + "). JAX raises IndivisibleError here.");
  }
  return layout;
}

}  // namespace shardscope
