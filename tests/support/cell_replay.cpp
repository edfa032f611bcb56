// Replays cells through `shardscope run`, with a marker cell before each so the output splits per cell.
#include "support/cell_replay.h"

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>

namespace shardscope::testing {
namespace {

const std::string kMarker = "@@shardscope-replay-cell@@";

std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// stdout and stderr together, so a cell's traceback lands in that cell's output.
BinaryRun run_binary(const std::vector<std::string>& args, const std::map<std::string, std::string>& environment) {
  // Timings are never compared: one loop per %timeit keeps the replay short.
  std::string command = "SHARDSCOPE_TIMEIT_ONCE=1 ";
  for (const auto& [name, value] : environment) command += name + "=" + shell_quote(value) + " ";
  command += shell_quote(SHARDSCOPE_BINARY);
  for (const std::string& arg : args) command += " " + shell_quote(arg);
  command += " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  BinaryRun run;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) run.output.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

}  // namespace

BinaryRun run_shardscope(const std::vector<std::string>& args, const std::map<std::string, std::string>& environment) {
  return run_binary(args, environment);
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  REQUIRE_MESSAGE(file.good(), "cannot read " << path.string());
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

std::string mask_addresses(const std::string& text) {
  static const std::regex address("0x[0-9a-fA-F]+");
  // A tracer's id in JAX's messages ("BatchTracer with object id 1405...") is its address in decimal.
  static const std::regex object_id("object id [0-9]+");
  return std::regex_replace(std::regex_replace(text, address, "0x..."), object_id, "object id ...");
}

std::string line_diff(const std::string& expected, const std::string& actual) {
  const std::vector<std::string> want = split_lines(expected);
  const std::vector<std::string> got = split_lines(actual);
  std::string diff;
  for (std::size_t i = 0; i < std::max(want.size(), got.size()); ++i) {
    const bool has_want = i < want.size();
    const bool has_got = i < got.size();
    if (has_want && has_got && want[i] == got[i]) {
      diff += "   " + want[i] + "\n";
      continue;
    }
    if (has_want) diff += " - " + want[i] + "\n";
    if (has_got) diff += " + " + got[i] + "\n";
  }
  return diff;
}

std::vector<std::string> replay_cells(const std::vector<std::string>& cells, const std::vector<std::string>& run_args,
                                      const std::map<std::string, std::string>& environment, const std::string& label) {
  std::string script;
  for (const std::string& cell : cells) script += "# %%\nprint('" + kMarker + "')\n# %%\n" + cell + "\n";
  std::string file_stem = label;
  for (char& c : file_stem) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0) c = '_';
  }
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     ("shardscope_replay_" + file_stem + "_" + std::to_string(::getpid()) + ".py");
  std::ofstream(path, std::ios::binary) << script;
  std::vector<std::string> args = {"run", path.string()};
  args.insert(args.end(), run_args.begin(), run_args.end());
  const std::string output = run_binary(args, environment).output;
  std::filesystem::remove(path);

  std::vector<std::string> produced;
  for (const std::string& line : split_lines(output)) {
    if (line == kMarker) {
      produced.emplace_back();
    } else if (!produced.empty()) {
      produced.back() += line + "\n";
    } else {
      FAIL_CHECK(label << ": output before the first cell: " << line);
    }
  }
  REQUIRE_MESSAGE(produced.size() == cells.size(), label << ": the run stopped early; output:\n" << output);
  return produced;
}

}  // namespace shardscope::testing
