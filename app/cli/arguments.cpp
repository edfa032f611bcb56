// Command-line option reading.
#include "cli/arguments.h"

#include <cmath>
#include <sstream>

#include "base/checked_math.h"
#include "base/error.h"
#include "base/text_parse.h"

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

namespace {

std::string shown(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

UsageError bad_value(const std::string& name, const std::string& text, const std::string& expected) {
  return UsageError{"invalid " + name + " '" + text + "': " + expected};
}

// The text parsers' ValueError, re-thrown as a usage error (status 2) for the option.
template <typename Parse>
auto as_usage(const std::string& name, const std::string& text, Parse parse) {
  try {
    return parse();
  } catch (const Error& e) {
    std::string message = e.what();
    const std::string prefix = "Invalid " + name + " '" + text + "': ";
    if (message.starts_with(prefix)) message = message.substr(prefix.size());
    throw bad_value(name, text, message);
  }
}

}  // namespace

std::optional<double> Arguments::number(const std::string& name, double low, double high) const {
  const auto text = value(name);
  if (!text) return std::nullopt;
  const double number = as_usage(name, *text, [&] { return parse_number(*text, name); });
  if (!std::isfinite(number) || number < low || number > high) {
    throw bad_value(name, *text, "expected a finite number from " + shown(low) + " to " + shown(high));
  }
  return number;
}

std::optional<int64_t> Arguments::integer(const std::string& name, int64_t low, int64_t high) const {
  const auto text = value(name);
  if (!text) return std::nullopt;
  const double number = as_usage(name, *text, [&] { return parse_number(*text, name); });
  if (!std::isfinite(number) || number != std::floor(number) || number < static_cast<double>(low) ||
      number > static_cast<double>(high)) {
    throw bad_value(name, *text, "expected a whole number from " + std::to_string(low) + " to " + std::to_string(high));
  }
  return static_cast<int64_t>(number);
}

std::optional<std::vector<int64_t>> Arguments::int_list(const std::string& name) const {
  const auto text = value(name);
  if (!text) return std::nullopt;
  return as_usage(name, *text, [&] {
    std::vector<int64_t> values = parse_int_list(*text, name);
    (void)checked_product(values, name);  // each value fits; their product must too
    return values;
  });
}

std::optional<std::vector<std::pair<std::string, int64_t>>> Arguments::axis_sizes(const std::string& name) const {
  const auto text = value(name);
  if (!text) return std::nullopt;
  return as_usage(name, *text, [&] {
    auto axes = parse_axis_sizes(*text, name);
    std::vector<int64_t> sizes;
    for (const auto& axis : axes) sizes.push_back(axis.second);
    (void)checked_product(sizes, name);
    return axes;
  });
}

FileRequest split_file_argument(const std::vector<std::string>& args, const std::set<std::string>& valued,
                                const std::string& missing) {
  FileRequest request;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.starts_with("--")) {
      request.options.push_back(arg);
      if (valued.count(arg) != 0 && i + 1 < args.size()) request.options.push_back(args[++i]);
    } else if (request.file.empty()) {
      request.file = arg;
    } else {
      throw UsageError{"unexpected argument '" + arg + "'"};
    }
  }
  if (request.file.empty()) throw UsageError{missing};
  return request;
}

}  // namespace shardscope::cli
