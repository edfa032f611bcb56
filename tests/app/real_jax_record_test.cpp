// Programs recorded under real JAX on a lent device machine (tests/data/real_jax/<version>/*.json, written by
// scripts/device-capture.sh) replayed through `shardscope run`: every cell must print what real JAX printed,
// or be listed in tests/data/real_jax/manifest.json as a known difference with its reason.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "support/cell_replay.h"

namespace {

using nlohmann::json;
namespace replay = shardscope::testing;

const std::filesystem::path kRecordDir = SHARDSCOPE_REAL_JAX_DIR;

const json& manifest() {
  static const json document = json::parse(replay::read_text(kRecordDir / "manifest.json"));
  return document;
}

std::string with_single_trailing_newline(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text.empty() ? text : text + "\n";
}

// Outside IPython, JAX's traceback filtering appends a note to an exception it raised through a transformation
// ("--------------------" and "For simplicity, JAX has removed its internal frames ..."); the recorder ran
// cells that way, while shardscope follows a notebook, where the note is not printed.
std::string without_filtering_note(const std::string& text) {
  static const std::regex note(
      R"(--------------------\nFor simplicity, JAX has removed its internal frames from the traceback of the )"
      R"(following exception\. Set JAX_TRACEBACK_FILTERING=off to include these\.\n)");
  return std::regex_replace(text, note, "");
}

// What the recording shows for a cell: its stdout (which ends with `Type: message` when the cell raised),
// then the repr of its last expression.
std::string recorded_text(const json& cell) {
  std::string text = cell.at("stdout").get<std::string>();
  if (!text.empty() && text.back() != '\n') text += '\n';
  if (cell.at("result").is_string()) text += cell.at("result").get<std::string>() + "\n";
  return with_single_trailing_newline(replay::mask_addresses(without_filtering_note(text)));
}

// shardscope prints a raised error as a full traceback; the recording kept only its last part, the
// exception's own lines (those after the indented frames).
std::string without_traceback_frames(const std::string& text) {
  std::string kept;
  bool in_frames = false;
  for (const std::string& line : replay::split_lines(text)) {
    if (line == "Traceback (most recent call last):") {
      in_frames = true;
      continue;
    }
    if (in_frames && (line.starts_with("  ") || line.empty())) continue;
    in_frames = false;
    kept += line + "\n";
  }
  return kept;
}

// The recorder compiled every cell as `<cell>`; shardscope numbers its cells (`<cell 3>`) so that tracebacks
// quote the right lines. Source locations in messages compare without the number.
std::string without_cell_numbers(const std::string& text) {
  static const std::regex numbered("<cell [0-9]+>");
  return std::regex_replace(text, numbered, "<cell>");
}

// A sweep line ends with the list of collectives XLA compiled (`['all-gather', 'all-reduce']`); for files the
// manifest lists under sharding_sweeps, lines compare without it, so every shape and sharding must match.
std::string without_collective_lists(const std::string& text) {
  static const std::regex list(
      R"( \[(?:'(?:all-gather|all-reduce|reduce-scatter|all-to-all|collective-permute)'(?:, )?)*\]$)");
  std::string kept;
  for (const std::string& line : replay::split_lines(text)) kept += std::regex_replace(line, list, "") + "\n";
  return kept;
}

void check_recording(const std::string& record_name, const std::string& file) {
  const json& settings = manifest().at("records").at(record_name);
  const json record = json::parse(replay::read_text(kRecordDir / settings.at("path").get<std::string>()));
  REQUIRE_MESSAGE(record.at("files").contains(file), record_name << " holds no recording of " << file);
  const json& cells = record.at("files").at(file);
  std::vector<std::string> sources;
  for (const json& cell : cells) sources.push_back(cell.at("code").get<std::string>());
  const std::vector<std::string> outputs =
      replay::replay_cells(sources,
                           {"--devices", settings.at("devices").get<std::string>(), "--jax-version",
                            settings.at("jax_version").get<std::string>()},
                           {{"SHARDSCOPE_DISPLAY", "repr"}}, record_name + "_" + file);

  const json known = manifest().at("known_differences").value(file, json::object());
  const bool sweep = manifest().value("sharding_sweeps", json::object()).contains(file);
  int matched = 0;
  int collectives_matched = 0;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const std::string key = std::to_string(cells[i].at("cell").get<int>());
    const std::string wanted = recorded_text(cells[i]);
    const std::string got = with_single_trailing_newline(
        replay::mask_addresses(without_cell_numbers(without_traceback_frames(outputs[i]))));
    collectives_matched += got == wanted ? 1 : 0;
    const bool same = sweep ? without_collective_lists(got) == without_collective_lists(wanted) : got == wanted;
    matched += same ? 1 : 0;
    if (known.contains(key)) {
      CHECK_MESSAGE(!known.at(key).get<std::string>().empty(),
                    file << " cell " << key << ": a known difference needs its reason");
      if (same) MESSAGE(file << " cell " << key << " matches though listed as a known difference");
      continue;
    }
    CHECK_MESSAGE(same, file << " cell " << key << " differs (- real JAX, + shardscope):\n"
                             << replay::line_diff(wanted, got));
  }
  MESSAGE(file << ": " << matched << " of " << cells.size() << " cells match real JAX"
               << (sweep ? " in shapes and shardings; " + std::to_string(collectives_matched) + " also in collectives"
                         : std::string()));
}

}  // namespace

TEST_CASE("every known difference names a recorded cell") {
  for (const auto& [file, cells] : manifest().at("known_differences").items()) {
    bool recorded = false;
    for (const auto& [name, settings] : manifest().at("records").items()) {
      const json record = json::parse(replay::read_text(kRecordDir / settings.at("path").get<std::string>()));
      if (!record.at("files").contains(file)) continue;
      recorded = true;
      for (const auto& [key, reason] : cells.items()) {
        CHECK_MESSAGE(std::stoul(key) <= record.at("files").at(file).size(), file << " has no cell " << key);
      }
    }
    CHECK_MESSAGE(recorded, "no recording holds " << file);
  }
}

TEST_CASE("probe nested jit") { check_recording("probes_cpu8", "tests/data/real_jax/probes/p01_nested_jit.py"); }
TEST_CASE("probe shard_map") { check_recording("probes_cpu8", "tests/data/real_jax/probes/p02_shard_map.py"); }
TEST_CASE("probe control flow") { check_recording("probes_cpu8", "tests/data/real_jax/probes/p03_control_flow.py"); }
TEST_CASE("probe errors") { check_recording("probes_cpu8", "tests/data/real_jax/probes/p04_errors.py"); }
TEST_CASE("probe jaxprs and reprs") {
  check_recording("probes_cpu8", "tests/data/real_jax/probes/p05_jaxprs_reprs.py");
}
TEST_CASE("probe cost") { check_recording("probes_cpu8", "tests/data/real_jax/probes/p06_cost.py"); }
TEST_CASE("probe flax nnx") { check_recording("probes_cpu8", "tests/data/real_jax/probes/p07_nnx.py"); }
TEST_CASE("probe uneven dims") { check_recording("probes_uneven_cpu8", "tests/data/real_jax/probes/p08_uneven.py"); }
TEST_CASE("probe whole programs") {
  check_recording("probes_programs_cpu8", "tests/data/real_jax/probes/p09_programs.py");
}
TEST_CASE("probe explicit sharding") {
  check_recording("probes_explicit_cpu8", "tests/data/real_jax/probes/p10_explicit.py");
}
TEST_CASE("probe one GPU") { check_recording("gpu", "tests/data/real_jax/probes/gpu_probe.py"); }
TEST_CASE("seed 000 on 8 CPU devices") { check_recording("seeds_cpu8", "tests/seeds/seed_000.py"); }
TEST_CASE("seed 001 on 8 CPU devices") { check_recording("seeds_cpu8", "tests/seeds/seed_001.py"); }
TEST_CASE("seed 002 on 8 CPU devices") { check_recording("seeds_cpu8", "tests/seeds/seed_002.py"); }
TEST_CASE("seed 003 on 8 CPU devices") { check_recording("seeds_cpu8", "tests/seeds/seed_003.py"); }
TEST_CASE("seed 004 on 8 CPU devices") { check_recording("seeds_cpu8", "tests/seeds/seed_004.py"); }
TEST_CASE("probe XLA strategies") {
  check_recording("probes_strategies_cpu8", "tests/data/real_jax/probes/p11_strategies.py");
}
TEST_CASE("probe API corners") { check_recording("probes_strategies_cpu8", "tests/data/real_jax/probes/p12_api.py"); }
TEST_CASE("probe slices") { check_recording("probes_strategies_cpu8", "tests/data/real_jax/probes/p13_slices.py"); }
TEST_CASE("probe rank-3 and two-operand sweep") {
  check_recording("probes_wave2_cpu8", "tests/data/real_jax/probes/p14_sweep3d.py");
}
TEST_CASE("probe explicit sharding over many ops") {
  check_recording("probes_wave2_cpu8", "tests/data/real_jax/probes/p15_explicit_ops.py");
}
TEST_CASE("probe bad input") { check_recording("probes_wave2_cpu8", "tests/data/real_jax/probes/p16_abuse.py"); }
TEST_CASE("probe control flow and gradients") {
  check_recording("probes_wave2_cpu8", "tests/data/real_jax/probes/p17_control_grad.py");
}
TEST_CASE("probe Auto-style programs on Explicit axes") {
  check_recording("probes_wave2_cpu8", "tests/data/real_jax/probes/p18_explicit_programs.py");
}
TEST_CASE("probe optimizer states of sharded parameters") {
  check_recording("probes_wave2_cpu8", "tests/data/real_jax/probes/p19_optax_shardings.py");
}
TEST_CASE("scene flax_nnx on 8 CPU devices") { check_recording("lessons_cpu8", "scenes/flax_nnx.py"); }
TEST_CASE("examples on 8 CPU devices") {
  check_recording("lessons_cpu8", "examples/tutorial.py");
  check_recording("lessons_cpu8", "examples/explain_layer.py");
}
TEST_CASE("lessons on 8 CPU devices") {
  for (const char* lesson : {"01_devices_and_meshes", "02_partition_specs", "03_device_put_and_resharding",
                             "04_jit_propagation", "05_sharded_matmul", "06_data_parallelism", "07_fsdp",
                             "08_tensor_parallelism", "09_shard_map_collectives", "10_explicit_sharding",
                             "11_memory_kinds", "12_multi_host", "13_pipeline_parallelism", "14_flax_logical_axes"}) {
    check_recording("lessons_cpu8", std::string("scenes/lessons/") + lesson + ".py");
  }
}
TEST_CASE("scene default on 8 CPU devices") { check_recording("seeds_cpu8", "scenes/default.py"); }
TEST_CASE("scene flax_mlp on 8 CPU devices") { check_recording("seeds_cpu8", "scenes/flax_mlp.py"); }
