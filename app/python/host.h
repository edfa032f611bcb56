// The embedded CPython interpreter: its lifetime, the packages installed into it, and notebook cells.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace shardscope::python {

// What a cell printed and showed. `error` is Python's traceback text, ending `TypeName: message`.
struct CellResult {
  enum class Status { kOk, kError, kInterrupted, kExit };
  Status status = Status::kOk;
  std::string stdout_text;
  std::string stderr_text;
  std::optional<std::string> output;  // the last expression's display text (IPython's Out[n])
  std::string error;
  int exit_code = 0;  // for kExit: the SystemExit code
  [[nodiscard]] bool ok() const { return status == Status::kOk; }
};

struct CellOptions {
  // Also pass the cell's stdout/stderr to the process's streams as they are written.
  bool echo = false;
  // Display matplotlib figures as a notebook does (each open figure's text at plt.show() and after the cell's
  // value, then closed); off for a program run, where plt.show() shows nothing.
  bool show_figures = true;
};

// Settings the command line gives the simulated `jax` package (read by it when it is imported).
struct HostSettings {
  std::optional<std::string> devices;      // --devices, validated
  std::optional<std::string> jax_version;  // --jax-version, validated
};
[[nodiscard]] HostSettings& host_settings();

// A function that installs a package into sys.modules; called with the GIL held, once, right after
// the interpreter starts and before any user code. Register from a bindings file with
//   static const bool registered = shardscope::python::register_installer("jax", &install_jax);
using Installer = std::function<void()>;
bool register_installer(const std::string& name, Installer installer);

// Starts the interpreter (idempotent). CPython cannot be restarted: start after stop throws.
void start_interpreter();
// Finalizes the interpreter; pending output is flushed.
void stop_interpreter();
[[nodiscard]] bool interpreter_running();

// Runs one cell with notebook semantics (starts the interpreter when needed). Never throws for
// errors in the cell; the session stays usable.
[[nodiscard]] CellResult run_cell(const std::string& code, const CellOptions& options = {});

// As `python FILE` does before running a script: the script's folder first on sys.path (so a helper module
// beside it imports) and sys.argv == [FILE].
void enter_script(const std::string& path);

// Serves the Jupyter kernel protocol (ipykernel) on `connection_file` until a client shuts the kernel down;
// returns the exit status. Needs Debian's python3-ipykernel.
int run_kernel(const std::string& connection_file);

// As `python3 FILE ARGS...` (argv[0] a path) or `python3 -c CODE ARGS...`: runs the program in __main__ and
// returns its exit status (1 after an uncaught exception, printed on stderr as python3 prints it).
int run_program(const std::vector<std::string>& argv);

// Runs the interactive console on the terminal until Ctrl-D or exit(); returns the exit status.
int run_console(const std::string& history_path, const std::string& banner);

// Stops the interpreter when the scope ends (the commands' guard).
class InterpreterScope {
 public:
  InterpreterScope() { start_interpreter(); }
  ~InterpreterScope() { stop_interpreter(); }
  InterpreterScope(const InterpreterScope&) = delete;
  InterpreterScope& operator=(const InterpreterScope&) = delete;
};

}  // namespace shardscope::python
