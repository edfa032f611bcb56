// Renders a shard-grid layout as JAX prints it: box-drawn plain text or 24-bit ANSI colour blocks.
#pragma once

#include <string>

#include "viz/layout.h"

namespace shardscope {

struct TextRenderOptions {
  // Plain (uncoloured) layouts only: wrap digit runs of labels in bold cyan, as rich's repr
  // highlighter does when JAX prints to a colour terminal without matplotlib.
  bool highlight_numbers = false;
};

// Exactly what jax.debug.visualize_sharding writes to stdout for the layout (colour or not,
// per layout.use_color). Beyond-JAX panels get their title line and the layout's notes follow.
[[nodiscard]] std::string render_text(const VizLayout& layout, const TextRenderOptions& options = {});

}  // namespace shardscope
