// `shardscope diff`'s comparison: each kind of difference is found, equal runs give an empty report.
#include "io/snapshot_diff.h"

#include <doctest/doctest.h>

using namespace shardscope;
using nlohmann::json;

namespace {

json cell_record() {
  return json::parse(R"json({
    "cell": 1, "stdout": "hello\n", "output": "Array([0., 1.], dtype=float32)", "error": "",
    "variables": {"x": {"shape": [2], "dtype": "float32", "type": "float32[2@x]", "spec": "PartitionSpec('x',)",
                        "mesh": {"x": 2}, "blocks": {"0": [[0, 1]], "1": [[1, 2]]}, "values": [0.0, 1.0]}},
    "programs": [{"name": "f", "collectives": {"all-reduce": 1}}]
  })json");
}

}  // namespace

TEST_CASE("identical runs have no differences, the report says how many cells were compared") {
  const std::vector<json> run = {cell_record(), cell_record()};
  CHECK(diff_runs(run, run).empty());
  CHECK(diff_report({}, "shardscope", "python", 2) == "2 cells compared: no differences\n");
}

TEST_CASE("printed output: the first differing line of stdout, value and exception line") {
  json other = cell_record();
  other["error"] = "Traceback (most recent call last):\n  File x\nValueError: bad\n";
  const auto differences = diff_runs({cell_record()}, {other});
  REQUIRE(differences.size() == 1);
  CHECK(differences[0].kind == CellDifference::Kind::kOutput);
  CHECK(differences[0].left == "line 3: (end of output)");
  CHECK(differences[0].right == "line 3: 'ValueError: bad'");
  CHECK(printed_text(other) == "hello\nArray([0., 1.], dtype=float32)\nValueError: bad\n");
}

TEST_CASE("shardings: type, spec, mesh and each device's block") {
  json other = cell_record();
  other["variables"]["x"]["blocks"]["1"] = json::parse("[[0, 2]]");
  const auto differences = diff_runs({cell_record()}, {other});
  REQUIRE(differences.size() == 1);
  CHECK(differences[0].kind == CellDifference::Kind::kSharding);
  CHECK(differences[0].subject == "x");
  CHECK(differences[0].right == "blocks {\"0\":[[0,1]],\"1\":[[0,2]]}");
}

TEST_CASE("values beyond float tolerance, not within it, shapes and missing arrays") {
  json near = cell_record();
  near["variables"]["x"]["values"][1] = 1.0000001;
  CHECK(diff_runs({cell_record()}, {near}).empty());
  json far = cell_record();
  far["variables"]["x"]["values"][1] = 1.01;
  auto differences = diff_runs({cell_record()}, {far});
  REQUIRE(differences.size() == 1);
  CHECK(differences[0].kind == CellDifference::Kind::kValues);
  CHECK(differences[0].left == "element 1 (flat) 1.0");
  CHECK(diff_runs({cell_record()}, {far}, {.rtol = 0.1, .atol = 0.0}).empty());
  json nan = cell_record();
  nan["variables"]["x"]["values"][0] = "nan";
  CHECK(diff_runs({nan}, {nan}).empty());
  CHECK(diff_runs({cell_record()}, {nan}).size() == 1);
  json gone = cell_record();
  gone["variables"].erase("x");
  differences = diff_runs({cell_record()}, {gone});
  REQUIRE(differences.size() == 1);
  CHECK(differences[0].right == "(no array)");
}

TEST_CASE("collective sets of the programs each cell compiled") {
  json other = cell_record();
  other["programs"][0]["collectives"] = json::parse(R"({"all-gather": 2, "all-reduce": 1})");
  auto differences = diff_runs({cell_record()}, {other});
  REQUIRE(differences.size() == 1);
  CHECK(differences[0].kind == CellDifference::Kind::kCollectives);
  CHECK(differences[0].left == "{all-reduce}");
  CHECK(differences[0].right == "{all-gather, all-reduce}");
  // How often a kind appears is the compiler's business; which kinds appear is the sharding's.
  json twice = cell_record();
  twice["programs"][0]["collectives"]["all-reduce"] = 2;
  CHECK(diff_runs({cell_record()}, {twice}).empty());
}

TEST_CASE("the report names the cell, the subject and both sides") {
  json far = cell_record();
  far["variables"]["x"]["values"][1] = 5.0;
  const std::string report = diff_report(diff_runs({cell_record()}, {far}), "shardscope", "/usr/bin/python3", 1);
  CHECK(report ==
        "cell 1: x: values differ\n"
        "  shardscope        element 1 (flat) 1.0\n"
        "  /usr/bin/python3  element 1 (flat) 5.0\n"
        "1 cells compared: 1 difference in 1 cell\n");
  CHECK(diff_runs({cell_record()}, {}).size() == 1);  // a cell one side never reached
}
