// Explorer state and actions, and the frame's fixed layout (no docking in ImGui 1.86).
#include "ui/explorer.h"

#include <imgui.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "base/error.h"
#include "sharding/notation.h"
#include "ui/model/history.h"
#include "ui/panels/widgets.h"
#include "viz/svg_renderer.h"
#include "viz/text_renderer.h"

namespace shardscope::ui {
namespace {

std::string history_path(const std::string& dir) { return dir + "/history.jsonl"; }
std::string settings_path(const std::string& dir) { return dir + "/settings.ini"; }

// The scenes and, one folder down, the course (scenes/lessons/).
std::vector<std::string> list_scenes(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code error;
  const auto add = [&](const std::filesystem::path& folder) {
    for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
      const std::string extension = entry.path().extension().string();
      if (entry.is_regular_file() && (extension == ".py" || extension == ".ipynb")) files.push_back(entry.path());
    }
  };
  add(dir);
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    if (entry.is_directory()) add(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// CPython cannot be restarted in-process; a fresh namespace is the equivalent a notebook user sees.
constexpr const char* kClearNamespace =
    "for _name in [n for n in globals() if not n.startswith('_')]:\n    del globals()[_name]\n"
    "globals().pop('_name', None)\n";

// The mesh a new spec for the array is over: its NamedSharding's, else the session's first (as the editor shows).
std::optional<Mesh> placement_mesh(const VariableInfo& info, const SessionSnapshot& snapshot) {
  if (info.sharding) {
    if (const auto* named = std::get_if<NamedSharding>(&*info.sharding)) return named->mesh;
  }
  if (!snapshot.meshes.empty()) return snapshot.meshes.front().mesh;
  return std::nullopt;
}

VizOptions canvas_options(std::size_t rank, Palette palette) {
  VizOptions options;
  options.use_color = true;
  options.palette = palette;
  options.small_multiples = rank != 1 && rank != 2;
  options.uneven_shards = true;
  return options;
}

}  // namespace

Explorer::Explorer(Session& s, std::string config, std::string scenes)
    : session(s), snapshot(s.snapshot()), config_dir(std::move(config)), scenes_dir(std::move(scenes)) {
  settings = load_settings(settings_path(config_dir));
  history.load(history_path(config_dir));
  scene.browser = list_scenes(scenes_dir);
}

Explorer::~Explorer() = default;

namespace {
// Said once per file and run: the window goes on without saving rather than repeating the warning.
void warn_unsaved(const std::string& what, const std::string& path) {
  static std::set<std::string> warned;
  if (!warned.insert(path).second) return;
  std::cerr << "shardscope: could not save " << what << " to " << path
            << " (a directory, or a folder that cannot be written); the window carries on without it\n";
}
}  // namespace

void Explorer::save_settings_and_history() const {
  if (!persist) return;
  if (!save_settings(settings, settings_path(config_dir))) warn_unsaved("window settings", settings_path(config_dir));
  if (!history.save(history_path(config_dir))) warn_unsaved("console history", history_path(config_dir));
}

std::uint64_t Explorer::run(const std::string& source, bool from_gui) {
  const std::uint64_t id = session.submit(source);
  console.push_back({id, source, from_gui, std::nullopt});
  history.add(source);
  // At once: a crash or a kill never loses what was run.
  if (persist && !history.save(history_path(config_dir))) warn_unsaved("console history", history_path(config_dir));
  scroll_console = true;
  return id;
}

void Explorer::interrupt() { session.interrupt(); }

bool Explorer::idle() const { return !session.running() && session.queued() == 0; }

const VariableInfo* Explorer::variable(const std::string& name) const {
  for (const VariableInfo& info : snapshot->variables) {
    if (info.name == name) return &info;
  }
  for (const TreeInfo& tree : snapshot->trees) {
    for (const VariableInfo& info : tree.leaves) {
      if (info.name == name) return &info;
    }
  }
  return nullptr;
}

void Explorer::poll() {
  for (CellRecord& record : session.take_finished()) {
    for (ConsoleEntry& entry : console) {
      if (entry.id == record.id) {
        entry.result = std::move(record);
        scroll_console = true;
        break;
      }
    }
  }
  const auto latest = session.snapshot();
  if (latest->revision == snapshot->revision) return;
  // Another device preset: the device view's picture has another size, so it is fitted again.
  if (latest->device_preset != snapshot->device_preset || latest->devices.size() != snapshot->devices.size()) {
    canvas.view.reset();
  }
  snapshot = latest;
  if (selected.empty() || variable(selected) == nullptr) {
    // Nothing chosen yet: the first sharded array is the most interesting one to show.
    for (const VariableInfo& info : snapshot->variables) {
      if (info.sharding && std::holds_alternative<NamedSharding>(*info.sharding)) {
        if (selected.empty()) selected = info.name;
        break;
      }
    }
  }
  refresh_canvas();
  refresh_spec_editor(false);
  refresh_notations();
}

void Explorer::select(const std::string& name) {
  selected = name;
  canvas.view.reset();
  refresh_canvas();
  refresh_spec_editor(true);
  refresh_notations();
}

void Explorer::set_palette(Palette palette) {
  settings.palette = palette;
  refresh_canvas();
}

void Explorer::refresh_canvas() {
  const bool same_array = canvas.name == selected;
  const double old_width = canvas.geometry.width;
  const double old_height = canvas.geometry.height;
  canvas.name = selected;
  canvas.layout.reset();
  canvas.geometry = {};
  canvas.error.clear();
  canvas.caption.clear();
  const VariableInfo* info = variable(selected);
  if (info == nullptr) {
    canvas.error = selected.empty() ? "No array selected." : "'" + selected + "' is not an array in the session.";
    return;
  }
  canvas.caption = info->name + ": " + info->type_text;
  if (!info->sharding) {
    canvas.error = "This value has no sharding.";
    return;
  }
  try {
    canvas.layout = compute_layout(info->aval.shape, *info->sharding,
                                   canvas_options(info->aval.shape.size(), settings.palette), snapshot->profile);
    // Grids over 8 wide or tall are drawn dense, with the mesh axes along the edges.
    canvas.geometry =
        place_layout(*canvas.layout, {.wrap_width = 1100,
                                      .dense_above = 8,
                                      .axis_names = drawn_axis_names(*info->sharding, info->aval.shape.size())});
  } catch (const Error& error) {
    canvas.error = error.python_type() + ": " + error.what();
  }
  // Keep the user's zoom while the picture keeps its size; a re-shard that changes it fits again.
  if (!same_array || canvas.geometry.width != old_width || canvas.geometry.height != old_height) canvas.view.reset();
}

void Explorer::refresh_spec_editor(bool force) {
  const VariableInfo* info = variable(selected);
  if (info == nullptr || !info->sharding) {
    spec.array_name.clear();
    return;
  }
  if (!force && spec.array_name == selected && !spec.check.ok() && !spec.check.error.empty()) return;
  spec.array_name = selected;
  spec.draft = SpecDraft::from_sharding(*info->sharding, info->aval.shape.size(), snapshot->profile);
  spec.spec_text = spec_call_text(spec.draft.spec(), "P");
  spec.check = {};
}

void Explorer::refresh_notations() {
  const VariableInfo* info = variable(selected);
  const std::optional<Mesh> array_mesh =
      info != nullptr && info->sharding ? placement_mesh(*info, *snapshot) : std::nullopt;
  if (!array_mesh) {
    notations = {};
    return;
  }
  try {
    const SpecDraft draft = SpecDraft::from_sharding(*info->sharding, info->aval.shape.size(), snapshot->profile);
    notations.sync(selected, notation_texts(info->aval, *array_mesh, draft, snapshot->profile));
    notations.shardy_mesh = shardy_mesh_notation(*array_mesh);
  } catch (const Error&) {
    notations = {};  // a layout the notations cannot print (none that JAX accepted)
  }
}

bool Explorer::apply_spec(const std::string& name, const SpecDraft& draft) {
  const VariableInfo* info = variable(name);
  spec.array_name = name;
  spec.draft = draft;
  spec.check = {};
  if (info == nullptr || !info->sharding) {
    spec.check.error_type = "NameError";
    spec.check.error = "name '" + name + "' is not an array in the session";
    status_line = spec.check.error_type + ": " + spec.check.error;
    return false;
  }
  const std::optional<Mesh> mesh_for_spec = placement_mesh(*info, *snapshot);
  if (!mesh_for_spec) {
    spec.check.error_type = "ValueError";
    spec.check.error = "no mesh in the session: create one in the Mesh tab first";
    status_line = spec.check.error;
    return false;
  }
  spec.check = check_spec(info->aval.shape, *mesh_for_spec, draft, snapshot->profile);
  if (!spec.check.ok()) {
    status_line = "Spec not applied: " + spec.check.error_type + ": " + spec.check.error;
    return false;
  }
  const std::string expression = std::holds_alternative<NamedSharding>(*info->sharding)
                                     ? mesh_expression(name, *mesh_for_spec, snapshot->meshes)
                                     : snapshot->meshes.front().name;
  const std::string line = device_put_line(name, expression, draft, snapshot->names, !info->annotation.empty());
  run(line, true);
  spec.spec_text = spec_call_text(draft.spec(), "P");
  spec.status = "Applied: " + line;
  status_line = spec.status;
  return true;
}

bool Explorer::apply_spec_text(const std::string& name, const std::string& spec_text) {
  PartitionSpec parsed;
  try {
    parsed = parse_partition_spec(spec_text);
  } catch (const Error& error) {
    spec.array_name = name;
    spec.check = {};
    spec.check.error_type = error.python_type();
    spec.check.error = error.what();
    status_line = "Spec not applied: " + spec.check.error_type + ": " + spec.check.error;
    return false;
  }
  const VariableInfo* info = variable(name);
  SpecDraft draft = SpecDraft::from_spec(parsed, info ? info->aval.shape.size() : parsed.size());
  if (spec.array_name == name) draft.memory_kind = spec.draft.memory_kind;
  spec.spec_text = spec_text;
  return apply_spec(name, draft);
}

bool Explorer::apply_notation(const std::string& name, NotationKind kind, const std::string& text) {
  const auto refuse = [&](const std::string& message) {
    if (NotationRow* row = notations.array_name == name ? notations.row(kind) : nullptr) {
      row->text = text;
      row->error = message;
    }
    status_line = "Notation not applied: " + message;
    return false;
  };
  const VariableInfo* info = variable(name);
  if (info == nullptr || !info->sharding)
    return refuse("NameError: name '" + name + "' is not an array in the session");
  const std::optional<Mesh> array_mesh = placement_mesh(*info, *snapshot);
  if (!array_mesh) return refuse("ValueError: no mesh in the session: create one in the Mesh tab first");
  SpecDraft draft;
  try {
    draft = draft_from_notation(kind, text, *array_mesh, info->aval.shape);
  } catch (const Error& error) {
    return refuse(error.python_type() + ": " + error.what());
  }
  // The array keeps its memory kind: the notations say nothing about it.
  draft.memory_kind = SpecDraft::from_sharding(*info->sharding, info->aval.shape.size(), snapshot->profile).memory_kind;
  spec.spec_text = spec_call_text(draft.spec(), "P");  // the Spec editor shows the draft, refused or applied
  if (!apply_spec(name, draft)) return refuse(spec.check.error_type + ": " + spec.check.error);
  if (NotationRow* row = notations.array_name == name ? notations.row(kind) : nullptr) {
    row->text = row->shown;  // until the cell has run; then every row shows the new sharding
    row->error.clear();
  }
  return true;
}

bool Explorer::create_mesh(const MeshDraft& draft) {
  mesh.draft = draft;
  mesh.check = check_mesh(draft, snapshot->devices, snapshot->profile);
  if (!mesh.check.ok()) {
    status_line = "Mesh not created: " + mesh.check.error_type + ": " + mesh.check.error;
    return false;
  }
  run(make_mesh_line(draft), true);
  status_line = "Created " + draft.variable;
  return true;
}

void Explorer::open_scene(const std::string& path) {
  scene.path = path;
  scene.error.clear();
  scene.notebook = {};
  lesson = {};
  try {
    scene.notebook = load_notebook(path);
    settings.last_scene = path;
    std::ifstream file(path, std::ios::binary);
    std::stringstream text;
    text << file.rdbuf();
    const bool percent_script = std::filesystem::path(path).extension() != ".ipynb";
    lesson.lesson = make_lesson(scene.notebook, percent_script, text.str());
    lesson.cursor = LessonCursor(lesson.lesson.steps.size());
    lesson.step_cells.assign(lesson.lesson.steps.size(), {});
    if (lesson.lesson.run.devices) lesson.preset_text = *lesson.lesson.run.devices;
  } catch (const Error& error) {
    scene.error = error.python_type() + ": " + error.what();
  } catch (const std::exception& error) {
    scene.error = error.what();
  }
}

std::string Explorer::switch_devices(const std::string& preset) {
  const PresetSwitch change = switch_device_preset(preset);
  if (change.error.empty()) (void)run(change.source, true);
  return change.error;
}

void Explorer::run_scene_cells(bool restart_first) {
  if (restart_first) {
    run(kClearNamespace, true);
  }
  for (const std::size_t step : lesson.cursor.run_all()) run_lesson_step(step);
}

void Explorer::run_lesson_step(std::size_t step) {
  if (step >= lesson.lesson.steps.size()) return;
  lesson.step_cells[step].clear();
  if (const auto& code = lesson.lesson.steps[step].code) lesson.step_cells[step].push_back(run(*code, false));
}

void Explorer::lesson_next() {
  for (const std::size_t step : lesson.cursor.next()) run_lesson_step(step);
}

void Explorer::lesson_previous() { lesson.cursor.previous(); }

std::string Explorer::rerun_lesson(const std::string& preset) {
  if (!preset.empty() && preset != snapshot->device_preset) {
    // Switching the preset restarts the namespace on the new devices.
    const std::string error = switch_devices(preset);
    if (!error.empty()) {
      status_line = error;
      return error;
    }
  } else {
    run(kClearNamespace, true);
  }
  for (const std::size_t step : lesson.cursor.rerun()) run_lesson_step(step);
  return "";
}

namespace {
Rgb rgb_of(ImU32 color) {
  return Rgb{static_cast<uint8_t>(color & 0xFF), static_cast<uint8_t>((color >> 8) & 0xFF),
             static_cast<uint8_t>((color >> 16) & 0xFF)};
}
}  // namespace

std::string Explorer::canvas_svg() const {
  if (!canvas.layout) return "";
  // The colours the canvas and the PNG export show: the theme's background, text and cell borders.
  const Theme& theme = current_theme();
  SvgRenderOptions options;
  if (export_caption) options.caption = canvas.caption;
  options.background = rgb_of(ImGui::ColorConvertFloat4ToU32(ImGui::GetStyle().Colors[ImGuiCol_WindowBg]));
  options.text = rgb_of(theme.text);
  options.muted_text = rgb_of(theme.muted_text);
  options.border = rgb_of(theme.grid_border);
  return render_svg(*canvas.layout, options);
}

std::string Explorer::canvas_text() const {
  const VariableInfo* info = variable(canvas.name);
  if (info == nullptr || !info->sharding) return "";
  try {
    VizOptions options = canvas_options(info->aval.shape.size(), Palette::kTab20b);
    options.use_color = false;
    return render_text(compute_layout(info->aval.shape, *info->sharding, options, snapshot->profile), {});
  } catch (const Error& error) {
    return error.python_type() + ": " + error.what() + "\n";
  }
}

}  // namespace shardscope::ui
