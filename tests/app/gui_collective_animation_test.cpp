// Selecting a collective animates it on the device view: a ring all-gather over 'y' on a 2x4 TPU v5e mesh draws
// amber arrows between neighbouring chips, fewer at later steps of the line, and none when nothing is selected.
#include "gui_test_support.h"

using namespace gui_test;  // NOLINT(google-build-using-namespace): the helpers are this test's vocabulary

namespace {

// Pixels of the animation's send colour (255, 170, 0) inside the canvas.
long send_pixels(const Workdir& dir, const std::string& shot) {
  const Image image = load_png(dir.file(shot));
  const auto [x0, y0, x1, y1] = canvas_rect(stats_of(dir));
  long count = 0;
  for (int y = y0 + 40; y < y1 && y < image.height; ++y) {  // below the caption line
    for (int x = x0; x < x1 && x < image.width; ++x) {
      const uint32_t p = image.at(x, y);
      const int r = static_cast<int>((p >> 16) & 0xFF);
      const int g = static_cast<int>((p >> 8) & 0xFF);
      const int b = static_cast<int>(p & 0xFF);
      if (r > 235 && g > 150 && g < 190 && b < 40) ++count;
    }
  }
  return count;
}

}  // namespace

TEST_CASE("a ring all-gather steps across the ICI links of a 2x4 mesh on the device view") {
  Workdir dir;
  dir.write("scene.py", R"(# %%
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ('x', 'y'), axis_types=(jax.sharding.AxisType.Auto,) * 2)
x = jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, P('x', 'y')))
gather = jax.jit(lambda x: jax.lax.with_sharding_constraint(x, NamedSharding(mesh, P('x', None))))
y = gather(x)
)");
  const std::string common =
      "scene.py --devices tpu-v5e-8 --run-all --select y --editor-tab Program --size 1600x1000 "
      "--stats stats.json ";
  const Run first = run_gui(dir, common + "--animate-collective 0:0 --screenshot step0.png");
  INFO(first.out);
  REQUIRE(first.status == 0);
  const long step0 = send_pixels(dir, "step0.png");
  const Run last = run_gui(dir, common + "--animate-collective 0:2 --screenshot step2.png");
  REQUIRE(last.status == 0);
  const long step2 = send_pixels(dir, "step2.png");
  const Run none = run_gui(dir, common + "--device-view --screenshot none.png");
  REQUIRE(none.status == 0);
  const long idle = send_pixels(dir, "none.png");
  INFO("send pixels: step 0 " << step0 << ", step 2 " << step2 << ", none " << idle);
  // A line of 4 chips sends 6 chunks per group at the first step and 2 at the last.
  CHECK(step0 > 400);
  CHECK(step2 > 100);
  CHECK(step2 < step0);
  CHECK(idle == 0);
  const Run bad = run_gui(dir, "scene.py --animate-collective x --screenshot bad.png");
  CHECK(bad.status == 2);
  CHECK(bad.out.find("--animate-collective takes N or N:STEP (0-based), got 'x'") != std::string::npos);
}
