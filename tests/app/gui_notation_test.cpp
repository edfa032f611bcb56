// The notation bar end to end: Shardy and HloSharding texts re-shard the selected array as the Spec editor does
// (canvas pixels, the console's device_put line), and a bad text shows its error and changes nothing.
#include "gui_test_support.h"

using namespace gui_test;  // NOLINT(google-build-using-namespace): the helpers are this test's vocabulary

namespace {

std::string edit(const std::string& kind, const std::string& text) {
  return " --editor-tab Spec --edit-notation x " + kind + " " + quote(text);
}

const nlohmann::json& notation_row(const nlohmann::json& stats, const std::string& kind) {
  for (const auto& row : stats.at("notations")) {
    if (row.at("kind") == kind) return row;
  }
  FAIL("no notation row " << kind);
  return stats;
}

}  // namespace

TEST_CASE("a Shardy text in the notation bar re-shards the array and writes the device_put line") {
  Workdir dir;
  const Run run = run_standard_scene(dir, edit("shardy", "#sdy.sharding<@mesh, [{\"y\"}, {}]>"));
  INFO(run.out);
  const Image shot = load_png(dir.file("shot.png"));
  const nlohmann::json stats = stats_of(dir);
  const auto [x0, y0, x1, y1] = canvas_rect(stats);
  // P('y', None) on the 2x4 mesh: four row blocks over 'y', replicated over 'x'.
  check_grid(find_colors(shot, as_vector(kFour), x0, y0, x1, y1), as_vector(kFour), 4, 1, 1500);
  CHECK(find_colors(shot, {0xD6616B}, x0, y0, x1, y1).at(0xD6616B).count == 0);
  const std::string line = "x = jax.device_put(x, NamedSharding(mesh, P('y', None)))";
  const auto& cells = stats.at("cells");
  CHECK(cells.back().at("source") == line);
  CHECK(cells.back().at("from_gui") == true);
  CHECK(cells.back().at("status") == "ok");
  CHECK(history_has(stats, line));
  // Every row now shows the new sharding.
  CHECK(notation_row(stats, "hlo").at("text") == "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
  CHECK(notation_row(stats, "book").at("text") == "A[I_y, J]");
  CHECK(notation_row(stats, "spec").at("text") == "P('y', None)");
}

TEST_CASE("an HloSharding text in the notation bar re-shards the array through the axes it finds") {
  Workdir dir;
  const Run run = run_standard_scene(dir, edit("hlo", "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"));
  INFO(run.out);
  const Image shot = load_png(dir.file("shot.png"));
  const nlohmann::json stats = stats_of(dir);
  const auto [x0, y0, x1, y1] = canvas_rect(stats);
  // P(None, 'y'): four column blocks.
  check_grid(find_colors(shot, as_vector(kFour), x0, y0, x1, y1), as_vector(kFour), 1, 4, 1500);
  const std::string line = "x = jax.device_put(x, NamedSharding(mesh, P(None, 'y')))";
  CHECK(stats.at("cells").back().at("source") == line);
  CHECK(stats.at("cells").back().at("status") == "ok");
  CHECK(notation_row(stats, "shardy").at("text") == "#sdy.sharding<@mesh, [{}, {\"y\"}]>");
}

TEST_CASE("a bad HloSharding text shows its error under the field and changes nothing") {
  Workdir dir;
  const std::string bad = "{devices=[2,4]<=[7]}";
  const Run run = run_standard_scene(dir, edit("hlo", bad));
  INFO(run.out);
  const std::string error =
      "ValueError: HloSharding '{devices=[2,4]<=[7]}': the iota has 7 devices but the tiles need 8";
  CHECK(run.out.find("edit-notation x hlo " + bad + ": Notation not applied: " + error) != std::string::npos);
  const Image shot = load_png(dir.file("shot.png"));
  const nlohmann::json stats = stats_of(dir);
  const auto [x0, y0, x1, y1] = canvas_rect(stats);
  check_grid(find_colors(shot, as_vector(kEight), x0, y0, x1, y1), as_vector(kEight), 2, 4, 1500);
  CHECK(stats.at("cells").size() == 2);  // only the scene's cells ran
  CHECK(notation_row(stats, "hlo").at("text") == bad);
  CHECK(notation_row(stats, "hlo").at("error") == error);
  CHECK(notation_row(stats, "shardy").at("text") == "#sdy.sharding<@mesh, [{\"x\"}, {\"y\"}]>");
}
