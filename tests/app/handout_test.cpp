// `shardscope handout`: a lesson as one offline HTML page, opened in headless Chromium and checked by its pixels.
#include "gui_test_support.h"

using namespace gui_test;  // NOLINT(google-build-using-namespace): the helpers are this test's vocabulary

namespace {

const std::string kLessonPath = std::string(SHARDSCOPE_SOURCE_DIR) + "/scenes/lessons/02_partition_specs.py";

Run run_command(const Workdir& dir, const std::string& command) {
  const std::string out = dir.file("out.txt");
  const int raw =
      std::system(("cd " + quote(dir.path.string()) + " && " + command + " > " + quote(out) + " 2>&1").c_str());
  Run run;
  run.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  run.out = read(out);
  return run;
}

}  // namespace

TEST_CASE("a handout holds the prose, the code, JAX's coloured grids as a notebook shows them and SVG diagrams") {
  Workdir dir;
  const Run run = run_command(dir, quote(SHARDSCOPE_BINARY) + " handout " + quote(kLessonPath) + " -o lesson.html");
  INFO(run.out);
  REQUIRE(run.status == 0);
  const std::string page = read(dir.file("lesson.html"));
  CHECK(page.find("<title>Lesson 2: partition specs and shard grids</title>") != std::string::npos);
  CHECK(page.find("<h1>Lesson 2: partition specs and shard grids</h1>") != std::string::npos);
  CHECK(page.find("<code>PartitionSpec</code>") != std::string::npos);
  CHECK(page.find("show(P(&#x27;x&#x27;, &#x27;y&#x27;))") == std::string::npos);  // quotes stay readable
  CHECK(page.find("show(P('x', 'y'))") != std::string::npos);
  CHECK(page.find("P('x', 'y') -&gt; each shard is (4, 4)") != std::string::npos);
  // rich's HTML of the 2x4 grid, exactly as a notebook records it for JAX, and a diagram of it.
  CHECK(page.find("<pre style=\"white-space:pre;overflow-x:auto;line-height:normal;font-family:Menlo,'DejaVu Sans "
                  "Mono',consolas,'Courier New',monospace\"><span style=\"color: #ffffff; text-decoration-color: "
                  "#ffffff; background-color: #393b79\">") != std::string::npos);
  CHECK(page.find("<svg xmlns=\"http://www.w3.org/2000/svg\"") != std::string::npos);
  CHECK(page.find("fill=\"#393B79\"") != std::string::npos);
  CHECK(page.find("CPU 0") != std::string::npos);
  // Offline: nothing to fetch.
  CHECK(page.find("<script") == std::string::npos);
  CHECK(page.find("<link") == std::string::npos);
  CHECK(page.find(" src=") == std::string::npos);
  CHECK(page.find("</html>") != std::string::npos);
}

TEST_CASE("a handout opens in headless Chromium: prose on the page, a grid cell in JAX's tab20b colours") {
  if (std::system("command -v chromium > /dev/null 2>&1") != 0) {
    MESSAGE("chromium is not installed (scripts/debian-packages.txt lists it): skipped");
    return;
  }
  Workdir dir;
  REQUIRE(run_command(dir, quote(SHARDSCOPE_BINARY) + " handout " + quote(kLessonPath) + " -o lesson.html").status ==
          0);
  // No network and a private profile: the page must render from the file alone.
  const Run shot = run_command(dir,
                               "timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage"
                               " --no-first-run --user-data-dir=" +
                                   quote(dir.file("profile")) +
                                   " --proxy-server=127.0.0.1:9 --screenshot=" + quote(dir.file("page.png")) +
                                   " --window-size=1200,2000 " + quote("file://" + dir.file("lesson.html")));
  INFO(shot.out);
  REQUIRE(fs::exists(dir.file("page.png")));
  const Image page = load_png(dir.file("page.png"));
  CHECK(page.width == 1200);
  // The heading and the first paragraph: many dark text pixels on the white page near the top.
  long text = 0;
  for (int y = 0; y < 400; ++y) {
    for (int x = 0; x < page.width; ++x) {
      const uint32_t p = page.at(x, y);
      if (((p >> 16) & 0xFF) < 100 && ((p >> 8) & 0xFF) < 100 && (p & 0xFF) < 100) ++text;
    }
  }
  CHECK(text > 3000);
  // The first grid's cells, in JAX's colours: the rich HTML's backgrounds and the diagram's fills.
  const auto colours = find_colors(page, as_vector(kEight), 0, 0, page.width, page.height);
  long coloured = 0;
  for (const auto& [colour, region] : colours) coloured += region.count > 200 ? 1 : 0;
  CHECK(coloured == 8);
  CHECK(colours.at(kEight[0]).count > 2000);
}
