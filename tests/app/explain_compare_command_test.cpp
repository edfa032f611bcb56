// `shardscope explain --compare PRESET`, `--compare-spec NAME=SPEC` and `--timeline out.svg` end to end: the
// same programs re-priced on another preset or re-partitioned with another argument layout, and the SVG timeline.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "support/cell_replay.h"

using shardscope::testing::read_text;
using shardscope::testing::run_shardscope;

namespace {

std::filesystem::path temp_path(const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("shardscope_explain_compare_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir / name;
}

// x @ w with w sharded on its contracting dim (an all-reduce over 'model'), lowered from abstract arguments.
const char* const kScript = R"py(import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ('data', 'model'), axis_types=(jax.sharding.AxisType.Auto,) * 2)
x = jax.ShapeDtypeStruct((64, 4096), jnp.float32, sharding=NamedSharding(mesh, P('data', 'model')))
w = jax.ShapeDtypeStruct((4096, 4096), jnp.float32, sharding=NamedSharding(mesh, P('model', None)))
def layer(x, w):
    return jax.nn.relu(x @ w)
jax.jit(layer).lower(x, w)
)py";

std::string script_path() {
  const std::filesystem::path path = temp_path("layer.py");
  std::ofstream(path, std::ios::binary) << kScript;
  return path.string();
}

}  // namespace

TEST_CASE("explain --compare-spec re-partitions with another layout and shows the collective that goes away") {
  const auto run = run_shardscope({"explain", script_path(), "--devices", "tpu-v5e-8", "--compare-spec",
                                   "args[1]=P(None, 'model')", "--compare-spec", "0=P('data', None)"},
                                  {});
  INFO(run.output);
  REQUIRE(run.status == 0);
  CHECK(run.output.find("program layer: as written vs args[1]=P(None, 'model'), 0=P('data', None)") !=
        std::string::npos);
  CHECK(run.output.find("collectives that differ:") != std::string::npos);
  CHECK(run.output.find("all-reduce over 'model' for dot_general") != std::string::npos);
  CHECK(run.output.find(" wins: ") != std::string::npos);

  const auto csv = run_shardscope({"explain", script_path(), "--devices", "tpu-v5e-8", "--format", "csv",
                                   "--compare-spec=args[1]=P(None, 'model')"},
                                  {});
  REQUIRE(csv.status == 0);
  CHECK(csv.output.find("program,quantity,base,other,delta\nlayer,hardware,8 x TPU v5e,8 x TPU v5e,same\n") !=
        std::string::npos);

  const auto missing = run_shardscope({"explain", script_path(), "--compare-spec", "v=P()"}, {});
  CHECK(missing.status == 1);
  CHECK(missing.output.find("the program has no argument 'v' (its arguments: args[0], args[1])") != std::string::npos);
  const auto malformed = run_shardscope({"explain", script_path(), "--compare-spec", "P('x')"}, {});
  CHECK(malformed.status == 2);
  CHECK(malformed.output.find("--compare-spec wants NAME=SPEC") != std::string::npos);
}

TEST_CASE("explain --compare PRESET prices the same plan on another preset's devices, --timeline writes the SVG") {
  const std::string svg_path = temp_path("timeline.svg").string();
  const auto run = run_shardscope({"explain", script_path(), "--devices", "tpu-v5e-8", "--compare", "tpu-v5p-16",
                                   "--format", "md", "--timeline", svg_path},
                                  {});
  INFO(run.output);
  REQUIRE(run.status == 0);
  CHECK(run.output.find("## program layer: 8 x TPU v5e vs tpu-v5p-16") != std::string::npos);
  CHECK(run.output.find("| hardware | 8 x TPU v5e | 8 x TPU v5p | changed |") != std::string::npos);
  CHECK(run.output.find("| collectives | 1 | 1 | same |") != std::string::npos);
  const std::string svg = read_text(svg_path);
  CHECK(svg.find("<g class=\"program\" data-program=\"layer\"") != std::string::npos);
  CHECK(svg.find("class=\"interval collective\"") != std::string::npos);
  CHECK(svg.find("data-schedule=\"overlapped\"") != std::string::npos);

  const auto kind =
      run_shardscope({"explain", script_path(), "--devices", "tpu-v5e-8", "--compare", "TPU v6 lite"}, {});
  REQUIRE(kind.status == 0);
  CHECK(kind.output.find("program layer: 8 x TPU v5e vs TPU v6 lite") != std::string::npos);
  const auto bad = run_shardscope({"explain", script_path(), "--compare", "abacus-9"}, {});
  CHECK(bad.status == 2);
  CHECK(bad.output.find("--compare 'abacus-9' is neither a device preset") != std::string::npos);
}
