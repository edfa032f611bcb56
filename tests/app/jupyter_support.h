// Helpers for the Jupyter tests: a temporary folder, commands run through the shell, a kernelspec installed into a
// private prefix that Jupyter's tools find through JUPYTER_PATH.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace shardscope::testing {

class TemporaryFolder {
 public:
  TemporaryFolder();
  ~TemporaryFolder();
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

struct CommandRun {
  int status = -1;
  std::string output;  // stdout and stderr together
};

// Runs argv (argv[0] a path or a name on PATH) with `environment` added, from `folder`.
[[nodiscard]] CommandRun run_command(const std::vector<std::string>& argv,
                                     const std::map<std::string, std::string>& environment = {},
                                     const std::filesystem::path& folder = ".");

// `shardscope kernel install --prefix` into `prefix`; returns the environment that makes Jupyter find it.
[[nodiscard]] std::map<std::string, std::string> install_kernel(const std::filesystem::path& prefix,
                                                                const std::string& name,
                                                                const std::vector<std::string>& options);

}  // namespace shardscope::testing
