// A small command-line option reader: --name value, --name=value and boolean flags.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "compat/jax_version.h"

namespace shardscope::cli {

// Thrown for misuse of the command line (exit status 2).
struct UsageError {
  std::string message;
};

class Arguments {
 public:
  // `valued` options take a value, `flags` do not; anything else is a UsageError naming it.
  Arguments(const std::vector<std::string>& args, const std::set<std::string>& valued,
            const std::set<std::string>& flags);

  [[nodiscard]] std::optional<std::string> value(const std::string& name) const;
  [[nodiscard]] bool flag(const std::string& name) const { return flags_.count(name) != 0; }

  // Typed values: a malformed, non-finite or out-of-range value is a UsageError naming the option and
  // the value received (the command line's one validation point, docs/boundaries.md).
  [[nodiscard]] std::optional<double> number(const std::string& name, double low, double high) const;
  [[nodiscard]] std::optional<int64_t> integer(const std::string& name, int64_t low, int64_t high) const;
  [[nodiscard]] std::optional<std::vector<int64_t>> int_list(const std::string& name) const;
  [[nodiscard]] std::optional<std::vector<std::pair<std::string, int64_t>>> axis_sizes(const std::string& name) const;

 private:
  std::map<std::string, std::string> values_;
  std::set<std::string> flags_;
};

// A command that takes one FILE among its options (run, explain): FILE may come before or after the options,
// and an option's value is never taken for it. UsageError `missing` without a FILE, or for a second one.
struct FileRequest {
  std::string file;
  std::vector<std::string> options;
};
[[nodiscard]] FileRequest split_file_argument(const std::vector<std::string>& args, const std::set<std::string>& valued,
                                              const std::string& missing);

// The profile named by --jax-version, or the newest.
[[nodiscard]] JaxProfile profile_from(const Arguments& arguments);

}  // namespace shardscope::cli
