// Text and ANSI rendering of shard grids, following rich's table layout as JAX configures it.
#include "viz/text_renderer.h"

#include <cctype>

namespace shardscope {
namespace {

constexpr const char* kReset = "\x1b[0m";

std::string repeat(const std::string& unit, int count) {
  std::string out;
  for (int i = 0; i < count; ++i) out += unit;
  return out;
}

std::string ansi_style(const VizCell& cell) {
  const Rgb& f = cell.text_color;
  const Rgb& b = cell.background;
  return "\x1b[38;2;" + std::to_string(f.r) + ";" + std::to_string(f.g) + ";" + std::to_string(f.b) + ";48;2;" +
         std::to_string(b.r) + ";" + std::to_string(b.g) + ";" + std::to_string(b.b) + "m";
}

std::string highlight_digits(const std::string& label) {
  std::string out;
  std::size_t i = 0;
  while (i < label.size()) {
    if (std::isdigit(static_cast<unsigned char>(label[i])) != 0) {
      std::size_t end = i;
      while (end < label.size() && std::isdigit(static_cast<unsigned char>(label[end])) != 0) ++end;
      out += "\x1b[1;36m" + label.substr(i, end - i) + kReset;
      i = end;
    } else {
      out += label[i++];
    }
  }
  return out;
}

// One cell's text for line `line` of its row: padding lines are blank, the label line is centred
// inside the column (extra space split floor-left), and short cells are extended at the bottom.
struct CellLine {
  bool is_label = false;
  int left = 0;   // spaces before the label
  int right = 0;  // spaces after the label
};

CellLine cell_line(const VizCell& cell, int column_width, int line) {
  if (line != cell.pad_top) return {};
  const int natural = cell.pad_left + static_cast<int>(cell.label.size()) + cell.pad_right;
  const int extra = column_width - natural;
  return {true, cell.pad_left + extra / 2, cell.pad_right + (extra - extra / 2)};
}

void render_plain_panel(const VizPanel& panel, const TextRenderOptions& options, std::string& out) {
  const auto border = [&](const char* left, const char* middle, const char* right) {
    out += left;
    for (int64_t c = 0; c < panel.columns; ++c) {
      if (c != 0) out += middle;
      out += repeat("─", panel.column_widths[static_cast<std::size_t>(c)]);
    }
    out += right;
    out += '\n';
  };
  border("┌", "┬", "┐");
  for (int64_t r = 0; r < panel.rows; ++r) {
    if (r != 0) border("├", "┼", "┤");
    for (int line = 0; line < panel.row_heights[static_cast<std::size_t>(r)]; ++line) {
      out += "│";
      for (int64_t c = 0; c < panel.columns; ++c) {
        if (c != 0) out += "│";
        const VizCell& cell = panel.at(r, c);
        const int width = panel.column_widths[static_cast<std::size_t>(c)];
        const CellLine text = cell_line(cell, width, line);
        if (!text.is_label) {
          out += std::string(static_cast<std::size_t>(width), ' ');
          continue;
        }
        out += std::string(static_cast<std::size_t>(text.left), ' ');
        out += options.highlight_numbers ? highlight_digits(cell.label) : cell.label;
        out += std::string(static_cast<std::size_t>(text.right), ' ');
      }
      out += "│\n";
    }
  }
  border("└", "┴", "┘");
}

void render_color_panel(const VizPanel& panel, std::string& out) {
  for (int64_t r = 0; r < panel.rows; ++r) {
    for (int line = 0; line < panel.row_heights[static_cast<std::size_t>(r)]; ++line) {
      for (int64_t c = 0; c < panel.columns; ++c) {
        const VizCell& cell = panel.at(r, c);
        const std::string style = ansi_style(cell);
        const int width = panel.column_widths[static_cast<std::size_t>(c)];
        const CellLine text = cell_line(cell, width, line);
        if (!text.is_label) {
          out += style + std::string(static_cast<std::size_t>(width), ' ') + kReset;
          continue;
        }
        if (text.left > 0) out += style + std::string(static_cast<std::size_t>(text.left), ' ') + kReset;
        out += style + cell.label + kReset;
        if (text.right > 0) out += style + std::string(static_cast<std::size_t>(text.right), ' ') + kReset;
      }
      out += '\n';
    }
  }
}

}  // namespace

std::string render_text(const VizLayout& layout, const TextRenderOptions& options) {
  std::string out;
  for (const VizPanel& panel : layout.panels) {
    if (!panel.title.empty()) out += panel.title + "\n";
    if (layout.use_color) {
      render_color_panel(panel, out);
    } else {
      render_plain_panel(panel, options, out);
    }
  }
  for (const std::string& note : layout.notes) out += note + "\n";
  return out;
}

}  // namespace shardscope
