// `shardscope explain --why` and, from Python, report.why(i) and shardscope.compare(...): the chain of layouts
// behind each collective, and two layouts or two presets of one program side by side.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "support/cell_replay.h"

using shardscope::testing::run_shardscope;

namespace {

std::string write_why_script(const std::string& name, const std::string& code) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("shardscope_why_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::filesystem::path path = dir / name;
  std::ofstream(path, std::ios::binary) << code;
  return path.string();
}

// h = tanh(x @ w) on P('data', None); the constraint asks for P(None, 'model'): an all-gather over 'data'.
const char* const kConstrained = R"py(import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ('data', 'model'), axis_types=(jax.sharding.AxisType.Auto,) * 2)
x = jax.device_put(jnp.ones((64, 128)), NamedSharding(mesh, P('data', 'model')))
w = jax.device_put(jnp.ones((128, 256)), NamedSharding(mesh, P('model', None)))

@jax.jit
def layer(x, w):
    h = jnp.tanh(x @ w)
    return jax.lax.with_sharding_constraint(h, NamedSharding(mesh, P(None, 'model')))

y = layer(x, w)
)py";

}  // namespace

TEST_CASE("explain --why traces every collective and result back to the layouts behind it") {
  const std::string script = write_why_script("layer.py", kConstrained);
  const auto run = run_shardscope({"explain", script, "--devices", "tpu-v5e-8", "--why"}, {});
  INFO(run.output);
  REQUIRE(run.status == 0);
  CHECK(run.output.find("\n# why: shardscope's reading of the partition plan\n"
                        "program layer: why each collective runs and each result is laid out so\n") !=
        std::string::npos);
  CHECK(run.output.find("why all-reduce over 'model' for eq 0 (dot_general) of %0\n") != std::string::npos);
  CHECK(run.output.find("why all-gather over 'data' for eq 2 (sharding_constraint) of %1\n"
                        "  sharding_constraint needs operand 0 as P(None, 'model'), but it is P('data', None)\n") !=
        std::string::npos);
  CHECK(run.output.find("%arg0 f32[64,128] is P('data', 'model'): the caller passed argument 0 laid out so") !=
        std::string::npos);
  CHECK(run.output.find("why result 0, %2 (sharding_constraint) f32[64,256] is P(None, 'model')\n") !=
        std::string::npos);
  // Markdown keeps the prose in a code block after the table; CSV and comparisons have no room for it.
  const auto md = run_shardscope({"explain", script, "--devices", "tpu-v5e-8", "--why", "--format", "md"}, {});
  REQUIRE(md.status == 0);
  CHECK(md.output.find("\n## Why\n\n```text\nprogram layer: why each collective runs") != std::string::npos);
  const auto csv = run_shardscope({"explain", script, "--why", "--format", "csv"}, {});
  CHECK(csv.status == 2);
  CHECK(csv.output.find("--why adds prose after the table: it takes --format text or md, without --compare") !=
        std::string::npos);
}

TEST_CASE("report.why(i) and shardscope.compare from Python") {
  const std::string script = write_why_script("from_python.py", std::string(kConstrained) + R"py(
import shardscope
report = shardscope.explain(layer, x, w)
print(len(report.collectives), repr(report.why(1)).splitlines()[0])
print('why result 0' in str(report.why()))
for bad in ('1', 5):
    try:
        report.why(bad)
    except (TypeError, IndexError) as e:
        print(type(e).__name__ + ':', e)
swap = shardscope.compare(layer, x, w, specs={'x': P('data', None), 'w': P(None, None)})
print(swap.other_label, '|', swap.verdict)
print([(d['kind'], d['axes'], d['base_count'], d['other_count']) for d in swap.differences])
print(swap.to_csv().splitlines()[0])
on_v5p = shardscope.compare(layer, x, w, preset='tpu-v5p-16')
print(on_v5p.base_label, '->', on_v5p.other_label, on_v5p.other_serial_s > 0, 'TPU v5p' in repr(on_v5p))
for kwargs in ({}, {'preset': 'abacus'}, {'specs': {'x': 'data'}}):
    try:
        shardscope.compare(layer, x, w, **kwargs)
    except (TypeError, ValueError) as e:
        print(type(e).__name__ + ':', e)
)py");
  const auto run = run_shardscope({"run", script, "--devices", "tpu-v5e-8"}, {});
  INFO(run.output);
  REQUIRE(run.status == 0);
  CHECK(run.output.find("2 why all-gather over 'data' for eq 2 (sharding_constraint) of %1\n") != std::string::npos);
  CHECK(run.output.find("\nTrue\n") != std::string::npos);
  CHECK(run.output.find("TypeError: why takes a collective index (int), got str: '1'\n") != std::string::npos);
  CHECK(run.output.find("IndexError: the program has 2 collectives; got index 5\n") != std::string::npos);
  // x on P('data', None) and w whole: no partial sums over 'model', so the all-reduce goes away. (With w still
  // split on its contraction, XLA would slice x and keep the all-reduce.)
  CHECK(run.output.find("x=P('data', None), w=P(None, None) | x=P('data', None), w=P(None, None) wins") !=
        std::string::npos);
  CHECK(run.output.find("('all-reduce', 'model', 1, 0)") != std::string::npos);
  CHECK(run.output.find("program,quantity,base,other,delta\n") != std::string::npos);
  CHECK(run.output.find("8 x TPU v5e -> tpu-v5p-16 True True\n") != std::string::npos);
  CHECK(run.output.find("ValueError: compare needs preset= (a device preset or device kind) or specs=") !=
        std::string::npos);
  CHECK(run.output.find("ValueError: 'abacus' is neither a device preset (") != std::string::npos);
  CHECK(run.output.find("TypeError: specs['x'] must be a PartitionSpec, got str: 'data'\n") != std::string::npos);
}
