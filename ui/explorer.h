// The explorer window's state and actions; panels draw it, the window loop and the headless driver call it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cost/why.h"
#include "io/lesson.h"
#include "io/notebook.h"
#include "ui/model/canvas_geometry.h"
#include "ui/model/history.h"
#include "ui/model/mesh_edit.h"
#include "ui/model/settings.h"
#include "ui/model/spec_edit.h"
#include "ui/model/timeline_view.h"
#include "ui/session.h"
#include "viz/layout.h"

struct ImFont;

namespace shardscope::ui {

struct ConsoleEntry {
  std::uint64_t id = 0;
  std::string source;
  bool from_gui = false;             // written by a GUI action (shown with a marker)
  std::optional<CellRecord> result;  // absent while queued or running
};

// The selected array as the canvas draws it.
struct CanvasModel {
  std::string name;
  std::string caption;  // "x: float32[8,8]  NamedSharding(...)"
  std::optional<VizLayout> layout;
  std::string error;  // why there is no picture
  CanvasGeometry geometry;
  std::optional<ViewTransform> view;  // absent: fit on next draw
  bool device_view = false;
  std::vector<CanvasLabel> labels;  // the labels drawn last frame (screen pixels), for --stats
};

// The collective animated on the device view, chosen in the Program tab's collectives table.
struct CollectiveAnimationState {
  std::optional<std::size_t> record;  // index into the program's collectives
  int step = 0;
  bool playing = true;
  float speed = 1.0f;  // steps per second
  double clock = 0;    // fraction of the current step shown (the chunks' position along their links)
};

// The Program tab's Why panel: why the selected collective runs, or why the selected value is laid out as it is.
struct WhyPanelState {
  int value_row = -1;  // the Values view's selected row (-1: none); a selected collective comes first
  // The answer shown, kept while the question stays the same: walking the plan every frame would cost.
  const Compiled* asked_of = nullptr;
  std::string question;
  WhyAnswer answer;
  std::string shown;  // the panel's text as drawn last frame (empty: no answer), for --stats
  Rect drawn;         // where its text was drawn last frame (screen pixels; empty: none)
};

struct SpecEditorState {
  std::string array_name;  // the array the draft belongs to
  SpecDraft draft;
  std::string spec_text;  // the same spec typed as text
  SpecCheck check;
  std::string status;  // last apply's outcome
};

struct MeshEditorState {
  MeshDraft draft;
  MeshCheck check;
  bool initialized = false;
  std::string preset_text;   // the device preset typed in the editor
  std::string preset_shown;  // the session's preset when preset_text was last reset to it
  std::string preset_error;  // why it cannot be used
};

struct SceneState {
  std::string path;
  Notebook notebook;
  std::string error;
  std::vector<std::string> browser;  // files in the scenes directory
};

// The open scene as a lesson the Scenes tab and presentation mode step through.
struct LessonState {
  Lesson lesson;
  LessonCursor cursor;
  std::vector<std::vector<std::uint64_t>> step_cells;  // each step's console cells, from its latest run
  std::string preset_text;                             // the preset typed for "Run on preset"
};

// A visualize_array_sharding picture in the console, laid out once.
struct InlineVisual {
  std::optional<VizLayout> layout;
  CanvasGeometry geometry;
  std::string error;
};

// The faces lesson prose is drawn with, all of one size except the heading.
struct TextFonts {
  ImFont* body = nullptr;
  ImFont* bold = nullptr;
  ImFont* italic = nullptr;
  ImFont* mono = nullptr;
  ImFont* heading = nullptr;
};

struct Fonts {
  ImFont* ui = nullptr;
  ImFont* mono = nullptr;
  ImFont* small = nullptr;
  TextFonts prose;    // the Scenes tab
  TextFonts present;  // presentation mode: large enough for the back of a room
};

class Explorer {
 public:
  Explorer(Session& session, std::string config_dir, std::string scenes_dir);
  ~Explorer();
  Explorer(const Explorer&) = delete;
  Explorer& operator=(const Explorer&) = delete;

  // Takes finished cells and the newest snapshot; call once per frame before drawing.
  void poll();
  // Draws every panel into a window of the given size (between ImGui::NewFrame and ImGui::Render).
  void draw(float width, float height);

  // Actions: each GUI edit is a Python line run through the console, so a session replays as a script.
  std::uint64_t run(const std::string& source, bool from_gui);
  void select(const std::string& name);
  // The canvas's and exports' palette (View menu, --palette); JAX's text output keeps tab20b.
  void set_palette(Palette palette);
  // The editor's Apply: validate, then run the device_put line. False (with check.error set) when invalid.
  bool apply_spec(const std::string& name, const SpecDraft& draft);
  // The same from text, as `--apply-spec NAME "P('y', None)"` types it.
  bool apply_spec_text(const std::string& name, const std::string& spec_text);
  // A notation bar row's Enter: the text, in `kind`'s notation, re-shards through apply_spec. False (with the row's
  // error set) when it does not parse or JAX refuses the spec.
  bool apply_notation(const std::string& name, NotationKind kind, const std::string& text);
  // The mesh editor's device switch: restarts the namespace on `preset`'s devices (a replayable console cell).
  // Returns the error (ValueError naming the preset) and runs nothing when the preset is unknown.
  std::string switch_devices(const std::string& preset);
  bool create_mesh(const MeshDraft& draft);
  void open_scene(const std::string& path);
  void run_scene_cells(bool restart_first);
  // The lesson player: Next runs the next step's code the first time it is reached; Previous only moves
  // back; rerun_lesson restarts the namespace on `preset` (when not empty) and runs every step up to here.
  void lesson_next();
  void lesson_previous();
  std::string rerun_lesson(const std::string& preset);
  void interrupt();
  [[nodiscard]] bool idle() const;

  // Exports of what the canvas shows.
  [[nodiscard]] std::string canvas_svg() const;
  [[nodiscard]] std::string canvas_text() const;  // JAX's text picture (no colour)
  void save_settings_and_history() const;
  [[nodiscard]] const VariableInfo* variable(const std::string& name) const;

  Session& session;
  std::shared_ptr<const SessionSnapshot> snapshot;
  Settings settings;
  History history;
  Fonts fonts;
  std::string config_dir;
  std::string scenes_dir;

  std::vector<ConsoleEntry> console;
  std::string input;
  bool focus_input = true;
  bool scroll_console = false;
  std::vector<std::string> completion_hint;
  std::map<std::pair<std::uint64_t, std::size_t>, InlineVisual> inline_visuals;

  std::string selected;
  CanvasModel canvas;
  std::string requested_editor_tab;  // selected on the next frame, then cleared (e.g. from --editor-tab)
  SpecEditorState spec;
  NotationBar notations;  // the selected array's sharding in each notation (the Spec tab)
  MeshEditorState mesh;
  SceneState scene;
  LessonState lesson;
  bool present = false;  // presentation mode: one panel fills the window (F11, --present)
  // Interactive runs save settings and history; headless ones (screenshots, exports) leave them alone.
  bool persist = true;
  bool theme_chosen = false;    // the View menu set the theme (which then outlasts a --light run)
  bool palette_chosen = false;  // the View menu set the palette (which then outlasts a --palette run)
  std::string status_line;
  std::string export_dir = ".";
  float png_scale = 2.0f;
  bool export_caption = true;  // exports (SVG and PNG alike) carry the canvas caption above the picture
  float ui_scale = 1.0f;       // HiDPI content scale
  bool show_help = false;
  // Program view: 0 jaxpr, 1 values with shardings, 2 lowered text, 3 explain (estimates), 4 timeline of the estimate.
  int program_mode = 1;
  bool timeline_overlapped = false;   // the Timeline view shows the overlapped schedule, else the serial one
  TimelineViewLayout timeline_drawn;  // the Timeline view as laid out last frame (screen pixels), for --stats
  CollectiveAnimationState animation;
  WhyPanelState why;
  std::optional<std::string> png_request;  // the window renders the canvas offscreen after the frame
  std::string open_path;                   // File > Open's text field
  std::string svg_path = "shardscope-canvas.svg";
  std::string png_path = "shardscope-canvas.png";
  bool quit_requested = false;
  // Where the canvas was drawn last frame (screen pixels), for exports and tests.
  Rect canvas_screen_rect;
  std::string hover_text;    // the canvas tooltip shown last frame (empty: none)
  Rect lesson_heading_rect;  // the shown step's first heading, drawn last frame (screen pixels; empty: none)
  Rect present_rect;         // presentation mode's panel last frame
  std::uint64_t frame_count = 0;

 private:
  void run_lesson_step(std::size_t step);
  void refresh_canvas();
  void refresh_spec_editor(bool force);
  void refresh_notations();
};

// Panels (ui/panels/*.cpp), each drawing inside the current ImGui window.
void draw_console(Explorer& explorer);
void draw_variables(Explorer& explorer);
void draw_canvas(Explorer& explorer);
void draw_spec_editor(Explorer& explorer);
void draw_mesh_editor(Explorer& explorer);
void draw_program_view(Explorer& explorer);
// The Why panel below the Program tab's tables (ui/panels/why_panel.cpp).
void draw_why_panel(Explorer& explorer, const ProgramInfo& program);
void draw_scene_browser(Explorer& explorer);
void draw_presentation(Explorer& explorer, float width, float height);

}  // namespace shardscope::ui
