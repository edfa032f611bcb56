// Runs notebook cells through the built shardscope binary and splits its output per cell, for the
// tests that compare cells with recorded outputs (seeds, the notebook corpus).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace shardscope::testing {

[[nodiscard]] std::string read_text(const std::filesystem::path& path);
[[nodiscard]] std::vector<std::string> split_lines(const std::string& text);

// Object addresses change on every run: `<axis 0x78999cbe96c0>` compares as `<axis 0x...>`.
[[nodiscard]] std::string mask_addresses(const std::string& text);

// A readable line diff, `-` for the recorded text and `+` for shardscope's.
[[nodiscard]] std::string line_diff(const std::string& expected, const std::string& actual);

// Runs `cells` in one `shardscope run` process (with `run_args` after the script path and `environment`
// set for it) and returns each cell's stdout and stderr together. Fails the test when the run stops
// before the last cell; `label` names the run in that message.
[[nodiscard]] std::vector<std::string> replay_cells(const std::vector<std::string>& cells,
                                                    const std::vector<std::string>& run_args,
                                                    const std::map<std::string, std::string>& environment,
                                                    const std::string& label);

// Runs the built shardscope binary with `args` and `environment`; its exit status and its stdout and stderr
// together.
struct BinaryRun {
  int status = -1;
  std::string output;
};
[[nodiscard]] BinaryRun run_shardscope(const std::vector<std::string>& args,
                                       const std::map<std::string, std::string>& environment);

}  // namespace shardscope::testing
