// Entry point: dispatches the subcommands of the shardscope command line.
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace {

constexpr const char* kUsage = R"usage(shardscope - explore JAX-style sharding on simulated devices

Usage:
  shardscope                      open the window on the default scene (in the terminal without a display)
  shardscope gui [SCENE.py|.ipynb] [--devices P] [--jax-version V] [--run-all] [--select NAME]
                 [--size 1600x1000] [--screenshot FILE.png] [--export-svg FILE] [--export-png FILE]
                 [--png-scale F] [--apply-spec NAME SPEC]... [--device-view] [--light]
                 [--editor-tab Spec|Mesh|Program|Scenes] [--stats FILE.json] [--ui-scale F]
                 [--switch-devices PRESET] [--present] [--lesson-steps N] [--rerun-on PRESET] [--persist]
                 [--light|--dark] [--caption|--no-caption] [--palette tab20b|distinct|colorblind]
                 [--program-view Jaxpr|Values|Lowered|Explain|Timeline] [--timeline-schedule serial|overlapped]
                 [--animate-collective N[:STEP]] [--export-animation-svg FILE.svg]
                 [--soak SECONDS [--soak-seed N]]  (random clicks, keys, cells, specs and presets for
                                  SECONDS after the cells ran, seeded; --stats records RSS once a second)
                 [--connect KERNEL.json | --kernel NAME [--kernel-timeout SECONDS]] [--console CODE]...
                                  --connect attaches to a running Jupyter kernel (simulated or real JAX),
                                  --kernel starts one from an installed kernelspec; cells, Variables,
                                  canvas, Devices and Program views then come from that kernel;
                                  --console types CODE into the console and runs it after the scene
  shardscope handout LESSON.py|.ipynb -o FILE.html [--devices PRESET] [--jax-version V]
                                  run a lesson and write one self-contained HTML page: prose, code,
                                  outputs, JAX's coloured grids and an SVG diagram per grid
                                  the explorer window; --screenshot/--export-* run headless and exit
                                  (leaving saved settings and history alone unless --persist);
                                  --present (or F11) shows the lesson full screen, --lesson-steps
                                  presses Next N times; --animate-collective pauses the Program tab's
                                  collective N at STEP on the Devices view, --export-animation-svg
                                  writes that frame (devices, links, chunks in flight) as SVG
  shardscope scene [--scene FILE.json] [--out DIR] [--color|--no-color] [--jax-version V]
  shardscope viz --shape 8,8 [--devices PRESET] [--mesh x=2,y=4] [--axis-types auto,explicit]
                 [--device-ids 0,1,2,3,6,7,4,5] [--spec "P('x', ('y','z'), None)"]
                 [--single-device ID] [--memory-kind KIND] [--color] [--highlight]
                 [--scale F] [--min-width N] [--max-width N] [--color-map NAME|#RRGGBB,...]
                 [--svg FILE] [--print-sharding] [--jax-version V]
                 beyond JAX: [--small-multiples] [--uneven] [--labels ids|coords|mesh]
                 [--palette tab20b|distinct|colorblind] (the --svg diagram's colours)
  shardscope devices [--devices PRESET] [--describe] [--jax-version V]
  shardscope profiles             list the JAX behaviour changes the version profiles follow
  shardscope run FILE.py|FILE.ipynb [--devices PRESET] [--jax-version V] [--check] [--python PYTHON]
                                  run a script or notebook cell by cell; --check compares an
                                  .ipynb's recorded outputs and prints a pass/FAIL table;
                                  --python runs it under another interpreter (real JAX) instead
  shardscope diff FILE.py|FILE.ipynb --python PYTHON [--devices PRESET] [--jax-version V]
                 [--rtol R] [--atol A]
                                  run it under the simulator and under PYTHON; report per cell the
                                  differing printed output, shardings, collectives and values
  shardscope python [--devices PRESET] [--jax-version V] FILE|-c CODE [ARGS...]
                                  python3 with the simulated jax (a stand-in for real JAX)
  shardscope repl [--devices PRESET] [--jax-version V]
                                  interactive Python with the simulated jax package
  shardscope explain FILE.py|FILE.ipynb [--devices PRESET] [--jax-version V] [--format text|md|csv]
                 [--hardware DEVICE_KIND] [--output FILE] [--timeline FILE.svg]
                 [--compare PRESET|DEVICE_KIND] [--compare-spec NAME=SPEC]... [--why]
                 [--animation-frame N:STEP FILE.svg]
                                  run the script, then estimate every jit program it ran or lowered:
                                  per equation and per collective bytes, FLOPs, time, bound and reason;
                                  --compare/--compare-spec print it side by side with another preset or
                                  argument layout; --timeline draws the per-device schedules as SVG;
                                  --why traces each collective and result back to the layouts behind it
                                  --animation-frame draws collective N (counted over all programs) at
                                  STEP on the devices, as the window's Devices view animates it
  shardscope kernel -f CONNECTION.json [--devices PRESET] [--jax-version V]
                                  a Jupyter kernel (ipykernel) whose jax is the simulated one
  shardscope kernel install [--name NAME] [--devices PRESET] [--jax-version V] [--user|--prefix DIR]
                                  write its kernelspec (default: the user's Jupyter data folder)

Presets: cpu:N, gpu:N, tpu-v2-8, tpu-v3-8, tpu-v3-32, tpu-v4-8 ... tpu-v4-4096, tpu-v5e-8,
         tpu-v5e-16 ... tpu-v5e-256, tpu-v5p-8, tpu-v6e-8 ... tpu-v6e-256 (default tpu-v3-8)
)usage";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  using namespace shardscope::cli;
  if (args.empty()) return run_default(std::cout, std::cerr);
  const std::string command = args.front();
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (command == "viz") return run_viz(rest, std::cout, std::cerr);
  if (command == "devices") return run_devices(rest, std::cout, std::cerr);
  if (command == "scene" || command == "demo") return run_scene(rest, std::cout, std::cerr);
  if (command == "profiles") return run_profiles(std::cout);
  if (command == "run") return run_notebook(rest, std::cout, std::cerr);
  if (command == "repl") return run_repl(rest, std::cout, std::cerr);
  if (command == "explain") return run_explain(rest, std::cout, std::cerr);
  if (command == "gui") return run_gui(rest, std::cout, std::cerr);
  if (command == "handout") return run_handout(rest, std::cout, std::cerr);
  if (command == "kernel") return run_kernel(rest, std::cout, std::cerr);
  if (command == "python") return run_python(rest, std::cerr);
  if (command == "diff") return run_diff(rest, std::cout, std::cerr);
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << kUsage;
    return 0;
  }
  if (command == "--version") {
    std::cout << "shardscope 0.1.0\n";
    return 0;
  }
  std::cerr << "shardscope: unknown command '" << command << "'\n\n" << kUsage;
  return 2;
}
