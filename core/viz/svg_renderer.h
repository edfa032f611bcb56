// Renders a shard-grid layout as a standalone SVG diagram (vector, for slides and papers).
#pragma once

#include <string>

#include "viz/layout.h"

namespace shardscope {

struct SvgRenderOptions {
  double char_width = 9.0;    // pixels per character column of the text layout
  double line_height = 18.0;  // pixels per text line
  std::string caption;        // optional line above the picture, e.g. the sharding's repr
  // The page's colours: white paper by default; the window's theme when an export matches the screen.
  Rgb background{255, 255, 255};
  Rgb text{0x20, 0x20, 0x20};        // caption and panel titles
  Rgb muted_text{0x60, 0x60, 0x60};  // notes
  Rgb border{255, 255, 255};         // lines between cells
};

// One <rect class="cell"> per grid cell, filled with the layout's colours (compute the layout with
// use_color so they match the ANSI output), sized like the text picture, with each cell's
// devices and array block in a tooltip. Padded (uneven) cells are hatched.
[[nodiscard]] std::string render_svg(const VizLayout& layout, const SvgRenderOptions& options = {});

// Escapes text for use in XML character data and attribute values.
[[nodiscard]] std::string xml_escape(const std::string& text);

}  // namespace shardscope
