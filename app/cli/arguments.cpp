// Command-line option reading.
#include "cli/arguments.h"

namespace shardscope::cli {

Arguments::Arguments(const std::vector<std::string>& args, const std::set<std::string>& valued,
                     const std::set<std::string>& flags) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i];
    if (!name.starts_with("--")) throw UsageError{"unexpected argument '" + name + "'"};
    std::optional<std::string> inline_value;
    if (const std::size_t equals = name.find('='); equals != std::string::npos) {
      inline_value = name.substr(equals + 1);
      name = name.substr(0, equals);
    }
    if (flags.count(name) != 0) {
      if (inline_value) throw UsageError{"option " + name + " takes no value"};
      flags_.insert(name);
    } else if (valued.count(name) != 0) {
      if (inline_value) {
        values_[name] = *inline_value;
      } else if (i + 1 < args.size()) {
        values_[name] = args[++i];
      } else {
        throw UsageError{"option " + name + " needs a value"};
      }
    } else {
      throw UsageError{"unknown option '" + name + "'"};
    }
  }
}

std::optional<std::string> Arguments::value(const std::string& name) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

}  // namespace shardscope::cli
