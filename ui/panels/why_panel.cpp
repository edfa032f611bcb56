// The Program tab's Why panel: the chain of layout origins behind the selected collective or value, one step per
// line, each linked to the equation it names (hover shows the equation's estimate row, a click selects its value).
#include <imgui.h>

#include <algorithm>

#include "ui/explorer.h"
#include "ui/panels/widgets.h"

namespace shardscope::ui {
namespace {

// The question the selection asks, and its answer: a collective when one is selected, else a Values-view row.
bool answer_question(Explorer& explorer, const ProgramInfo& program) {
  WhyPanelState& why = explorer.why;
  std::string question;
  if (explorer.animation.record) {
    question = "collective " + std::to_string(*explorer.animation.record);
  } else if (why.value_row >= 0 && static_cast<std::size_t>(why.value_row) < program.values.size() &&
             program.values[static_cast<std::size_t>(why.value_row)].var_id >= 0) {
    question = "value " + std::to_string(program.values[static_cast<std::size_t>(why.value_row)].var_id);
  } else {
    return false;
  }
  if (why.asked_of == program.compiled.get() && why.question == question) return true;
  try {
    why.answer = explorer.animation.record
                     ? why_collective(*program.compiled, *explorer.animation.record)
                     : why_value(*program.compiled, program.values[static_cast<std::size_t>(why.value_row)].var_id);
  } catch (const std::exception& e) {
    why.answer = WhyAnswer{};
    why.answer.subject = question;
    why.answer.steps.push_back({e.what(), -1, 0});
  }
  why.asked_of = program.compiled.get();
  why.question = question;
  return true;
}

// The estimate's row for equation `equation`, as a tooltip.
void equation_tooltip(const ProgramInfo& program, int64_t equation) {
  if (!program.explanation) return;
  for (const ExplainRow& row : program.explanation->rows) {
    if (row.kind != "equation" || static_cast<int64_t>(row.equation) != equation) continue;
    ImGui::SetTooltip("eq %lld: %s -> %s, per device %s\n%s\nclick: select %%%lld in the Values view",
                      static_cast<long long>(equation), row.op.c_str(), row.sharding.c_str(), row.local_type.c_str(),
                      row.reason.empty() ? "" : ("sharding from " + row.reason).c_str(),
                      static_cast<long long>(equation));
    return;
  }
}

}  // namespace

void draw_why_panel(Explorer& explorer, const ProgramInfo& program) {
  WhyPanelState& why = explorer.why;
  why.shown.clear();
  why.drawn = Rect{};
  if (!ImGui::CollapsingHeader("Why", ImGuiTreeNodeFlags_DefaultOpen)) return;
  ImGui::SameLine();
  help_marker(
      "shardscope's explanation, read from the partition plan (not JAX output): the op that needs a "
      "collective, and where each layout came from, back to the arguments, constraints and out_shardings.");
  if (!program.compiled) {
    ImGui::TextDisabled("Why needs a jit program on a mesh.");
    return;
  }
  if (!answer_question(explorer, program)) {
    ImGui::TextDisabled("Select a collective above, or a value in the Values view, to see why.");
    return;
  }
  const WhyAnswer& answer = why.answer;
  why.shown = answer.text();
  ImGui::BeginChild("##why_steps", ImVec2(0, 0), false, ImGuiWindowFlags_HorizontalScrollbar);
  ImGui::PushFont(explorer.fonts.mono);
  ImGui::TextColored(current_theme().value, "%s", answer.subject.c_str());
  const ImVec2 top_left = ImGui::GetItemRectMin();
  for (std::size_t s = 0; s < answer.steps.size(); ++s) {
    const WhyStep& step = answer.steps[s];
    ImGui::Indent(em(1.0f) * static_cast<float>(step.depth + 1));
    ImGui::PushID(static_cast<int>(s));
    if (step.equation >= 0) {
      if (ImGui::Selectable(step.text.c_str(), false)) {
        // The link: the value this equation makes, selected in the Values view.
        const std::string name = "%" + std::to_string(step.equation);
        for (std::size_t r = 0; r < program.values.size(); ++r) {
          if (program.values[r].name != name && program.values[r].name.rfind(name + "#", 0) != 0) continue;
          why.value_row = static_cast<int>(r);
          explorer.animation = CollectiveAnimationState{};
          explorer.program_mode = 1;
          break;
        }
      }
      if (ImGui::IsItemHovered()) equation_tooltip(program, step.equation);
    } else {
      ImGui::TextUnformatted(step.text.c_str());
    }
    ImGui::PopID();
    ImGui::Unindent(em(1.0f) * static_cast<float>(step.depth + 1));
  }
  const ImVec2 bottom_right = ImGui::GetItemRectMax();
  why.drawn = {top_left.x, top_left.y, std::max(bottom_right.x, top_left.x + ImGui::GetContentRegionAvail().x),
               bottom_right.y};
  ImGui::PopFont();
  ImGui::EndChild();
}

}  // namespace shardscope::ui
