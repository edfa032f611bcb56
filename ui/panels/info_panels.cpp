// Program view: the last traced program, its values and collectives.
#include <imgui.h>

#include "ui/explorer.h"
#include "ui/model/program_table.h"
#include "ui/panels/widgets.h"

namespace shardscope::ui {

namespace {

// Each cell of a row in its column; a hover shows the whole row (long group lists are cut by the column).
void table_row(const std::vector<const std::string*>& cells) {
  ImGui::TableNextRow();
  for (const std::string* cell : cells) {
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(cell->c_str());
  }
}

constexpr ImGuiTableFlags kTableFlags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                        ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable |
                                        ImGuiTableFlags_SizingStretchProp;

void values_table(const std::vector<ValueRow>& values, float height) {
  if (!ImGui::BeginTable("##program_values", 5, kTableFlags, ImVec2(0, height))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("Value", ImGuiTableColumnFlags_WidthStretch, 0.7f);
  ImGui::TableSetupColumn("Op", ImGuiTableColumnFlags_WidthStretch, 1.4f);
  ImGui::TableSetupColumn("Type", ImGuiTableColumnFlags_WidthStretch, 1.2f);
  ImGui::TableSetupColumn("Sharding", ImGuiTableColumnFlags_WidthStretch, 1.8f);
  ImGui::TableSetupColumn("Per device", ImGuiTableColumnFlags_WidthStretch, 1.2f);
  ImGui::TableHeadersRow();
  for (const ValueRow& row : values) table_row({&row.name, &row.op, &row.type, &row.spec, &row.local_type});
  ImGui::EndTable();
}

void text_box(const char* id, const std::string& text, float height, ImFont* mono) {
  ImGui::PushFont(mono);
  ImGui::BeginChild(id, ImVec2(0, height), true, ImGuiWindowFlags_HorizontalScrollbar);
  ImGui::TextUnformatted(text.c_str());
  ImGui::EndChild();
  ImGui::PopFont();
}

// Play/pause, step and speed for the collective animated on the device view.
void animation_controls(Explorer& explorer, std::size_t collectives) {
  CollectiveAnimationState& a = explorer.animation;
  if (!a.record || *a.record >= collectives) {
    ImGui::TextDisabled("Select a collective to animate it on the Devices view.");
    return;
  }
  if (ImGui::SmallButton(a.playing ? "Pause" : "Play")) a.playing = !a.playing;
  ImGui::SameLine();
  if (ImGui::SmallButton("Step")) {
    a.playing = false;
    a.clock = 0.5;
    ++a.step;
  }
  ImGui::SameLine();
  ImGui::SetNextItemWidth(120.0f * explorer.ui_scale);
  ImGui::SliderFloat("steps/s##animation_speed", &a.speed, 0.25f, 4.0f, "%.2f");
  ImGui::SameLine();
  if (ImGui::SmallButton("Stop")) a = CollectiveAnimationState{};
}

}  // namespace

void draw_program_view(Explorer& explorer) {
  const auto& program = explorer.snapshot->program;
  if (!program) {
    ImGui::TextDisabled("No program yet: run a jax.jit or shard_map function.");
    return;
  }
  ImGui::Text("Last %s program: %s", program->kind.c_str(), program->name.c_str());
  ImGui::SameLine();
  ImGui::TextDisabled("|");
  const char* modes[] = {"Jaxpr", "Values", "Lowered", "Explain"};
  for (int mode = 0; mode < 4; ++mode) {
    const bool unavailable = (mode == 1 && program->values.empty()) || (mode == 2 && program->lowered.empty()) ||
                             (mode == 3 && program->explain.empty());
    if (unavailable) continue;
    ImGui::SameLine();
    if (ImGui::RadioButton(modes[mode], explorer.program_mode == mode)) explorer.program_mode = mode;
  }
  ImGui::SameLine();
  if (ImGui::SmallButton("Copy")) {
    std::string text = program->text + "\n" + value_table_text(program->values) + "\n" +
                       collective_table_text(collective_rows(program->collectives));
    ImGui::SetClipboardText(text.c_str());
    explorer.status_line = "program and tables copied";
  }
  const float height = ImGui::GetContentRegionAvail().y * (program->collectives.empty() ? 0.85f : 0.6f);
  const int mode = explorer.program_mode;
  if (mode == 1 && !program->values.empty()) {
    values_table(program->values, height);
  } else if (mode == 2 && !program->lowered.empty()) {
    text_box("##program_lowered", program->lowered, height, explorer.fonts.mono);
  } else if (mode == 3 && !program->explain.empty()) {
    // shardscope's estimate, the same rows `shardscope explain` prints: why each collective runs and what it costs.
    text_box("##program_explain", program->explain, height, explorer.fonts.mono);
  } else {
    text_box("##program_text", program->text, height, explorer.fonts.mono);
  }
  if (program->collectives.empty()) {
    ImGui::TextDisabled("No collectives: every device computed on its own shards.");
    return;
  }
  animation_controls(explorer, program->collectives.size());
  if (!ImGui::BeginTable("##collectives", 6, kTableFlags)) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("Collective", ImGuiTableColumnFlags_WidthStretch, 1.1f);
  ImGui::TableSetupColumn("Axes", ImGuiTableColumnFlags_WidthStretch, 0.8f);
  ImGui::TableSetupColumn("Device groups", ImGuiTableColumnFlags_WidthStretch, 2.0f);
  ImGui::TableSetupColumn("Sent/device", ImGuiTableColumnFlags_WidthStretch, 0.9f);
  ImGui::TableSetupColumn("Received/device", ImGuiTableColumnFlags_WidthStretch, 1.1f);
  ImGui::TableSetupColumn("Origin", ImGuiTableColumnFlags_WidthStretch, 1.8f);
  ImGui::TableHeadersRow();
  const std::vector<CollectiveRow> rows = collective_rows(program->collectives);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const CollectiveRow& row = rows[r];
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    // The first cell spans the row, so hovering anywhere on it shows the whole record.
    // Selecting a collective animates its data movement on the device view.
    const bool animated = explorer.animation.record == r;
    if (ImGui::Selectable((row.kind + "##" + std::to_string(r)).c_str(), animated,
                          ImGuiSelectableFlags_SpanAllColumns)) {
      explorer.animation = CollectiveAnimationState{};
      if (!animated) {
        explorer.animation.record = r;
        explorer.canvas.device_view = true;
      }
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", program->collectives[r].summary().c_str());
    for (const std::string* cell : {&row.axes, &row.groups, &row.sent, &row.received, &row.origin}) {
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(cell->c_str());
    }
  }
  ImGui::EndTable();
}

}  // namespace shardscope::ui
