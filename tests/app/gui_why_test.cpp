// The Program tab's Why panel: for a program with a constraint, why its all-gather runs (the constraint's target
// against the operand's layout, traced back through each equation to the argument), and why a selected value is
// laid out as it is.
#include "gui_test_support.h"

using namespace gui_test;  // NOLINT(google-build-using-namespace): the helpers are this test's vocabulary

namespace {

// h = tanh(x @ w) keeps x's row sharding; the constraint then asks for P(None, 'y'), so h is gathered along 'x'
// (collective 1, after the contraction's all-reduce over 'y').
constexpr const char* kWhyScene = R"(# %%
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ('x', 'y'), axis_types=(jax.sharding.AxisType.Auto,) * 2)
x = jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, P('x', 'y')))
w = jax.device_put(jnp.ones((16, 4)), NamedSharding(mesh, P('y', None)))
def layer(x, w):
    h = jnp.tanh(x @ w)
    return jax.lax.with_sharding_constraint(h, NamedSharding(mesh, P(None, 'y')))
y = jax.jit(layer)(x, w)
)";

const std::string kWhyCommon =
    "scene.py --devices tpu-v3-8 --run-all --select y --editor-tab Program --size 1600x1000 --stats stats.json ";

// Pixels of the dark theme's value colour (204, 230, 204), the Why panel's heading line, inside `rect`.
long heading_pixels(const Image& image, const nlohmann::json& rect) {
  long count = 0;
  const int x0 = static_cast<int>(rect[0].get<double>());
  const int y0 = static_cast<int>(rect[1].get<double>());
  const int x1 = static_cast<int>(rect[2].get<double>());
  const int y1 = static_cast<int>(rect[3].get<double>());
  for (int y = std::max(0, y0); y < y1 && y < image.height; ++y) {
    for (int x = std::max(0, x0); x < x1 && x < image.width; ++x) {
      const uint32_t p = image.at(x, y);
      const int r = static_cast<int>((p >> 16) & 0xFF);
      const int g = static_cast<int>((p >> 8) & 0xFF);
      const int b = static_cast<int>(p & 0xFF);
      if (g > 200 && r > 170 && b > 170 && g > r + 12 && g > b + 12) ++count;
    }
  }
  return count;
}

}  // namespace

TEST_CASE("the Why panel traces a constraint's all-gather back to the argument, and a value to its source") {
  Workdir dir;
  dir.write("scene.py", kWhyScene);
  const Run run = run_gui(dir, kWhyCommon + "--animate-collective 1 --screenshot gather.png");
  INFO(run.out);
  REQUIRE(run.status == 0);
  const nlohmann::json stats = stats_of(dir);
  const std::string why = stats.at("program").at("why").get<std::string>();
  INFO(why);
  CHECK(why.rfind("why all-gather over 'x' for eq 2 (sharding_constraint) of %1\n", 0) == 0);
  CHECK(why.find("sharding_constraint needs operand 0 as P(None, 'y'), but it is P('x', None)") != std::string::npos);
  CHECK(why.find("%1 (tanh) f32[8,4] is P('x', None)") != std::string::npos);
  CHECK(why.find("dim 0 over 'x': dot_general (eq 0) passes on the sharding of its operand 0") != std::string::npos);
  CHECK(why.find("%arg0 f32[8,16] is P('x', 'y'): the caller passed argument 0 laid out so (committed)") !=
        std::string::npos);
  // The heading line is drawn where the stats say, in the theme's value colour.
  const Image shot = load_png(dir.file("gather.png"));
  CHECK(heading_pixels(shot, stats.at("program").at("why_rect")) > 150);

  // A value selected in the Values view: the contraction's result took its rows from argument 0.
  const Run value = run_gui(dir, kWhyCommon + "--program-view Values --why-value %0 --screenshot value.png");
  INFO(value.out);
  REQUIRE(value.status == 0);
  const std::string why_value = stats_of(dir).at("program").at("why").get<std::string>();
  INFO(why_value);
  CHECK(why_value.rfind("why %0 (dot_general) f32[8,4] is P('x', None)\n", 0) == 0);
  CHECK(why_value.find("%arg0 f32[8,16] is P('x', 'y')") != std::string::npos);

  // Nothing selected: the panel asks for a selection and says no more.
  REQUIRE(run_gui(dir, kWhyCommon + "--screenshot none.png").status == 0);
  CHECK(stats_of(dir).at("program").at("why").get<std::string>().empty());

  // An unknown value fails the run, naming the values there are.
  const Run bad = run_gui(dir, kWhyCommon + "--why-value %9 --screenshot bad.png");
  CHECK(bad.status == 1);
  CHECK(bad.out.find("--why-value: the last program has no value '%9' (its values: %arg0, %arg1, %0, %1, %2)") !=
        std::string::npos);
}
