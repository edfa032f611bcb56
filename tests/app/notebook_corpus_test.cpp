// The JAX notebooks of the oracle corpus (tests/notebooks/*.json, copied from real notebooks' recorded
// outputs) replayed cell by cell: every eligible cell must print what JAX printed, or be listed in
// tests/notebooks/manifest.json as a known failure with its reason.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "support/cell_replay.h"

namespace {

using nlohmann::json;
namespace replay = shardscope::testing;

const std::filesystem::path kNotebookDir = SHARDSCOPE_NOTEBOOKS_DIR;

const json& manifest() {
  static const json document = json::parse(replay::read_text(kNotebookDir / "manifest.json"));
  return document;
}

// The corpus's own exclusions (notebook_corpus.md): stale, missing, hand-edited or compiler-dependent
// outputs are `skip_recommended`; timings and numbers drawn from an unseeded or JAX PRNG are flagged; its
// table's "Random" column (the manifest's random_cells) adds cells whose numbers come from seeded inputs.
bool eligible(const json& cell, const json& settings) {
  const int index = cell.at("index").get<int>();
  for (const json& random_cell : settings.at("random_cells")) {
    if (random_cell.get<int>() == index) return false;
  }
  static const std::set<std::string> excluded_flags = {"timing", "random", "values_depend_on_random",
                                                       "numpy_random_unseeded"};
  if (cell.at("outputs").empty()) return false;
  if (cell.contains("skip_recommended") && cell.at("skip_recommended").get<bool>()) return false;
  for (const json& flag : cell.at("flags")) {
    if (excluded_flags.contains(flag.get<std::string>())) return false;
  }
  return true;
}

std::string with_single_trailing_newline(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text.empty() ? text : text + "\n";
}

// What the cell printed in the notebook, colour codes kept: streams as written, each rich display's
// text (IPython prints an Out value on its own line).
std::string recorded_text(const json& cell) {
  std::string text;
  for (const json& output : cell.at("outputs_detail")) {
    const std::string type = output.at("output_type").get<std::string>();
    if (type == "stream") {
      text += output.at("text").get<std::string>();
    } else if (output.contains("text_plain")) {
      text += with_single_trailing_newline(output.at("text_plain").get<std::string>());
    } else if (output.contains("html_visible_text")) {
      text += with_single_trailing_newline(output.at("html_visible_text").get<std::string>());
    }
  }
  return with_single_trailing_newline(replay::mask_addresses(text));
}

struct CellVerdict {
  int index = 0;
  std::string status;  // pass, FAIL, xfail, xpass
  std::string reason;
};

void write_results(const std::string& name, const std::vector<CellVerdict>& verdicts) {
  const std::filesystem::path dir = SHARDSCOPE_RESULTS_DIR;
  std::filesystem::create_directories(dir);
  std::ofstream out(dir / (name + ".tsv"));
  for (const CellVerdict& verdict : verdicts) {
    out << verdict.index << '\t' << verdict.status << '\t' << verdict.reason << '\n';
  }
}

// An exclusive flock on a file beside the system's temporary files, held for the scope (or nothing when not asked).
class TmpPathLock {
 public:
  explicit TmpPathLock(bool wanted) {
    if (!wanted) return;
    const std::string path = (std::filesystem::temp_directory_path() / "shardscope-notebook-corpus-tmp.lock").string();
    fd_ = ::open(path.c_str(), O_CREAT | O_RDWR, 0644);
    if (fd_ >= 0) ::flock(fd_, LOCK_EX);
  }
  ~TmpPathLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  TmpPathLock(const TmpPathLock&) = delete;
  TmpPathLock& operator=(const TmpPathLock&) = delete;

 private:
  int fd_ = -1;
};

void check_notebook(const std::string& name) {
  const json& settings = manifest().at("notebooks").at(name);
  const json notebook = json::parse(replay::read_text(kNotebookDir / (name + ".json")));
  // Cells listed under "skip" are too heavy to compute on a CI machine (training loops of TPU-sized
  // matmuls); only cells whose output is not compared may be skipped.
  const json& skipped = settings.at("skip");
  std::map<int, const json*> by_index;
  for (const json& cell : notebook.at("cells")) by_index[cell.at("index").get<int>()] = &cell;
  // "order" replays cells as the recording ran them (its execution counts), a cell possibly twice; the
  // output compared is that of its last run.
  std::vector<int> order;
  if (settings.contains("order")) {
    order = settings.at("order").get<std::vector<int>>();
  } else {
    for (const auto& [index, cell] : by_index) order.push_back(index);
  }
  // "code_as_run" gives back the code a recording ran where the notebook's text was changed later without a
  // re-run (an API the recording's JAX did not have yet): {"replace", "with", "why"}; as with skips, only cells
  // whose output is not compared may be rewritten.
  const json no_rewrites = json::object();
  const json& rewrites = settings.contains("code_as_run") ? settings.at("code_as_run") : no_rewrites;
  std::vector<std::string> cells;
  for (const int index : order) {
    REQUIRE_MESSAGE(by_index.contains(index), name << " has no cell " << index);
    const json& cell = *by_index.at(index);
    if (skipped.contains(std::to_string(index))) {
      CHECK_MESSAGE(!eligible(cell, settings), name << " skips cell " << index << ", whose output is compared");
      cells.emplace_back("pass");
    } else if (rewrites.contains(std::to_string(index))) {
      const json& rewrite = rewrites.at(std::to_string(index));
      CHECK_MESSAGE(!eligible(cell, settings), name << " rewrites cell " << index << ", whose output is compared");
      CHECK_MESSAGE(!rewrite.at("why").get<std::string>().empty(),
                    name << " cell " << index << ": a rewrite needs why");
      std::string code = cell.at("code").get<std::string>();
      const std::string replaced = rewrite.at("replace").get<std::string>();
      const std::size_t at = code.find(replaced);
      REQUIRE_MESSAGE(at != std::string::npos, name << " cell " << index << " no longer holds " << replaced);
      cells.push_back(code.replace(at, replaced.size(), rewrite.at("with").get<std::string>()));
    } else {
      cells.push_back(cell.at("code").get<std::string>());
    }
  }

  std::map<std::string, std::string> environment;
  for (const auto& [key, value] : settings.at("environment").items()) environment[key] = value.get<std::string>();
  // Notebooks that write to a fixed path under /tmp (the NNX guides' '/tmp/my-checkpoints/', erased and rewritten)
  // would race when ctest replays them in parallel: such replays take one lock in turn.
  const bool writes_tmp = std::any_of(cells.begin(), cells.end(), [](const std::string& code) {
    return code.find("'/tmp/") != std::string::npos || code.find("\"/tmp/") != std::string::npos;
  });
  const TmpPathLock lock(writes_tmp);
  const std::vector<std::string> outputs =
      replay::replay_cells(cells,
                           {"--devices", settings.at("devices").get<std::string>(), "--jax-version",
                            settings.at("jax_version").get<std::string>()},
                           environment, name);
  std::map<int, std::string> last_output;
  for (std::size_t i = 0; i < order.size(); ++i) last_output[order[i]] = outputs[i];

  const json& known_failures = settings.at("xfail");
  std::vector<CellVerdict> verdicts;
  for (const auto& [index, cell_pointer] : by_index) {
    const json& cell = *cell_pointer;
    if (!eligible(cell, settings)) continue;
    REQUIRE_MESSAGE(last_output.contains(index), name << " never runs cell " << index);
    const std::string wanted = recorded_text(cell);
    const std::string got = with_single_trailing_newline(replay::mask_addresses(last_output.at(index)));
    const std::string key = std::to_string(index);
    const bool expected_to_fail = known_failures.contains(key);
    const bool same = got == wanted;
    CellVerdict verdict{index, same ? "pass" : "FAIL", ""};
    if (expected_to_fail) {
      verdict.status = same ? "xpass" : "xfail";
      verdict.reason = known_failures.at(key).get<std::string>();
      CHECK_MESSAGE(!verdict.reason.empty(), name << " cell " << index << ": a known failure needs its reason");
      if (same) MESSAGE(name << " cell " << index << " passes though listed as a known failure");
    } else {
      CHECK_MESSAGE(same, name << " cell " << index << " differs (- JAX, + shardscope):\n"
                               << replay::line_diff(wanted, got));
    }
    verdicts.push_back(verdict);
  }
  write_results(name, verdicts);
}

}  // namespace

// The goal is 90 percent of the eligible cells; the manifest's ceiling only ever goes down, so a
// change that breaks a passing cell cannot hide it by listing the cell as a known failure.
TEST_CASE("known failures stay within the manifest's ceiling and every one is an eligible cell") {
  std::size_t eligible_cells = 0;
  std::size_t known_failures = 0;
  for (const auto& [name, settings] : manifest().at("notebooks").items()) {
    const json notebook = json::parse(replay::read_text(kNotebookDir / (name + ".json")));
    std::set<std::string> eligible_indices;
    for (const json& cell : notebook.at("cells")) {
      if (eligible(cell, settings)) eligible_indices.insert(std::to_string(cell.at("index").get<int>()));
    }
    eligible_cells += eligible_indices.size();
    for (const auto& [index, reason] : settings.at("xfail").items()) {
      CHECK_MESSAGE(eligible_indices.contains(index), name << " lists cell " << index << ", which is not eligible");
      ++known_failures;
    }
  }
  CHECK(eligible_cells > 100);
  const auto ceiling = manifest().at("known_failure_ceiling").get<std::size_t>();
  CHECK_MESSAGE(known_failures <= ceiling, known_failures << " known failures, more than the ceiling " << ceiling);
  MESSAGE((eligible_cells - known_failures) << " of " << eligible_cells << " eligible cells match");
}

TEST_CASE("notebook jax-101-pmap") { check_notebook("jax-101-pmap"); }
TEST_CASE("notebook jax-distributed-arrays-2022-12") { check_notebook("jax-distributed-arrays-2022-12"); }
TEST_CASE("notebook jax-distributed-arrays-2025-04") { check_notebook("jax-distributed-arrays-2025-04"); }
TEST_CASE("notebook jax-explicit-sharding") { check_notebook("jax-explicit-sharding"); }
TEST_CASE("notebook jax-host-offloading") { check_notebook("jax-host-offloading"); }
TEST_CASE("notebook jax-layout") { check_notebook("jax-layout"); }
TEST_CASE("notebook jax-sharded-computation-2024-04") { check_notebook("jax-sharded-computation-2024-04"); }
TEST_CASE("notebook jax-sharded-computation-2025-02") { check_notebook("jax-sharded-computation-2025-02"); }
TEST_CASE("notebook jax-sharded-computation-2026-04") { check_notebook("jax-sharded-computation-2026-04"); }
TEST_CASE("notebook flax-linen-partitioning-2023-02") { check_notebook("flax-linen-partitioning-2023-02"); }
TEST_CASE("notebook flax-linen-partitioning-2024-04") { check_notebook("flax-linen-partitioning-2024-04"); }
TEST_CASE("notebook flax-linen-partitioning-2025-12") { check_notebook("flax-linen-partitioning-2025-12"); }
TEST_CASE("notebook flax-nnx-gspmd-2025-07") { check_notebook("flax-nnx-gspmd-2025-07"); }
TEST_CASE("notebook flax-nnx-gspmd-2024-10") { check_notebook("flax-nnx-gspmd-2024-10"); }
TEST_CASE("notebook flax-nnx-gspmd-2025-02") { check_notebook("flax-nnx-gspmd-2025-02"); }
TEST_CASE("notebook flax-nnx-gspmd-2026-02") { check_notebook("flax-nnx-gspmd-2026-02"); }
TEST_CASE("notebook flax-nnx-key-concepts") { check_notebook("flax-nnx-key-concepts"); }
TEST_CASE("notebook flax-linen-rng-guide") { check_notebook("flax-linen-rng-guide"); }
TEST_CASE("notebook flax-nnx-bridge-guide") { check_notebook("flax-nnx-bridge-guide"); }
