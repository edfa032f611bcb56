// A small command-line option reader: --name value, --name=value and boolean flags.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
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

 private:
  std::map<std::string, std::string> values_;
  std::set<std::string> flags_;
};

// The profile named by --jax-version, or the newest.
[[nodiscard]] JaxProfile profile_from(const Arguments& arguments);

}  // namespace shardscope::cli
