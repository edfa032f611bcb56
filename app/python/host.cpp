// Interpreter lifetime and cell execution: C++ side of the host; the notebook rules live in host_*.py.
#include "python/host.h"

#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include <csignal>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "exec/cancellation.h"
#include "python/host_sources.h"

namespace py = pybind11;

namespace shardscope::python {

namespace {

struct InstallerEntry {
  std::string name;
  Installer install;
};

std::vector<InstallerEntry>& installers() {
  static std::vector<InstallerEntry> list;  // function-local: bindings register during static init
  return list;
}

struct InterpreterState {
  std::unique_ptr<py::scoped_interpreter> interpreter;
  // The host's runtime module, held from the start: user code may break importing (del builtins.__import__)
  // or drop it from sys.modules, and the host must still run the next cell and shut down.
  std::optional<py::object> runtime;
  bool stopped = false;
};

InterpreterState& state() {
  static InterpreterState instance;
  return instance;
}

void load_host_modules() {
  py::module_ sys = py::module_::import("sys");
  py::dict modules = sys.attr("modules");
  py::object module_type = py::module_::import("types").attr("ModuleType");
  py::object builtins = py::module_::import("builtins");
  for (const HostModuleSource& source : host_module_sources()) {
    py::object module = module_type(source.module_name);
    py::dict globals = module.attr("__dict__");
    globals["__builtins__"] = builtins;
    modules[source.module_name] = module;
    const std::string filename = std::string("<shardscope-host:") + source.module_name + ">";
    py::object code = builtins.attr("compile")(source.source, filename, "exec");
    builtins.attr("exec")(code, globals);
  }
}

// Python's SIGINT handler only sets a flag its bytecode loop checks, which a long engine call never reaches:
// ours also asks the engine to stop at its next step, then hands the signal to Python's.
struct sigaction python_sigint {};

void on_sigint(int signal_number) {
  request_cancellation();  // an atomic store: safe in a signal handler
  if (python_sigint.sa_handler != SIG_DFL && python_sigint.sa_handler != SIG_IGN) {
    python_sigint.sa_handler(signal_number);
  }
}

void chain_sigint_to_engine() {
  struct sigaction ours {};
  ours.sa_handler = on_sigint;
  sigemptyset(&ours.sa_mask);
  ours.sa_flags = SA_ONSTACK;
  struct sigaction previous {};
  sigaction(SIGINT, &ours, &previous);
  // Idempotent: re-chaining over our own handler keeps the Python handler found the first time.
  if (previous.sa_handler != on_sigint) python_sigint = previous;
}

void configure_and_start(InterpreterState& s) {
  // UTF-8 mode: shardscope prints box drawing, ± and µ even under the C locale of CI machines.
  PyPreConfig preconfig;
  PyPreConfig_InitIsolatedConfig(&preconfig);
  preconfig.utf8_mode = 1;
  if (PyStatus_Exception(Py_PreInitialize(&preconfig)))
    throw std::runtime_error("could not pre-initialize the Python interpreter");
  PyConfig config;
  PyConfig_InitIsolatedConfig(&config);
  config.isolated = 0;
  config.use_environment = 1;          // PYTHONPATH and friends, as a python3 user expects
  config.install_signal_handlers = 0;  // SIGINT is set up below, for the code we run only
  config.parse_argv = 0;
  // Otherwise sys.executable is the first python3 on PATH, which need not be Debian's.
  PyStatus status = PyConfig_SetString(&config, &config.executable, L"/usr/bin/python3");
  if (PyStatus_Exception(status)) {
    PyConfig_Clear(&config);
    throw std::runtime_error("could not configure the Python interpreter");
  }
  // Shard grids are box-drawing text: write UTF-8 whatever the locale says (a C locale would mean ASCII).
  status = PyConfig_SetString(&config, &config.stdio_encoding, L"utf-8");
  if (PyStatus_Exception(status)) {
    PyConfig_Clear(&config);
    throw std::runtime_error("could not configure the Python interpreter's output encoding");
  }
  // Strict, as python3 on a UTF-8 terminal: print("\udcff") raises UnicodeEncodeError (UTF-8 mode alone would
  // pass the lone surrogate through as a raw byte).
  status = PyConfig_SetString(&config, &config.stdio_errors, L"strict");
  if (PyStatus_Exception(status)) {
    PyConfig_Clear(&config);
    throw std::runtime_error("could not configure the Python interpreter's output errors");
  }
  // The program directory stays off sys.path: a stray numpy.py beside the binary must not shadow numpy.
  s.interpreter = std::make_unique<py::scoped_interpreter>(&config, 0, nullptr, false);
  py::module_ signal = py::module_::import("signal");
  signal.attr("signal")(signal.attr("SIGINT"), signal.attr("default_int_handler"));
  chain_sigint_to_engine();
  load_host_modules();
  // Each cell re-arms Python's SIGINT handler (a library may have taken it); the runtime then calls this.
  s.runtime = py::module_::import("_shardscope_host_runtime");
  s.runtime->attr("_chain_engine_interrupt") = py::cpp_function(&chain_sigint_to_engine);
  for (const InstallerEntry& entry : installers()) entry.install();
}

// UTF-8 of a str that may hold lone surrogates (an error message quoting "\udcff"): escaped as Python's own
// stderr writes them, where a plain cast would throw out of the host.
std::string utf8_text(const py::handle& value) {
  py::object bytes =
      py::reinterpret_steal<py::object>(PyUnicode_AsEncodedString(value.ptr(), "utf-8", "backslashreplace"));
  if (!bytes) throw py::error_already_set();
  return bytes.cast<std::string>();
}

std::string text_of(const py::handle& value) { return value.is_none() ? std::string() : utf8_text(value); }

py::object runtime_module() {
  InterpreterState& s = state();
  if (!s.runtime) throw std::logic_error("the Python host is not started");
  return *s.runtime;
}

CellResult::Status status_of(const std::string& name) {
  if (name == "error") return CellResult::Status::kError;
  if (name == "interrupted") return CellResult::Status::kInterrupted;
  if (name == "exit") return CellResult::Status::kExit;
  return CellResult::Status::kOk;
}

}  // namespace

HostSettings& host_settings() {
  static HostSettings settings;
  return settings;
}

bool register_installer(const std::string& name, Installer installer) {
  installers().push_back({name, std::move(installer)});
  return true;
}

void start_interpreter() {
  InterpreterState& s = state();
  if (s.interpreter) return;
  if (s.stopped) throw std::logic_error("the Python interpreter cannot be restarted in this process");
  configure_and_start(s);
}

void stop_interpreter() {
  InterpreterState& s = state();
  if (!s.interpreter) return;
  {
    py::gil_scoped_acquire gil;
    for (const char* stream : {"stdout", "stderr"}) {
      // A user may have closed or replaced the streams; nothing is left to flush then.
      if (PyObject* file = PySys_GetObject(stream); file != nullptr && file != Py_None) {
        PyObject* flushed = PyObject_CallMethod(file, "flush", nullptr);
        Py_XDECREF(flushed);
        PyErr_Clear();
      }
    }
    // The host's own function goes before finalization: a user's objects that outlive it (a reference held
    // by a library until exit) can keep the runtime module's namespace alive, and with it this function.
    if (s.runtime) {
      PyObject* runtime = PyModule_GetDict(s.runtime->ptr());
      if (runtime != nullptr && PyDict_GetItemString(runtime, "_chain_engine_interrupt") != nullptr) {
        PyDict_DelItemString(runtime, "_chain_engine_interrupt");
      }
      PyErr_Clear();
      s.runtime.reset();
    }
  }
  s.interpreter.reset();
  s.stopped = true;
}

bool interpreter_running() { return static_cast<bool>(state().interpreter); }

CellResult run_cell(const std::string& code, const CellOptions& options) {
  start_interpreter();
  clear_cancellation();  // a Ctrl-C pressed while nothing ran must not stop this cell's first program
  CellResult result;
  try {
    py::dict outcome = runtime_module().attr("run_cell")(code, options.echo, options.show_figures);
    result.status = status_of(outcome["status"].cast<std::string>());
    result.stdout_text = text_of(outcome["stdout"]);
    result.stderr_text = text_of(outcome["stderr"]);
    if (!outcome["output"].is_none()) result.output = text_of(outcome["output"]);
    result.error = text_of(outcome["error"]);
    result.exit_code = outcome["exit_code"].cast<int>();
  } catch (const py::error_already_set& e) {
    // Only reached when the host itself fails (e.g. a KeyboardInterrupt between two of its lines).
    result.status = e.matches(PyExc_KeyboardInterrupt) ? CellResult::Status::kInterrupted : CellResult::Status::kError;
    result.error = std::string(e.what()) + "\n";
  } catch (const std::exception& e) {
    // A value the host could not read back; the session stays usable.
    result.status = CellResult::Status::kError;
    result.error = std::string("SystemError: ") + e.what() + "\n";
  }
  return result;
}

void enter_script(const std::string& path) {
  start_interpreter();
  const std::filesystem::path folder = std::filesystem::absolute(std::filesystem::path(path)).parent_path();
  py::module_ sys = py::module_::import("sys");
  sys.attr("path").attr("insert")(0, folder.string());
  sys.attr("argv") = py::list(py::make_tuple(path));
}

int run_kernel(const std::string& connection_file) {
  start_interpreter();
  py::object kernel = py::module_::import("_shardscope_host_entry");
  const py::cpp_function arm_interrupt([] {
    clear_cancellation();  // a Ctrl-C that came while the kernel was idle must not stop this cell
    chain_sigint_to_engine();
  });
  return kernel.attr("serve_kernel")(connection_file, arm_interrupt).cast<int>();
}

int run_program(const std::vector<std::string>& argv) {
  start_interpreter();
  return py::module_::import("_shardscope_host_entry").attr("run_program")(argv).cast<int>();
}

int run_console(const std::string& history_path, const std::string& banner) {
  start_interpreter();
  for (;;) {
    try {
      return runtime_module().attr("repl")(history_path, banner).cast<int>();
    } catch (const py::error_already_set& e) {
      // A Ctrl-C that lands outside the console's own handling: report it and carry on.
      if (!e.matches(PyExc_KeyboardInterrupt)) throw;
      std::cerr << "\nKeyboardInterrupt\n";
    }
  }
}

}  // namespace shardscope::python
