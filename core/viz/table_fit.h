// Fits a shard grid into the console width the way rich 13.3.1's Table does for JAX's configuration.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "viz/layout.h"

namespace shardscope {

// Who paints a run: rich styles everything a cell's Padding draws with the cell's colours, but the
// blank lines the table adds to even out a row carry no style at all.
enum class FittedRunKind {
  kLabel,        // text of the label (wrapped, ellipsized, padded to the wrap width)
  kCellPadding,  // spaces drawn by the cell: its padding, centring and blank lines
  kRowFiller,    // spaces the table appends below a cell shorter than its row
};

// One run of equally styled characters. Every character drawn is one terminal cell wide.
struct FittedRun {
  std::string text;
  FittedRunKind kind = FittedRunKind::kCellPadding;
  // rich highlights the label before cutting it, so an ellipsis replacing a digit stays bold cyan.
  bool ellipsis_replaced_digit = false;
};

using FittedLine = std::vector<FittedRun>;

struct FittedTable {
  bool boxed = true;       // plain mode draws box borders; colour mode concatenates cells
  int console_width = 80;  // rich cuts every printed line to this many cells
  std::vector<int> column_widths;
  std::vector<int> row_heights;
  // Row-major like VizPanel::cells; cell i has row_heights[row] lines of column_widths[column] cells.
  std::vector<std::vector<FittedLine>> cell_lines;
  [[nodiscard]] const std::vector<FittedLine>& lines_at(int64_t row, int64_t column) const {
    return cell_lines[static_cast<std::size_t>(row * static_cast<int64_t>(column_widths.size()) + column)];
  }
};

// The table rich prints for the panel on a console `console_width` cells wide. When the natural
// widths fit, every cell is its label centred in its padding, exactly as before fitting.
[[nodiscard]] FittedTable fit_table(const VizPanel& panel, int console_width, bool use_color);

// Terminal cells of UTF-8 text in which every character is one cell wide, as in every shard grid.
[[nodiscard]] int cell_length(const std::string& text);

// The first `count` cells of such text.
[[nodiscard]] std::string first_cells(const std::string& text, int count);

// The pieces of rich's algorithm, exposed for tests.

// rich's ratio_reduce: takes `total` away from `values` in proportion to `ratios`, each slot giving
// at most its maximum; shares are rounded half to even like Python's round().
[[nodiscard]] std::vector<int> ratio_reduce(int total, const std::vector<int>& ratios, const std::vector<int>& maximums,
                                            const std::vector<int>& values);

// rich's Table._collapse_widths with every column wrappable: repeatedly shrinks the widest
// columns towards the next widest until the total fits `max_width` or they are all equal.
[[nodiscard]] std::vector<int> collapse_widths(std::vector<int> widths, int max_width);

// Final column widths from each column's natural width (its widest cell), given `available`
// cells for the columns once the borders are taken off.
[[nodiscard]] std::vector<int> fit_column_widths(const std::vector<int>& natural_widths, int available);

struct WrappedLine {
  std::string text;  // exactly the wrap width in cells
  bool ellipsis_replaced_digit = false;
};

// rich's Text.wrap of a one-line label at `width` >= 1 with overflow "ellipsis" and justify
// "left": breaks before words that do not fit, cuts over-long words with an ellipsis and pads
// every line with spaces to `width`.
[[nodiscard]] std::vector<WrappedLine> wrap_label(const std::string& label, int width);

}  // namespace shardscope
