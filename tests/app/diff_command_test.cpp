// `shardscope run --python` and `shardscope diff` with a stand-in interpreter: `shardscope python`, the simulated
// jax under python3's command line, where real JAX is not installed.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "app/jupyter_support.h"

namespace {

namespace t = shardscope::testing;

constexpr const char* kScript = R"py(import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
# %%
n = len(jax.devices())
print("devices:", n)
mesh = jax.make_mesh((n,), ('x',))
x = jax.device_put(jnp.arange(16.).reshape(8, 2), NamedSharding(mesh, P('x')))
# %%
@jax.jit
def total(a):
    return jnp.sum(a, axis=0) * n
y = total(x)
y
)py";

// A python3 stand-in: the simulated jax on `devices`.
std::string stand_in(const std::filesystem::path& folder, const std::string& devices) {
  const std::filesystem::path path = folder / ("python-" + devices.substr(devices.find(':') + 1));
  std::ofstream(path) << "#!/bin/sh\nexec '" << SHARDSCOPE_BINARY << "' python --devices " << devices << " \"$@\"\n";
  ::chmod(path.c_str(), 0755);
  return path.string();
}

}  // namespace

TEST_CASE("shardscope python runs a program as python3 does, with the simulated jax") {
  const t::CommandRun run = t::run_command({SHARDSCOPE_BINARY, "python", "--devices", "cpu:8", "-c",
                                            "import jax, sys; print(len(jax.devices()), sys.argv)", "a"});
  CHECK(run.status == 0);
  CHECK(run.output == "8 ['-c', 'a']\n");
  const t::CommandRun failing = t::run_command({SHARDSCOPE_BINARY, "python", "-c", "raise ValueError('no')"});
  CHECK(failing.status == 1);
  CHECK(failing.output.ends_with("ValueError: no\n"));
  CHECK(t::run_command({SHARDSCOPE_BINARY, "python", "-c", "raise SystemExit(3)"}).status == 3);
}

TEST_CASE("run --python prints each cell as shardscope run does") {
  const t::TemporaryFolder folder;
  std::ofstream(folder.path() / "script.py") << kScript;
  const t::CommandRun simulated =
      t::run_command({SHARDSCOPE_BINARY, "run", "script.py", "--devices", "cpu:8"}, {}, folder.path());
  const t::CommandRun other = t::run_command(
      {SHARDSCOPE_BINARY, "run", "script.py", "--python", stand_in(folder.path(), "cpu:8")}, {}, folder.path());
  CHECK(simulated.status == 0);
  CHECK(other.status == 0);
  CHECK(other.output == simulated.output);
  CHECK(other.output == "devices: 8\nArray([448., 512.], dtype=float32)\n");
}

TEST_CASE("diff with the simulated jax on both sides reports no difference") {
  const t::TemporaryFolder folder;
  std::ofstream(folder.path() / "script.py") << kScript;
  const std::string python = stand_in(folder.path(), "cpu:8");
  const t::CommandRun run = t::run_command(
      {SHARDSCOPE_BINARY, "diff", "script.py", "--python", python, "--devices", "cpu:8"}, {}, folder.path());
  INFO(run.output);
  CHECK(run.status == 0);
  CHECK(run.output.ends_with("3 cells compared: no differences\n"));
}

TEST_CASE("diff reports differing printed output, shardings, collectives and values") {
  const t::TemporaryFolder folder;
  std::ofstream(folder.path() / "script.py") << kScript;
  // One device on the other side: no all-reduce in `total`, other blocks, other values, another printed count.
  const std::string python = stand_in(folder.path(), "cpu:1");
  const t::CommandRun run = t::run_command(
      {SHARDSCOPE_BINARY, "diff", "script.py", "--python", python, "--devices", "cpu:8"}, {}, folder.path());
  INFO(run.output);
  CHECK(run.status == 1);
  for (const char* expected :
       {"cell 2: printed output differs\n", "line 1: 'devices: 8'\n", "line 1: 'devices: 1'\n",
        "cell 2: x: sharding differs\n", "mesh {\"x\":8}\n", "cell 3: y: values differ\n", "element 0 (flat) 448.0\n",
        "element 0 (flat) 56.0\n", "cell 3: total: collectives differ\n", "{all-reduce}\n",
        "3 cells compared: 6 differences in 2 cells\n"}) {
    CHECK_MESSAGE(run.output.find(expected) != std::string::npos, expected);
  }
}
