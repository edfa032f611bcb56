// docs/api-coverage.md stays in step with the simulated jax package: tools/api_coverage.py is re-run and compared.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "support/cell_replay.h"

namespace {

const std::filesystem::path kSourceDir = SHARDSCOPE_SOURCE_DIR;
const std::string kRegenerate = "cmake --build build --target api_coverage";

std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::filesystem::path temp_dir() {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("shardscope_api_coverage_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

struct CoverageRun {
  int status = -1;
  std::string log;  // stdout and stderr together
};

// Runs the coverage script on `names_json`, writing the table to `out_path`.
CoverageRun run_coverage(const std::filesystem::path& names_json, const std::filesystem::path& out_path) {
  const std::string command = "SHARDSCOPE_API_NAMES=" + shell_quote(names_json.string()) +
                              " SHARDSCOPE_API_COVERAGE_OUT=" + shell_quote(out_path.string()) + " " +
                              shell_quote(SHARDSCOPE_BINARY) + " run " +
                              shell_quote((kSourceDir / "tools" / "api_coverage.py").string()) + " 2>&1";
  CoverageRun run;
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) run.log.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

// Only the lines that differ, each cut short: the per-module name lists are long.
std::string changed_lines(const std::string& committed, const std::string& fresh) {
  constexpr std::size_t kShown = 160;
  std::string changed;
  std::istringstream diff(shardscope::testing::line_diff(committed, fresh));
  for (std::string line; std::getline(diff, line);) {
    if (line.starts_with("   ")) continue;
    changed += (line.size() > kShown ? line.substr(0, kShown) + "..." : line) + "\n";
  }
  return changed;
}

}  // namespace

TEST_CASE("docs/api-coverage.md matches what the current build simulates") {
  const std::filesystem::path generated = temp_dir() / "api-coverage.md";
  const CoverageRun run = run_coverage(kSourceDir / "tests" / "data" / "jax_public_names.json", generated);
  REQUIRE_MESSAGE(run.status == 0, "tools/api_coverage.py failed:\n" << run.log);
  const std::string committed = shardscope::testing::read_text(kSourceDir / "docs" / "api-coverage.md");
  const std::string fresh = shardscope::testing::read_text(generated);
  const bool up_to_date = committed == fresh;
  CHECK_MESSAGE(up_to_date,
                "docs/api-coverage.md is stale: the simulated jax package changed. Regenerate it with `"
                    << kRegenerate
                    << "` (or, after rebuilding shardscope, `build/app/shardscope run tools/api_coverage.py` in the "
                       "repository root) and commit it. Changed lines (- committed, + now):\n"
                    << changed_lines(committed, fresh));
}

TEST_CASE("each status of the coverage table is told apart") {
  const std::filesystem::path names = temp_dir() / "names.json";
  std::ofstream(names) << R"({"jax_version": "0.11.0",
    "source": {"repository": "r", "rev": "jax-v0.11.0", "commit": "0123456789abcdef"},
    "modules": {"jax.numpy": ["sum", "zz_not_a_numpy_function"],
                "jax.sharding": ["Mesh", "zz_not_a_sharding_name"],
                "jax.zz_not_a_module": ["anything"]}})";
  const std::filesystem::path out = temp_dir() / "small.md";
  const CoverageRun run = run_coverage(names, out);
  REQUIRE_MESSAGE(run.status == 0, run.log);
  const std::string table = shardscope::testing::read_text(out);
  CHECK(table.find("| `jax.numpy` | 2 | 1 | 1 | 0 | 0 | 50.0% |") != std::string::npos);
  CHECK(table.find("| `jax.sharding` | 2 | 1 | 0 | 1 | 0 | 50.0% |") != std::string::npos);
  CHECK(table.find("| `jax.zz_not_a_module` | 1 | 0 | 0 | 1 | 0 | 0.0% |") != std::string::npos);
  CHECK(table.find("| **total** | 5 | 2 | 1 | 2 | 0 | 40.0% |") != std::string::npos);
  CHECK(table.find("**not simulated (raises NotImplementedError)** (1): `zz_not_a_numpy_function`") !=
        std::string::npos);
  CHECK(table.find("**missing (raises AttributeError or ImportError)** (1): `zz_not_a_sharding_name`") !=
        std::string::npos);
}
