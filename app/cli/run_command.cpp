// `shardscope run FILE`: a notebook or script, cell by cell, as a notebook shows it; --check compares.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "api/session.h"
#include "cli/arguments.h"
#include "cli/commands.h"
#include "device/presets.h"
#include "io/notebook.h"
#include "python/host.h"

namespace shardscope::cli {

namespace {

constexpr int kInterruptedStatus = 130;  // what a shell reports for a SIGINT-ended program

// The last line of a traceback: `TypeName: message`.
std::string exception_line(const std::string& traceback) {
  std::string text = traceback;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  const std::size_t newline = text.rfind('\n');
  return newline == std::string::npos ? text : text.substr(newline + 1);
}

// What the notebook's output area would hold for this run: stdout, the value shown, the error line.
std::string produced_text(const python::CellResult& result) {
  std::string text = result.stdout_text;
  if (!text.empty() && text.back() != '\n') text += '\n';
  if (result.output) text += *result.output + "\n";
  if (!result.ok()) text += exception_line(result.error) + "\n";
  return text;
}

std::string expected_text(const NotebookCell& cell) {
  std::string text = cell.recorded_output.value_or("");
  if (cell.recorded_error) text += *cell.recorded_error + "\n";
  return text;
}

std::string quoted(const std::string& line) {
  constexpr std::size_t kShown = 60;
  return "'" + (line.size() > kShown ? line.substr(0, kShown) + "..." : line) + "'";
}

int check_notebook(const Notebook& notebook, std::ostream& out) {
  if (!notebook.has_recorded_outputs()) throw UsageError{"--check needs an .ipynb with recorded outputs"};
  int passed = 0;
  int failed = 0;
  int number = 0;
  out << "cell  result  first difference\n";
  for (const NotebookCell* cell : notebook.code_cells()) {
    ++number;
    const python::CellResult result = python::run_cell(cell->source);
    const auto difference = first_difference(expected_text(*cell), produced_text(result));
    out << std::setw(4) << number << "  " << (difference ? "FAIL  " : "pass  ");
    if (difference) {
      out << "  line " << difference->line << ": expected " << quoted(difference->expected) << ", got "
          << quoted(difference->actual);
      ++failed;
    } else {
      ++passed;
    }
    out << "\n";
    if (result.status == python::CellResult::Status::kInterrupted) {
      out << "interrupted\n";
      return kInterruptedStatus;
    }
  }
  out << passed << " passed, " << failed << " failed\n";
  return failed == 0 ? 0 : 1;
}

// A .py file without `# %%` cells is a program: load_notebook makes its whole text the one cell (a percent script's
// cells never hold their marker lines).
bool is_program(const std::string& path, const Notebook& notebook) {
  if (path.ends_with(".ipynb") || notebook.cells.size() != 1) return false;
  std::ifstream file(path, std::ios::binary);
  std::stringstream contents;
  contents << file.rdbuf();
  return notebook.cells.front().source == decode_python_source(contents.str());
}

// A program shows no figures, as `python3 FILE` with a headless matplotlib backend: plt.show() prints nothing.
int run_cells(const Notebook& notebook, bool program, std::ostream& out, std::ostream& err) {
  bool any_error = false;
  for (const NotebookCell* cell : notebook.code_cells()) {
    out.flush();
    const python::CellResult result = python::run_cell(cell->source, {.echo = true, .show_figures = !program});
    if (result.output) out << *result.output << "\n";
    out.flush();
    switch (result.status) {
      case python::CellResult::Status::kOk: break;
      case python::CellResult::Status::kError:
        err << result.error;
        any_error = true;
        break;
      case python::CellResult::Status::kInterrupted: err << result.error; return kInterruptedStatus;
      case python::CellResult::Status::kExit: return result.exit_code;
    }
  }
  return any_error ? 1 : 0;
}

}  // namespace

void apply_python_session_options(const Arguments& arguments) {
  const JaxProfile profile = profile_from(arguments);  // validates --jax-version
  api::session().profile = profile;
  if (const auto version = arguments.value("--jax-version")) python::host_settings().jax_version = *version;
  // --devices wins over SHARDSCOPE_DEVICES; JAX's own variables (JAX_PLATFORMS, XLA_FLAGS) are read by the
  // package at import, as JAX reads them.
  std::optional<std::string> devices = arguments.value("--devices");
  if (!devices) {
    if (const char* from_environment = std::getenv("SHARDSCOPE_DEVICES"); from_environment && *from_environment) {
      devices = from_environment;
    }
  }
  if (devices) {
    api::set_device_preset(make_device_preset(*devices).name);  // ValueError naming an unknown preset
    python::host_settings().devices = *devices;
  }
}

int run_notebook(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return guarded(err, [&] {
    const std::set<std::string> valued = {"--devices", "--jax-version", "--python"};
    const FileRequest request = split_file_argument(args, valued, "run needs a FILE (.py or .ipynb)");
    const Arguments arguments(request.options, valued, {"--check"});
    if (const auto python = arguments.value("--python")) {
      // Real JAX decides devices and version there; the simulator's options would be silently ignored.
      if (arguments.value("--devices") || arguments.value("--jax-version") || arguments.flag("--check")) {
        throw UsageError{"--python runs the interpreter's own jax: --devices, --jax-version and --check do not apply"};
      }
      return run_under_python(*python, request.file, out, err);
    }
    apply_python_session_options(arguments);
    const Notebook notebook = load_notebook(request.file);
    const python::InterpreterScope interpreter;
    python::enter_script(request.file);
    return arguments.flag("--check") ? check_notebook(notebook, out)
                                     : run_cells(notebook, is_program(request.file, notebook), out, err);
  });
}

}  // namespace shardscope::cli
