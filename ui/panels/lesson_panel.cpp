// The Scenes tab as a lesson player (prose beside the step's grid, Next/Previous, re-run on a preset) and
// presentation mode, where the same step fills the screen in large type.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "base/error.h"
#include "ui/explorer.h"
#include "ui/panels/grid_draw.h"
#include "ui/panels/markdown_view.h"
#include "ui/panels/widgets.h"

namespace shardscope::ui {
namespace {

bool key_pressed(ImGuiKey key) { return ImGui::IsKeyPressed(ImGui::GetKeyIndex(key), true); }
bool glfw_key_pressed(int key) { return ImGui::IsKeyPressed(key, true); }

// Next: Right, Down, Page Down or Space; Previous: Left, Up or Page Up. Only while no text field has the keys.
void step_keys(Explorer& explorer) {
  const ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput || io.KeyCtrl || io.KeyAlt) return;
  if (key_pressed(ImGuiKey_RightArrow) || key_pressed(ImGuiKey_DownArrow) || key_pressed(ImGuiKey_PageDown) ||
      key_pressed(ImGuiKey_Space)) {
    explorer.lesson_next();
  }
  if (key_pressed(ImGuiKey_LeftArrow) || key_pressed(ImGuiKey_UpArrow) || key_pressed(ImGuiKey_PageUp)) {
    explorer.lesson_previous();
  }
}

// The visualize_array_sharding pictures the step's cells drew, laid out once (cached with the console's).
std::vector<const InlineVisual*> step_visuals(Explorer& explorer, std::size_t step) {
  std::vector<const InlineVisual*> found;
  if (step >= explorer.lesson.step_cells.size()) return found;
  for (const std::uint64_t id : explorer.lesson.step_cells[step]) {
    for (const ConsoleEntry& entry : explorer.console) {
      if (entry.id != id || !entry.result) continue;
      for (std::size_t i = 0; i < entry.result->output.size(); ++i) {
        const OutputSegment& part = entry.result->output[i];
        if (part.kind != OutputSegment::Kind::kVisual || !part.visual) continue;
        auto [it, inserted] = explorer.inline_visuals.try_emplace({id, i});
        if (inserted) {
          try {
            VizOptions options;
            options.small_multiples = part.visual->shape.size() != 1 && part.visual->shape.size() != 2;
            it->second.layout =
                compute_layout(part.visual->shape, part.visual->sharding, options, explorer.snapshot->profile);
            it->second.geometry = place_layout(*it->second.layout);
          } catch (const Error& error) {
            it->second.error = error.what();
          }
        }
        if (it->second.layout) found.push_back(&it->second);
      }
    }
  }
  return found;
}

// The step's text output (what it printed, its value, its error), without the pictures.
std::string step_text(const Explorer& explorer, std::size_t step, bool* running) {
  std::string text;
  *running = false;
  if (step >= explorer.lesson.step_cells.size()) return text;
  for (const std::uint64_t id : explorer.lesson.step_cells[step]) {
    for (const ConsoleEntry& entry : explorer.console) {
      if (entry.id != id) continue;
      if (!entry.result) {
        *running = true;
        continue;
      }
      for (const OutputSegment& part : entry.result->output) {
        if (part.kind != OutputSegment::Kind::kVisual) text += part.text;
      }
    }
  }
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

// The pictures stacked in a box of the given size, each fitted to its share of the height.
void draw_visuals(Explorer& explorer, const std::vector<const InlineVisual*>& visuals, ImVec2 size, float font_size) {
  if (visuals.empty() || size.x < 8 || size.y < 8) return;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::Dummy(size);
  const float share = size.y / static_cast<float>(visuals.size());
  for (std::size_t i = 0; i < visuals.size(); ++i) {
    const InlineVisual& visual = *visuals[i];
    ViewTransform view =
        ViewTransform::fit(visual.geometry.width, visual.geometry.height, size.x, share, 6, 3.0 * explorer.ui_scale);
    const ImVec2 at(origin.x, origin.y + share * static_cast<float>(i));
    GridPaint paint;
    paint.font = explorer.fonts.mono;
    paint.font_size = font_size;
    paint.border = current_theme().grid_border;
    paint.title = current_theme().text;
    draw_grid(ImGui::GetWindowDrawList(), *visual.layout, visual.geometry, view, at, paint);
  }
}

void draw_code_and_output(Explorer& explorer, const LessonStep& step, std::size_t index, ImFont* mono) {
  if (!step.code) return;
  const Theme& theme = current_theme();
  ImGui::PushFont(mono);
  ImGui::PushStyleColor(ImGuiCol_Text, theme.prompt);
  ImGui::TextUnformatted(step.code->c_str());
  ImGui::PopStyleColor();
  bool running = false;
  const std::string text = step_text(explorer, index, &running);
  if (!text.empty()) ImGui::TextUnformatted(text.c_str());
  ImGui::PopFont();
  if (running) ImGui::TextDisabled("running %c", "|/-\\"[(explorer.frame_count / 8) % 4]);
}

void toolbar(Explorer& explorer) {
  LessonState& lesson = explorer.lesson;
  const std::size_t count = lesson.lesson.steps.size();
  ImGui::BeginDisabled(lesson.cursor.at_start());
  if (ImGui::Button("< Previous")) explorer.lesson_previous();
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::BeginDisabled(lesson.cursor.ran() > 0 && lesson.cursor.at_end());
  if (ImGui::Button(lesson.cursor.ran() == 0 ? "Start >" : "Next >")) explorer.lesson_next();
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::Text("Step %zu of %zu", count == 0 ? 0 : lesson.cursor.current() + 1, count);
  ImGui::SameLine();
  if (ImGui::Button("Present (F11)")) explorer.present = true;
  // The second row: where and how the lesson runs.
  ImGui::SetNextItemWidth(em(7));
  ImGui::InputText("##preset", &lesson.preset_text);
  ImGui::SameLine();
  ImGui::BeginDisabled(!explorer.idle());
  if (ImGui::Button("Run on preset")) (void)explorer.rerun_lesson(lesson.preset_text);
  ImGui::SameLine();
  if (ImGui::Button("Run all")) explorer.run_scene_cells(false);
  ImGui::SameLine();
  if (ImGui::Button("Restart and run all")) explorer.run_scene_cells(true);
  ImGui::EndDisabled();
}

}  // namespace

void draw_scene_browser(Explorer& explorer) {
  SceneState& scene = explorer.scene;
  ImGui::BeginChild("##scene_files", ImVec2(ImGui::GetContentRegionAvail().x * 0.22f, 0), true);
  ImGui::TextDisabled("%s/", explorer.scenes_dir.c_str());
  for (const std::string& path : scene.browser) {
    // Relative to the scenes folder, so the course's lessons read "lessons/02_partition_specs.py".
    const std::string name = std::filesystem::path(path).lexically_relative(explorer.scenes_dir).string();
    if (ImGui::Selectable(name.c_str(), path == scene.path)) explorer.open_scene(path);
  }
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("##lesson", ImVec2(0, 0), true);
  if (scene.path.empty()) {
    ImGui::TextDisabled("Pick a scene or lesson, or File > Open a .py (# %%%% cells) or .ipynb.");
    ImGui::EndChild();
    return;
  }
  if (!scene.error.empty()) wrapped_colored_text(current_theme().error, scene.error.c_str());
  toolbar(explorer);
  step_keys(explorer);
  ImGui::Separator();
  const LessonState& lesson = explorer.lesson;
  if (lesson.lesson.steps.empty()) {
    ImGui::TextDisabled("This scene has no cells.");
    ImGui::EndChild();
    return;
  }
  const std::size_t index = lesson.cursor.current();
  const LessonStep& step = lesson.lesson.steps[index];
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float prose_width = std::floor(avail.x * 0.55f);
  ImGui::BeginChild("##prose", ImVec2(prose_width, 0), false);
  const float wrap = ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ScrollbarSize;
  const std::optional<Rect> heading = draw_markdown(step.blocks, explorer.fonts.prose, wrap);
  explorer.lesson_heading_rect = heading.value_or(Rect{});
  draw_code_and_output(explorer, step, index, explorer.fonts.mono);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("##step_grid", ImVec2(0, 0), false, ImGuiWindowFlags_NoScrollbar);
  const std::vector<const InlineVisual*> visuals = step_visuals(explorer, index);
  if (visuals.empty()) {
    ImGui::TextDisabled(lesson.cursor.ran() > index ? "(no grid in this step)" : "Next runs this step.");
  }
  draw_visuals(explorer, visuals, ImGui::GetContentRegionAvail(), explorer.settings.font_size * explorer.ui_scale);
  ImGui::EndChild();
  ImGui::EndChild();
}

void draw_presentation(Explorer& explorer, float width, float height) {
  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(ImVec2(width, height));
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
                                 ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus;
  const TextFonts& fonts = explorer.fonts.present;
  const float pad = fonts.body->FontSize;
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(pad, pad * 0.6f));
  ImGui::Begin("##presentation", nullptr, flags);
  ImGui::PopStyleVar();
  explorer.present_rect = {0, 0, width, height};
  const ImGuiIO& io = ImGui::GetIO();
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) explorer.present = false;
  step_keys(explorer);
  (void)glfw_key_pressed;
  (void)io;

  // The bottom line: where we are and which keys step.
  ImGui::PushFont(explorer.fonts.ui);
  const float footer = ImGui::GetTextLineHeightWithSpacing() + ImGui::GetStyle().ItemSpacing.y;
  ImGui::PopFont();
  const LessonState& lesson = explorer.lesson;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float body_height = std::max(1.0f, avail.y - footer);
  if (lesson.lesson.steps.empty()) {
    ImGui::BeginChild("##present_canvas", ImVec2(0, body_height), false, ImGuiWindowFlags_NoScrollbar);
    draw_canvas(explorer);
    ImGui::EndChild();
  } else {
    const std::size_t index = lesson.cursor.current();
    const LessonStep& step = lesson.lesson.steps[index];
    const std::vector<const InlineVisual*> visuals = step_visuals(explorer, index);
    // Prose takes the whole width when the step has no picture.
    const float prose_width = visuals.empty() ? avail.x : std::floor(avail.x * 0.5f);
    ImGui::BeginChild("##present_prose", ImVec2(prose_width, body_height), false);
    const float wrap = ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ScrollbarSize - pad * 0.5f;
    const std::optional<Rect> heading = draw_markdown(step.blocks, fonts, wrap);
    explorer.lesson_heading_rect = heading.value_or(Rect{});
    ImGui::PushTextWrapPos(0.0f);
    draw_code_and_output(explorer, step, index, fonts.mono);
    ImGui::PopTextWrapPos();
    ImGui::EndChild();
    if (!visuals.empty()) {
      ImGui::SameLine();
      ImGui::BeginChild("##present_grid", ImVec2(0, body_height), false, ImGuiWindowFlags_NoScrollbar);
      draw_visuals(explorer, visuals, ImGui::GetContentRegionAvail(), fonts.mono->FontSize);
      ImGui::EndChild();
    }
  }
  ImGui::PushFont(explorer.fonts.ui);
  ImGui::Separator();
  if (!lesson.lesson.steps.empty()) {
    ImGui::Text("%s   step %zu of %zu", lesson.lesson.title.c_str(), lesson.cursor.current() + 1,
                lesson.lesson.steps.size());
    ImGui::SameLine();
  }
  ImGui::TextDisabled("Right/Space: next   Left: previous   F11 or Esc: leave");
  ImGui::PopFont();
  ImGui::End();
}

}  // namespace shardscope::ui
