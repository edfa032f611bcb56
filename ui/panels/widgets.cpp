// Themes: ImGui's own dark and light styles, with rounder corners and colours for the canvas and console.
#include "ui/panels/widgets.h"

namespace shardscope::ui {
namespace {

Theme& theme_storage() {
  static Theme theme;
  return theme;
}

}  // namespace

void apply_theme(bool dark, float scale) {
  ImGuiStyle& style = ImGui::GetStyle();
  style = ImGuiStyle();
  if (dark) {
    ImGui::StyleColorsDark(&style);
    style.Colors[ImGuiCol_WindowBg] = ImVec4(0.10f, 0.105f, 0.12f, 1.0f);
    style.Colors[ImGuiCol_ChildBg] = ImVec4(0, 0, 0, 0);
    style.Colors[ImGuiCol_MenuBarBg] = ImVec4(0.14f, 0.145f, 0.16f, 1.0f);
  } else {
    ImGui::StyleColorsLight(&style);
    style.Colors[ImGuiCol_ChildBg] = ImVec4(0, 0, 0, 0);
  }
  // Panels are outlined, not filled: on the software renderer every full-window fill costs milliseconds, so
  // only glClear paints the background (see tests/bench/README.md).
  style.WindowRounding = 0.0f;
  style.ChildRounding = 4.0f;
  style.FrameRounding = 3.0f;
  style.GrabRounding = 3.0f;
  style.TabRounding = 3.0f;
  style.WindowPadding = ImVec2(8, 8);
  style.FramePadding = ImVec2(6, 3);
  style.ItemSpacing = ImVec2(8, 5);
  style.ScrollbarSize = 12.0f;
  style.ScaleAllSizes(scale);

  Theme& theme = theme_storage();
  theme.dark = dark;
  if (dark) {
    theme.canvas_background = IM_COL32(0, 0, 0, 0);  // the window's own background shows through
    theme.grid_border = IM_COL32(26, 27, 31, 255);
    theme.text = IM_COL32(225, 225, 230, 255);
    theme.muted_text = IM_COL32(140, 142, 150, 255);
    theme.chip = IM_COL32(52, 54, 62, 255);
    theme.idle_device = IM_COL32(72, 74, 82, 255);
    theme.prompt = ImVec4(0.45f, 0.70f, 1.0f, 1.0f);
    theme.error = ImVec4(1.0f, 0.42f, 0.42f, 1.0f);
    theme.stderr_text = ImVec4(0.95f, 0.70f, 0.35f, 1.0f);
    theme.value = ImVec4(0.80f, 0.90f, 0.80f, 1.0f);
    theme.gui_line = ImVec4(0.75f, 0.60f, 1.0f, 1.0f);
    theme.ok = ImVec4(0.45f, 0.85f, 0.50f, 1.0f);
  } else {
    theme.canvas_background = IM_COL32(0, 0, 0, 0);
    theme.grid_border = IM_COL32(240, 240, 240, 255);
    theme.text = IM_COL32(30, 30, 35, 255);
    theme.muted_text = IM_COL32(110, 110, 120, 255);
    theme.chip = IM_COL32(215, 217, 225, 255);
    theme.idle_device = IM_COL32(190, 192, 200, 255);
    theme.prompt = ImVec4(0.10f, 0.35f, 0.80f, 1.0f);
    theme.error = ImVec4(0.80f, 0.10f, 0.10f, 1.0f);
    theme.stderr_text = ImVec4(0.70f, 0.40f, 0.0f, 1.0f);
    theme.value = ImVec4(0.10f, 0.40f, 0.15f, 1.0f);
    theme.gui_line = ImVec4(0.45f, 0.20f, 0.75f, 1.0f);
    theme.ok = ImVec4(0.10f, 0.55f, 0.20f, 1.0f);
  }
}

const Theme& current_theme() { return theme_storage(); }

void help_marker(const char* text) {
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30.0f);
    ImGui::TextUnformatted(text);
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
}

void wrapped_colored_text(const ImVec4& color, const char* text) {
  ImGui::PushStyleColor(ImGuiCol_Text, color);
  ImGui::TextWrapped("%s", text);
  ImGui::PopStyleColor();
}

void header_width_column(const char* label) {
  ImGui::TableSetupColumn(label, ImGuiTableColumnFlags_WidthFixed,
                          ImGui::CalcTextSize(label).x + ImGui::GetStyle().CellPadding.x * 2 + em(0.5f));
}

}  // namespace shardscope::ui
