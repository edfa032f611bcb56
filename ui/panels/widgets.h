// Theme colours and small widgets shared by the panels.
#pragma once

#include <imgui.h>

namespace shardscope::ui {

struct Theme {
  bool dark = true;
  ImU32 canvas_background = 0;
  ImU32 grid_border = 0;
  ImU32 text = 0;
  ImU32 muted_text = 0;
  ImU32 chip = 0;
  ImU32 idle_device = 0;
  ImVec4 prompt;
  ImVec4 error;
  ImVec4 stderr_text;
  ImVec4 value;
  ImVec4 gui_line;
  ImVec4 ok;
};

// Applies ImGui's dark or light style plus shardscope's adjustments, and makes it current.
void apply_theme(bool dark, float scale);
[[nodiscard]] const Theme& current_theme();

// A width in multiples of the current font size, so fixed-width fields grow with --ui-scale and the font.
[[nodiscard]] inline float em(float count) { return ImGui::GetFontSize() * count; }

// A table column exactly as wide as its header plus padding, for short values (sizes, byte counts): its header
// never clips, whatever --ui-scale and the window's width, while the text columns stretch.
void header_width_column(const char* label);

// A (?) marker with a wrapped tooltip.
void help_marker(const char* text);
// Text in a colour, wrapped at the window edge.
void wrapped_colored_text(const ImVec4& color, const char* text);

}  // namespace shardscope::ui
