// Program view (last traced program, collectives) and the scene browser.
#include <imgui.h>

#include <filesystem>

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
    ImGui::Selectable((row.kind + "##" + std::to_string(r)).c_str(), false, ImGuiSelectableFlags_SpanAllColumns);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", program->collectives[r].summary().c_str());
    for (const std::string* cell : {&row.axes, &row.groups, &row.sent, &row.received, &row.origin}) {
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(cell->c_str());
    }
  }
  ImGui::EndTable();
}

void draw_scene_browser(Explorer& explorer) {
  SceneState& scene = explorer.scene;
  ImGui::BeginChild("##scene_files", ImVec2(ImGui::GetContentRegionAvail().x * 0.3f, 0), true);
  ImGui::TextDisabled("%s/", explorer.scenes_dir.c_str());
  for (const std::string& path : scene.browser) {
    const std::string name = std::filesystem::path(path).filename().string();
    if (ImGui::Selectable(name.c_str(), path == scene.path)) explorer.open_scene(path);
  }
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("##scene_cells", ImVec2(0, 0), true);
  if (scene.path.empty()) {
    ImGui::TextDisabled("Pick a scene, or File > Open a .py (# %%%% cells) or .ipynb.");
    ImGui::EndChild();
    return;
  }
  ImGui::TextUnformatted(scene.path.c_str());
  if (!scene.error.empty()) wrapped_colored_text(current_theme().error, scene.error.c_str());
  ImGui::BeginDisabled(!explorer.idle());
  if (ImGui::Button("Run all")) explorer.run_scene_cells(false);
  ImGui::SameLine();
  if (ImGui::Button("Restart and run all")) explorer.run_scene_cells(true);
  ImGui::EndDisabled();
  int number = 0;
  for (const NotebookCell* cell : scene.notebook.code_cells()) {
    ImGui::PushID(++number);
    ImGui::Separator();
    if (ImGui::SmallButton("Run")) explorer.run(cell->source, false);
    ImGui::SameLine();
    ImGui::PushFont(explorer.fonts.mono);
    ImGui::TextUnformatted(cell->source.c_str());
    ImGui::PopFont();
    ImGui::PopID();
  }
  ImGui::EndChild();
}

}  // namespace shardscope::ui
