// The window with a Flax model: its variables as a parameter tree, and a parameter's grid on the canvas.
#include "gui_test_support.h"

using namespace gui_test;  // NOLINT(google-build-using-namespace): the helpers are this test's vocabulary

namespace {

constexpr const char* kFlaxScene = R"(# %%
import jax
import jax.numpy as jnp
import flax.linen as nn
mesh = jax.make_mesh((2, 4), ('data', 'model'), axis_types=(jax.sharding.AxisType.Auto,) * 2)

class MLP(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.Dense(16, use_bias=False,
                     kernel_init=nn.with_partitioning(nn.initializers.lecun_normal(), (None, 'model')))(x)
        return nn.Dense(8, kernel_init=nn.with_partitioning(nn.initializers.lecun_normal(), ('model', 'data')))(x)

model = MLP()
x = jnp.ones((4, 8))
abstract = jax.eval_shape(model.init, jax.random.key(0), x)
shardings = nn.get_sharding(abstract, mesh)
variables = jax.jit(model.init, out_shardings=shardings)(jax.random.key(0), x)
)";

const nlohmann::json* tree_named(const nlohmann::json& stats, const std::string& name) {
  for (const auto& tree : stats.at("trees")) {
    if (tree.at("name") == name) return &tree;
  }
  return nullptr;
}

bool has_row(const nlohmann::json& tree, const std::string& pattern) {
  for (const auto& row : tree.at("rows")) {
    if (std::regex_search(row.get<std::string>(), std::regex(pattern))) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("a Flax model's variables show as a tree with shardings and bytes, and a parameter goes on the canvas") {
  Workdir dir;
  dir.write("scene.py", kFlaxScene);
  const std::string kernel = "variables['params']['Dense_1']['kernel'].value";
  const Run run = run_gui(dir, "scene.py --run-all --select " + quote(kernel) +
                                   " --size 1600x1000 --screenshot shot.png --stats stats.json");
  INFO(run.out);
  REQUIRE(run.status == 0);
  const nlohmann::json stats = stats_of(dir);
  INFO(stats.dump(1));
  for (const auto& cell : stats.at("cells")) CHECK(cell.at("status") == "ok");
  const nlohmann::json* tree = tree_named(stats, "variables");
  REQUIRE(tree != nullptr);
  CHECK(tree->at("type") == "dict");
  // Per device: Dense_0's (8, 16) kernel split 4 ways over 'model' (128 B), Dense_1's (16, 8) kernel split over
  // all 8 devices (64 B) and its replicated (8,) bias (32 B).
  CHECK(tree->at("bytes_per_device") == "224 B");
  CHECK(has_row(*tree, R"(^params  224 B$)"));
  CHECK(has_row(*tree, R"(^  Dense_0  128 B$)"));
  CHECK(has_row(*tree, R"(^    kernel  float32\[8,16\].*spec=P(?:artitionSpec)?\(None, 'model'\).*)"
                       R"(Partitioned\(names=\(None, 'model'\)\)  128 B$)"));
  CHECK(has_row(*tree, R"(^    bias  float32\[8\].*spec=P(?:artitionSpec)?\(\).*  32 B$)"));
  CHECK(has_row(*tree, R"(^    kernel  float32\[16,8\].*spec=P(?:artitionSpec)?\('model', 'data'\).*  64 B$)"));
  // Abstract shapes and shardings alone (no arrays) make no tree.
  CHECK(tree_named(stats, "abstract") == nullptr);
  CHECK(tree_named(stats, "shardings") == nullptr);
  // The selected parameter is on the canvas: P('model', 'data') on a 2x4 mesh cuts it into 4 x 2 blocks, each
  // on its own device, so all eight colours appear in row-major order.
  CHECK(stats.at("selected") == kernel);
  CHECK(stats.at("canvas_caption").get<std::string>().starts_with(kernel + ": float32[16,8]"));
  const Image shot = load_png(dir.file("shot.png"));
  const auto [x0, y0, x1, y1] = canvas_rect(stats);
  check_grid(find_colors(shot, as_vector(kEight), x0, y0, x1, y1), as_vector(kEight), 4, 2, 800);
}

TEST_CASE("a parameter tree refreshes when a cell replaces the model's variables") {
  Workdir dir;
  std::string scene = kFlaxScene;
  scene += R"(
# %%
variables = jax.device_put(variables, jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec()))
)";
  dir.write("scene.py", scene);
  const Run run =
      run_gui(dir, "scene.py --run-all --select " + quote("variables['params']['Dense_0']['kernel'].value") +
                       " --size 1600x1000 --screenshot shot.png --stats stats.json");
  INFO(run.out);
  REQUIRE(run.status == 0);
  const nlohmann::json stats = stats_of(dir);
  INFO(stats.dump(1));
  const nlohmann::json* tree = tree_named(stats, "variables");
  REQUIRE(tree != nullptr);
  // Replicated everywhere now: each device holds every parameter whole (512 + 512 + 32 B).
  CHECK(tree->at("bytes_per_device") == "1.0 KiB");
  // The replicated kernel is one block in one colour.
  const Image shot = load_png(dir.file("shot.png"));
  const auto [x0, y0, x1, y1] = canvas_rect(stats);
  const auto found = find_colors(shot, as_vector(kEight), x0, y0, x1, y1);
  CHECK(found.at(kEight[0]).count > 5000);
  CHECK(found.at(kEight[1]).count == 0);
}

TEST_CASE("the spec editor re-shards a boxed parameter by rebinding its box") {
  Workdir dir;
  dir.write("scene.py", kFlaxScene);
  const std::string kernel = "variables['params']['Dense_1']['kernel'].value";
  const Run run = run_gui(dir, "scene.py --run-all --select " + quote(kernel) + " --apply-spec " + quote(kernel) +
                                   " \"P(None, 'model')\" --size 1600x1000 --screenshot shot.png --stats stats.json");
  INFO(run.out);
  REQUIRE(run.status == 0);
  const nlohmann::json stats = stats_of(dir);
  INFO(stats.dump(1));
  for (const auto& cell : stats.at("cells")) CHECK(cell.at("status") == "ok");
  bool rebound = false;
  for (const auto& cell : stats.at("cells")) {
    rebound = rebound || cell.at("source").get<std::string>().starts_with(
                             "variables['params']['Dense_1']['kernel'] = variables['params']['Dense_1']['kernel']"
                             ".replace_boxed(jax.device_put(variables['params']['Dense_1']['kernel'].value, ");
  }
  CHECK(rebound);
  const nlohmann::json* tree = tree_named(stats, "variables");
  REQUIRE(tree != nullptr);
  // The box keeps its names; the array now has 4 column blocks, each on the two devices of a 'data' pair.
  CHECK(has_row(*tree, R"(^    kernel  float32\[16,8\].*spec=P(?:artitionSpec)?\(None, 'model'\).*)"
                       R"(Partitioned\(names=\('model', 'data'\)\)  128 B$)"));
  const Image shot = load_png(dir.file("shot.png"));
  const auto [x0, y0, x1, y1] = canvas_rect(stats);
  check_grid(find_colors(shot, as_vector(kFour), x0, y0, x1, y1), as_vector(kFour), 1, 4, 800);
}

TEST_CASE("an NNX model and nnx.state(model) show as trees with each Param's annotation, sharding and bytes") {
  Workdir dir;
  dir.write("scene.py", R"(# %%
import jax
import jax.numpy as jnp
from flax import nnx
mesh = jax.make_mesh((2, 4), ('data', 'model'), axis_types=(jax.sharding.AxisType.Auto,) * 2)

class MLP(nnx.Module):
    def __init__(self, rngs):
        init = nnx.initializers.lecun_normal()
        self.up = nnx.Linear(8, 16, use_bias=False, rngs=rngs, kernel_init=nnx.with_partitioning(init, (None, 'model')))
        self.down = nnx.Param(init(rngs.params(), (16, 8)), sharding=('model', 'data'))

with jax.set_mesh(mesh):
    model = MLP(nnx.Rngs(0))
state = nnx.state(model)
)");
  const std::string down = "model.down.value";
  const Run run = run_gui(
      dir, "scene.py --run-all --select " + quote(down) + " --size 1600x1000 --screenshot shot.png --stats stats.json");
  INFO(run.out);
  REQUIRE(run.status == 0);
  const nlohmann::json stats = stats_of(dir);
  INFO(stats.dump(1));
  for (const auto& cell : stats.at("cells")) CHECK(cell.at("status") == "ok");
  const nlohmann::json* tree = tree_named(stats, "model");
  REQUIRE(tree != nullptr);
  CHECK(tree->at("type") == "MLP");
  // Per device: up's (8, 16) kernel split 4 ways over 'model' (128 B), down's (16, 8) in 4 x 2 blocks (64 B).
  CHECK(tree->at("bytes_per_device") == "192 B");
  CHECK(has_row(*tree, R"(^up  128 B$)"));
  CHECK(has_row(*tree, R"(^  kernel  float32\[8,16\].*spec=P(?:artitionSpec)?\(None, 'model'\).*)"
                       R"(Param\(out_sharding=\(None, 'model'\)\)  128 B$)"));
  CHECK(has_row(*tree, R"(^down  float32\[16,8\].*spec=P(?:artitionSpec)?\('model', 'data'\).*)"
                       R"(Param\(out_sharding=\('model', 'data'\)\)  64 B$)"));
  // The state is a tree of the same Variables.
  const nlohmann::json* state = tree_named(stats, "state");
  REQUIRE(state != nullptr);
  CHECK(state->at("type") == "State");
  CHECK(state->at("bytes_per_device") == "192 B");
  // The selected parameter is on the canvas: 4 x 2 blocks, each on its own device, all eight colours in order.
  CHECK(stats.at("selected") == down);
  const Image shot = load_png(dir.file("shot.png"));
  const auto [x0, y0, x1, y1] = canvas_rect(stats);
  check_grid(find_colors(shot, as_vector(kEight), x0, y0, x1, y1), as_vector(kEight), 4, 2, 800);
}
