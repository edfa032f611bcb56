// The course in scenes/lessons/: each lesson runs with the flags of its `# shardscope-run:` line and every
// code cell must print what tests/data/lessons/<lesson>.json recorded; the README's example notebook passes
// `run --check`. SHARDSCOPE_RECORD_LESSONS=1 rewrites the records instead (tests/data/lessons/record.sh).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "io/notebook.h"
#include "support/cell_replay.h"

namespace {

using nlohmann::json;
namespace replay = shardscope::testing;

const std::filesystem::path kSourceDir = SHARDSCOPE_SOURCE_DIR;
const std::filesystem::path kLessonDir = kSourceDir / "scenes" / "lessons";
const std::filesystem::path kRecordDir = kSourceDir / "tests" / "data" / "lessons";

// The course, in teaching order; a lesson file not listed here fails the directory test below.
const std::vector<std::string> kLessons = {
    "01_devices_and_meshes",
    "02_partition_specs",
    "03_device_put_and_resharding",
    "04_jit_propagation",
    "05_sharded_matmul",
    "06_data_parallelism",
    "07_fsdp",
    "08_tensor_parallelism",
    "09_shard_map_collectives",
    "10_explicit_sharding",
    "11_memory_kinds",
    "12_multi_host",
    "13_pipeline_parallelism",
    "14_flax_logical_axes",
};

constexpr std::string_view kRunHeader = "# shardscope-run:";

bool recording() {
  const char* value = std::getenv("SHARDSCOPE_RECORD_LESSONS");
  return value != nullptr && std::string(value) == "1";
}

// The flags on the header line, which must come before the lesson's first `# %%` cell.
std::vector<std::string> run_flags(const std::string& name, const std::string& text) {
  for (const std::string& line : replay::split_lines(text)) {
    if (line.starts_with("# %%")) break;
    if (!line.starts_with(kRunHeader)) continue;
    std::istringstream words(line.substr(kRunHeader.size()));
    std::vector<std::string> flags;
    for (std::string word; words >> word;) flags.push_back(word);
    return flags;
  }
  FAIL(name << " has no `# shardscope-run: --devices P --jax-version V` line before its first cell");
  return {};
}

// The replay numbers cells differently from a run of the lesson file (it adds a marker cell before each), so
// source locations like `<cell 10>:2:4` compare without their number.
std::string masked(const std::string& output) {
  static const std::regex numbered("<cell [0-9]+>");
  return std::regex_replace(replay::mask_addresses(output), numbered, "<cell>");
}

void check_lesson(const std::string& name) {
  const std::string text = replay::read_text(kLessonDir / (name + ".py"));
  const std::vector<std::string> flags = run_flags(name, text);
  CHECK_MESSAGE(std::find(flags.begin(), flags.end(), "--devices") != flags.end(), name << " names no preset");
  CHECK_MESSAGE(std::find(flags.begin(), flags.end(), "--jax-version") != flags.end(), name << " names no version");

  const shardscope::Notebook notebook = shardscope::parse_percent_script(text);
  bool has_prose = false;
  bool has_exercise = false;
  std::vector<std::string> code;
  for (const shardscope::NotebookCell& cell : notebook.cells) {
    if (cell.kind == shardscope::CellKind::kMarkdown) {
      has_prose = true;
      has_exercise = has_exercise || cell.source.find("predict, then run") != std::string::npos;
    } else if (cell.kind == shardscope::CellKind::kCode && !cell.source.starts_with(kRunHeader)) {
      code.push_back(cell.source);
    }
  }
  CHECK_MESSAGE(has_prose, name << " has no markdown cell");
  CHECK_MESSAGE(has_exercise, name << " has no \"predict, then run\" exercise in its prose");
  REQUIRE_MESSAGE(!code.empty(), name << " has no code cell");

  const std::vector<std::string> outputs = replay::replay_cells(code, flags, {}, "lesson_" + name);
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    CHECK_MESSAGE(outputs[i].find("Traceback (most recent call last):") == std::string::npos,
                  name << " code cell " << i + 1 << " raised:\n"
                       << outputs[i]);
  }

  const std::filesystem::path record_path = kRecordDir / (name + ".json");
  if (recording()) {
    json record = {{"lesson", "scenes/lessons/" + name + ".py"}, {"run", flags}, {"cells", json::array()}};
    for (std::size_t i = 0; i < code.size(); ++i) {
      record["cells"].push_back({{"code", code[i]}, {"output", masked(outputs[i])}});
    }
    std::ofstream(record_path, std::ios::binary) << record.dump(1) << "\n";
    MESSAGE("recorded " << record_path.string());
    return;
  }
  REQUIRE_MESSAGE(std::filesystem::exists(record_path),
                  "no record " << record_path.string() << "; run tests/data/lessons/record.sh");
  const json record = json::parse(replay::read_text(record_path));
  const json& cells = record.at("cells");
  CHECK_MESSAGE(record.at("run").get<std::vector<std::string>>() == flags,
                name << ": the header's flags changed since the record was made");
  REQUIRE_MESSAGE(cells.size() == code.size(),
                  name << " has " << code.size() << " code cells, its record " << cells.size());
  for (std::size_t i = 0; i < code.size(); ++i) {
    CHECK_MESSAGE(cells[i].at("code").get<std::string>() == code[i],
                  name << " code cell " << i + 1 << " changed since the record was made");
    const std::string wanted = cells[i].at("output").get<std::string>();
    const std::string got = masked(outputs[i]);
    CHECK_MESSAGE(got == wanted, name << " code cell " << i + 1 << " differs (- record, + shardscope):\n"
                                      << replay::line_diff(wanted, got));
  }
}

}  // namespace

TEST_CASE("every lesson in scenes/lessons is in the course, with a record") {
  std::set<std::string> on_disk;
  for (const auto& entry : std::filesystem::directory_iterator(kLessonDir)) {
    if (entry.path().extension() == ".py") on_disk.insert(entry.path().stem().string());
  }
  const std::set<std::string> listed(kLessons.begin(), kLessons.end());
  CHECK(on_disk == listed);
  CHECK(kLessons.size() >= 12);
  for (std::size_t i = 0; i < kLessons.size(); ++i) {
    const std::string number = (i + 1 < 10 ? "0" : "") + std::to_string(i + 1);
    CHECK_MESSAGE(kLessons[i].starts_with(number + "_"), kLessons[i] << " is out of order");
    CHECK_MESSAGE(std::filesystem::exists(kRecordDir / (kLessons[i] + ".json")), kLessons[i] << " has no record");
  }
}

TEST_CASE("lesson 01 devices and meshes") { check_lesson(kLessons[0]); }
TEST_CASE("lesson 02 partition specs") { check_lesson(kLessons[1]); }
TEST_CASE("lesson 03 device_put and resharding") { check_lesson(kLessons[2]); }
TEST_CASE("lesson 04 jit propagation") { check_lesson(kLessons[3]); }
TEST_CASE("lesson 05 sharded matmul") { check_lesson(kLessons[4]); }
TEST_CASE("lesson 06 data parallelism") { check_lesson(kLessons[5]); }
TEST_CASE("lesson 07 fsdp") { check_lesson(kLessons[6]); }
TEST_CASE("lesson 08 tensor parallelism") { check_lesson(kLessons[7]); }
TEST_CASE("lesson 09 shard_map collectives") { check_lesson(kLessons[8]); }
TEST_CASE("lesson 10 explicit sharding") { check_lesson(kLessons[9]); }
TEST_CASE("lesson 11 memory kinds") { check_lesson(kLessons[10]); }
TEST_CASE("lesson 12 multi-host") { check_lesson(kLessons[11]); }
TEST_CASE("lesson 13 pipeline parallelism") { check_lesson(kLessons[12]); }
TEST_CASE("lesson 14 flax logical axes") { check_lesson(kLessons[13]); }

// Record mode: the notebook's code cells run on shardscope's defaults (as `run --check` runs them) and what
// each printed becomes its stream output.
void record_example_notebook(const std::filesystem::path& path) {
  json notebook = json::parse(replay::read_text(path));
  std::vector<std::string> code;
  for (const json& cell : notebook.at("cells")) {
    if (cell.at("cell_type") != "code") continue;
    std::string source;
    if (cell.at("source").is_string()) {
      source = cell.at("source").get<std::string>();
    } else {
      for (const json& line : cell.at("source")) source += line.get<std::string>();
    }
    code.push_back(source);
  }
  const std::vector<std::string> outputs = replay::replay_cells(code, {}, {}, "examples_recorded");
  std::size_t next = 0;
  int count = 0;
  for (json& cell : notebook.at("cells")) {
    if (cell.at("cell_type") != "code") continue;
    json lines = json::array();
    for (const std::string& line : replay::split_lines(outputs[next++])) lines.push_back(line + "\n");
    cell["execution_count"] = ++count;
    cell["outputs"] = json::array();
    if (!lines.empty()) cell["outputs"].push_back({{"name", "stdout"}, {"output_type", "stream"}, {"text", lines}});
  }
  std::ofstream(path, std::ios::binary) << notebook.dump(1) << "\n";
  MESSAGE("recorded " << path.string());
}

// README's "Running JAX code": the shipped notebook's recorded outputs pass `run --check` as pasted.
TEST_CASE("examples/recorded.ipynb passes run --check") {
  const std::filesystem::path notebook = kSourceDir / "examples" / "recorded.ipynb";
  if (recording()) record_example_notebook(notebook);
  const replay::BinaryRun run = replay::run_shardscope({"run", notebook.string(), "--check"}, {});
  CHECK_MESSAGE(run.status == 0, run.output);
  CHECK(run.output.find(" 0 failed") != std::string::npos);
  CHECK(run.output.find(" passed") != std::string::npos);
}

TEST_CASE("examples/tutorial.py runs with the README's flags") {
  const replay::BinaryRun run = replay::run_shardscope(
      {"run", (kSourceDir / "examples" / "tutorial.py").string(), "--devices", "cpu:8", "--jax-version", "0.4.35"}, {});
  CHECK_MESSAGE(run.status == 0, run.output);
  CHECK(run.output.find("Traceback") == std::string::npos);
}
