// The window's views end to end: program view, themes, canvas hover and zoom, state kept between runs.
#include "gui_test_support.h"

using namespace gui_test;  // NOLINT(google-build-using-namespace): the helpers are this test's vocabulary

TEST_CASE("the program view shows the last jit program and the all-reduce the partitioner inserted") {
  Workdir dir;
  // x @ w contracts the dimension both operands shard over 'y': each device holds a (4, 4) partial sum that the
  // partitioner all-reduces over 'y' in two groups of four devices.
  dir.write("scene.py", R"(# %%
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ('x', 'y'), axis_types=(jax.sharding.AxisType.Auto,) * 2)
x = jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, P('x', 'y')))
w = jax.device_put(jnp.ones((16, 4)), NamedSharding(mesh, P('y', None)))
layer = jax.jit(lambda x, w: jnp.dot(x, w))
y = layer(x, w)
)");
  const Run run = run_gui(
      dir,
      "scene.py --run-all --select y --editor-tab Program --size 1600x1000 --screenshot shot.png --stats stats.json");
  INFO(run.out);
  REQUIRE(run.status == 0);
  const nlohmann::json stats = stats_of(dir);
  INFO(stats.dump(1));
  REQUIRE(stats.contains("program"));
  CHECK(stats.at("program").at("name") == "<lambda>");
  CHECK(stats.at("program").at("text").get<std::string>().find("dot_general") != std::string::npos);
  REQUIRE(stats.at("program").at("collectives").size() == 1);
  const std::string collective = stats.at("program").at("collectives")[0].get<std::string>();
  // The default preset is a TPU v3-8, whose make_mesh order puts devices 6,7,4,5 on the second row.
  CHECK(collective.find("all-reduce over ('y',) groups {0,1,2,3},{6,7,4,5}: 96 B sent per device") == 0);
  // Each value with the layout the partitioner gave it: the product keeps x's row split, replicated over 'y'.
  const std::string values = stats.at("program").at("values").get<std::string>();
  CHECK(std::regex_search(values, std::regex(R"(%arg0 +argument +f32\[8,16\] +P\('x', 'y'\) +f32\[4,4\])")));
  CHECK(std::regex_search(values, std::regex(R"(%arg1 +argument +f32\[16,4\] +P\('y', None\) +f32\[4,4\])")));
  CHECK(std::regex_search(values, std::regex(R"(%0 +dot_general +f32\[8,4\] +P\('x', None\) +f32\[4,4\])")));
  // The table's row: a ring all-reduce of a 4x4 f32 partial sum (64 B) over 4 devices sends and receives
  // 2 * (4 - 1) / 4 * 64 = 96 B per device.
  CHECK(std::regex_search(stats.at("program").at("collective_table").get<std::string>(),
                          std::regex(R"(all-reduce +\('y',\) +\{0,1,2,3\} \{6,7,4,5\} +96 B +96 B)")));
  CHECK(stats.at("program").at("lowered").get<std::string>().find(
            "mhlo.sharding = \"{devices=[2,4]0,1,2,3,4,5,6,7}\"") != std::string::npos);
  // The editors pane (below the canvas) shows the program text and the collectives table: many text pixels.
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
}

TEST_CASE("the program view shows a shard_map body with its specs and the all-reduce its psum ran") {
  Workdir dir;
  // Each device sums its (4, 4) block's rows, then psum over 'y' adds the four blocks of a row band: a (4, 1)
  // f32 all-reduce (16 B) over 4 devices, ring cost 2 * 3 / 4 * 16 = 24 B per device.
  dir.write("scene.py", R"(# %%
import jax
import jax.numpy as jnp
from functools import partial
from jax.sharding import NamedSharding, PartitionSpec as P
from jax.experimental.shard_map import shard_map
mesh = jax.make_mesh((2, 4), ('x', 'y'), axis_types=(jax.sharding.AxisType.Auto,) * 2)
x = jax.device_put(jnp.arange(128.0).reshape(8, 16), NamedSharding(mesh, P('x', 'y')))

@partial(shard_map, mesh=mesh, in_specs=P('x', 'y'), out_specs=P('x', None))
def rowsum(b):
    return jax.lax.psum(b.sum(axis=1, keepdims=True), 'y')

s = rowsum(x)
print(s[:, 0].tolist() == x.sum(axis=1).tolist())
)");
  const Run run = run_gui(dir,
                          "scene.py --run-all --select s --editor-tab Program --size 1600x1000 --screenshot "
                          "shot.png --stats stats.json");
  INFO(run.out);
  REQUIRE(run.status == 0);
  const nlohmann::json stats = stats_of(dir);
  INFO(stats.dump(1));
  CHECK(stats.at("cells").back().at("output") == "True\n");
  const auto& program = stats.at("program");
  CHECK(program.at("kind") == "shard_map");
  CHECK(program.at("name") == "rowsum");
  const std::string text = program.at("text").get<std::string>();
  CHECK(text.find("in_specs=(P('x', 'y'),), out_specs=(P('x', None),)") != std::string::npos);
  // The experimental shard_map checks replication (check_rep=True), so 0.11 binds psum_invariant.
  CHECK(text.find("psum_invariant[axes=('y',)") != std::string::npos);
  const std::string values = program.at("values").get<std::string>();
  CHECK(std::regex_search(values, std::regex(R"(in\[0\] +argument +f32\[8,16\] +P\('x', 'y'\) +f32\[4,4\])")));
  CHECK(std::regex_search(values, std::regex(R"(out\[0\] +result +f32\[8,1\] +P\('x', None\) +f32\[4,1\])")));
  REQUIRE(program.at("collectives").size() == 1);
  CHECK(std::regex_search(program.at("collective_table").get<std::string>(),
                          std::regex(R"(all-reduce +\('y',\) +\{0,1,2,3\} \{6,7,4,5\} +24 B +24 B +psum)")));
}

TEST_CASE("the light theme paints light panels, dark text and the same JAX colours") {
  // Mean brightness (0-255) of a block of pixels.
  const auto brightness = [](const Image& image, int x0, int y0, int x1, int y1) {
    double total = 0;
    long count = 0;
    for (int y = y0; y < y1; ++y) {
      for (int x = x0; x < x1; ++x) {
        const uint32_t p = image.at(x, y);
        total += 0.299 * ((p >> 16) & 0xFF) + 0.587 * ((p >> 8) & 0xFF) + 0.114 * (p & 0xFF);
        ++count;
      }
    }
    return total / static_cast<double>(count);
  };
  std::array<double, 2> panel{};
  std::array<double, 2> canvas_margin{};
  std::array<long, 2> dark_text{};
  const std::array<const char*, 2> themes = {"", " --light"};
  for (std::size_t t = 0; t < themes.size(); ++t) {
    Workdir dir;
    (void)run_standard_scene(dir, themes[t]);
    const Image shot = load_png(dir.file("shot.png"));
    const nlohmann::json stats = stats_of(dir);
    const auto [x0, y0, x1, y1] = canvas_rect(stats);
    // The variables pane's empty lower part (two rows of variables at most) and the canvas's left margin.
    panel[t] = brightness(shot, 30, shot.height - 60, x0 - 40, shot.height - 20);
    canvas_margin[t] = brightness(shot, x0 + 2, (y0 + y1) / 2 - 20, x0 + 12, (y0 + y1) / 2 + 20);
    for (int y = 40; y < shot.height / 2; ++y) {
      for (int x = 0; x < x0 - 10; ++x) {
        const uint32_t p = shot.at(x, y);
        if (((p >> 16) & 0xFF) < 80 && ((p >> 8) & 0xFF) < 80 && (p & 0xFF) < 80) ++dark_text[t];
      }
    }
    check_grid(find_colors(shot, as_vector(kEight), x0, y0, x1, y1), as_vector(kEight), 2, 4, 1500);
  }
  INFO("panel " << panel[0] << " / " << panel[1] << ", canvas margin " << canvas_margin[0] << " / "
                << canvas_margin[1]);
  CHECK(panel[0] < 60);
  CHECK(canvas_margin[0] < 60);
  CHECK(panel[1] > 200);
  CHECK(canvas_margin[1] > 200);
  CHECK(dark_text[1] > 2000);  // the console's text is dark on the light theme
}

TEST_CASE("hovering a cell shows its devices, block and bytes, and the wheel zooms about the pointer") {
  std::array<nlohmann::json, 2> stats;
  const std::array<const char*, 2> wheels = {"0", "3"};
  for (std::size_t i = 0; i < wheels.size(); ++i) {
    Workdir dir;
    (void)run_standard_scene(dir, std::string(" --mouse 0.45,0.3 --wheel ") + wheels[i]);
    stats[i] = stats_of(dir);
  }
  // The fitted 2x4 grid fills the canvas's middle: 45% across and 30% down is the second cell of the first row,
  // device 1, which holds rows 0:4 and columns 2:4 of the 8x8 float32 array: 4 x 2 x 4 B = 32 B.
  const std::string expected =
      "TPU 1\ndevices      1\nholds        [0:4, 2:4]\nshard shape  (4, 2)\nbytes        32 B per device (32 B)\n"
      "memory kind  device";
  CHECK(stats[0].at("hover") == expected);
  // Three notches of 15% each; the content under the pointer stays there, so the same cell is still hovered.
  CHECK(stats[1].at("canvas_zoom").get<double>() ==
        doctest::Approx(stats[0].at("canvas_zoom").get<double>() * 1.15 * 1.15 * 1.15));
  CHECK(stats[1].at("hover") == expected);
}

TEST_CASE("the console history and the layout are kept between runs") {
  Workdir dir;
  (void)run_standard_scene(dir, " --persist");  // headless runs save only when asked
  // A hand-moved splitter, as the window saves it.
  std::string settings = read(dir.file("config/settings.ini"));
  const std::string saved = "left_fraction = 0.4\n";
  REQUIRE(settings.find(saved) != std::string::npos);
  settings.replace(settings.find(saved), saved.size(), "left_fraction = 0.3\n");
  dir.write("config/settings.ini", settings);
  dir.write("second.py", "# %%\nz = 1 + 1\n");
  const Run run =
      run_gui(dir, "second.py --run-all --persist --size 1600x1000 --screenshot shot2.png --stats stats2.json");
  INFO(run.out);
  REQUIRE(run.status == 0);
  const nlohmann::json stats = nlohmann::json::parse(read(dir.file("stats2.json")));
  // The first run's cells come first in the second run's history (Up recalls them), then the new cell.
  const auto& history = stats.at("history");
  REQUIRE(history.size() == 3);
  CHECK(history[0].get<std::string>().find("make_mesh((2, 4)") != std::string::npos);
  CHECK(history[2] == "z = 1 + 1");
  // The canvas starts at 30% of the width instead of 40%.
  const auto [x0, y0, x1, y1] = canvas_rect(stats);
  CHECK(x0 > 0.3 * 1600);
  CHECK(x0 < 0.35 * 1600);
  CHECK(read(dir.file("config/settings.ini")).find("left_fraction = 0.3\n") != std::string::npos);
}
