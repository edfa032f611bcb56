// Text and ANSI rendering of shard grids, drawn from the table rich fits to the console width.
#include "viz/text_renderer.h"

#include <cctype>
#include <vector>

#include "viz/table_fit.h"

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

// rich's repr highlighter styles each number of a label; an ellipsis that cut a number keeps its style.
std::string highlight_digits(const std::string& text, bool ellipsis_replaced_digit) {
  const std::string ellipsis = "…";
  const bool ends_in_number = ellipsis_replaced_digit && text.size() >= ellipsis.size() &&
                              text.compare(text.size() - ellipsis.size(), ellipsis.size(), ellipsis) == 0;
  const std::size_t digits_end = ends_in_number ? text.size() - ellipsis.size() : text.size();
  std::string out;
  std::size_t i = 0;
  while (i < digits_end) {
    if (std::isdigit(static_cast<unsigned char>(text[i])) != 0) {
      std::size_t end = i;
      while (end < digits_end && std::isdigit(static_cast<unsigned char>(text[end])) != 0) ++end;
      if (end == digits_end && ends_in_number) break;
      out += "\x1b[1;36m" + text.substr(i, end - i) + kReset;
      i = end;
    } else {
      out += text[i++];
    }
  }
  if (ends_in_number) out += "\x1b[1;36m" + text.substr(i) + kReset;
  return out;
}

// One piece of a printed line before rich's console cuts it to width; `cell` is null for
// unstyled text (borders, row filler).
struct PrintedRun {
  std::string text;
  const VizCell* cell = nullptr;
  bool is_label = false;
  bool ellipsis_replaced_digit = false;
};

// The console prints at most `width` cells of a line; the run reaching the edge is cut there.
void crop_line(std::vector<PrintedRun>& runs, int width) {
  int total = 0;
  for (const PrintedRun& run : runs) total += cell_length(run.text);
  if (total <= width) return;
  int used = 0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const int length = cell_length(runs[i].text);
    if (used + length < width) {
      used += length;
      continue;
    }
    runs[i].text = first_cells(runs[i].text, width - used);
    runs.resize(i + 1);
    return;
  }
}

void append_cell_line(const FittedLine& line, const VizCell& cell, std::vector<PrintedRun>& runs) {
  for (const FittedRun& run : line) {
    const bool styled = run.kind != FittedRunKind::kRowFiller;
    runs.push_back(
        {run.text, styled ? &cell : nullptr, run.kind == FittedRunKind::kLabel, run.ellipsis_replaced_digit});
  }
}

void print_line(std::vector<PrintedRun> runs, int console_width, bool use_color, const TextRenderOptions& options,
                std::string& out) {
  crop_line(runs, console_width);
  for (const PrintedRun& run : runs) {
    if (run.text.empty()) continue;
    if (use_color && run.cell != nullptr) {
      out += ansi_style(*run.cell) + run.text + kReset;
    } else if (!use_color && run.is_label && options.highlight_numbers) {
      out += highlight_digits(run.text, run.ellipsis_replaced_digit);
    } else {
      out += run.text;
    }
  }
  out += '\n';
}

void render_plain_panel(const VizPanel& panel, const FittedTable& table, const TextRenderOptions& options,
                        std::string& out) {
  const auto border = [&](const char* left, const char* middle, const char* right) {
    std::string text = left;
    for (std::size_t c = 0; c < table.column_widths.size(); ++c) {
      if (c != 0) text += middle;
      text += repeat("─", table.column_widths[c]);
    }
    text += right;
    print_line({PrintedRun{text}}, table.console_width, false, options, out);
  };
  border("┌", "┬", "┐");
  for (int64_t r = 0; r < panel.rows; ++r) {
    if (r != 0) border("├", "┼", "┤");
    for (int line = 0; line < table.row_heights[static_cast<std::size_t>(r)]; ++line) {
      std::vector<PrintedRun> runs{PrintedRun{"│"}};
      for (int64_t c = 0; c < panel.columns; ++c) {
        if (c != 0) runs.push_back(PrintedRun{"│"});
        append_cell_line(table.lines_at(r, c)[static_cast<std::size_t>(line)], panel.at(r, c), runs);
      }
      runs.push_back(PrintedRun{"│"});
      print_line(std::move(runs), table.console_width, false, options, out);
    }
  }
  border("└", "┴", "┘");
}

void render_color_panel(const VizPanel& panel, const FittedTable& table, std::string& out) {
  for (int64_t r = 0; r < panel.rows; ++r) {
    for (int line = 0; line < table.row_heights[static_cast<std::size_t>(r)]; ++line) {
      std::vector<PrintedRun> runs;
      for (int64_t c = 0; c < panel.columns; ++c) {
        append_cell_line(table.lines_at(r, c)[static_cast<std::size_t>(line)], panel.at(r, c), runs);
      }
      print_line(std::move(runs), table.console_width, true, {}, out);
    }
  }
}

}  // namespace

std::string render_text(const VizLayout& layout, const TextRenderOptions& options) {
  std::string out;
  for (const VizPanel& panel : layout.panels) {
    if (!panel.title.empty()) out += panel.title + "\n";
    const FittedTable table = fit_table(panel, layout.console_width, layout.use_color);
    if (layout.use_color) {
      render_color_panel(panel, table, out);
    } else {
      render_plain_panel(panel, table, options, out);
    }
  }
  for (const std::string& note : layout.notes) out += note + "\n";
  return out;
}

}  // namespace shardscope
