// `shardscope repl`: the interactive Python console with the simulated `jax` package.
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "cli/arguments.h"
#include "cli/commands.h"
#include "python/host.h"
#include "ui/model/settings.h"

namespace shardscope::cli {

namespace {

// The REPL's history: SHARDSCOPE_HISTORY when set (tests, shared machines), else repl_history in the config
// folder the window uses ($SHARDSCOPE_CONFIG_DIR, $XDG_CONFIG_HOME/shardscope or ~/.config/shardscope). The file
// older releases kept in the home folder moves there the first time.
std::string history_path(std::ostream& err) {
  if (const char* path = std::getenv("SHARDSCOPE_HISTORY"); path != nullptr && *path != '\0') return path;
  const std::filesystem::path path = std::filesystem::path(ui::default_config_dir()) / "repl_history";
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') return path.string();
  const std::filesystem::path old_path = std::filesystem::path(home) / ".shardscope_history";
  std::error_code error;
  if (std::filesystem::exists(path, error) || !std::filesystem::is_regular_file(old_path, error)) return path.string();
  std::filesystem::create_directories(path.parent_path(), error);
  std::filesystem::rename(old_path, path, error);
  if (error) {  // another file system: copy, then remove the old one only once the copy is there
    error.clear();
    std::filesystem::copy_file(old_path, path, error);
    if (!error) std::filesystem::remove(old_path, error);
  }
  if (error) {
    err << "shardscope: could not move history from " << old_path.string() << " to " << path.string() << ": "
        << error.message() << "\n";
    return old_path.string();
  }
  err << "shardscope: moved history from " << old_path.string() << " to " << path.string() << "\n";
  return path.string();
}

}  // namespace

int run_repl(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return guarded(err, [&] {
    const Arguments arguments(args, {"--devices", "--jax-version"}, {});
    apply_python_session_options(arguments);
    out.flush();
    const python::InterpreterScope interpreter;
    const std::string banner =
        "shardscope 0.1.0 - Python with a simulated jax package. Ctrl-C interrupts, Ctrl-D exits.";
    return python::run_console(history_path(err), banner);
  });
}

}  // namespace shardscope::cli
