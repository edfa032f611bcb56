// The console: cells with their output (errors distinct, shard pictures inline), and the input box.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <optional>

#include "base/error.h"
#include "ui/explorer.h"
#include "ui/model/console_text.h"
#include "ui/panels/grid_draw.h"
#include "ui/panels/widgets.h"

namespace shardscope::ui {
namespace {

constexpr float kInlineHeight = 150.0f;

const InlineVisual& inline_visual(Explorer& explorer, std::uint64_t id, std::size_t segment,
                                  const VisualOutput& output) {
  auto [it, inserted] = explorer.inline_visuals.try_emplace({id, segment});
  if (inserted) {
    try {
      VizOptions options;
      options.small_multiples = output.shape.size() != 1 && output.shape.size() != 2;
      it->second.layout = compute_layout(output.shape, output.sharding, options, explorer.snapshot->profile);
      it->second.geometry = place_layout(*it->second.layout);
    } catch (const Error& error) {
      it->second.error = error.what();
    }
  }
  return it->second;
}

void draw_inline_visual(Explorer& explorer, std::uint64_t id, std::size_t segment, const OutputSegment& part) {
  const InlineVisual& visual = inline_visual(explorer, id, segment, *part.visual);
  if (!visual.layout) {
    ImGui::TextUnformatted(part.text.c_str());
    return;
  }
  // Sized like the text around it: the picture grows with the HiDPI scale.
  const float scale = explorer.ui_scale;
  const float width = std::min(ImGui::GetContentRegionAvail().x, 420.0f * scale);
  const ViewTransform fitted =
      ViewTransform::fit(visual.geometry.width, visual.geometry.height, width, kInlineHeight * scale, 4, scale);
  // Shrink the reserved height to the picture's.
  const auto height = static_cast<float>(visual.geometry.height * fitted.zoom + 8);
  ViewTransform view = fitted;
  view.pan_x = 4;
  view.pan_y = 4;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::Dummy(ImVec2(width, height));
  GridPaint paint;
  paint.font = explorer.fonts.mono;
  paint.font_size = explorer.settings.font_size * 0.9f * scale;
  paint.border = current_theme().grid_border;
  draw_grid(ImGui::GetWindowDrawList(), *visual.layout, visual.geometry, view, origin, paint);
  ImGui::PushID(static_cast<int>(segment));
  if (ImGui::SmallButton("Copy text")) ImGui::SetClipboardText(part.text.c_str());
  ImGui::SameLine();
  if (ImGui::TreeNode("JAX's text")) {
    ImGui::TextUnformatted(part.text.c_str());
    ImGui::TreePop();
  }
  ImGui::PopID();
}

void draw_entry(Explorer& explorer, const ConsoleEntry& entry, std::size_t number) {
  const Theme& theme = current_theme();
  ImGui::PushID(static_cast<int>(entry.id));
  ImGui::TextColored(entry.from_gui ? theme.gui_line : theme.prompt, entry.from_gui ? "GUI[%zu]" : "In [%zu]", number);
  ImGui::SameLine();
  ImGui::TextUnformatted(entry.source.c_str());
  if (!entry.result) {
    const bool running = explorer.session.running() == entry.id;
    ImGui::TextDisabled(running ? "running %c" : "queued", "|/-\\"[(explorer.frame_count / 8) % 4]);
    ImGui::PopID();
    return;
  }
  const CellRecord& record = *entry.result;
  for (std::size_t i = 0; i < record.output.size(); ++i) {
    const OutputSegment& part = record.output[i];
    switch (part.kind) {
      case OutputSegment::Kind::kStdout: ImGui::TextUnformatted(part.text.c_str()); break;
      case OutputSegment::Kind::kStderr: ImGui::TextColored(theme.stderr_text, "%s", part.text.c_str()); break;
      case OutputSegment::Kind::kValue: ImGui::TextColored(theme.value, "%s", part.text.c_str()); break;
      case OutputSegment::Kind::kError: ImGui::TextColored(theme.error, "%s", part.text.c_str()); break;
      case OutputSegment::Kind::kVisual: draw_inline_visual(explorer, entry.id, i, part); break;
    }
  }
  if (record.seconds > 1.0) ImGui::TextDisabled("(%.1f s)", record.seconds);
  ImGui::PopID();
}

struct InputContext {
  Explorer* explorer;
  std::optional<std::string> replacement;  // history entry to put in the box (ImGui owns its text while active)
};

int input_callback(ImGuiInputTextCallbackData* data) {
  auto* context = static_cast<InputContext*>(data->UserData);
  Explorer& explorer = *context->explorer;
  if (data->EventFlag == ImGuiInputTextFlags_CallbackAlways) {
    if (context->replacement) {
      data->DeleteChars(0, data->BufTextLen);
      data->InsertChars(0, context->replacement->c_str());
      context->replacement.reset();
    }
    return 0;
  }
  if (data->EventFlag == ImGuiInputTextFlags_CallbackCompletion) {
    const std::string text(data->Buf, static_cast<std::size_t>(data->BufTextLen));
    const auto cursor = static_cast<std::size_t>(data->CursorPos);
    const std::string stem = completion_stem(text, cursor);
    explorer.completion_hint.clear();
    if (stem.empty()) {
      data->InsertChars(data->CursorPos, "    ");
      return 0;
    }
    const std::vector<std::string> candidates = explorer.session.completions(stem);
    const std::string prefix = common_prefix(candidates);
    if (prefix.size() > stem.size()) data->InsertChars(data->CursorPos, prefix.c_str() + stem.size());
    if (candidates.size() > 1) explorer.completion_hint = candidates;
  }
  return 0;
}

}  // namespace

void draw_console(Explorer& explorer) {
  const Theme& theme = current_theme();
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const auto input_lines = static_cast<float>(std::min<std::size_t>(
      8, 1 + static_cast<std::size_t>(std::count(explorer.input.begin(), explorer.input.end(), '\n'))));
  const float input_height = line * std::max(2.0f, input_lines) + 10;
  const float hint_height = explorer.completion_hint.empty() ? 0.0f : line * 1.3f;
  const float footer = input_height + hint_height + ImGui::GetFrameHeightWithSpacing() + 6;

  ImGui::PushFont(explorer.fonts.mono);
  ImGui::BeginChild("##transcript", ImVec2(0, -footer), false, ImGuiWindowFlags_HorizontalScrollbar);
  std::size_t number = 0;
  for (const ConsoleEntry& entry : explorer.console) draw_entry(explorer, entry, ++number);
  if (explorer.scroll_console) {
    ImGui::SetScrollHereY(1.0f);
    explorer.scroll_console = false;
  }
  ImGui::EndChild();

  if (!explorer.completion_hint.empty()) {
    std::string hint;
    for (std::size_t i = 0; i < explorer.completion_hint.size() && i < 12; ++i) {
      hint += explorer.completion_hint[i] + "  ";
    }
    if (explorer.completion_hint.size() > 12) hint += "...";
    ImGui::TextDisabled("%s", hint.c_str());
  }

  // Enter runs, Shift+Enter adds a line: ImGui's multi-line box runs on Enter when told Ctrl+Enter adds
  // lines, so a Shift+Enter is handed to it as Ctrl+Enter for that one frame.
  ImGuiIO& io = ImGui::GetIO();
  const bool enter = ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Enter)) ||
                     ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_KeyPadEnter));
  const bool continue_line = enter && (io.KeyShift || needs_more_input(explorer.input));
  const bool saved_ctrl = io.KeyCtrl;
  const ImGuiKeyModFlags saved_mods = io.KeyMods;
  // KeyMods must agree with KeyCtrl (InputTextEx asserts it): a continued line's Enter crashed the window.
  if (enter) {
    io.KeyCtrl = continue_line;
    io.KeyMods = continue_line ? (io.KeyMods | ImGuiKeyModFlags_Ctrl) : (io.KeyMods & ~ImGuiKeyModFlags_Ctrl);
  }
  if (explorer.focus_input) {
    ImGui::SetKeyboardFocusHere();
    explorer.focus_input = false;
  }
  // Up/Down walk the history while the cell is one line (in a multi-line cell they move between lines);
  // ImGui 1.86 has no history callback for multi-line boxes, so the keys are read here.
  static bool input_active = false;
  InputContext context{&explorer, std::nullopt};
  if (input_active && explorer.input.find('\n') == std::string::npos) {
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_UpArrow)))
      context.replacement = explorer.history.older(explorer.input);
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_DownArrow))) context.replacement = explorer.history.newer();
  }
  const bool submitted =
      ImGui::InputTextMultiline("##input", &explorer.input, ImVec2(-1, input_height),
                                ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_CtrlEnterForNewLine |
                                    ImGuiInputTextFlags_CallbackAlways | ImGuiInputTextFlags_CallbackCompletion,
                                input_callback, &context);
  input_active = ImGui::IsItemActive();
  io.KeyCtrl = saved_ctrl;
  io.KeyMods = saved_mods;
  ImGui::PopFont();

  const bool busy = !explorer.idle();
  const bool run_clicked = ImGui::Button("Run");
  if ((submitted || run_clicked) && !explorer.input.empty()) {
    explorer.run(explorer.input, false);
    explorer.input.clear();
    explorer.completion_hint.clear();
    explorer.focus_input = true;
  } else if (submitted) {
    explorer.focus_input = true;
  }
  ImGui::SameLine();
  ImGui::BeginDisabled(!busy);
  if (ImGui::Button("Stop")) explorer.interrupt();
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (ImGui::Button("Clear")) {
    explorer.console.clear();
    explorer.inline_visuals.clear();
  }
  ImGui::SameLine();
  if (busy) {
    ImGui::TextColored(theme.stderr_text, "running%s", explorer.session.queued() > 0 ? " (+ queued)" : "");
  } else {
    ImGui::TextDisabled("Enter runs, Shift+Enter new line, Tab completes, Up/Down history");
  }
}

}  // namespace shardscope::ui
