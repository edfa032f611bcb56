// Canvas geometry: panels side by side (wrapping), each grid sized like the text picture.
#include "ui/model/canvas_geometry.h"

#include <algorithm>

namespace shardscope::ui {

CanvasGeometry place_layout(const VizLayout& layout, const GeometryOptions& options) {
  CanvasGeometry geometry;
  double x = 0;
  double y = 0;
  double row_height = 0;
  for (std::size_t p = 0; p < layout.panels.size(); ++p) {
    const VizPanel& panel = layout.panels[p];
    std::vector<double> column_x(panel.column_widths.size() + 1, 0.0);
    for (std::size_t c = 0; c < panel.column_widths.size(); ++c) {
      column_x[c + 1] = column_x[c] + panel.column_widths[c] * options.char_width;
    }
    std::vector<double> row_y(panel.row_heights.size() + 1, 0.0);
    for (std::size_t r = 0; r < panel.row_heights.size(); ++r) {
      row_y[r + 1] = row_y[r] + panel.row_heights[r] * options.line_height;
    }
    const double title = panel.title.empty() ? 0.0 : options.title_height;
    const double panel_width = column_x.back();
    const double panel_height = title + row_y.back();
    if (options.wrap_width > 0 && x > 0 && x + panel_width > options.wrap_width) {
      x = 0;
      y += row_height + options.panel_gap;
      row_height = 0;
    }
    PanelPlacement placement;
    placement.title = panel.title;
    if (title > 0) placement.title_rect = {x, y, x + panel_width, y + title};
    placement.grid = {x, y + title, x + panel_width, y + panel_height};
    for (std::size_t i = 0; i < panel.cells.size(); ++i) {
      const VizCell& cell = panel.cells[i];
      const auto c = static_cast<std::size_t>(cell.column);
      const auto r = static_cast<std::size_t>(cell.row);
      geometry.cells.push_back({p,
                                i,
                                {placement.grid.x0 + column_x[c], placement.grid.y0 + row_y[r],
                                 placement.grid.x0 + column_x[c + 1], placement.grid.y0 + row_y[r + 1]}});
    }
    geometry.panels.push_back(placement);
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
