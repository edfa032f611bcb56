// The GLFW + OpenGL 3.3 window running the explorer, and its headless driver options for scripts and tests.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ui/session.h"

namespace shardscope::ui {

struct WindowOptions {
  int width = 0;  // 0: the saved size (1600x1000 the first time)
  int height = 0;
  std::string config_dir;  // settings and history
  std::string scenes_dir = "scenes";
  // What to do on its own, in this order: open (and run) a scene, select an array, apply specs, export,
  // take a screenshot; any of screenshot/export makes the run headless (hidden window, exits when done).
  std::optional<std::string> scene;
  bool run_all = false;
  std::optional<std::string> select;
  std::vector<std::pair<std::string, std::string>> apply_specs;  // (array name, spec text)
  std::vector<std::string> console_cells;  // typed into the console and run, after the scene's cells (--console)
  // Notation bar edits after the specs: (array name, notation kind as parse_notation_kind reads it, text).
  std::vector<std::array<std::string, 3>> edit_notations;
  std::optional<double> interrupt_after;  // seconds after the cells start
  std::optional<std::string> screenshot;
  std::optional<std::string> export_svg;
  std::optional<std::string> export_png;
  // The device view with the animated collective's step as SVG (--export-animation-svg; needs animate_collective).
  std::optional<std::string> export_animation_svg;
  float png_scale = 1.0f;
  bool caption = true;               // exports carry the canvas caption (--caption / --no-caption)
  std::optional<std::string> stats;  // JSON with frame timings while cells ran
  bool device_view = false;
  std::optional<std::string> editor_tab;  // Spec, Mesh, Program or Scenes, shown once the cells ran
  std::optional<int> program_view;        // the Program tab's view: 0 jaxpr, 1 values, 2 lowered, 3 explain, 4 timeline
  bool timeline_overlapped = false;       // the Timeline view starts on the overlapped schedule (--timeline-schedule)
  std::optional<std::string> palette;     // --palette for this run: tab20b, distinct or colorblind
  // A collective of the program animated on the device view, paused at a step (--animate-collective N[:STEP]).
  std::optional<std::pair<int, int>> animate_collective;
  // A value of the program's Values view (%arg0, %3, ...) whose layout the Why panel explains (--why-value NAME).
  std::optional<std::string> why_value;
  std::optional<std::string> switch_devices;  // a device preset to switch to once the cells ran
  bool light_theme = false;
  bool dark_theme = false;                  // --dark: the dark theme for this run, whatever was saved
  bool present = false;                     // presentation mode from the start (--present)
  int lesson_steps = 0;                     // Next pressed this many times on the open lesson (--lesson-steps)
  std::optional<std::string> rerun_lesson;  // then the lesson re-run up to that step on this preset (--rerun-on)
  // Headless runs leave the saved settings and history alone unless asked (--persist); interactive runs save.
  bool persist = false;
  // The pointer once the steps are done, as fractions of the canvas (0,0 top left .. 1,1 bottom right): hover
  // tooltips and wheel zoom (`wheel` notches, one a frame; negative zooms out) show in the screenshot.
  std::optional<std::pair<double, double>> canvas_mouse;
  int wheel = 0;
  std::optional<float> ui_scale;  // fonts and widgets scale; default: the monitor's content scale
  double timeout_seconds = 300;
  // After the cells ran: this many seconds of seeded random clicks, keys and explorer actions (--soak, --soak-seed).
  std::optional<double> soak_seconds;
  std::uint64_t soak_seed = 1;
  [[nodiscard]] bool headless() const {
    return screenshot || export_svg || export_png || export_animation_svg || stats || soak_seconds;
  }
};

// Exit status when no window could be opened (no display): the caller falls back to the terminal.
inline constexpr int kWindowUnavailable = 3;

// True when a window can be opened here: DISPLAY or WAYLAND_DISPLAY is set and GLFW initializes.
[[nodiscard]] bool display_available();

// Runs the window until it is closed (or the headless steps are done); returns the exit status.
int run_window(Session& session, const WindowOptions& options);

}  // namespace shardscope::ui
