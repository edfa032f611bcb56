// `shardscope python` (python3 with the simulated jax), `run --python PYTHON` and `diff --python PYTHON`: a script's
// cells run under another interpreter through the inspection module (python/host_inspect.py), compared per cell.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "base/error.h"
#include "cli/arguments.h"
#include "cli/commands.h"
#include "io/notebook.h"
#include "io/snapshot_diff.h"
#include "python/host.h"
#include "python/host_sources.h"

extern char** environ;

namespace shardscope::cli {

namespace {

using nlohmann::json;

std::filesystem::path this_binary() {
  std::error_code error;
  std::filesystem::path path = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) throw runtime_error("Cannot find the shardscope binary's path: " + error.message());
  return path;
}

// A private folder for one run's files, removed when the run ends.
class TemporaryFolder {
 public:
  TemporaryFolder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "shardscope-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw runtime_error("Cannot create a temporary folder in " + pattern);
    path_ = pattern;
  }
  ~TemporaryFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

std::string inspection_module_source() {
  for (const python::HostModuleSource& module : python::host_module_sources()) {
    if (std::string(module.module_name) == "_shardscope_host_inspect") return module.source;
  }
  throw runtime_error("the inspection module is missing from this build");
}

// Runs argv (argv[0] looked up on PATH) with the terminal's streams; returns its exit status.
int spawn_and_wait(const std::vector<std::string>& argv) {
  std::vector<char*> pointers;
  for (const std::string& arg : argv) pointers.push_back(const_cast<char*>(arg.c_str()));
  pointers.push_back(nullptr);
  pid_t child = 0;
  if (const int error = posix_spawnp(&child, pointers[0], nullptr, nullptr, pointers.data(), environ); error != 0) {
    throw runtime_error("Cannot run '" + argv[0] + "': " + std::strerror(error));
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) throw runtime_error("Lost the process running '" + argv[0] + "'");
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

struct InspectedRun {
  json session;
  std::vector<json> cells;
};

// FILE's code cells under `interpreter` (a python3 command line) with the inspection module; `pretty` shows
// values as IPython does (where the interpreter has IPython), else as repr().
InspectedRun inspect_under(const std::vector<std::string>& interpreter, const Notebook& notebook, bool pretty) {
  const TemporaryFolder folder;
  json sources = json::array();
  for (const NotebookCell* cell : notebook.code_cells()) sources.push_back(cell->source);
  const std::filesystem::path cells_file = folder.path() / "cells.json";
  const std::filesystem::path module_file = folder.path() / "shardscope_inspect.py";
  const std::filesystem::path results_file = folder.path() / "results.jsonl";
  std::ofstream(cells_file) << sources.dump();
  std::ofstream(module_file) << inspection_module_source();
  std::vector<std::string> argv = interpreter;
  argv.insert(argv.end(),
              {module_file.string(), cells_file.string(), results_file.string(), pretty ? "pretty" : "repr"});
  const int status = spawn_and_wait(argv);
  InspectedRun run;
  std::ifstream results(results_file);
  for (std::string line; std::getline(results, line);) {
    json record = json::parse(line, nullptr, false);
    if (record.is_discarded()) break;  // a line cut short by a crash
    if (run.session.is_null()) {
      run.session = std::move(record);
    } else {
      run.cells.push_back(std::move(record));
    }
  }
  if (run.session.is_null()) {
    throw runtime_error("'" + interpreter.front() + "' exited with status " + std::to_string(status) +
                        " before running the cells (does it have jax installed?)");
  }
  return run;
}

// The simulated side: this binary's `python` command, with the session's options.
std::vector<std::string> simulated_interpreter(const Arguments& arguments) {
  std::vector<std::string> argv = {this_binary().string(), "python"};
  for (const char* option : {"--devices", "--jax-version"}) {
    if (const auto value = arguments.value(option)) argv.insert(argv.end(), {option, *value});
  }
  return argv;
}

}  // namespace

int run_python(const std::vector<std::string>& args, std::ostream& err) {
  return guarded(err, [&] {
    // Options first, then what python3 takes: FILE ARGS... or -c CODE ARGS...
    std::vector<std::string> options;
    std::size_t i = 0;
    for (; i < args.size() && args[i].starts_with("--"); ++i) {
      options.push_back(args[i]);
      if (args[i].find('=') == std::string::npos && i + 1 < args.size()) options.push_back(args[++i]);
    }
    const Arguments arguments(options, {"--devices", "--jax-version"}, {});
    const std::vector<std::string> program(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
    if (program.empty() || (program.front() == "-c" && program.size() < 2)) {
      throw UsageError{"python needs FILE [ARGS...] or -c CODE [ARGS...]"};
    }
    apply_python_session_options(arguments);
    const python::InterpreterScope interpreter;
    return python::run_program(program);
  });
}

int run_under_python(const std::string& python, const std::string& file, std::ostream& out, std::ostream& err) {
  const Notebook notebook = load_notebook(file);
  const InspectedRun run = inspect_under({python}, notebook, true);
  bool any_error = false;
  for (const json& cell : run.cells) {
    out << cell.value("stdout", "");
    if (cell.contains("output") && cell.at("output").is_string()) out << cell.at("output").get<std::string>() << "\n";
    out.flush();
    err << cell.value("stderr", "") << cell.value("error", "");
    any_error = any_error || !cell.value("error", "").empty();
  }
  return any_error ? 1 : 0;
}

int run_diff(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return guarded(err, [&] {
    const std::set<std::string> valued = {"--python", "--devices", "--jax-version", "--rtol", "--atol"};
    const FileRequest request = split_file_argument(args, valued, "diff needs a FILE (.py or .ipynb)");
    const Arguments arguments(request.options, valued, {});
    const auto python = arguments.value("--python");
    if (!python) throw UsageError{"diff needs --python PYTHON, the interpreter to compare with"};
    (void)profile_from(arguments);  // validates --jax-version before anything runs
    ValueTolerance tolerance;
    if (const auto rtol = arguments.number("--rtol", 0.0, 1.0)) tolerance.rtol = *rtol;
    if (const auto atol = arguments.number("--atol", 0.0, 1e300)) tolerance.atol = *atol;
    const Notebook notebook = load_notebook(request.file);
    // repr() on both sides: one of them may lack IPython, whose pretty printer breaks long lines.
    const InspectedRun simulated = inspect_under(simulated_interpreter(arguments), notebook, false);
    const InspectedRun other = inspect_under({*python}, notebook, false);
    out << "shardscope: JAX " << simulated.session.value("jax_version", "?") << ", "
        << simulated.session.at("devices").size() << " devices\n"
        << *python << ": JAX " << other.session.value("jax_version", "?") << ", " << other.session.at("devices").size()
        << " devices\n";
    const auto differences = diff_runs(simulated.cells, other.cells, tolerance);
    out << diff_report(differences, "shardscope", *python, notebook.code_cells().size());
    return differences.empty() ? 0 : 1;
  });
}

}  // namespace shardscope::cli
