// Canvas geometry: panels side by side (wrapping), each grid sized like the text picture.
#include "ui/model/canvas_geometry.h"

#include <algorithm>
#include <cmath>

namespace shardscope::ui {

namespace {

constexpr double kHeaderScale = 1.4;  // dense headers: taller than a text line so they stay legible zoomed out

std::string slice_range(const DimSlice& s) {
  return s.full ? std::string("all") : std::to_string(s.start) + ":" + std::to_string(s.stop);
}

struct PanelFrame {
  std::vector<double> column_x;
  std::vector<double> row_y;
  double left = 0;                // the row gutter
  double top = 0;                 // axis titles and column headers
  std::vector<AxisLabel> labels;  // relative to the panel's grid origin (minus left and top)
  std::size_t wrap = 0;           // a long 1-D strip wrapped into lines of this many cells (0: not wrapped)
};

// JAX's character geometry: column widths and row heights in characters and lines.
PanelFrame text_frame(const VizPanel& panel, const GeometryOptions& options) {
  PanelFrame frame;
  frame.column_x.assign(panel.column_widths.size() + 1, 0.0);
  for (std::size_t c = 0; c < panel.column_widths.size(); ++c) {
    frame.column_x[c + 1] = frame.column_x[c] + panel.column_widths[c] * options.char_width;
  }
  frame.row_y.assign(panel.row_heights.size() + 1, 0.0);
  for (std::size_t r = 0; r < panel.row_heights.size(); ++r) {
    frame.row_y[r + 1] = frame.row_y[r] + panel.row_heights[r] * options.line_height;
  }
  return frame;
}

// A 1-D strip of hundreds of shards would shrink to a line at the zoom that fits it: it wraps like text into
// about twice as many cells per line as lines, each line headed by the index range it holds.
PanelFrame wrapped_frame(const VizPanel& panel, const GeometryOptions& options) {
  PanelFrame frame;
  const auto count = static_cast<std::size_t>(panel.columns);
  frame.wrap = static_cast<std::size_t>(std::ceil(std::sqrt(2.0 * static_cast<double>(count))));
  const std::size_t lines = (count + frame.wrap - 1) / frame.wrap;
  for (std::size_t c = 0; c <= frame.wrap; ++c) frame.column_x.push_back(options.dense_cell * static_cast<double>(c));
  for (std::size_t r = 0; r <= lines; ++r) frame.row_y.push_back(options.dense_cell * static_cast<double>(r));
  const double band = options.line_height * kHeaderScale;
  const double glyph = options.char_width * kHeaderScale;
  std::vector<std::string> ranges;
  std::size_t gutter_chars = 0;
  for (std::size_t r = 0; r < lines; ++r) {
    const DimSlice& first = panel.cells[r * frame.wrap].column_slice;
    const DimSlice& last = panel.cells[std::min(count, (r + 1) * frame.wrap) - 1].column_slice;
    ranges.push_back(first.full ? std::string("all") : std::to_string(first.start) + ":" + std::to_string(last.stop));
    gutter_chars = std::max(gutter_chars, ranges.back().size());
  }
  frame.left = static_cast<double>(gutter_chars + 2) * glyph + 12.0;
  frame.top = band;
  frame.labels.push_back({options.axis_names[1], "", {frame.left, 0, frame.left + frame.column_x.back(), band}, false});
  for (std::size_t r = 0; r < lines; ++r) {
    frame.labels.push_back({ranges[r],
                            std::to_string(r * frame.wrap),
                            {0, frame.top + frame.row_y[r], frame.left - 6.0, frame.top + frame.row_y[r + 1]},
                            true});
  }
  return frame;
}

// A dense grid: each row and column as tall and wide as its share of the array, headers along the edges.
PanelFrame dense_frame(const VizPanel& panel, const GeometryOptions& options) {
  if (panel.one_dimensional && panel.columns > 4 * options.dense_above) return wrapped_frame(panel, options);
  PanelFrame frame;
  const auto rows = static_cast<std::size_t>(panel.rows);
  const auto columns = static_cast<std::size_t>(panel.columns);
  const double width = options.dense_cell * static_cast<double>(columns);
  const double height = options.dense_cell * static_cast<double>(rows);
  frame.column_x.assign(columns + 1, 0.0);
  frame.row_y.assign(rows + 1, 0.0);
  for (std::size_t c = 0; c < columns; ++c) {
    frame.column_x[c + 1] = frame.column_x[c] + panel.at(0, static_cast<int64_t>(c)).width_fraction * width;
  }
  for (std::size_t r = 0; r < rows; ++r) {
    frame.row_y[r + 1] = frame.row_y[r] + panel.at(static_cast<int64_t>(r), 0).height_fraction * height;
  }
  const double band = options.line_height * kHeaderScale;
  const double glyph = options.char_width * kHeaderScale;
  const std::string& row_title = options.axis_names[0];
  const std::string& column_title = options.axis_names[1];
  const bool row_headers = !panel.one_dimensional;
  std::size_t gutter_chars = 0;
  if (row_headers) {
    gutter_chars = row_title.size();
    for (std::size_t r = 0; r < rows; ++r) {
      gutter_chars = std::max(gutter_chars, slice_range(panel.at(static_cast<int64_t>(r), 0).row_slice).size());
    }
  }
  frame.left = row_headers ? static_cast<double>(gutter_chars + 2) * glyph + 12.0 : 0.0;
  frame.top = 2 * band;
  // Axis titles: the columns' above their headers, the rows' in the corner above the row headers.
  frame.labels.push_back({column_title, "", {frame.left, 0, frame.left + frame.column_x.back(), band}, false});
  if (row_headers) frame.labels.push_back({row_title, "", {0, band, frame.left - 12.0, 2 * band}, false});
  for (std::size_t c = 0; c < columns; ++c) {
    frame.labels.push_back({slice_range(panel.at(0, static_cast<int64_t>(c)).column_slice),
                            std::to_string(c),
                            {frame.left + frame.column_x[c], band, frame.left + frame.column_x[c + 1], 2 * band},
                            false});
  }
  for (std::size_t r = 0; row_headers && r < rows; ++r) {
    frame.labels.push_back({slice_range(panel.at(static_cast<int64_t>(r), 0).row_slice),
                            std::to_string(r),
                            {0, frame.top + frame.row_y[r], frame.left - 6.0, frame.top + frame.row_y[r + 1]},
                            true});
  }
  return frame;
}

}  // namespace

std::array<std::string, 2> drawn_axis_names(const Sharding& sharding, std::size_t rank) {
  std::array<std::string, 2> names;
  const auto* named = std::get_if<NamedSharding>(&sharding);
  const std::size_t drawn = std::min<std::size_t>(rank, 2);
  for (std::size_t i = 0; i < drawn; ++i) {
    const std::size_t dim = rank - drawn + i;
    std::string axes;
    if (named != nullptr && dim < named->spec.size()) {
      const SpecEntry& entry = named->spec.entries()[dim];
      for (const std::string& axis : entry.axes) axes += (axes.empty() ? "" : "+") + axis;
    }
    names[drawn == 1 ? 1 : i] = "dim " + std::to_string(dim) + (axes.empty() ? "" : ": " + axes);
  }
  return names;
}

CanvasGeometry place_layout(const VizLayout& layout, const GeometryOptions& options) {
  CanvasGeometry geometry;
  double x = 0;
  double y = 0;
  double row_height = 0;
  for (std::size_t p = 0; p < layout.panels.size(); ++p) {
    const VizPanel& panel = layout.panels[p];
    const bool dense = options.dense_above > 0 && panel.rows > 0 && panel.columns > 0 &&
                       (panel.rows > options.dense_above || panel.columns > options.dense_above);
    const PanelFrame frame = dense ? dense_frame(panel, options) : text_frame(panel, options);
    const double title = panel.title.empty() ? 0.0 : options.title_height;
    const double panel_width = frame.left + frame.column_x.back();
    const double panel_height = title + frame.top + frame.row_y.back();
    if (options.wrap_width > 0 && x > 0 && x + panel_width > options.wrap_width) {
      x = 0;
      y += row_height + options.panel_gap;
      row_height = 0;
    }
    PanelPlacement placement;
    placement.title = panel.title;
    if (title > 0) placement.title_rect = {x, y, x + panel_width, y + title};
    placement.grid = {x + frame.left, y + title + frame.top, x + panel_width, y + panel_height};
    for (const AxisLabel& label : frame.labels) {
      AxisLabel placed = label;
      placed.rect = {x + label.rect.x0, y + title + label.rect.y0, x + label.rect.x1, y + title + label.rect.y1};
      placement.axis_labels.push_back(std::move(placed));
    }
    for (std::size_t i = 0; i < panel.cells.size(); ++i) {
      const VizCell& cell = panel.cells[i];
      const auto shard = static_cast<std::size_t>(cell.column);
      const auto c = frame.wrap > 0 ? shard % frame.wrap : shard;
      const auto r = frame.wrap > 0 ? shard / frame.wrap : static_cast<std::size_t>(cell.row);
      CellPlacement placed{p,
                           i,
                           {placement.grid.x0 + frame.column_x[c], placement.grid.y0 + frame.row_y[r],
                            placement.grid.x0 + frame.column_x[c + 1], placement.grid.y0 + frame.row_y[r + 1]},
                           ""};
      if (dense) {
        placed.short_label =
            panel.one_dimensional ? std::to_string(shard) : std::to_string(r) + "," + std::to_string(c);
      }
      geometry.cells.push_back(std::move(placed));
    }
    geometry.panels.push_back(std::move(placement));
    geometry.width = std::max(geometry.width, x + panel_width);
    geometry.height = std::max(geometry.height, y + panel_height);
    row_height = std::max(row_height, panel_height);
    x += panel_width + options.panel_gap;
  }
  return geometry;
}

std::optional<std::size_t> hit_test(const CanvasGeometry& geometry, double x, double y) {
  for (std::size_t i = 0; i < geometry.cells.size(); ++i) {
    if (geometry.cells[i].rect.contains(x, y)) return i;
  }
  return std::nullopt;
}

ViewTransform ViewTransform::fit(double content_width, double content_height, double viewport_width,
                                 double viewport_height, double margin, double max_zoom) {
  ViewTransform view;
  const double usable_width = std::max(1.0, viewport_width - 2 * margin);
  const double usable_height = std::max(1.0, viewport_height - 2 * margin);
  if (content_width > 0 && content_height > 0) {
    view.zoom = std::min({usable_width / content_width, usable_height / content_height, max_zoom});
  }
  view.pan_x = (viewport_width - content_width * view.zoom) / 2;
  view.pan_y = (viewport_height - content_height * view.zoom) / 2;
  return view;
}

void ViewTransform::zoom_about(double factor, double sx, double sy, double min_zoom, double max_zoom) {
  const double cx = to_content_x(sx);
  const double cy = to_content_y(sy);
  zoom = std::clamp(zoom * factor, min_zoom, max_zoom);
  pan_x = sx - cx * zoom;
  pan_y = sy - cy * zoom;
}

std::string block_text(const VizCell& cell, bool one_dimensional) {
  const auto part = [](const DimSlice& s) {
    return s.full ? std::string(":") : std::to_string(s.start) + ":" + std::to_string(s.stop);
  };
  return one_dimensional ? "[" + part(cell.column_slice) + "]"
                         : "[" + part(cell.row_slice) + ", " + part(cell.column_slice) + "]";
}

std::string cell_index_text(const VizPanel& panel, const VizCell& cell) {
  const std::string block = block_text(cell, panel.one_dimensional);
  // Small-multiple titles end with the drawn dimensions as ", :, :]"; the cell's block fills them in.
  const std::string drawn = ", :, :]";
  if (panel.one_dimensional || panel.title.size() <= drawn.size() || !panel.title.ends_with(drawn)) return block;
  return panel.title.substr(0, panel.title.size() - drawn.size()) + ", " + block.substr(1);
}

}  // namespace shardscope::ui
