// The Program tab's Explain view: the same rows `shardscope explain` prints for the last jit program, with why each
// collective runs (the op, the operand layout it needs and where the layout it has came from).
#include "gui_test_support.h"

using namespace gui_test;  // NOLINT(google-build-using-namespace): the helpers are this test's vocabulary

TEST_CASE("the Explain view says why a constraint gathers and what each collective costs") {
  Workdir dir;
  // x @ w contracts the dim both operands shard over 'y' (an all-reduce of the partial sums); the constraint then
  // asks for P(None, 'y'), so the P('x', None) product is gathered along 'x'.
  dir.write("scene.py", R"(# %%
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ('x', 'y'), axis_types=(jax.sharding.AxisType.Auto,) * 2)
x = jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, P('x', 'y')))
w = jax.device_put(jnp.ones((16, 4)), NamedSharding(mesh, P('y', None)))
layer = jax.jit(lambda x, w: jax.lax.with_sharding_constraint(jnp.dot(x, w), NamedSharding(mesh, P(None, 'y'))))
y = layer(x, w)
)");
  const Run run = run_gui(dir,
                          "scene.py --run-all --select y --editor-tab Program --program-view Explain --size 1600x1000 "
                          "--screenshot shot.png --stats stats.json");
  INFO(run.out);
  REQUIRE(run.status == 0);
  const nlohmann::json stats = stats_of(dir);
  const std::string explain = stats.at("program").at("explain").get<std::string>();
  INFO(explain);
  CHECK(explain.rfind("# shardscope explain: estimates, not JAX output\nprogram <lambda>: 8 x TPU v3, ran 1 time\n",
                      0) == 0);
  CHECK(explain.find("dot_general contracts a dim sharded over 'y': each device holds a partial result") !=
        std::string::npos);
  CHECK(explain.find("sharding_constraint needs operand 0 as P(None, 'y'); it is P('x', None), from dot_general from "
                     "operand 0") != std::string::npos);
  CHECK(explain.find("memory per device: peak ") != std::string::npos);
  // The pane below the canvas is filled with the table's text.
  const Image shot = load_png(dir.file("shot.png"));
  const auto [x0, y0, x1, y1] = canvas_rect(stats);
  long bright = 0;
  for (int y = y1 + 40; y < shot.height; ++y) {
    for (int x = x0; x < shot.width; ++x) {
      const uint32_t p = shot.at(x, y);
      if (((p >> 16) & 0xFF) > 170 && ((p >> 8) & 0xFF) > 170 && (p & 0xFF) > 170) ++bright;
    }
  }
  CHECK(bright > 3000);
  // A bad view name is a usage error naming it.
  const Run bad = run_gui(dir, "scene.py --program-view Flamegraph --screenshot bad.png");
  CHECK(bad.status == 2);
  CHECK(bad.out.find("--program-view takes Jaxpr, Values, Lowered, Explain or Timeline, got 'Flamegraph'") !=
        std::string::npos);
}
