// The window attached to a Jupyter kernel: a separately started `shardscope kernel`, cells typed into the
// console run there, and the canvas, Variables and Program views are filled from the kernel's snapshots.
#include <csignal>
#include <thread>

#include "gui_test_support.h"
#include "jupyter_support.h"

using namespace gui_test;  // NOLINT(google-build-using-namespace): the helpers are this test's vocabulary

namespace {

// A kernel started in the background, as a user would start one for a notebook; stopped when the test ends.
class BackgroundKernel {
 public:
  explicit BackgroundKernel(const Workdir& dir) : connection_(dir.file("kernel.json")) {
    const std::string command = kLeakCheckOff + " " + quote(SHARDSCOPE_BINARY) + " kernel -f " + quote(connection_) +
                                " --devices cpu:8 > " + quote(dir.file("kernel.log")) + " 2>&1 & echo $! > " +
                                quote(dir.file("kernel.pid"));
    REQUIRE(std::system(command.c_str()) == 0);
    pid_ = std::stoi(read(dir.file("kernel.pid")));
    // ipykernel writes the connection file once its sockets are bound.
    for (int i = 0; i < 600 && !ready(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    INFO(read(dir.file("kernel.log")));
    REQUIRE(ready());
  }
  ~BackgroundKernel() { ::kill(pid_, SIGTERM); }
  BackgroundKernel(const BackgroundKernel&) = delete;
  BackgroundKernel& operator=(const BackgroundKernel&) = delete;
  [[nodiscard]] const std::string& connection() const { return connection_; }

 private:
  [[nodiscard]] bool ready() const {
    const std::string text = read(connection_);
    return !text.empty() && nlohmann::json::accept(text) && nlohmann::json::parse(text).contains("shell_port");
  }
  std::string connection_;
  int pid_ = 0;
};

const std::string kMakeMesh =
    "import jax, jax.numpy as jnp\n"
    "from jax.sharding import NamedSharding, PartitionSpec as P\n"
    "mesh = jax.make_mesh((2, 4), ('x', 'y'), axis_types=(jax.sharding.AxisType.Auto,) * 2)";
const std::string kMakeArray = "x = jax.device_put(jnp.arange(64.0).reshape(8, 8), NamedSharding(mesh, P('x', 'y')))";
const std::string kRunProgram = "total = jax.jit(lambda a: a.sum(0))(x); print(total.sharding.spec)";

std::string console_args(const std::vector<std::string>& cells) {
  std::string out;
  for (const std::string& cell : cells) out += " --console " + quote(cell);
  return out;
}

}  // namespace

TEST_CASE("the window attached to a running kernel runs console cells there and draws the kernel's arrays") {
  Workdir dir;
  const BackgroundKernel kernel(dir);
  // The kernel's namespace is its own: the window's embedded session never defined these names.
  const Run run = run_gui(dir, "--connect " + quote(kernel.connection()) +
                                   console_args({kMakeMesh, kMakeArray, kRunProgram, "undefined_name"}) +
                                   " --select x --editor-tab Program --size 1600x1000 --screenshot shot.png "
                                   "--stats stats.json");
  INFO(run.out);
  REQUIRE(run.status == 0);
  const nlohmann::json stats = stats_of(dir);
  const auto& cells = stats.at("cells");
  REQUIRE(cells.size() == 4);
  CHECK(cells[2].at("output").get<std::string>() == "P('y',)\n");  // printed by the kernel, streamed back
  CHECK(cells[3].at("output").get<std::string>().find("NameError") != std::string::npos);
  CHECK(stats.at("device_count").get<int>() == 8);
  CHECK(history_has(stats, kMakeArray));  // typed cells go to the history as the console's own do

  // The last program, lowered again inside the kernel, stays shown after a cell that ran none: its compiled
  // text's collectives.
  const auto& program = stats.at("program");
  CHECK(program.at("name").get<std::string>() == "<lambda>");
  CHECK(program.at("compiled_summary").get<std::string>().find("all-reduce") != std::string::npos);

  // The canvas draws x from the kernel's snapshot: 2 x 4 blocks in JAX's colours.
  const Image shot = load_png(dir.file("shot.png"));
  const auto [x0, y0, x1, y1] = canvas_rect(stats);
  const auto found = find_colors(shot, as_vector(kEight), x0, y0, x1, y1);
  check_grid(found, as_vector(kEight), 2, 4, 2000);
}

TEST_CASE("Stop interrupts a cell running in an attached kernel, which then runs the next cell") {
  Workdir dir;
  const BackgroundKernel kernel(dir);
  // Stop reaches a kernel the window did not start through Jupyter's interrupt_request on the control channel.
  const Run run = run_gui(dir, "--connect " + quote(kernel.connection()) +
                                   console_args({"import time\nfor _ in range(600): time.sleep(0.1)"}) +
                                   " --interrupt-after 2 --size 1600x1000 --stats stats.json");
  INFO(run.out);
  REQUIRE(run.status == 0);
  const nlohmann::json stats = stats_of(dir);
  REQUIRE(stats.at("cells").size() == 1);
  CHECK(stats.at("cells")[0].at("status") == "interrupted");
  CHECK(stats.at("cells")[0].at("output").get<std::string>().find("KeyboardInterrupt") != std::string::npos);
  CHECK(stats.at("cells_seconds").get<double>() < 30);  // not the minute the loop would take
  // The kernel survived: the window attaches again and runs a cell.
  const Run again = run_gui(dir, "--connect " + quote(kernel.connection()) + console_args({"print(6 * 7)"}) +
                                     " --size 1600x1000 --stats stats.json");
  REQUIRE(again.status == 0);
  CHECK(stats_of(dir).at("cells")[0].at("output") == "42\n");
}

TEST_CASE("the window starts a kernel from an installed kernelspec, and says which kernel it could not reach") {
  Workdir dir;
  const auto environment =
      shardscope::testing::install_kernel(dir.path / "prefix", "shardscope-gui-test", {"--devices", "tpu-v3-8"});
  std::string prefix = "env ";
  for (const auto& [name, value] : environment) prefix += name + "=" + quote(value) + " ";
  const Run run = run_gui(dir,
                          "--kernel shardscope-gui-test" + console_args({kMakeMesh, kMakeArray}) +
                              " --select x --device-view --size 1600x1000 --screenshot shot.png --stats stats.json",
                          prefix);
  INFO(run.out);
  REQUIRE(run.status == 0);
  const nlohmann::json stats = stats_of(dir);
  CHECK(stats.at("device_count").get<int>() == 8);
  CHECK(stats.at("selected").get<std::string>() == "x");

  // A connection file that names no kernel: a clear error, and no window left behind.
  dir.write("dead.json", R"({"shell_port": 1, "iopub_port": 2, "stdin_port": 3, "control_port": 4, "hb_port": 5,
                              "ip": "127.0.0.1", "key": "", "transport": "tcp", "signature_scheme": "hmac-sha256"})");
  const Run dead = run_gui(dir, "--connect dead.json --kernel-timeout 3");
  CHECK(dead.status != 0);
  CHECK(dead.out.find("did not answer") != std::string::npos);
  // A file that is not a connection file, and a kernelspec that does not exist: named, without a traceback.
  dir.write("notes.json", "not json");
  const Run garbled = run_gui(dir, "--connect notes.json");
  INFO(garbled.out);
  CHECK(garbled.status != 0);
  CHECK(garbled.out.find("cannot attach to the kernel with connection file 'notes.json': JSONDecodeError") !=
        std::string::npos);
  CHECK(garbled.out.find("At:") == std::string::npos);
  const Run unknown = run_gui(dir, "--kernel no-such-kernel", prefix);
  CHECK(unknown.out.find("from kernelspec 'no-such-kernel': NoSuchKernel") != std::string::npos);
  const Run both = run_gui(dir, "--connect dead.json --kernel shardscope-gui-test");
  CHECK(both.status != 0);
  CHECK(both.out.find("give --connect or --kernel, not both") != std::string::npos);
}
