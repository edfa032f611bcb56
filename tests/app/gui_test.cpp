// The explorer window end to end: the real binary under Xvfb, its screenshots and exports checked by pixels.
#include "gui_test_support.h"

using namespace gui_test;  // NOLINT(google-build-using-namespace): the helpers are this test's vocabulary

TEST_CASE("the window shows the console, variables and a 2x4 grid in JAX's colours") {
  Workdir dir;
  dir.write("scene.py", kScene);
  const Run run = run_gui(dir, kShot);
  INFO(run.out);
  REQUIRE(run.status == 0);
  const Image shot = load_png(dir.file("shot.png"));
  CHECK(shot.width == 1600);
  CHECK(shot.height == 1000);
  const nlohmann::json stats = stats_of(dir);
  const auto [x0, y0, x1, y1] = canvas_rect(stats);
  CHECK(x0 > shot.width / 3);  // the canvas is right of the console
  check_grid(find_colors(shot, as_vector(kEight), x0, y0, x1, y1), as_vector(kEight), 2, 4, 1500);
  // The console (top left) shows text: many bright pixels on the dark background.
  long bright = 0;
  for (int y = 40; y < shot.height / 2; ++y) {
    for (int x = 0; x < x0 - 10; ++x) {
      const uint32_t p = shot.at(x, y);
      if (((p >> 16) & 0xFF) > 170 && ((p >> 8) & 0xFF) > 170 && (p & 0xFF) > 170) ++bright;
    }
  }
  CHECK(bright > 2000);
  // visualize_array_sharding's picture appears inline in the console too, in the same colours.
  const auto inline_grid = find_colors(shot, as_vector(kEight), 0, 0, x0 - 10, shot.height);
  check_grid(inline_grid, as_vector(kEight), 2, 4, 100);
  for (const auto& cell : stats.at("cells")) CHECK(cell.at("status") == "ok");
}

TEST_CASE("--ui-scale enlarges fonts and widgets for HiDPI screens") {
  std::array<int, 2> canvas_tops{};
  std::array<int, 2> canvas_widths{};
  const std::array<const char*, 2> scales = {"1", "1.5"};
  for (std::size_t i = 0; i < scales.size(); ++i) {
    Workdir dir;
    (void)run_standard_scene(dir, std::string(" --ui-scale ") + scales[i]);
    const auto [x0, y0, x1, y1] = canvas_rect(stats_of(dir));
    canvas_tops[i] = y0;
    canvas_widths[i] = x1 - x0;
  }
  // The canvas starts below the menu bar, the pane title and the toolbar, all one and a half times as tall.
  CHECK(canvas_tops[1] > canvas_tops[0] * 13 / 10);
  CHECK(canvas_widths[1] > canvas_widths[0] * 8 / 10);  // the layout still fits the window
}

TEST_CASE("the mesh editor switches the device preset, clearing the namespace, and refuses unknown presets") {
  {
    Workdir dir;
    (void)run_standard_scene(dir, " --switch-devices tpu-v4-16 --editor-tab Mesh --device-view");
    const nlohmann::json stats = stats_of(dir);
    INFO(stats.dump(1));
    CHECK(stats.at("device_preset") == "tpu-v4-16");
    // The device view shows the new devices, idle (the namespace is empty), fitted to the canvas: eight boxes of
    // the dark theme's idle colour, each well over 5000 pixels at this size.
    const Image shot = load_png(dir.file("shot.png"));
    const auto [x0, y0, x1, y1] = canvas_rect(stats);
    const Region idle = find_colors(shot, {0x484A52}, x0, y0, x1, y1).at(0x484A52);
    CHECK(idle.count > 8 * 5000);
    CHECK(idle.x1 - idle.x0 > (x1 - x0) / 2);  // both hosts are inside the canvas
    CHECK(stats.at("device_count") == 8);
    for (const auto& cell : stats.at("cells")) CHECK(cell.at("status") == "ok");
    CHECK(stats.at("cells").back().at("source").get<std::string>().find("shardscope.use_devices('tpu-v4-16')") !=
          std::string::npos);
    bool in_history = false;  // the switch is replayable code in the console history
    for (const auto& entry : stats.at("history")) {
      in_history |= entry.get<std::string>().find("shardscope.use_devices('tpu-v4-16')") != std::string::npos;
    }
    CHECK(in_history);
  }
  {
    Workdir dir;
    const Run run = run_standard_scene(dir, " --switch-devices tpu-v9-8");
    CHECK(run.out.find("switch-devices tpu-v9-8: ValueError: Unknown device preset 'tpu-v9-8'") != std::string::npos);
    const nlohmann::json stats = stats_of(dir);
    CHECK(stats.at("device_preset") == "tpu-v3-8");
    CHECK(stats.at("cells").size() == 2);  // only the scene's cells ran
  }
}

TEST_CASE("re-sharding through the spec editor redraws the canvas and writes the device_put line") {
  Workdir dir;
  dir.write("scene.py", kScene);
  const Run run = run_gui(dir, kShot + " --apply-spec x \"P('y', None)\" --persist");
  INFO(run.out);
  REQUIRE(run.status == 0);
  const Image shot = load_png(dir.file("shot.png"));
  const nlohmann::json stats = stats_of(dir);
  const auto [x0, y0, x1, y1] = canvas_rect(stats);
  // P('y', None) on the 2x4 mesh: four row blocks over 'y', replicated over 'x'.
  check_grid(find_colors(shot, as_vector(kFour), x0, y0, x1, y1), as_vector(kFour), 4, 1, 1500);
  CHECK(find_colors(shot, {0xD6616B}, x0, y0, x1, y1).at(0xD6616B).count == 0);
  const std::string line = "x = jax.device_put(x, NamedSharding(mesh, P('y', None)))";
  CHECK(history_has(stats, line));
  CHECK(std::filesystem::exists(dir.file("config/history.jsonl")));
  CHECK(read(dir.file("config/history.jsonl")).find("P('y', None)") != std::string::npos);
  const auto& cells = stats.at("cells");
  CHECK(cells.back().at("source") == line);
  CHECK(cells.back().at("from_gui") == true);
  CHECK(cells.back().at("status") == "ok");
}

TEST_CASE("an invalid spec shows JAX's error and changes nothing") {
  Workdir dir;
  dir.write("scene.py", kScene);
  const Run run = run_gui(dir, kShot + " --apply-spec x \"P('x', 'x')\"");
  INFO(run.out);
  REQUIRE(run.status == 0);
  CHECK(run.out.find("DuplicateSpecError: A single NamedSharding spec specification can map every mesh axis to at "
                     "most one positional dimension, but P('x', 'x') has duplicate entries for `x`") !=
        std::string::npos);
  const Image shot = load_png(dir.file("shot.png"));
  const nlohmann::json stats = stats_of(dir);
  const auto [x0, y0, x1, y1] = canvas_rect(stats);
  check_grid(find_colors(shot, as_vector(kEight), x0, y0, x1, y1), as_vector(kEight), 2, 4, 1500);
  CHECK(stats.at("cells").size() == 2);  // only the scene's cells ran
  for (const auto& entry : stats.at("history"))
    CHECK(entry.get<std::string>().find("P('x', 'x')") == std::string::npos);
}

TEST_CASE("a long cell keeps frames coming and Stop interrupts it") {
  for (const char* body : {"import time\nfor _ in range(3000):\n    time.sleep(0.01)\n",
                           "import time\nstart = time.time()\nwhile time.time() - start < 30:\n    pass\n",
                           // One engine call of about 200 x 17 GFLOP (tens of seconds): Stop must reach the engine,
                           // which holds the GIL until the program returns.
                           "def many(x):\n    for _ in range(200):\n        x = jnp.tanh(x @ x)\n    return x\n"
                           "y = jax.jit(many)(jnp.ones((2048, 2048)))\n"}) {
    INFO(body);
    Workdir dir;
    dir.write("scene.py", std::string(kScene) + "\n# %%\n" + body);
    // After the Stop, the spec editor runs one more cell on the same session.
    const Run run = run_gui(dir, kShot + " --interrupt-after 4 --apply-spec x \"P('y', None)\"");
    INFO(run.out);
    REQUIRE(run.status == 0);
    const nlohmann::json stats = stats_of(dir);
    INFO(stats.dump(1));
    // Frames keep coming while the cell runs: about 60 a second on a quiet machine, fewer under a sanitizer on a
    // loaded machine. A window frozen by the cell paints nothing until the Stop, so its longest gap spans the whole
    // busy stretch; the bounds are relative to that stretch so that a slow machine does not read as a freeze.
    const double busy_ms = stats.at("interrupted_after").get<double>() * 1000;
    CHECK(stats.at("while_busy").at("frames").get<int>() >= 10);
    CHECK(stats.at("while_busy").at("max_gap_ms").get<double>() < busy_ms / 2);
    // Stop reaches the cell: the session is idle well before the cell's own end (30 s, or tens of seconds).
    CHECK(stats.at("cells_seconds").get<double>() - stats.at("interrupted_after").get<double>() < 10);
    const auto& cells = stats.at("cells");
    REQUIRE(cells.size() == 4);
    CHECK(cells[2].at("status") == "interrupted");
    CHECK(cells[2].at("output").get<std::string>().find("KeyboardInterrupt") != std::string::npos);
    // The session goes on: the next cell runs on the earlier arrays and the canvas shows its result.
    CHECK(cells[3].at("source") == "x = jax.device_put(x, NamedSharding(mesh, P('y', None)))");
    CHECK(cells[3].at("status") == "ok");
    const Image shot = load_png(dir.file("shot.png"));
    const auto [x0, y0, x1, y1] = canvas_rect(stats);
    check_grid(find_colors(shot, as_vector(kFour), x0, y0, x1, y1), as_vector(kFour), 4, 1, 1500);
  }
}

TEST_CASE("exported SVG and PNG show what the window shows") {
  Workdir dir;
  dir.write("scene.py", kScene);
  const Run run = run_gui(dir, kShot + " --export-svg grid.svg --export-png grid.png --png-scale 2");
  INFO(run.out);
  REQUIRE(run.status == 0);
  const Image shot = load_png(dir.file("shot.png"));
  const auto [x0, y0, x1, y1] = canvas_rect(stats_of(dir));
  const auto window = find_colors(shot, as_vector(kEight), x0, y0, x1, y1);
  const Image png = load_png(dir.file("grid.png"));
  const auto exported = find_colors(png, as_vector(kEight), 0, 0, png.width, png.height);
  check_grid(exported, as_vector(kEight), 2, 4, 4000);
  // Same cell proportions in the window and the PNG.
  const Region& a = window.at(kEight[0]);
  const Region& b = exported.at(kEight[0]);
  const double window_aspect = static_cast<double>(a.x1 - a.x0) / (a.y1 - a.y0);
  const double png_aspect = static_cast<double>(b.x1 - b.x0) / (b.y1 - b.y0);
  CHECK(window_aspect == doctest::Approx(png_aspect).epsilon(0.05));
  // The SVG has the eight cells in the same colours and order, with the same proportions.
  const std::string svg = read(dir.file("grid.svg"));
  const std::regex rect(
      R"re(<rect class="cell" x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)" height="([0-9.]+)" fill="#([0-9A-F]{6})")re");
  std::vector<std::array<double, 4>> boxes;
  std::vector<uint32_t> fills;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), rect); it != std::sregex_iterator(); ++it) {
    boxes.push_back({std::stod((*it)[1]), std::stod((*it)[2]), std::stod((*it)[3]), std::stod((*it)[4])});
    fills.push_back(static_cast<uint32_t>(std::stoul((*it)[5], nullptr, 16)));
  }
  REQUIRE(fills.size() == 8);
  CHECK(fills == as_vector(kEight));
  CHECK(boxes[0][2] / boxes[0][3] == doctest::Approx(png_aspect).epsilon(0.05));
  CHECK(boxes[1][0] > boxes[0][0]);
  CHECK(boxes[4][1] > boxes[0][1]);
}

TEST_CASE("shardscope with no arguments opens the window on the default scene") {
  Workdir dir;
  // Interactive mode: an interrupt after the scene has run closes the window cleanly.
  const std::string command = "cd " + quote(dir.path.string()) + " && " + kLeakCheckOff +
                              " SHARDSCOPE_CONFIG_DIR=" + quote(dir.file("config")) +
                              " xvfb-run -a -s '-screen 0 1920x1200x24' timeout --preserve-status -s INT 20 " +
                              quote(SHARDSCOPE_BINARY) + " > " + quote(dir.file("out.txt")) + " 2>&1";
  const int raw = std::system(command.c_str());
  INFO(read(dir.file("out.txt")));
  CHECK(WIFEXITED(raw));
  CHECK(WEXITSTATUS(raw) == 0);
  // The terminal scene did not run; the window ran the default scene's cells and saved their history.
  CHECK(read(dir.file("out.txt")).find("Sharding an 8192x8192") == std::string::npos);
  CHECK(read(dir.file("config/history.jsonl")).find("make_mesh((2, 4)") != std::string::npos);
}

TEST_CASE("a scene's NaN scale fails its cell, not the window, an unwritable history is said once") {
  Workdir dir;
  dir.write("scene.py", std::string(kScene) +
                            "\n# %%\njax.debug.visualize_array_sharding(x, scale=float('nan'))\n"
                            "# %%\nprint('\\udcff')\n");
  fs::create_directories(dir.path / "config" / "history.jsonl");  // a directory where the file belongs
  const Run run = run_gui(dir, "scene.py --run-all --persist --size 1600x1000 --screenshot shot.png", "timeout 120 ");
  INFO(run.out);
  CHECK(run.status == 0);
  CHECK(fs::file_size(dir.file("shot.png")) > 1000);
  const std::string warning = "could not save console history to";
  const std::size_t first = run.out.find(warning);
  CHECK(first != std::string::npos);
  CHECK(run.out.find(warning, first + 1) == std::string::npos);
  CHECK(fs::is_directory(dir.path / "config" / "history.jsonl"));
}

TEST_CASE("a symlinked window history stays a symlink, its target holds the cells run") {
  Workdir dir;
  dir.write("kept.jsonl", "");
  fs::create_symlink(dir.path / "kept.jsonl", dir.path / "config" / "history.jsonl");
  run_standard_scene(dir, " --persist");
  CHECK(fs::is_symlink(dir.path / "config" / "history.jsonl"));
  CHECK(read(dir.file("kept.jsonl")).find("make_mesh((2, 4)") != std::string::npos);
}
