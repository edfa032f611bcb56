// The command-line subcommands; each returns the process exit status.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace shardscope::cli {

int run_viz(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int run_devices(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int run_scene(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int run_profiles(std::ostream& out);
int run_notebook(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// `shardscope explain FILE`: shardscope's estimate of every jit program the script ran or lowered.
int run_explain(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int run_repl(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int run_gui(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// `shardscope handout LESSON -o FILE.html`: the lesson run and written as one self-contained HTML page.
int run_handout(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// `shardscope python [--devices P] [--jax-version V] FILE|-c CODE [ARGS...]`: python3 with the simulated jax.
int run_python(const std::vector<std::string>& args, std::ostream& err);
// `shardscope run --python PYTHON FILE`: FILE's cells under another interpreter (real JAX), printed as `run` prints.
int run_under_python(const std::string& python, const std::string& file, std::ostream& out, std::ostream& err);
// `shardscope diff FILE --python PYTHON`: FILE under the simulator and under PYTHON, differences per cell.
int run_diff(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// `shardscope kernel -f CONNECTION.json`: a Jupyter kernel on the simulated jax; `kernel install` its kernelspec.
int run_kernel(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// No arguments: the window on the default scene where a display is usable, else the terminal scene.
int run_default(std::ostream& out, std::ostream& err);

class Arguments;
// Validates --devices and --jax-version and stores them where the simulated `jax` package reads them.
void apply_python_session_options(const Arguments& arguments);

const char* default_scene_json();

// Runs a command body, turning errors into JAX-style "Type: message" lines (status 1) and misuse
// into a usage line (status 2).
int guarded(std::ostream& err, const std::function<int()>& body);

}  // namespace shardscope::cli
