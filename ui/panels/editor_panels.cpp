// Variables table, spec editor and mesh editor: they read the snapshot and act through Explorer's actions.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <numeric>

#include "base/error.h"
#include "base/python_format.h"
#include "device/presets.h"
#include "ui/explorer.h"
#include "ui/model/param_tree.h"
#include "ui/model/program_table.h"
#include "ui/panels/widgets.h"

namespace shardscope::ui {
namespace {

// The spec and mesh shape in a few characters; the full repr is the row's tooltip.
std::string short_sharding(const VariableInfo& info, const JaxProfile& profile) {
  if (!info.sharding) return "-";
  if (const auto* named = std::get_if<NamedSharding>(&*info.sharding)) {
    std::string axes;
    for (std::size_t a = 0; a < named->mesh.axis_names().size(); ++a) {
      axes += (a == 0 ? "" : ",") + named->mesh.axis_names()[a] + "=" + std::to_string(named->mesh.axis_sizes()[a]);
    }
    std::string text = named->spec.repr(profile) + " on {" + axes + "}";
    if (named->memory_kind && named->memory_kind != default_memory_kind(named->mesh.platform(), profile)) {
      text += " " + *named->memory_kind;
    }
    return text;
  }
  return "device " + std::to_string(std::get<SingleDeviceSharding>(*info.sharding).device.id);
}

std::optional<Mesh> editor_mesh(const Explorer& explorer, const VariableInfo& info) {
  if (info.sharding) {
    if (const auto* named = std::get_if<NamedSharding>(&*info.sharding)) return named->mesh;
  }
  if (!explorer.snapshot->meshes.empty()) return explorer.snapshot->meshes.front().mesh;
  return std::nullopt;
}

void error_text(const SpecCheck& check) {
  wrapped_colored_text(current_theme().error, (check.error_type + ": " + check.error).c_str());
}

// The notation bar: one field per notation; Enter re-shards through the same path as Apply, an error shows under
// its field and changes nothing.
void draw_notation_bar(Explorer& explorer, const VariableInfo& info) {
  NotationBar& bar = explorer.notations;
  if (bar.array_name != info.name || bar.rows.empty()) return;
  ImGui::Separator();
  ImGui::TextDisabled("Notations");
  ImGui::SameLine();
  help_marker("The sharding in each notation. Edit any of them and press Enter to re-shard the array.");
  const float label_width = em(7.5f);
  for (NotationRow& row : bar.rows) {
    ImGui::PushID(static_cast<int>(row.kind));
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(std::string(notation_kind_title(row.kind)).c_str());
    ImGui::SameLine(label_width);
    ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x);
    ImGui::PushFont(explorer.fonts.mono);
    const bool enter = ImGui::InputText("##notation", &row.text, ImGuiInputTextFlags_EnterReturnsTrue);
    ImGui::PopFont();
    if (enter && explorer.idle()) (void)explorer.apply_notation(info.name, row.kind, std::string(row.text));
    if (row.kind == NotationKind::kShardy && !bar.shardy_mesh.empty()) {
      ImGui::SetCursorPosX(ImGui::GetCursorPosX() + label_width);
      ImGui::PushFont(explorer.fonts.mono);
      ImGui::TextDisabled("%s", bar.shardy_mesh.c_str());
      ImGui::PopFont();
    }
    if (!row.error.empty()) wrapped_colored_text(current_theme().error, row.error.c_str());
    ImGui::PopID();
  }
}

// A pytree's rows under one collapsible root: groups fold, arrays select onto the canvas.
template <typename ArrayColumns>
void draw_tree_rows(Explorer& explorer, const TreeInfo& tree, const ArrayColumns& array_columns) {
  ImGui::PushID(tree.name.c_str());
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  const bool open = ImGui::TreeNodeEx("##root", ImGuiTreeNodeFlags_SpanFullWidth | ImGuiTreeNodeFlags_DefaultOpen, "%s",
                                      tree.name.c_str());
  ImGui::TableNextColumn();
  std::string summary = tree.type_name + " (" + std::to_string(tree.leaves.size() + tree.omitted_leaves) + " arrays";
  if (tree.omitted_leaves > 0) summary += ", first " + std::to_string(tree.leaves.size()) + " listed";
  ImGui::TextDisabled("%s)", summary.c_str());
  ImGui::TableNextColumn();
  ImGui::TableNextColumn();
  ImGui::TextDisabled("%s", per_device_bytes_text(tree_bytes_per_device(tree)).c_str());
  if (open) {
    const std::vector<TreeRow> rows = tree_rows(tree);
    std::vector<std::size_t> open_group_ends;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      while (!open_group_ends.empty() && open_group_ends.back() <= r) {
        ImGui::TreePop();
        open_group_ends.pop_back();
      }
      const TreeRow& row = rows[r];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      if (row.is_leaf) {
        const VariableInfo& info = tree.leaves[row.leaf];
        ImGuiTreeNodeFlags leaf_flags =
            ImGuiTreeNodeFlags_Leaf | ImGuiTreeNodeFlags_NoTreePushOnOpen | ImGuiTreeNodeFlags_SpanFullWidth;
        if (info.name == explorer.selected) leaf_flags |= ImGuiTreeNodeFlags_Selected;
        ImGui::TreeNodeEx(row.id.c_str(), leaf_flags, "%s", row.label.c_str());
        if (ImGui::IsItemClicked()) explorer.select(info.name);
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", info.name.c_str());
        array_columns(info);
        continue;
      }
      ImGuiTreeNodeFlags group_flags = ImGuiTreeNodeFlags_SpanFullWidth;
      if (row.depth < 2) group_flags |= ImGuiTreeNodeFlags_DefaultOpen;
      const bool group_open = ImGui::TreeNodeEx(row.id.c_str(), group_flags, "%s", row.label.c_str());
      ImGui::TableNextColumn();
      ImGui::TextDisabled("%zu %s", row.leaf_count, row.leaf_count == 1 ? "array" : "arrays");
      ImGui::TableNextColumn();
      ImGui::TableNextColumn();
      ImGui::TextDisabled("%s", per_device_bytes_text(row.bytes_per_device).c_str());
      if (group_open) {
        open_group_ends.push_back(row.end);
      } else {
        r = row.end - 1;  // its rows stay folded
      }
    }
    for (std::size_t k = 0; k < open_group_ends.size(); ++k) ImGui::TreePop();
    ImGui::TreePop();
  }
  ImGui::PopID();
}

}  // namespace

void draw_variables(Explorer& explorer) {
  const auto& variables = explorer.snapshot->variables;
  const auto& trees = explorer.snapshot->trees;
  if (variables.empty() && trees.empty()) {
    ImGui::TextDisabled("No arrays yet: run a cell that creates one.");
    return;
  }
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_Resizable | ImGuiTableFlags_SizingStretchProp;
  if (!ImGui::BeginTable("##variables", 4, flags)) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  // A tree's rows are indented: its name column needs the room.
  ImGui::TableSetupColumn("Name", ImGuiTableColumnFlags_WidthStretch, trees.empty() ? 0.8f : 1.6f);
  ImGui::TableSetupColumn("Type", ImGuiTableColumnFlags_WidthStretch, 1.6f);
  ImGui::TableSetupColumn("Sharding", ImGuiTableColumnFlags_WidthStretch, 2.6f);
  header_width_column("Bytes/device");
  ImGui::TableHeadersRow();
  const JaxProfile& profile = explorer.snapshot->profile;
  const auto array_columns = [&](const VariableInfo& info) {
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(info.type_text.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(short_sharding(info, profile).c_str());
    if (ImGui::IsItemHovered() && !info.sharding_text.empty()) {
      const std::string tip =
          info.annotation.empty() ? info.sharding_text : info.annotation + "\n" + info.sharding_text;
      ImGui::SetTooltip("%s", tip.c_str());
    }
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(per_device_bytes_text(info.bytes_per_device).c_str());
  };
  for (const VariableInfo& info : variables) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    const bool chosen = info.name == explorer.selected;
    if (ImGui::Selectable(info.name.c_str(), chosen, ImGuiSelectableFlags_SpanAllColumns)) explorer.select(info.name);
    array_columns(info);
  }
  ImGui::PushStyleVar(ImGuiStyleVar_IndentSpacing, ImGui::GetFontSize() * 0.75f);
  for (const TreeInfo& tree : trees) draw_tree_rows(explorer, tree, array_columns);
  ImGui::PopStyleVar();
  ImGui::EndTable();
}

void draw_spec_editor(Explorer& explorer) {
  SpecEditorState& spec = explorer.spec;
  const VariableInfo* info = explorer.variable(explorer.selected);
  if (info == nullptr || !info->sharding) {
    ImGui::TextDisabled("Select an array in Variables to edit its sharding.");
    return;
  }
  const std::optional<Mesh> mesh = editor_mesh(explorer, *info);
  ImGui::Text("%s  %s", info->name.c_str(), info->type_text.c_str());
  if (!mesh) {
    ImGui::TextDisabled("No mesh in the session: create one in the Mesh tab.");
    return;
  }
  ImGui::SameLine();
  ImGui::TextDisabled("on %s", mesh->str(explorer.snapshot->profile).c_str());
  SpecDraft& draft = spec.draft;
  const std::size_t rank = info->aval.shape.size();
  if (draft.dims.size() < rank) draft.dims.resize(rank);
  bool edited = false;
  for (std::size_t d = 0; d < draft.dims.size(); ++d) {
    ImGui::PushID(static_cast<int>(d));
    ImGui::AlignTextToFramePadding();
    if (d < rank)
      ImGui::Text("dim %zu (%lld)", d, static_cast<long long>(info->aval.shape[d]));
    else
      ImGui::TextDisabled("dim %zu (extra)", d);
    for (const std::string& axis : mesh->axis_names()) {
      ImGui::SameLine();
      auto& axes = draft.dims[d];
      const auto found = std::find(axes.begin(), axes.end(), axis);
      const bool on = found != axes.end();
      if (on) ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyleColorVec4(ImGuiCol_ButtonActive));
      const std::string label = axis + " (" + std::to_string(mesh->axis_size(axis)) + ")";
      if (ImGui::Button(label.c_str())) {
        if (on)
          axes.erase(found);
        else
          axes.push_back(axis);  // clicking order is the tuple's major-to-minor order
        edited = true;
      }
      if (on) ImGui::PopStyleColor();
    }
    ImGui::SameLine();
    ImGui::TextDisabled("-> %s", SpecEntry::of_axes(draft.dims[d]).repr().c_str());
    if (!spec.check.ok() && spec.check.error_dim == static_cast<int>(d)) error_text(spec.check);
    ImGui::PopID();
  }
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Spec");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x * 0.55f);
  const bool typed_enter = ImGui::InputText("##spec", &spec.spec_text, ImGuiInputTextFlags_EnterReturnsTrue);
  const bool typed = ImGui::IsItemEdited();
  ImGui::SameLine();
  const Device first = mesh->devices().front();
  const std::vector<std::string> kinds = addressable_memory_kinds(first);
  std::string kind_label = draft.memory_kind.value_or("default");
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x);
  if (ImGui::BeginCombo("##memory", ("memory: " + kind_label).c_str())) {
    if (ImGui::Selectable("default", !draft.memory_kind)) {
      draft.memory_kind.reset();
      edited = true;
    }
    for (const std::string& kind : kinds) {
      if (ImGui::Selectable(kind.c_str(), draft.memory_kind == kind)) {
        draft.memory_kind = kind;
        edited = true;
      }
    }
    ImGui::EndCombo();
  }
  if (typed) {
    // The text box and the buttons edit the same draft; a half-typed spec just shows its error.
    try {
      const std::optional<std::string> kind = draft.memory_kind;
      draft = SpecDraft::from_spec(parse_partition_spec(spec.spec_text), rank);
      draft.memory_kind = kind;
      spec.check = check_spec(info->aval.shape, *mesh, draft, explorer.snapshot->profile);
    } catch (const Error& error) {
      spec.check = {};
      spec.check.error_type = error.python_type();
      spec.check.error = error.what();
    }
  }
  if (edited) {
    spec.spec_text = spec_call_text(draft.spec(), "P");
    spec.check = check_spec(info->aval.shape, *mesh, draft, explorer.snapshot->profile);
  }
  if (!spec.check.ok() && !spec.check.error.empty() && spec.check.error_dim < 0) error_text(spec.check);
  const std::string line = device_put_line(info->name, mesh_expression(info->name, *mesh, explorer.snapshot->meshes),
                                           draft, explorer.snapshot->names, !info->annotation.empty());
  ImGui::PushFont(explorer.fonts.mono);
  ImGui::TextDisabled("%s", line.c_str());
  ImGui::PopFont();
  const bool invalid = !spec.check.error.empty() && !spec.check.ok();
  ImGui::BeginDisabled(invalid || !explorer.idle());
  const bool apply = ImGui::Button("Apply") || (typed_enter && !invalid);
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (ImGui::Button("Reset")) {
    draft = SpecDraft::from_sharding(*info->sharding, rank, explorer.snapshot->profile);
    spec.spec_text = spec_call_text(draft.spec(), "P");
    spec.check = {};
  }
  if (apply) (void)explorer.apply_spec(info->name, SpecDraft(draft));
  if (!spec.status.empty()) {
    ImGui::SameLine();
    ImGui::TextColored(current_theme().ok, "%s", spec.status.c_str());
  }
  draw_notation_bar(explorer, *info);
}

namespace {

void draw_preset_switch(Explorer& explorer, const SessionSnapshot& snapshot, MeshEditorState& state) {
  ImGui::Text("Devices: %s (%zu)", snapshot.device_preset.c_str(), snapshot.devices.size());
  ImGui::SameLine();
  help_marker(
      "Another preset (cpu:N, gpu:N, tpu-v4-8, tpu-v5e-16, ...) restarts the session on those devices: the "
      "namespace is cleared, as a notebook restart would.");
  if (state.preset_shown != snapshot.device_preset) {
    state.preset_text = snapshot.device_preset;  // the session changed devices: show what it runs on now
    state.preset_shown = snapshot.device_preset;
  }
  ImGui::SetNextItemWidth(em(11));
  ImGui::InputText("##preset", &state.preset_text);
  ImGui::SameLine();
  const bool busy = !explorer.idle();
  if (busy) ImGui::BeginDisabled();
  if (ImGui::Button("Switch devices...")) {
    const PresetSwitch check = switch_device_preset(state.preset_text);
    state.preset_error = check.error;
    if (check.error.empty()) ImGui::OpenPopup("Switch devices?");
  }
  if (busy) ImGui::EndDisabled();
  if (!state.preset_error.empty()) wrapped_colored_text(current_theme().error, state.preset_error.c_str());
  if (ImGui::BeginPopupModal("Switch devices?", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    ImGui::Text("Restart on %s? Every variable in the session is cleared.", state.preset_text.c_str());
    if (ImGui::Button("Switch")) {
      state.preset_error = explorer.switch_devices(state.preset_text);
      ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
}

void draw_meshes_and_builder(Explorer& explorer, const SessionSnapshot& snapshot, MeshEditorState& state) {
  if (ImGui::TreeNode("Meshes in the session")) {
    for (const MeshInfo& info : snapshot.meshes) {
      ImGui::BulletText("%s = %s", info.name.empty() ? "(unnamed)" : info.name.c_str(),
                        info.mesh.str(snapshot.profile).c_str());
      std::string ids;
      for (std::size_t i = 0; i < info.mesh.devices().size(); ++i) {
        const int64_t last = info.mesh.axis_sizes().empty() ? 1 : info.mesh.axis_sizes().back();
        ids += std::to_string(info.mesh.devices()[i].id);
        ids += (last > 0 && (i + 1) % static_cast<std::size_t>(last) == 0) ? "\n" : " ";
      }
      ImGui::Indent();
      ImGui::PushFont(explorer.fonts.mono);
      ImGui::TextDisabled("device order:\n%s", ids.c_str());
      ImGui::PopFont();
      ImGui::Unindent();
    }
    ImGui::TreePop();
  }
  ImGui::Separator();
  MeshDraft& draft = state.draft;
  if (!state.initialized) {
    draft.axis_names = {"x", "y"};
    draft.axis_sizes = {2, static_cast<int64_t>(std::max<std::size_t>(1, snapshot.devices.size() / 2))};
    draft.axis_types = {AxisType::kExplicit, AxisType::kExplicit};
    state.initialized = true;
  }
  bool edited = false;
  ImGui::SetNextItemWidth(em(8));
  edited |= ImGui::InputText("variable", &draft.variable);
  for (std::size_t a = 0; a < draft.axis_names.size(); ++a) {
    ImGui::PushID(static_cast<int>(a));
    ImGui::SetNextItemWidth(em(5.5f));
    edited |= ImGui::InputText("##name", &draft.axis_names[a]);
    ImGui::SameLine();
    int size = static_cast<int>(draft.axis_sizes[a]);
    ImGui::SetNextItemWidth(em(7));
    if (ImGui::InputInt("##size", &size)) {
      draft.axis_sizes[a] = std::max(1, size);
      edited = true;
    }
    ImGui::SameLine();
    int type = static_cast<int>(draft.axis_types[a]);
    ImGui::SetNextItemWidth(em(7.5f));
    if (ImGui::Combo("##type", &type, "Auto\0Explicit\0Manual\0")) {
      draft.axis_types[a] = static_cast<AxisType>(type);
      edited = true;
    }
    ImGui::SameLine();
    if (ImGui::SmallButton("remove") && draft.axis_names.size() > 1) {
      draft.axis_names.erase(draft.axis_names.begin() + static_cast<std::ptrdiff_t>(a));
      draft.axis_sizes.erase(draft.axis_sizes.begin() + static_cast<std::ptrdiff_t>(a));
      draft.axis_types.erase(draft.axis_types.begin() + static_cast<std::ptrdiff_t>(a));
      edited = true;
    }
    if (!state.check.ok() && state.check.error_axis == static_cast<int>(a)) {
      wrapped_colored_text(current_theme().error, state.check.error.c_str());
    }
    ImGui::PopID();
  }
  if (ImGui::SmallButton("add axis")) {
    draft.axis_names.push_back(std::string(1, static_cast<char>('x' + draft.axis_names.size() % 3)));
    draft.axis_sizes.push_back(1);
    draft.axis_types.push_back(AxisType::kExplicit);
    edited = true;
  }
  if (edited || !state.check.ok()) state.check = check_mesh(draft, snapshot.devices, snapshot.profile);
  if (!state.check.ok() && state.check.error_axis < 0) {
    wrapped_colored_text(current_theme().error, (state.check.error_type + ": " + state.check.error).c_str());
  }
  ImGui::PushFont(explorer.fonts.mono);
  ImGui::TextDisabled("%s", make_mesh_line(draft).c_str());
  ImGui::PopFont();
  ImGui::BeginDisabled(!state.check.ok() || !explorer.idle());
  if (ImGui::Button("Create mesh")) (void)explorer.create_mesh(draft);
  ImGui::EndDisabled();
}

}  // namespace

void draw_mesh_editor(Explorer& explorer) {
  const SessionSnapshot& snapshot = *explorer.snapshot;
  MeshEditorState& state = explorer.mesh;
  if (!snapshot.kernel.empty()) {
    // A kernel's devices are its own (real hardware, or its simulator's preset): nothing to switch from here.
    ImGui::Text("Devices: %zu, from the attached %s", snapshot.devices.size(), snapshot.kernel.c_str());
  } else {
    draw_preset_switch(explorer, snapshot, state);
  }
  draw_meshes_and_builder(explorer, snapshot, state);
}

}  // namespace shardscope::ui
