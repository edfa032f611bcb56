// Temporary folders, shell commands and private kernelspecs for the Jupyter tests.
#include "app/jupyter_support.h"

#include <doctest/doctest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>

namespace shardscope::testing {

namespace {

std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

TemporaryFolder::TemporaryFolder() {
  std::string pattern = (std::filesystem::temp_directory_path() / "shardscope-test-XXXXXX").string();
  REQUIRE(::mkdtemp(pattern.data()) != nullptr);
  path_ = pattern;
}

TemporaryFolder::~TemporaryFolder() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

CommandRun run_command(const std::vector<std::string>& argv, const std::map<std::string, std::string>& environment,
                       const std::filesystem::path& folder) {
  std::string command = "cd " + shell_quote(folder.string()) + " && env";
  for (const auto& [name, value] : environment) command += " " + name + "=" + shell_quote(value);
  for (const std::string& arg : argv) command += " " + shell_quote(arg);
  command += " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  CommandRun run;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) run.output.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

std::map<std::string, std::string> install_kernel(const std::filesystem::path& prefix, const std::string& name,
                                                  const std::vector<std::string>& options) {
  std::vector<std::string> argv = {SHARDSCOPE_BINARY, "kernel", "install", "--name", name, "--prefix", prefix.string()};
  argv.insert(argv.end(), options.begin(), options.end());
  const CommandRun install = run_command(argv);
  REQUIRE_MESSAGE(install.status == 0, install.output);
  // Only this prefix's kernels: a user's own kernelspecs must not change what the tests run.
  return {{"JUPYTER_PATH", (prefix / "share" / "jupyter").string()},
          {"JUPYTER_DATA_DIR", (prefix / "data").string()},
          {"JUPYTER_RUNTIME_DIR", (prefix / "runtime").string()},
          {"JUPYTER_CONFIG_DIR", (prefix / "config").string()}};
}

}  // namespace shardscope::testing
