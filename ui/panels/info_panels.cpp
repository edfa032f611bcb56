// Program view (last traced program, collectives) and the scene browser.
#include <imgui.h>

#include <filesystem>

#include "ui/explorer.h"
#include "ui/panels/widgets.h"

namespace shardscope::ui {

void draw_program_view(Explorer& explorer) {
  const auto& program = explorer.snapshot->program;
  if (!program) {
    ImGui::TextDisabled("No program yet: run a jax.jit or shard_map function.");
    return;
  }
  ImGui::Text("Last program: %s", program->name.c_str());
  ImGui::PushFont(explorer.fonts.mono);
  ImGui::BeginChild("##program_text", ImVec2(0, ImGui::GetContentRegionAvail().y * 0.6f), true,
                    ImGuiWindowFlags_HorizontalScrollbar);
  ImGui::TextUnformatted(program->text.c_str());
  ImGui::EndChild();
  ImGui::PopFont();
  if (program->collectives.empty()) {
    ImGui::TextDisabled("No collectives: every device computed on its own shards.");
    return;
  }
  if (ImGui::BeginTable("##collectives", 4,
                        ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY |
                            ImGuiTableFlags_Resizable)) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("Collective");
    ImGui::TableSetupColumn("Axes");
    ImGui::TableSetupColumn("Bytes sent/device");
    ImGui::TableSetupColumn("Origin");
    ImGui::TableHeadersRow();
    for (const CollectiveRecord& record : program->collectives) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(collective_name(record.kind).c_str());
      ImGui::TableNextColumn();
      std::string axes;
      for (const std::string& axis : record.axes) axes += (axes.empty() ? "" : ", ") + axis;
      ImGui::TextUnformatted(axes.c_str());
      ImGui::TableNextColumn();
      const int64_t most =
          record.bytes_sent.empty() ? 0 : *std::max_element(record.bytes_sent.begin(), record.bytes_sent.end());
      ImGui::Text("%lld", static_cast<long long>(most));
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(record.origin.c_str());
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", record.summary().c_str());
    }
    ImGui::EndTable();
  }
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
