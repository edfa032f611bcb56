// `shardscope explain` end to end and `shardscope.explain` from Python: the programs a script ran or lowered,
// priced row by row, with the collectives JAX's partitioner would insert and their bytes per device.
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
      std::filesystem::temp_directory_path() / ("shardscope_explain_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir / name;
}

std::string write_script(const std::string& name, const std::string& code) {
  const std::filesystem::path path = temp_path(name);
  std::ofstream(path, std::ios::binary) << code;
  return path.string();
}

// x: f32[64,128] on P('data', 'model') @ w: f32[128,256] on P('model', None), on a 2x4 mesh: each device
// multiplies [32,32] by [32,256] and the partial f32[32,256] (32768 B) is all-reduced over 'model' (n = 4),
// each device sending 2 * 3/4 * 32768 = 49152 B; relu then runs on the P('data', None) result.
const char* const kScript = R"py(import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ('data', 'model'), axis_types=(jax.sharding.AxisType.Auto,) * 2)
x = jax.device_put(jnp.ones((64, 128)), NamedSharding(mesh, P('data', 'model')))
w = jax.device_put(jnp.ones((128, 256)), NamedSharding(mesh, P('model', None)))

@jax.jit
def layer(x, w):
    return jax.nn.relu(x @ w)

y = layer(x, w)
y = layer(x, w)
print(y.sharding.spec)
big = jax.ShapeDtypeStruct((8192, 8192), jnp.float32, sharding=NamedSharding(mesh, P(None, 'model')))
def gram(a):
    return a.T @ a
jax.jit(gram).lower(big)
)py";

}  // namespace

TEST_CASE("explain --format csv lists every program's equations and collectives with the ring's bytes") {
  const std::string script = write_script("layer.py", kScript);
  const std::string csv_path = temp_path("layer.csv").string();
  const auto run =
      run_shardscope({"explain", script, "--devices", "tpu-v5e-8", "--format", "csv", "--output", csv_path}, {});
  INFO(run.output);
  REQUIRE(run.status == 0);
  CHECK(run.output.find("P('data',)") != std::string::npos);  // the script's own output still shows
  const std::string csv = read_text(csv_path);
  INFO(csv);
  CHECK(csv.rfind("program,row,kind,op,axes,bytes_per_device,flops,est_time_s,bound,reason,", 0) == 0);
  CHECK(csv.find("layer,1,all-reduce,dot_general,model,49152,") != std::string::npos);
  CHECK(csv.find(",equation,dot_general,data,") != std::string::npos);
  // The lowered-only program: a.T @ a with a on P(None, 'model') contracts the unsharded dim; its operands are
  // gathered along 'model' or the product comes out sharded: either way every row names its reason.
  CHECK(csv.find("\ngram,") != std::string::npos);
}

TEST_CASE("explain as text counts runs, prints totals and the memory fit on the mesh's hardware") {
  const std::string script = write_script("layer_text.py", kScript);
  const auto run = run_shardscope({"explain", script, "--devices", "tpu-v5e-8"}, {});
  INFO(run.output);
  REQUIRE(run.status == 0);
  CHECK(run.output.find("# shardscope explain: estimates, not JAX output\n") != std::string::npos);
  CHECK(run.output.find("program layer: 8 x TPU v5e, ran 2 times\n") != std::string::npos);
  CHECK(run.output.find("program gram: 8 x TPU v5e, lowered only\n") != std::string::npos);
  CHECK(run.output.find("of 16 GB HBM: fits") != std::string::npos);
  CHECK(run.output.find("totals per device: compute ") != std::string::npos);
  // Priced on another kind of chip: the same plan, H100 figures.
  const auto on_h100 =
      run_shardscope({"explain", script, "--devices", "tpu-v5e-8", "--hardware", "NVIDIA H100 80GB HBM3"}, {});
  CHECK(on_h100.output.find("program layer: 8 x H100, ran 2 times") != std::string::npos);
}

TEST_CASE("explain rejects a bad format or hardware with a usage error naming the value") {
  const std::string script = write_script("noop.py", "x = 1\n");
  const auto format = run_shardscope({"explain", script, "--format", "xlsx"}, {});
  CHECK(format.status == 2);
  CHECK(format.output.find("--format must be text, md or csv, not 'xlsx'") != std::string::npos);
  const auto hardware = run_shardscope({"explain", script, "--hardware", "abacus"}, {});
  CHECK(hardware.status == 2);
  CHECK(hardware.output.find("--hardware 'abacus' names no device kind") != std::string::npos);
  const auto nothing = run_shardscope({"explain", script}, {});
  CHECK(nothing.status == 0);
  CHECK(nothing.output.find("no jit program ran or was lowered") != std::string::npos);
}

TEST_CASE("shardscope.explain(jitted, *args) from Python returns rows, totals and the table") {
  const std::string script = write_script("from_python.py", R"py(import jax, jax.numpy as jnp, shardscope
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ('data', 'model'), axis_types=(jax.sharding.AxisType.Auto,) * 2)
x = jax.ShapeDtypeStruct((64, 128), jnp.float32, sharding=NamedSharding(mesh, P('data', 'model')))
w = jax.ShapeDtypeStruct((128, 256), jnp.float32, sharding=NamedSharding(mesh, P('model', None)))
report = shardscope.explain(jax.jit(lambda x, w: x @ w), x, w)
print([(r['kind'], r['axes'], r['bytes_per_device']) for r in report.collectives])
print(report.memory_fit, report.bound in ('compute', 'memory', 'communication'))
print(repr(report).splitlines()[1])
print(report.to_csv().splitlines()[0].split(',')[:4])
try:
    shardscope.explain(jax.jit(lambda x, w: x @ w), x, w, hardware=3)
except TypeError as e:
    print('TypeError:', e)
)py");
  const auto run = run_shardscope({"run", script, "--devices", "tpu-v5e-8"}, {});
  INFO(run.output);
  REQUIRE(run.status == 0);
  CHECK(run.output.find("[('all-reduce', 'model', 49152)]\n") != std::string::npos);
  CHECK(run.output.find("fits True\n") != std::string::npos);
  CHECK(run.output.find("program <lambda>: 8 x TPU v5e, lowered only\n") != std::string::npos);
  CHECK(run.output.find("['program', 'row', 'kind', 'op']\n") != std::string::npos);
  CHECK(run.output.find("TypeError: hardware must be a device kind string, got int: 3\n") != std::string::npos);
}

TEST_CASE("the README's explain example runs and prices both of its programs") {
  const std::string example = std::string(SHARDSCOPE_SOURCE_DIR) + "/examples/explain_layer.py";
  const std::string csv_path = temp_path("readme.csv").string();
  const auto run =
      run_shardscope({"explain", example, "--devices", "tpu-v5e-8", "--format", "csv", "--output", csv_path}, {});
  INFO(run.output);
  REQUIRE(run.status == 0);
  const std::string csv = read_text(csv_path);
  CHECK(csv.find("\nlayer,1,all-reduce,dot_general,model,49152,") != std::string::npos);
  CHECK(csv.find("\ngram,1,all-gather,dot_general,model,100663296,") != std::string::npos);
}
