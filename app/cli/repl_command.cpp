// `shardscope repl`: the interactive Python console with the simulated `jax` package.
#include <cstdlib>
#include <iostream>

#include "cli/arguments.h"
#include "cli/commands.h"
#include "python/host.h"

namespace shardscope::cli {

namespace {

// SHARDSCOPE_HISTORY overrides the default ~/.shardscope_history (tests, shared machines).
std::string history_path() {
  if (const char* path = std::getenv("SHARDSCOPE_HISTORY"); path != nullptr && *path != '\0') return path;
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : ".") + "/.shardscope_history";
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
    return python::run_console(history_path(), banner);
  });
}

}  // namespace shardscope::cli
