// rich 13.3.1's column shrinking, label wrapping and row assembly for JAX's shard-grid table.
#include "viz/table_fit.h"

#include <algorithm>
#include <numeric>

namespace shardscope {
namespace {

constexpr const char* kEllipsis = "…";

std::string spaces(int count) { return std::string(static_cast<std::size_t>(std::max(count, 0)), ' '); }

bool is_python_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Python's round(numerator / denominator) for a positive denominator: nearest, ties to even.
int64_t round_half_even(int64_t numerator, int64_t denominator) {
  int64_t quotient = numerator / denominator;
  int64_t remainder = numerator % denominator;
  if (remainder < 0) {
    remainder += denominator;
    --quotient;
  }
  const int64_t twice = 2 * remainder;
  if (twice > denominator || (twice == denominator && quotient % 2 != 0)) ++quotient;
  return quotient;
}

int sum(const std::vector<int>& values) { return std::accumulate(values.begin(), values.end(), 0); }

// The words rich's wrapper sees: optional leading whitespace, a non-space run, trailing whitespace.
struct WordSpan {
  std::size_t start = 0;
  std::size_t end = 0;
};

std::vector<WordSpan> split_words(const std::string& text) {
  std::vector<WordSpan> words;
  std::size_t position = 0;
  while (position < text.size()) {
    std::size_t cursor = position;
    while (cursor < text.size() && is_python_space(text[cursor])) ++cursor;
    if (cursor == text.size()) break;
    while (cursor < text.size() && !is_python_space(text[cursor])) ++cursor;
    while (cursor < text.size() && is_python_space(text[cursor])) ++cursor;
    words.push_back({position, cursor});
    position = cursor;
  }
  return words;
}

// Where rich breaks a line when words may not be folded: before a word that would pass the width,
// unless the line is still empty; a word wider than the line always starts a line of its own.
std::vector<std::size_t> line_breaks(const std::string& text, int width) {
  std::vector<std::size_t> breaks;
  int line_position = 0;
  for (const WordSpan& span : split_words(text)) {
    const std::string word = text.substr(span.start, span.end - span.start);
    std::size_t visible_end = word.size();
    while (visible_end > 0 && is_python_space(word[visible_end - 1])) --visible_end;
    const int word_length = cell_length(word.substr(0, visible_end));
    if (line_position + word_length > width) {
      if (word_length > width) {
        if (span.start != 0) breaks.push_back(span.start);
        line_position = cell_length(word);
      } else if (line_position != 0 && span.start != 0) {
        breaks.push_back(span.start);
        line_position = cell_length(word);
      }
    } else {
      line_position += cell_length(word);
    }
  }
  return breaks;
}

FittedLine blank_cell_line(int width, FittedRunKind kind) { return {FittedRun{spaces(width), kind, false}}; }

// What rich's Padding(Align(label, "center")) draws in a column `width` cells wide.
std::vector<FittedLine> render_cell(const VizCell& cell, int width) {
  std::vector<FittedLine> lines;
  // rich renders nothing at all into a zero-width space.
  if (width < 1) return lines;
  const int inner_width = std::max(0, width - cell.pad_left - cell.pad_right);
  for (int i = 0; i < cell.pad_top; ++i) lines.push_back(blank_cell_line(width, FittedRunKind::kCellPadding));
  const int label_cells = cell_length(cell.label);
  if (inner_width >= 1 && label_cells >= 1) {
    const int wrap_width = std::min(label_cells, inner_width);
    const int excess = inner_width - wrap_width;
    const int centre_left = excess / 2;
    const int centre_right = excess - centre_left;
    for (WrappedLine& wrapped : wrap_label(cell.label, wrap_width)) {
      FittedLine line;
      const auto pad = [&line](int count) {
        if (count > 0) line.push_back({spaces(count), FittedRunKind::kCellPadding, false});
      };
      pad(cell.pad_left);
      pad(centre_left);
      line.push_back({std::move(wrapped.text), FittedRunKind::kLabel, wrapped.ellipsis_replaced_digit});
      pad(centre_right);
      pad(cell.pad_right);
      lines.push_back(std::move(line));
    }
  }
  for (int i = 0; i < cell.pad_bottom; ++i) lines.push_back(blank_cell_line(width, FittedRunKind::kCellPadding));
  return lines;
}

// A column's widest cell as rich measures it within `limit` cells.
int measure_column(int natural_width, int limit) {
  if (limit < 1) return 0;
  return std::max(std::min(natural_width, limit), 0);
}

}  // namespace

int cell_length(const std::string& text) {
  int cells = 0;
  for (const char byte : text) {
    if ((static_cast<unsigned char>(byte) & 0xC0U) != 0x80U) ++cells;
  }
  return cells;
}

std::string first_cells(const std::string& text, int count) {
  int seen = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0U) != 0x80U) {
      if (seen == count) return text.substr(0, i);
      ++seen;
    }
  }
  return text;
}

std::vector<int> ratio_reduce(int total, const std::vector<int>& ratios, const std::vector<int>& maximums,
                              const std::vector<int>& values) {
  std::vector<int> effective_ratios(ratios.size());
  for (std::size_t i = 0; i < ratios.size(); ++i) effective_ratios[i] = maximums[i] != 0 ? ratios[i] : 0;
  int64_t total_ratio = std::accumulate(effective_ratios.begin(), effective_ratios.end(), int64_t{0});
  if (total_ratio == 0) return values;
  int64_t total_remaining = total;
  std::vector<int> result;
  result.reserve(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    const int ratio = effective_ratios[i];
    if (ratio != 0 && total_ratio > 0) {
      const int64_t share = round_half_even(ratio * total_remaining, total_ratio);
      const int64_t distributed = std::min<int64_t>(maximums[i], share);
      result.push_back(static_cast<int>(values[i] - distributed));
      total_remaining -= distributed;
      total_ratio -= ratio;
    } else {
      result.push_back(values[i]);
    }
  }
  return result;
}

std::vector<int> collapse_widths(std::vector<int> widths, int max_width) {
  if (widths.empty()) return widths;
  int total_width = sum(widths);
  int excess_width = total_width - max_width;
  while (total_width != 0 && excess_width > 0) {
    const int widest = *std::max_element(widths.begin(), widths.end());
    int second_widest = 0;
    for (const int width : widths) {
      if (width != widest) second_widest = std::max(second_widest, width);
    }
    const int difference = widest - second_widest;
    if (difference == 0) break;
    std::vector<int> ratios(widths.size());
    for (std::size_t i = 0; i < widths.size(); ++i) ratios[i] = widths[i] == widest ? 1 : 0;
    const std::vector<int> maximums(widths.size(), std::min(excess_width, difference));
    widths = ratio_reduce(excess_width, ratios, maximums, widths);
    total_width = sum(widths);
    excess_width = total_width - max_width;
  }
  return widths;
}

std::vector<int> fit_column_widths(const std::vector<int>& natural_widths, int available) {
  std::vector<int> widths;
  widths.reserve(natural_widths.size());
  // A column rich measures as empty still gets one cell before shrinking starts.
  for (const int natural : natural_widths) widths.push_back(std::max(measure_column(natural, available), 1));
  if (sum(widths) <= available) return widths;
  widths = collapse_widths(widths, available);
  if (sum(widths) > available) {
    // Shrinking the widest columns could not make room: every column gives up its share.
    widths = ratio_reduce(sum(widths) - available, std::vector<int>(widths.size(), 1), widths, widths);
  }
  for (std::size_t i = 0; i < widths.size(); ++i) widths[i] = measure_column(natural_widths[i], widths[i]);
  return widths;
}

std::vector<WrappedLine> wrap_label(const std::string& label, int width) {
  const std::vector<std::size_t> breaks = line_breaks(label, width);
  std::vector<std::size_t> offsets{0};
  offsets.insert(offsets.end(), breaks.begin(), breaks.end());
  offsets.push_back(label.size());
  std::vector<WrappedLine> lines;
  for (std::size_t i = 0; i + 1 < offsets.size(); ++i) {
    std::string text = label.substr(offsets[i], offsets[i + 1] - offsets[i]);
    // Whitespace that would pass the edge goes first, so a break does not cost an ellipsis.
    const int length = cell_length(text);
    if (length > width) {
      std::size_t trailing = 0;
      while (trailing < text.size() && is_python_space(text[text.size() - 1 - trailing])) ++trailing;
      text.resize(text.size() - std::min(trailing, static_cast<std::size_t>(length - width)));
    }
    WrappedLine line;
    const int trimmed_length = cell_length(text);
    if (trimmed_length > width) {
      const std::string kept = first_cells(text, width - 1);
      const std::string replaced = first_cells(text.substr(kept.size()), 1);
      line.ellipsis_replaced_digit = replaced.size() == 1 && is_digit(replaced[0]);
      line.text = kept + kEllipsis;
    } else {
      line.text = text + spaces(width - trimmed_length);
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

FittedTable fit_table(const VizPanel& panel, int console_width, bool use_color) {
  FittedTable table;
  table.boxed = !use_color;
  table.console_width = console_width;
  const auto columns = static_cast<std::size_t>(panel.columns);
  const auto rows = static_cast<std::size_t>(panel.rows);
  const int border_width = table.boxed ? static_cast<int>(columns) + 1 : 0;
  std::vector<int> natural_widths(columns, 0);
  for (const VizCell& cell : panel.cells) {
    int& natural = natural_widths[static_cast<std::size_t>(cell.column)];
    natural = std::max(natural, cell.pad_left + cell_length(cell.label) + cell.pad_right);
  }
  table.column_widths = fit_column_widths(natural_widths, std::max(0, console_width - border_width));

  table.row_heights.assign(rows, 0);
  table.cell_lines.resize(panel.cells.size());
  for (std::size_t r = 0; r < rows; ++r) {
    int tallest = 0;
    for (std::size_t c = 0; c < columns; ++c) {
      std::vector<FittedLine>& lines = table.cell_lines[r * columns + c];
      lines = render_cell(panel.at(static_cast<int64_t>(r), static_cast<int64_t>(c)), table.column_widths[c]);
      tallest = std::max(tallest, static_cast<int>(lines.size()));
    }
    // Even a row whose cells drew nothing keeps one line.
    const int height = std::max(tallest, 1);
    table.row_heights[r] = height;
    for (std::size_t c = 0; c < columns; ++c) {
      std::vector<FittedLine>& lines = table.cell_lines[r * columns + c];
      while (static_cast<int>(lines.size()) < height) {
        lines.push_back(blank_cell_line(table.column_widths[c], FittedRunKind::kRowFiller));
      }
    }
  }
  return table;
}

}  // namespace shardscope
