// Where the canvas draws each shard-grid cell: the text picture's geometry scaled to pixels, plus hit tests.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "viz/layout.h"

namespace shardscope::ui {

struct Rect {
  double x0 = 0;
  double y0 = 0;
  double x1 = 0;
  double y1 = 0;
  [[nodiscard]] double width() const { return x1 - x0; }
  [[nodiscard]] double height() const { return y1 - y0; }
  [[nodiscard]] bool contains(double x, double y) const { return x >= x0 && x < x1 && y >= y0 && y < y1; }
};

struct CellPlacement {
  std::size_t panel = 0;
  std::size_t cell = 0;  // index into the panel's row-major cells
  Rect rect;
  // Drawn instead of JAX's "TPU n" label when that does not fit: the cell's position in the grid ("3,5"),
  // which is its shard's coordinate along the mesh axes of the rows and columns. Empty: none.
  std::string short_label;
};

// Text along a dense grid's edges: the mesh axes of rows and columns, and each row's and column's index
// range. The canvas draws `text` when it fits the rect, else `short_text` (the row's or column's number).
struct AxisLabel {
  std::string text;
  std::string short_text;
  Rect rect;
  bool row = false;  // a row header (right-aligned in the gutter), else a column header or an axis title
};

struct PanelPlacement {
  std::string title;
  Rect title_rect;  // empty when the panel has no title
  Rect grid;
  std::vector<AxisLabel> axis_labels;  // dense grids only
};

// A label as drawn last frame (screen pixels), reported in --stats so tests can check nothing overlaps.
struct CanvasLabel {
  std::string text;
  Rect rect;
};

// The picture in content units (1 unit = one pixel at zoom 1).
struct CanvasGeometry {
  std::vector<PanelPlacement> panels;
  std::vector<CellPlacement> cells;
  double width = 0;
  double height = 0;
};

struct GeometryOptions {
  // Same units as the SVG renderer, so the canvas and an exported SVG have the same proportions.
  double char_width = 9.0;
  double line_height = 18.0;
  double panel_gap = 12.0;
  double title_height = 18.0;
  // Small multiples wrap into rows no wider than this (content units); 0: one row.
  double wrap_width = 0.0;
  // Grids with more rows or columns than this are drawn dense: cells sized by the share of the array they
  // hold (square for even shards) instead of JAX's character geometry, which flattens a 16x16 grid into a
  // strip of one-line rows, with axis names and index ranges along the edges. 0: never.
  int64_t dense_above = 0;
  double dense_cell = 48.0;  // an even shard's side in a dense grid
  // The mesh axes that shard the drawn dimensions (rows, columns), for the edge titles: "data", "x+y", "".
  std::array<std::string, 2> axis_names;
};

// The mesh axes along the drawn dimensions of an array of `rank` (the last two; one for rank 1), joined
// with "+" ("" where a dimension is not sharded, and for single-device shardings).
[[nodiscard]] std::array<std::string, 2> drawn_axis_names(const Sharding& sharding, std::size_t rank);

// Column widths and row heights of each panel come from the layout (JAX's character geometry).
[[nodiscard]] CanvasGeometry place_layout(const VizLayout& layout, const GeometryOptions& options = {});

// The cell under a point in content units.
[[nodiscard]] std::optional<std::size_t> hit_test(const CanvasGeometry& geometry, double x, double y);

// Zoom and pan: screen = origin + (content * zoom) + pan.
struct ViewTransform {
  double zoom = 1.0;
  double pan_x = 0.0;
  double pan_y = 0.0;

  // Largest zoom (up to max_zoom) showing all of the content centred inside a viewport, with a margin.
  static ViewTransform fit(double content_width, double content_height, double viewport_width, double viewport_height,
                           double margin, double max_zoom);
  [[nodiscard]] double to_screen_x(double x) const { return x * zoom + pan_x; }
  [[nodiscard]] double to_screen_y(double y) const { return y * zoom + pan_y; }
  [[nodiscard]] double to_content_x(double x) const { return (x - pan_x) / zoom; }
  [[nodiscard]] double to_content_y(double y) const { return (y - pan_y) / zoom; }
  // Zooms by `factor` keeping the content point under the screen point (sx, sy) in place.
  void zoom_about(double factor, double sx, double sy, double min_zoom, double max_zoom);
};

// "[0:4, 8:16]" (":" for a whole dimension): the block of the drawn dimensions a cell holds.
[[nodiscard]] std::string block_text(const VizCell& cell, bool one_dimensional);
// The whole index of the array a cell holds: a small multiple's leading slices, then the cell's block
// ("[2:4, :, :, 0:2]"); the block alone for rank 1 and 2.
[[nodiscard]] std::string cell_index_text(const VizPanel& panel, const VizCell& cell);

}  // namespace shardscope::ui
