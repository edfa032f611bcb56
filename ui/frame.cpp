// The window's frame: menu bar, the fixed arrangement of panels, shortcuts and the help window.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "ui/explorer.h"
#include "ui/panels/widgets.h"

namespace shardscope::ui {
namespace {

// How far the splitters go: every pane keeps a fifth of the window at least.
constexpr float kMinFraction = 0.2f;
constexpr float kMaxFraction = 0.8f;

constexpr const char* kShortcuts[][2] = {
    {"Enter", "run the cell (continues a block or open bracket)"},
    {"Shift+Enter", "new line in the cell"},
    {"Tab", "complete the name before the cursor"},
    {"Up / Down", "history (single-line cells)"},
    {"Ctrl+C / Stop", "interrupt the running cell (KeyboardInterrupt)"},
    {"Ctrl+O", "open a scene (.py with # %% cells, or .ipynb)"},
    {"F5", "run all cells of the open scene"},
    {"Right / Left", "next / previous lesson step (Scenes tab, presentation)"},
    {"F11", "presentation mode: the lesson fills the screen in large type"},
    {"Ctrl+D", "toggle grid / device view"},
    {"Ctrl+E", "export the canvas as SVG"},
    {"Ctrl+L", "clear the console"},
    {"Mouse wheel / drag", "zoom / pan the canvas; double-click fits"},
    {"F1", "this help"},
};

bool pressed(ImGuiKey key) { return ImGui::IsKeyPressed(ImGui::GetKeyIndex(key), false); }
bool pressed_char(char c) { return ImGui::IsKeyPressed(static_cast<int>(c), false); }  // GLFW keys are ASCII

void write_text(Explorer& explorer, const std::string& path, const std::string& text, const char* what) {
  std::ofstream file(path, std::ios::binary);
  file << text;
  explorer.status_line = file ? std::string(what) + " written to " + path : "Could not write " + path;
}

void shortcuts(Explorer& explorer) {
  const ImGuiIO& io = ImGui::GetIO();
  if (io.KeyCtrl && pressed_char('C') && !explorer.idle()) explorer.interrupt();
  if (io.KeyCtrl && pressed_char('O')) ImGui::OpenPopup("Open scene");
  if (io.KeyCtrl && pressed_char('D')) {
    explorer.canvas.device_view = !explorer.canvas.device_view;
    explorer.canvas.view.reset();
  }
  if (io.KeyCtrl && pressed_char('E')) write_text(explorer, explorer.svg_path, explorer.canvas_svg(), "SVG");
  if (io.KeyCtrl && pressed_char('L')) {
    explorer.console.clear();
    explorer.inline_visuals.clear();
  }
  if (ImGui::IsKeyPressed(290 /* GLFW_KEY_F1 */, false)) explorer.show_help = !explorer.show_help;
  if (ImGui::IsKeyPressed(294 /* GLFW_KEY_F5 */, false) && explorer.idle()) explorer.run_scene_cells(false);
  (void)pressed;
}

void menu_bar(Explorer& explorer) {
  bool open_scene = false;
  bool export_dialog = false;
  if (!ImGui::BeginMenuBar()) return;
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("Open scene...", "Ctrl+O")) open_scene = true;
    if (ImGui::MenuItem("Export...")) export_dialog = true;
    if (ImGui::MenuItem("Export SVG", "Ctrl+E")) write_text(explorer, explorer.svg_path, explorer.canvas_svg(), "SVG");
    if (ImGui::MenuItem("Export PNG")) explorer.png_request = explorer.png_path;
    if (ImGui::MenuItem("Copy JAX's text")) {
      ImGui::SetClipboardText(explorer.canvas_text().c_str());
      explorer.status_line = "visualize_array_sharding text copied";
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Quit", "Ctrl+Q")) explorer.quit_requested = true;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    if (ImGui::MenuItem("Dark theme", nullptr, explorer.settings.dark_theme)) {
      explorer.settings.dark_theme = true;
      explorer.theme_chosen = true;
      apply_theme(true, explorer.ui_scale);
    }
    if (ImGui::MenuItem("Light theme", nullptr, !explorer.settings.dark_theme)) {
      explorer.settings.dark_theme = false;
      explorer.theme_chosen = true;
      apply_theme(false, explorer.ui_scale);
    }
    if (ImGui::BeginMenu("Palette")) {
      // The canvas and exports only: JAX's printed pictures keep tab20b.
      const char* shown[] = {"tab20b (JAX)", "Distinct colours", "Colour-blind safe"};
      const Palette palettes[] = {Palette::kTab20b, Palette::kDistinct, Palette::kColorBlind};
      for (std::size_t i = 0; i < 3; ++i) {
        if (ImGui::MenuItem(shown[i], nullptr, explorer.settings.palette == palettes[i])) {
          explorer.set_palette(palettes[i]);
          explorer.palette_chosen = true;
        }
      }
      ImGui::EndMenu();
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Presentation mode", "F11", explorer.present)) explorer.present = !explorer.present;
    if (ImGui::MenuItem("Device view", "Ctrl+D", explorer.canvas.device_view)) {
      explorer.canvas.device_view = !explorer.canvas.device_view;
      explorer.canvas.view.reset();
    }
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Scenes")) {
    for (const std::string& path : explorer.scene.browser) {
      if (ImGui::MenuItem(path.c_str())) explorer.open_scene(path);
    }
    if (explorer.scene.browser.empty()) ImGui::TextDisabled("no scenes in %s", explorer.scenes_dir.c_str());
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Help")) {
    if (ImGui::MenuItem("Shortcuts", "F1")) explorer.show_help = true;
    ImGui::EndMenu();
  }
  if (!explorer.status_line.empty()) {
    ImGui::Separator();
    ImGui::TextDisabled("%s", explorer.status_line.c_str());
  }
  ImGui::EndMenuBar();
  if (open_scene) ImGui::OpenPopup("Open scene");
  if (export_dialog) ImGui::OpenPopup("Export");
}

void popups(Explorer& explorer) {
  if (ImGui::BeginPopupModal("Open scene", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    ImGui::TextUnformatted("Path of a .py (Jupytext # %% cells) or .ipynb:");
    ImGui::SetNextItemWidth(em(36));
    const bool enter = ImGui::InputText("##path", &explorer.open_path, ImGuiInputTextFlags_EnterReturnsTrue);
    if (ImGui::Button("Open") || enter) {
      explorer.open_scene(explorer.open_path);
      ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
  if (ImGui::BeginPopupModal("Export", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    ImGui::SetNextItemWidth(em(29));
    ImGui::InputText("SVG file", &explorer.svg_path);
    ImGui::SetNextItemWidth(em(29));
    ImGui::InputText("PNG file", &explorer.png_path);
    ImGui::SetNextItemWidth(em(14));
    ImGui::SliderFloat("PNG scale", &explorer.png_scale, 0.5f, 4.0f, "%.1fx");
    if (ImGui::Button("Export SVG")) write_text(explorer, explorer.svg_path, explorer.canvas_svg(), "SVG");
    ImGui::SameLine();
    if (ImGui::Button("Export PNG")) explorer.png_request = explorer.png_path;
    ImGui::SameLine();
    if (ImGui::Button("Close")) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
}

// The panes sit edge to edge (the splitters fill the gaps), so each restores the usual spacing inside.
void titled_child(const char* id, const char* title, ImVec2 size, void (*body)(Explorer&), Explorer& explorer,
                  ImVec2 inner_spacing) {
  ImGui::BeginChild(id, size, true, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, inner_spacing);
  ImGui::TextDisabled("%s", title);
  ImGui::Separator();
  body(explorer);
  ImGui::PopStyleVar();
  ImGui::EndChild();
}

// A gap between panes that moves when dragged: `fraction` of `total` is the size before it. Highlighted on
// hover so people find it.
void splitter(const char* id, ImVec2 size, bool horizontal, float total, float low, float high, float* fraction) {
  ImGui::InvisibleButton(id, size);
  const bool active = ImGui::IsItemActive();
  if (ImGui::IsItemHovered() || active) {
    ImGui::SetMouseCursor(horizontal ? ImGuiMouseCursor_ResizeNS : ImGuiMouseCursor_ResizeEW);
    ImGui::GetWindowDrawList()->AddRectFilled(
        ImGui::GetItemRectMin(), ImGui::GetItemRectMax(),
        ImGui::GetColorU32(active ? ImGuiCol_SeparatorActive : ImGuiCol_SeparatorHovered));
  }
  if (active && total > 0) {
    const ImVec2 delta = ImGui::GetIO().MouseDelta;
    *fraction = std::clamp(*fraction + (horizontal ? delta.y : delta.x) / total, low, high);
  }
}

}  // namespace

void Explorer::draw(float width, float height) {
  ++frame_count;
  if (ImGui::IsKeyPressed(300 /* GLFW_KEY_F11 */, false)) present = !present;
  lesson_heading_rect = {};
  if (present) {
    draw_presentation(*this, width, height);
    return;
  }
  present_rect = {};
  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(ImVec2(width, height));
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
                                 ImGuiWindowFlags_MenuBar | ImGuiWindowFlags_NoBringToFrontOnFocus |
                                 ImGuiWindowFlags_NoSavedSettings;
  ImGui::Begin("shardscope", nullptr, flags);
  menu_bar(*this);
  shortcuts(*this);
  popups(*this);

  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 item_spacing = ImGui::GetStyle().ItemSpacing;
  const float spacing = item_spacing.y;
  const float gap = item_spacing.x;
  const float left = std::floor(avail.x * settings.left_fraction);
  const float top = std::floor(avail.y * settings.console_fraction);
  // The gaps between panes are splitters (their positions are saved with the settings).
  ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(0, 0));
  ImGui::BeginGroup();
  titled_child("##console", "Console", ImVec2(left, top), draw_console, *this, item_spacing);
  splitter("##split_left", ImVec2(left, spacing), true, avail.y, kMinFraction, kMaxFraction,
           &settings.console_fraction);
  titled_child("##variables", "Variables", ImVec2(left, avail.y - top - spacing), draw_variables, *this, item_spacing);
  ImGui::EndGroup();
  ImGui::SameLine();
  splitter("##split_middle", ImVec2(gap, avail.y), false, avail.x, kMinFraction, kMaxFraction, &settings.left_fraction);
  ImGui::SameLine();
  ImGui::BeginGroup();
  titled_child("##canvas", "Canvas", ImVec2(0, top), draw_canvas, *this, item_spacing);
  splitter("##split_right", ImVec2(-1, spacing), true, avail.y, kMinFraction, kMaxFraction, &settings.console_fraction);
  ImGui::BeginChild("##editors", ImVec2(0, avail.y - top - spacing), true);
  ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, item_spacing);
  if (ImGui::BeginTabBar("##editor_tabs")) {
    const auto tab_flags = [this](const char* name) {
      return requested_editor_tab == name ? ImGuiTabItemFlags_SetSelected : ImGuiTabItemFlags_None;
    };
    if (ImGui::BeginTabItem("Spec", nullptr, tab_flags("Spec"))) {
      draw_spec_editor(*this);
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Mesh", nullptr, tab_flags("Mesh"))) {
      draw_mesh_editor(*this);
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Program", nullptr, tab_flags("Program"))) {
      draw_program_view(*this);
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Scenes", nullptr, tab_flags("Scenes"))) {
      draw_scene_browser(*this);
      ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
    requested_editor_tab.clear();
  }
  ImGui::PopStyleVar();
  ImGui::EndChild();
  ImGui::EndGroup();
  ImGui::PopStyleVar();
  ImGui::End();

  if (show_help) {
    ImGui::SetNextWindowSize(ImVec2(em(38), 0), ImGuiCond_Appearing);
    ImGui::Begin("Shortcuts", &show_help, ImGuiWindowFlags_NoCollapse);
    for (const auto& [keys, what] : kShortcuts) {
      ImGui::TextUnformatted(keys);
      ImGui::SameLine(em(13));
      ImGui::TextDisabled("%s", what);
    }
    ImGui::End();
  }
}

}  // namespace shardscope::ui
