// SVG rendering of shard grids.
#include "viz/svg_renderer.h"

#include <cstdio>
#include <numeric>

namespace shardscope {
namespace {

std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", value);
  std::string text = buffer;
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text;
}

std::string block_text(const VizCell& cell, bool one_dimensional) {
  const auto part = [](const DimSlice& s) {
    return s.full ? std::string(":") : std::to_string(s.start) + ":" + std::to_string(s.stop);
  };
  return one_dimensional ? "[" + part(cell.column_slice) + "]"
                         : "[" + part(cell.row_slice) + ", " + part(cell.column_slice) + "]";
}

constexpr double kMargin = 8.0;
constexpr double kGap = 12.0;

}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string render_svg(const VizLayout& layout, const SvgRenderOptions& options) {
  std::string body;
  double y = kMargin;
  double width = 0;
  if (!options.caption.empty()) {
    body += "  <text class=\"caption\" x=\"" + number(kMargin) + "\" y=\"" + number(y + options.line_height * 0.75) +
            "\" fill=\"#202020\">" + xml_escape(options.caption) + "</text>\n";
    width = std::max(width, static_cast<double>(options.caption.size()) * options.char_width);
    y += options.line_height + kGap / 2;
  }
  for (const VizPanel& panel : layout.panels) {
    if (!panel.title.empty()) {
      body += "  <text class=\"panel-title\" x=\"" + number(kMargin) + "\" y=\"" +
              number(y + options.line_height * 0.75) + "\" fill=\"#202020\">" + xml_escape(panel.title) + "</text>\n";
      y += options.line_height;
    }
    std::vector<double> column_x(panel.column_widths.size() + 1, kMargin);
    for (std::size_t c = 0; c < panel.column_widths.size(); ++c) {
      column_x[c + 1] = column_x[c] + panel.column_widths[c] * options.char_width;
    }
    std::vector<double> row_y(panel.row_heights.size() + 1, y);
    for (std::size_t r = 0; r < panel.row_heights.size(); ++r) {
      row_y[r + 1] = row_y[r] + panel.row_heights[r] * options.line_height;
    }
    body += "  <g class=\"panel\">\n";
    for (const VizCell& cell : panel.cells) {
      const auto c = static_cast<std::size_t>(cell.column);
      const auto r = static_cast<std::size_t>(cell.row);
      const double x0 = column_x[c];
      const double y0 = row_y[r];
      const double w = column_x[c + 1] - x0;
      const double h = row_y[r + 1] - y0;
      const std::string tooltip = cell.label + " holds " + block_text(cell, panel.one_dimensional);
      body += "    <rect class=\"cell\" x=\"" + number(x0) + "\" y=\"" + number(y0) + "\" width=\"" + number(w) +
              "\" height=\"" + number(h) + "\" fill=\"" + cell.background.hex() +
              "\" stroke=\"#FFFFFF\" stroke-width=\"1\"><title>" + xml_escape(tooltip) + "</title></rect>\n";
      if (cell.padded) {
        body += "    <path class=\"padding\" d=\"M" + number(x0) + " " + number(y0 + h) + " L" + number(x0 + w) + " " +
                number(y0) + "\" stroke=\"" + cell.text_color.hex() + "\" stroke-opacity=\"0.5\" fill=\"none\"/>\n";
      }
      body += "    <text x=\"" + number(x0 + w / 2) + "\" y=\"" + number(y0 + h / 2) + "\" fill=\"" +
              cell.text_color.hex() + "\" text-anchor=\"middle\" dominant-baseline=\"central\">" +
              xml_escape(cell.label) + "</text>\n";
    }
    body += "  </g>\n";
    width = std::max(width, column_x.back() - kMargin);
    y = row_y.back() + kGap;
  }
  for (const std::string& note : layout.notes) {
    body += "  <text class=\"note\" x=\"" + number(kMargin) + "\" y=\"" + number(y + options.line_height * 0.75) +
            "\" fill=\"#606060\" font-size=\"12\">" + xml_escape(note) + "</text>\n";
    width = std::max(width, static_cast<double>(note.size()) * options.char_width * 0.8);
    y += options.line_height;
  }
  const double total_width = width + 2 * kMargin;
  const double total_height = y + kMargin - kGap / 2;
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
         number(total_width) + "\" height=\"" + number(total_height) + "\" viewBox=\"0 0 " + number(total_width) + " " +
         number(total_height) +
         "\" font-family=\"DejaVu Sans Mono, monospace\" font-size=\"14\">\n"
         "  <rect class=\"background\" width=\"100%\" height=\"100%\" fill=\"#FFFFFF\"/>\n" +
         body + "</svg>\n";
}

}  // namespace shardscope
