// The seed notebooks (tests/seeds/seed_NNN.py) run unchanged by the built binary; each cell's output is
// compared with the text the seed recorded (tests/seeds/seed_NNN.expected).
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "support/cell_replay.h"

namespace {

using shardscope::testing::line_diff;
using shardscope::testing::mask_addresses;
using shardscope::testing::read_text;
using shardscope::testing::split_lines;

// The code cells of a `# %%` percent script, in order (the Jupytext header before the first one is
// comments only, and is dropped).
std::vector<std::string> script_cells(const std::string& script) {
  std::vector<std::string> cells;
  for (const std::string& line : split_lines(script)) {
    if (line == "# %%") {
      cells.emplace_back();
    } else if (!cells.empty()) {
      cells.back() += line + "\n";
    } else {
      REQUIRE_MESSAGE((line.empty() || line.starts_with("#")), "code before the first '# %%': " << line);
    }
  }
  return cells;
}

struct ExpectedCell {
  std::string text;
  bool skipped = false;
  bool strip_visualization = false;  // the seed's dump dropped visualize_array_sharding's rich output
  bool expected_fail = false;
};

// The format of tests/seeds/README.md: headers are `# %% cell N`, optionally followed by ` (In [k])` and by
// `skip: why`, `xfail: why` or `strip-viz: why` (the last two may be combined with ` | `); the lines up to
// the next header are the cell's exact text.
std::map<int, ExpectedCell> expected_cells(const std::string& text) {
  std::map<int, ExpectedCell> cells;
  ExpectedCell* current = nullptr;
  for (const std::string& line : split_lines(text)) {
    if (line.starts_with("# %% cell ")) {
      std::size_t end = 0;
      const int number = std::stoi(line.substr(10), &end);
      current = &cells[number];
      const std::string flags = line.substr(10 + end);
      current->skipped = flags.find("skip:") != std::string::npos;
      current->strip_visualization = flags.find("strip-viz:") != std::string::npos;
      current->expected_fail = flags.find("xfail:") != std::string::npos;
    } else {
      REQUIRE_MESSAGE(current != nullptr, "text before the first cell header in an expected file");
      current->text += line + "\n";
    }
  }
  return cells;
}

bool is_visualization_line(const std::string& line) {
  // Every line of the plain-text rendering starts with a box-drawing character (U+2500..U+257F).
  return line.size() >= 3 && static_cast<unsigned char>(line[0]) == 0xE2 &&
         (static_cast<unsigned char>(line[1]) == 0x94 || static_cast<unsigned char>(line[1]) == 0x95);
}

std::string without_visualizations(const std::string& text) {
  std::string kept;
  for (const std::string& line : split_lines(text)) {
    if (!is_visualization_line(line)) kept += line + "\n";
  }
  return kept;
}

// Runs seed NNN under the given device preset and JAX version and checks every cell.
void check_seed(const std::string& number, const std::string& devices, const std::string& jax_version) {
  const std::filesystem::path dir = SHARDSCOPE_SEEDS_DIR;
  const std::vector<std::string> cells = script_cells(read_text(dir / ("seed_" + number + ".py")));
  const std::map<int, ExpectedCell> expected = expected_cells(read_text(dir / ("seed_" + number + ".expected")));
  REQUIRE(expected.size() == cells.size());

  const std::vector<std::string> produced = shardscope::testing::replay_cells(
      cells, {"--devices", devices, "--jax-version", jax_version}, {}, "seed " + number);

  for (const auto& [cell, want] : expected) {
    REQUIRE(cell >= 1);
    REQUIRE(static_cast<std::size_t>(cell) <= produced.size());
    if (want.skipped) continue;
    const std::string& raw = produced[static_cast<std::size_t>(cell - 1)];
    const std::string got = mask_addresses(want.strip_visualization ? without_visualizations(raw) : raw);
    const std::string wanted = mask_addresses(want.text);
    if (want.expected_fail) {
      if (got == wanted)
        MESSAGE("seed " << number << " cell " << cell << " passes though marked xfail");
      else
        MESSAGE("seed " << number << " cell " << cell << " (xfail) differs:\n" << line_diff(wanted, got));
      continue;
    }
    CHECK_MESSAGE(got == wanted, "seed " << number << " cell " << cell << " differs (- seed, + shardscope):\n"
                                         << line_diff(wanted, got));
  }
}

}  // namespace

TEST_CASE("seed 000 prints what the seed recorded on a TPU v3-8 under JAX 0.4.35") {
  check_seed("000", "tpu-v3-8", "0.4.35");
}

TEST_CASE("seed 001 prints what the seed recorded on a Colab TPU v2-8 under JAX 0.3.25") {
  check_seed("001", "tpu-v2-8", "0.3.25");
}

TEST_CASE("seed 002 prints what the seed recorded with 12 CPU devices under JAX 0.6.0") {
  check_seed("002", "cpu:1", "0.6.0");
}

TEST_CASE("seed 003 prints what the seed recorded on a TPU v3-8 under JAX 0.4.26") {
  check_seed("003", "tpu-v3-8", "0.4.26");
}

TEST_CASE("seed 004 prints what the seed recorded with Flax on 8 CPU devices under JAX 0.4.31") {
  check_seed("004", "cpu:1", "0.4.31");
}
