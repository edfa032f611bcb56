// matplotlib in cells as IPython's inline backend shows it (each open figure's text at plt.show() and after the cell,
// then closed; the era's 6x4 in at 72 dpi under old profiles), and a program run that shows nothing.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "app/python_test_support.h"
#include "python/host.h"
#include "support/cell_replay.h"

using python_test::printed;
using shardscope::python::CellResult;
using shardscope::python::run_cell;
namespace replay = shardscope::testing;

namespace {

const std::string kPlot =
    "plt.close('all')\nplt.scatter([1, 2, 3], [2, 4, 6])\nplt.plot([1, 2, 3], [2, 4, 6], "
    "c='red', label='Model Prediction')\nplt.legend()\n";

std::filesystem::path temp_path(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("shardscope_matplotlib_test_" + std::to_string(::getpid()) + "_" + name);
}

// What jax-101-pmap's plotting cell prints under a profile, replayed as notebook cells by the binary.
std::string plot_cell_under(const std::string& version) {
  const std::vector<std::string> outputs =
      replay::replay_cells({"import matplotlib.pyplot as plt", kPlot + "plt.show()", "print('after')"},
                           {"--jax-version", version, "--devices", "cpu:8"}, {}, "matplotlib_" + version);
  return outputs.at(1) + outputs.at(2);
}

}  // namespace

TEST_CASE("a plot cell shows its figure once, as its text, at plt.show()") {
  REQUIRE(run_cell("import matplotlib.pyplot as plt").ok());
  CHECK(printed(kPlot + "print('before')\nplt.show()\nprint('after')", true) ==
        "before\n<Figure size 640x480 with 1 Axes>\nafter\n");
  // Closed once shown: neither the next cell nor a later plt.show() shows it again.
  CHECK(printed("plt.show()\nprint(plt.get_fignums())", true) == "[]\n");
}

TEST_CASE("figures a cell leaves open are shown after its value, then closed") {
  REQUIRE(run_cell("import matplotlib.pyplot as plt\nplt.close('all')").ok());
  const CellResult result = run_cell("fig, ax = plt.subplots()\nplt.figure()\nprint('made')\nax.plot([1, 2])");
  CHECK(result.ok());
  CHECK(result.stdout_text == "made\n");
  REQUIRE(result.output);
  // IPython's text of a value with no repr of its own, then each open figure in the order it was made.
  CHECK(std::regex_match(*result.output,
                         std::regex(R"(\[<matplotlib\.lines\.Line2D at 0x[0-9a-f]+>\]\n)"
                                    R"(<Figure size 640x480 with 1 Axes>\n<Figure size 640x480 with 0 Axes>)")));
  CHECK(printed("print(plt.get_fignums())") == "[]\n");
  // With no value, the figures follow what the cell printed.
  CHECK(printed("print('x')\nplt.plot([1, 2]);") == "x\n<Figure size 640x480 with 1 Axes>\n");
}

TEST_CASE("%matplotlib inline is accepted silently and pyplot draws without a display") {
  const CellResult result = run_cell("%matplotlib inline\nimport matplotlib\nprint(matplotlib.get_backend())");
  CHECK(result.ok());
  CHECK(result.stderr_text == "");
  CHECK(result.stdout_text == "module://shardscope._inline_backend\n");
  const CellResult other = run_cell("%matplotlib widget");
  CHECK(other.stderr_text == "shardscope: skipped `%matplotlib widget` (figures are shown inline by shardscope)\n");
}

TEST_CASE("savefig writes a PNG") {
  const std::filesystem::path png = temp_path("figure.png");
  CHECK(printed("import matplotlib.pyplot as plt\nplt.close('all')\nplt.plot([1, 2])\nplt.savefig(" + std::string("'") +
                    png.string() + "')\nplt.close()",
                true) == "");
  std::ifstream file(png, std::ios::binary);
  std::string header(8, '\0');
  file.read(header.data(), 8);
  CHECK(header == "\x89PNG\r\n\x1a\n");
  std::filesystem::remove(png);
}

TEST_CASE("a cell run as part of a program shows no figures") {
  REQUIRE(run_cell("import matplotlib.pyplot as plt\nplt.close('all')").ok());
  const CellResult result =
      run_cell("plt.plot([1, 2])\nplt.show()\nprint(plt.get_fignums())", {.echo = false, .show_figures = false});
  CHECK(result.ok());
  CHECK(result.stdout_text == "[1]\n");  // still open, for savefig, as under python3
  CHECK(printed("plt.close('all')") == "");
}

TEST_CASE("figures are 432x288 under the profiles of IPython's inline settings, 640x480 after") {
  // jax 0.3.16 is the last release before matplotlib-inline 0.1.4 dropped its rc overrides, 0.3.17 the first after.
  CHECK(plot_cell_under("0.2.10") == "<Figure size 432x288 with 1 Axes>\nafter\n");
  CHECK(plot_cell_under("0.3.16") == "<Figure size 432x288 with 1 Axes>\nafter\n");
  CHECK(plot_cell_under("0.3.17") == "<Figure size 640x480 with 1 Axes>\nafter\n");
  CHECK(plot_cell_under("0.11") == "<Figure size 640x480 with 1 Axes>\nafter\n");
}

TEST_CASE("a settings change the notebook made before its first figure is kept under an old profile") {
  const std::vector<std::string> outputs = replay::replay_cells(
      {"import matplotlib.pyplot as plt\nplt.rcParams['figure.figsize'] = (5, 5)", "plt.figure()\nplt.show()"},
      {"--jax-version", "0.2.10"}, {}, "matplotlib_rc");
  CHECK(outputs.at(1) == "<Figure size 360x360 with 0 Axes>\n");
}

TEST_CASE("shardscope run of a plain script shows nothing at plt.show(), even with a display set") {
  const std::filesystem::path script = temp_path("plot.py");
  const std::filesystem::path png = temp_path("plot.png");
  std::ofstream(script) << "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()\nplt.savefig('"
                        << png.string() << "')\nprint('saved')\n";
  const replay::BinaryRun run = replay::run_shardscope({"run", script.string()}, {{"DISPLAY", ":99"}});
  CHECK(run.status == 0);
  CHECK(run.output == "saved\n");
  CHECK(std::filesystem::file_size(png) > 0);
  // A recorder of plain repr() (SHARDSCOPE_DISPLAY=repr) runs cells as a script runner does: nothing shown.
  const std::vector<std::string> outputs =
      replay::replay_cells({"import matplotlib.pyplot as plt", kPlot + "plt.show()"}, {},
                           {{"SHARDSCOPE_DISPLAY", "repr"}}, "matplotlib_repr");
  CHECK(outputs.at(1) == "");
  std::filesystem::remove(script);
  std::filesystem::remove(png);
}

TEST_CASE("jax arrays copy and pickle as JAX's do, so pyplot can plot them") {
  CHECK(printed("import copy, pickle\nimport jax, jax.numpy as jnp\n"
                "x = jax.device_put(jnp.arange(8.), jax.sharding.NamedSharding(jax.make_mesh((8,), ('x',)), "
                "jax.P('x')))\n"
                "y = pickle.loads(pickle.dumps(x))\n"
                "print(repr(copy.copy(x)), repr(copy.deepcopy(jnp.arange(3))), type(y.sharding).__name__)") ==
        "Array([0., 1., 2., 3., 4., 5., 6., 7.], dtype=float32) Array([0, 1, 2], dtype=int32) "
        "SingleDeviceSharding\n");
  CHECK(printed("import matplotlib.pyplot as plt\nplt.close('all')\n"
                "print(len(plt.plot(jnp.arange(4.), jnp.sin(jnp.arange(4.)))))\nplt.close('all')") == "1\n");
}
