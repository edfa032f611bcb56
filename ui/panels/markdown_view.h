// Lesson prose drawn from markdown blocks: wrapped styled text with ImGui's draw list, no markup shown.
#pragma once

#include <imgui.h>

#include <optional>
#include <vector>

#include "io/markdown.h"
#include "ui/explorer.h"

namespace shardscope::ui {

// Draws the blocks at the cursor, wrapped to `width`, and advances the cursor past them. Returns the screen
// rectangle of the first heading drawn, if any (tests look for its text there).
std::optional<Rect> draw_markdown(const std::vector<MarkdownBlock>& blocks, const TextFonts& fonts, float width);

}  // namespace shardscope::ui
