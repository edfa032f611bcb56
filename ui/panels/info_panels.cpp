// Program view: the last traced program, its values and collectives.
#include <imgui.h>

#include <algorithm>

#include "cost/program_cost.h"
#include "ui/explorer.h"
#include "ui/model/program_table.h"
#include "ui/model/timeline_view.h"
#include "ui/panels/grid_draw.h"
#include "ui/panels/widgets.h"

namespace shardscope::ui {

namespace {

constexpr ImGuiTableFlags kTableFlags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                        ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable |
                                        ImGuiTableFlags_SizingStretchProp;

// Selecting a row asks the Why panel why that value is laid out as it is.
void values_table(const std::vector<ValueRow>& values, float height, int& selected) {
  if (!ImGui::BeginTable("##program_values", 5, kTableFlags, ImVec2(0, height))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("Value", ImGuiTableColumnFlags_WidthStretch, 0.7f);
  ImGui::TableSetupColumn("Op", ImGuiTableColumnFlags_WidthStretch, 1.4f);
  ImGui::TableSetupColumn("Type", ImGuiTableColumnFlags_WidthStretch, 1.2f);
  ImGui::TableSetupColumn("Sharding", ImGuiTableColumnFlags_WidthStretch, 1.8f);
  ImGui::TableSetupColumn("Per device", ImGuiTableColumnFlags_WidthStretch, 1.2f);
  ImGui::TableHeadersRow();
  for (std::size_t r = 0; r < values.size(); ++r) {
    const ValueRow& row = values[r];
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    const bool chosen = selected == static_cast<int>(r);
    if (ImGui::Selectable((row.name + "##value" + std::to_string(r)).c_str(), chosen,
                          ImGuiSelectableFlags_SpanAllColumns)) {
      selected = chosen ? -1 : static_cast<int>(r);
    }
    for (const std::string* cell : {&row.op, &row.type, &row.spec, &row.local_type}) {
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(cell->c_str());
    }
  }
  ImGui::EndTable();
}

void text_box(const char* id, const std::string& text, float height, ImFont* mono) {
  ImGui::PushFont(mono);
  ImGui::BeginChild(id, ImVec2(0, height), true, ImGuiWindowFlags_HorizontalScrollbar);
  ImGui::TextUnformatted(text.c_str());
  ImGui::EndChild();
  ImGui::PopFont();
}

// The estimate's schedule per device, the picture `shardscope explain --timeline` writes: a serial/overlapped toggle,
// a legend, then one lane per device (compute track over communication track); hovering names a segment.
void timeline_view(Explorer& explorer, const ProgramExplanation& explanation, float height) {
  ImGui::BeginChild("##program_timeline", ImVec2(0, height), true, ImGuiWindowFlags_HorizontalScrollbar);
  if (ImGui::RadioButton("Serial", !explorer.timeline_overlapped)) explorer.timeline_overlapped = false;
  ImGui::SameLine();
  if (ImGui::RadioButton("Overlapped", explorer.timeline_overlapped)) explorer.timeline_overlapped = true;
  const Schedule schedule = explorer.timeline_overlapped ? Schedule::kOverlapped : Schedule::kSerial;
  const float scale = explorer.ui_scale;
  TimelineViewOptions options;
  options.label_width *= scale;
  options.track_height *= scale;
  options.lane_gap *= scale;
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const ImVec2 top = ImGui::GetCursorScreenPos();
  const float width = std::max(200.0f * scale, ImGui::GetContentRegionAvail().x - 8.0f * scale);
  const Rect box{top.x, top.y + line, top.x + width, top.y + line + 1};
  explorer.timeline_drawn = timeline_view_layout(explanation, schedule, box, options);
  const TimelineViewLayout& layout = explorer.timeline_drawn;
  ImDrawList* list = ImGui::GetWindowDrawList();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  const ImU32 muted = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  // Legend and total on the line above the lanes.
  float x = top.x;
  const float swatch = ImGui::GetFontSize() * 0.8f;
  for (const TimelineLegendEntry& entry : layout.legend) {
    const float y = top.y + (ImGui::GetFontSize() - swatch) / 2;
    list->AddRectFilled(ImVec2(x, y), ImVec2(x + swatch, y + swatch), to_imgui_color(entry.color));
    x += swatch + 4 * scale;
    list->AddText(ImVec2(x, top.y), text, entry.label.c_str());
    x += ImGui::CalcTextSize(entry.label.c_str()).x + 14 * scale;
  }
  const std::string total = (schedule == Schedule::kSerial ? "serial" : "overlapped") + std::string(" schedule: ") +
                            format_seconds(layout.timeline.total_seconds) + " per step (shardscope's estimate)";
  list->AddText(ImVec2(x, top.y), muted, total.c_str());
  for (const TimelineLane& lane : layout.lanes) {
    const float label_y = static_cast<float>(lane.compute.y1) - ImGui::GetFontSize() / 2;
    list->AddText(ImVec2(top.x, label_y), text, lane.label.c_str());
    list->AddRect(ImVec2(static_cast<float>(lane.compute.x0), static_cast<float>(lane.compute.y0)),
                  ImVec2(static_cast<float>(lane.communication.x1), static_cast<float>(lane.communication.y1)), muted);
  }
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  // Index of the hovered segment; segments.size() when none.
  std::size_t hit = layout.segments.size();
  if (ImGui::IsWindowHovered()) hit = timeline_hit(layout, mouse.x, mouse.y).value_or(hit);
  for (std::size_t i = 0; i < layout.segments.size(); ++i) {
    const TimelineSegment& segment = layout.segments[i];
    const ImVec2 a(static_cast<float>(segment.rect.x0), static_cast<float>(segment.rect.y0));
    const ImVec2 b(std::max(a.x + 1.0f, static_cast<float>(segment.rect.x1)), static_cast<float>(segment.rect.y1));
    list->AddRectFilled(a, b, to_imgui_color(timeline_color(segment.interval.category)));
    if (hit == i) list->AddRect(a, b, IM_COL32(255, 255, 255, 255), 0, 0, 2.0f);
    const std::string& label = segment.interval.label;
    if (ImGui::CalcTextSize(label.c_str()).x + 6 * scale < b.x - a.x) {
      list->AddText(ImVec2(a.x + 3 * scale, a.y + ((b.y - a.y) - ImGui::GetFontSize()) / 2),
                    IM_COL32(255, 255, 255, 255), label.c_str());
    }
  }
  ImGui::Dummy(ImVec2(width, line + static_cast<float>(layout.height)));
  if (hit < layout.segments.size()) ImGui::SetTooltip("%s", layout.segments[hit].tooltip.c_str());
  ImGui::EndChild();
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
  const char* modes[] = {"Jaxpr", "Values", "Lowered", "Explain", "Timeline"};
  for (int mode = 0; mode < 5; ++mode) {
    const bool unavailable = (mode == 1 && program->values.empty()) || (mode == 2 && program->lowered.empty()) ||
                             (mode == 3 && program->explain.empty()) || (mode == 4 && !program->explanation);
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
  // The Why panel (when the program was priced) shares the space below the view with the collectives table.
  // A question asked (a collective or a value selected) gives the answer more room.
  const bool asking = explorer.animation.record.has_value() || explorer.why.value_row >= 0;
  const float view_share = program->compiled ? (asking ? 0.35f : 0.5f) : (program->collectives.empty() ? 0.85f : 0.6f);
  const float height = ImGui::GetContentRegionAvail().y * view_share;
  const int mode = explorer.program_mode;
  if (mode != 4) explorer.timeline_drawn = {};
  if (mode == 1 && !program->values.empty()) {
    values_table(program->values, height, explorer.why.value_row);
  } else if (mode == 2 && !program->lowered.empty()) {
    text_box("##program_lowered", program->lowered, height, explorer.fonts.mono);
  } else if (mode == 3 && !program->explain.empty()) {
    // shardscope's estimate, the same rows `shardscope explain` prints: why each collective runs and what it costs.
    text_box("##program_explain", program->explain, height, explorer.fonts.mono);
  } else if (mode == 4 && program->explanation) {
    timeline_view(explorer, *program->explanation, height);
  } else {
    text_box("##program_text", program->text, height, explorer.fonts.mono);
  }
  if (!program->compiled_summary.empty()) {
    ImGui::TextUnformatted(program->compiled_summary.c_str());
  } else if (program->collectives.empty()) {
    ImGui::TextDisabled("No collectives: every device computed on its own shards.");
  }
  if (program->collectives.empty()) {
    draw_why_panel(explorer, *program);
    return;
  }
  animation_controls(explorer, program->collectives.size());
  // With a Why panel below, the table keeps part of the space; without one it takes the rest.
  const float table_height = program->compiled ? ImGui::GetContentRegionAvail().y * (asking ? 0.35f : 0.7f) : 0.0f;
  if (!ImGui::BeginTable("##collectives", 6, kTableFlags, ImVec2(0, table_height))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("Collective", ImGuiTableColumnFlags_WidthStretch, 1.1f);
  ImGui::TableSetupColumn("Axes", ImGuiTableColumnFlags_WidthStretch, 0.8f);
  ImGui::TableSetupColumn("Device groups", ImGuiTableColumnFlags_WidthStretch, 2.0f);
  header_width_column("Sent/device");
  header_width_column("Received/device");
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
  draw_why_panel(explorer, *program);
}

}  // namespace shardscope::ui
