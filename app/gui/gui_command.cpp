// `shardscope gui`: the explorer window over the embedded Python session or a Jupyter kernel, and the
// no-argument launch.
#include <pybind11/embed.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "cli/arguments.h"
#include "cli/commands.h"
#include "gui/kernel_session.h"
#include "gui/python_session.h"
#include "python/host.h"
#include "sharding/notation_parse.h"
#include "ui/model/settings.h"
#include "ui/window.h"

namespace shardscope::cli {
namespace {

constexpr const char* kValued[] = {"--devices",
                                   "--jax-version",
                                   "--select",
                                   "--size",
                                   "--screenshot",
                                   "--export-svg",
                                   "--export-png",
                                   "--png-scale",
                                   "--stats",
                                   "--config-dir",
                                   "--scenes-dir",
                                   "--interrupt-after",
                                   "--timeout",
                                   "--editor-tab",
                                   "--ui-scale",
                                   "--switch-devices",
                                   "--mouse",
                                   "--wheel",
                                   "--program-view",
                                   "--lesson-steps",
                                   "--rerun-on",
                                   "--palette",
                                   "--animate-collective",
                                   "--why-value",
                                   "--timeline-schedule",
                                   "--export-animation-svg",
                                   "--soak",
                                   "--soak-seed",
                                   "--connect",
                                   "--kernel",
                                   "--kernel-timeout"};
constexpr const char* kFlags[] = {"--run-all", "--device-view", "--light",      "--present",
                                  "--persist", "--caption",     "--no-caption", "--dark"};

std::string default_scenes_dir() {
  if (std::filesystem::is_directory("scenes")) return "scenes";
  return SHARDSCOPE_SCENES_DIR;
}

// Finite and bounded (arguments.h): an infinite --png-scale or --timeout would exhaust memory or never end.
double number_option(const Arguments& arguments, const std::string& name, double fallback, double high = 1e6) {
  return arguments.number(name, 0, high).value_or(fallback);
}

ui::WindowOptions parse_gui_options(const std::vector<std::string>& args, gui::KernelTarget& target) {
  ui::WindowOptions options;
  std::vector<std::string> rest;
  const std::set<std::string> valued(std::begin(kValued), std::end(kValued));
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--console") {
      if (i + 1 >= args.size()) throw UsageError{"--console takes the code of a cell"};
      options.console_cells.push_back(args[++i]);
    } else if (args[i] == "--apply-spec") {
      if (i + 2 >= args.size()) throw UsageError{"--apply-spec takes an array name and a spec"};
      options.apply_specs.emplace_back(args[i + 1], args[i + 2]);
      i += 2;
    } else if (args[i] == "--edit-notation") {
      if (i + 3 >= args.size()) throw UsageError{"--edit-notation takes an array name, a notation and its text"};
      if (!parse_notation_kind(args[i + 2])) {
        throw UsageError{"--edit-notation's notation is spec, typeof, book, shardy or hlo, got '" + args[i + 2] + "'"};
      }
      options.edit_notations.push_back({args[i + 1], args[i + 2], args[i + 3]});
      i += 3;
    } else if (!args[i].starts_with("--") && !options.scene) {
      options.scene = args[i];
    } else {
      rest.push_back(args[i]);
      if (valued.count(args[i]) != 0 && i + 1 < args.size()) rest.push_back(args[++i]);
    }
  }
  const Arguments arguments(rest, valued, std::set<std::string>(std::begin(kFlags), std::end(kFlags)));
  target.connection_file = arguments.value("--connect");
  target.kernel_name = arguments.value("--kernel");
  if (target.connection_file && target.kernel_name) throw UsageError{"give --connect or --kernel, not both"};
  if (arguments.value("--kernel-timeout"))
    target.timeout_seconds = number_option(arguments, "--kernel-timeout", 60, 3600);
  if ((target.connection_file || target.kernel_name) &&
      (arguments.value("--devices") || arguments.value("--jax-version"))) {
    throw UsageError{"--devices and --jax-version choose the embedded session's simulation; a kernel has its own"};
  }
  if (target.connection_file && !std::filesystem::is_regular_file(*target.connection_file)) {
    throw UsageError{"no such connection file '" + *target.connection_file + "'"};
  }
  apply_python_session_options(arguments);
  options.run_all = arguments.flag("--run-all");
  options.device_view = arguments.flag("--device-view");
  options.light_theme = arguments.flag("--light");
  options.dark_theme = arguments.flag("--dark");
  if (options.light_theme && options.dark_theme) throw UsageError{"--light and --dark contradict each other"};
  options.present = arguments.flag("--present");
  options.persist = arguments.flag("--persist");
  if (arguments.flag("--caption") && arguments.flag("--no-caption")) {
    throw UsageError{"--caption and --no-caption contradict each other"};
  }
  options.caption = !arguments.flag("--no-caption");
  options.rerun_lesson = arguments.value("--rerun-on");
  if (const auto palette = arguments.value("--palette")) {
    const std::vector<std::string> names = palette_names();
    if (std::find(names.begin(), names.end(), *palette) == names.end()) {
      throw UsageError{"--palette takes tab20b, distinct or colorblind, got '" + *palette + "'"};
    }
    options.palette = *palette;
  }
  if (arguments.value("--lesson-steps")) {
    options.lesson_steps = static_cast<int>(number_option(arguments, "--lesson-steps", 0, 10000));
  }
  options.select = arguments.value("--select");
  options.editor_tab = arguments.value("--editor-tab");
  options.switch_devices = arguments.value("--switch-devices");
  if (arguments.value("--ui-scale")) {
    options.ui_scale = static_cast<float>(number_option(arguments, "--ui-scale", 1.0));
    if (*options.ui_scale < 0.5F || *options.ui_scale > 4.0F) {
      throw UsageError{"--ui-scale must be between 0.5 and 4, got " + *arguments.value("--ui-scale")};
    }
  }
  if (const auto view = arguments.value("--program-view")) {
    const std::vector<std::string> views = {"Jaxpr", "Values", "Lowered", "Explain", "Timeline"};
    const auto at = std::find(views.begin(), views.end(), *view);
    if (at == views.end())
      throw UsageError{"--program-view takes Jaxpr, Values, Lowered, Explain or Timeline, got '" + *view + "'"};
    options.program_view = static_cast<int>(at - views.begin());
  }
  if (const auto schedule = arguments.value("--timeline-schedule")) {
    if (*schedule != "serial" && *schedule != "overlapped") {
      throw UsageError{"--timeline-schedule takes serial or overlapped, got '" + *schedule + "'"};
    }
    options.timeline_overlapped = *schedule == "overlapped";
  }
  options.why_value = arguments.value("--why-value");
  if (const auto animate = arguments.value("--animate-collective")) {
    int record = -1;
    int step = 0;
    char colon = 0;
    std::istringstream stream(*animate);
    const bool ok = (stream >> record) && record >= 0 &&
                    (stream.eof() || ((stream >> colon >> step) && colon == ':' && step >= 0 && stream.eof()));
    if (!ok) throw UsageError{"--animate-collective takes N or N:STEP (0-based), got '" + *animate + "'"};
    options.animate_collective = std::make_pair(record, step);
  }
  if (options.editor_tab && *options.editor_tab != "Spec" && *options.editor_tab != "Mesh" &&
      *options.editor_tab != "Program" && *options.editor_tab != "Scenes") {
    throw UsageError{"--editor-tab takes Spec, Mesh, Program or Scenes, got '" + *options.editor_tab + "'"};
  }
  if (const auto mouse = arguments.value("--mouse")) {
    double x = -1;
    double y = -1;
    char comma = 0;
    std::istringstream stream(*mouse);
    if (!(stream >> x >> comma >> y) || comma != ',' || !stream.eof() || x < 0 || x > 1 || y < 0 || y > 1) {
      throw UsageError{"--mouse takes X,Y fractions of the canvas between 0 and 1, got '" + *mouse + "'"};
    }
    options.canvas_mouse = std::make_pair(x, y);
  }
  if (const auto wheel = arguments.value("--wheel")) {
    try {
      std::size_t used = 0;
      options.wheel = std::stoi(*wheel, &used);
      if (used != wheel->size() || std::abs(options.wheel) > 100) throw std::invalid_argument("wheel");
    } catch (const std::exception&) {
      throw UsageError{"--wheel takes a whole number of notches between -100 and 100, got '" + *wheel + "'"};
    }
  }
  if (options.wheel != 0 && !options.canvas_mouse) options.canvas_mouse = std::make_pair(0.5, 0.5);
  options.screenshot = arguments.value("--screenshot");
  options.export_svg = arguments.value("--export-svg");
  options.export_png = arguments.value("--export-png");
  options.export_animation_svg = arguments.value("--export-animation-svg");
  if (options.export_animation_svg && !options.animate_collective) {
    throw UsageError{"--export-animation-svg needs --animate-collective N[:STEP]"};
  }
  options.stats = arguments.value("--stats");
  options.png_scale = static_cast<float>(number_option(arguments, "--png-scale", 1.0, 16.0));
  if (options.png_scale <= 0) throw UsageError{"--png-scale must be positive"};
  if (arguments.value("--interrupt-after"))
    options.interrupt_after = number_option(arguments, "--interrupt-after", 0, 86400.0);
  options.timeout_seconds = number_option(arguments, "--timeout", 300, 86400.0);
  if (arguments.value("--soak")) options.soak_seconds = number_option(arguments, "--soak", 0, 86400.0);
  if (arguments.value("--soak-seed")) {
    options.soak_seed = static_cast<std::uint64_t>(number_option(arguments, "--soak-seed", 1, 1e15));
  }
  options.config_dir = arguments.value("--config-dir").value_or(ui::default_config_dir());
  options.scenes_dir = arguments.value("--scenes-dir").value_or(default_scenes_dir());
  if (const auto size = arguments.value("--size")) {
    int width = 0;
    int height = 0;
    char x = 0;
    std::istringstream stream(*size);
    if (!(stream >> width >> x >> height) || x != 'x' || width < 320 || height < 240 || width > 16384 ||
        height > 16384 || !stream.eof()) {
      throw UsageError{"--size takes WIDTHxHEIGHT (from 320x240 to 16384x16384), got '" + *size + "'"};
    }
    options.width = width;
    options.height = height;
  }
  if (options.scene && !std::filesystem::exists(*options.scene)) {
    throw UsageError{"no such scene file '" + *options.scene + "'"};
  }
  return options;
}

int open_window(const ui::WindowOptions& options, const gui::KernelTarget& target = {}) {
  python::InterpreterScope scope;
  int status = 0;
  if (target.connection_file || target.kernel_name) {
    gui::KernelSession session(target);
    status = ui::run_window(session, options);
  } else {
    gui::PythonSession session;
    status = ui::run_window(session, options);
  }
  return status;
}

}  // namespace

int run_gui(const std::vector<std::string>& args, std::ostream& /*out*/, std::ostream& err) {
  return guarded(err, [&] {
    gui::KernelTarget target;
    const ui::WindowOptions options = parse_gui_options(args, target);
    if (!ui::display_available()) {
      err << "shardscope gui: no display (set DISPLAY, or run under xvfb-run -a)\n";
      return ui::kWindowUnavailable;
    }
    return open_window(options, target);
  });
}

int run_default(std::ostream& out, std::ostream& err) {
  if (!ui::display_available()) return run_scene({}, out, err);
  return guarded(err, [&] {
    gui::KernelTarget target;
    ui::WindowOptions options = parse_gui_options({}, target);
    const std::string scene = options.scenes_dir + "/default.py";
    if (std::filesystem::exists(scene)) {
      options.scene = scene;
      options.run_all = true;
    }
    const int status = open_window(options);
    return status == ui::kWindowUnavailable ? run_scene({}, out, err) : status;
  });
}

}  // namespace shardscope::cli
