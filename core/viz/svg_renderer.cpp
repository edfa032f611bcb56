// SVG rendering of shard grids.
#include "viz/svg_renderer.h"

#include <cstdint>
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

namespace {

// Length of the well-formed UTF-8 sequence at text[i] holding a character XML 1.0 allows, or 0.
std::size_t xml_char_length(const std::string& text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return (lead >= 0x20 || lead == '\t' || lead == '\n' || lead == '\r') ? 1 : 0;
  std::size_t length = 0;
  uint32_t code = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    code = lead & 0x1Fu;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    code = lead & 0x0Fu;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    code = lead & 0x07u;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0u) != 0x80u) return 0;
    code = (code << 6) | (byte(i + k) & 0x3Fu);
  }
  const uint32_t smallest = length == 2 ? 0x80u : length == 3 ? 0x800u : 0x10000u;
  const bool allowed = code >= smallest && code <= 0x10FFFFu && !(code >= 0xD800u && code <= 0xDFFFu) &&
                       code != 0xFFFEu && code != 0xFFFFu;
  return allowed ? length : 0;
}

}  // namespace

// Besides the five markup characters: bytes that are not UTF-8 (an axis name typed in another encoding) and
// characters XML forbids (control codes) become U+FFFD, so the file is always one a viewer can open.
std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: {
        const std::size_t length = xml_char_length(text, i);
        if (length == 0) {
          out += "\xEF\xBF\xBD";
          ++i;
        } else {
          out.append(text, i, length);
          i += length;
        }
        continue;
      }
    }
    ++i;
  }
  return out;
}

std::string render_svg(const VizLayout& layout, const SvgRenderOptions& options) {
  std::string body;
  double y = kMargin;
  double width = 0;
  if (!options.caption.empty()) {
    body += "  <text class=\"caption\" x=\"" + number(kMargin) + "\" y=\"" + number(y + options.line_height * 0.75) +
            "\" fill=\"" + options.text.hex() + "\">" + xml_escape(options.caption) + "</text>\n";
    width = std::max(width, static_cast<double>(options.caption.size()) * options.char_width);
    y += options.line_height + kGap / 2;
  }
  for (const VizPanel& panel : layout.panels) {
    if (!panel.title.empty()) {
      body += "  <text class=\"panel-title\" x=\"" + number(kMargin) + "\" y=\"" +
              number(y + options.line_height * 0.75) + "\" fill=\"" + options.text.hex() + "\">" +
              xml_escape(panel.title) + "</text>\n";
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
              "\" height=\"" + number(h) + "\" fill=\"" + cell.background.hex() + "\" stroke=\"" +
              options.border.hex() + "\" stroke-width=\"1\"><title>" + xml_escape(tooltip) + "</title></rect>\n";
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
            "\" fill=\"" + options.muted_text.hex() + "\" font-size=\"12\">" + xml_escape(note) + "</text>\n";
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
         "  <rect class=\"background\" width=\"100%\" height=\"100%\" fill=\"" +
         options.background.hex() + "\"/>\n" + body + "</svg>\n";
}

}  // namespace shardscope
