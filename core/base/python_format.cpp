// Python-style formatting helpers.
#include "base/python_format.h"

#include <numeric>

#include "base/checked_math.h"

namespace shardscope {

std::string python_string_repr(std::string_view text) {
  const bool has_single = text.find('\'') != std::string_view::npos;
  const bool has_double = text.find('"') != std::string_view::npos;
  const char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, quote);
  for (const char c : text) {
    if (c == '\\' || c == quote) {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      out += c;
    }
  }
  out += quote;
  return out;
}

std::string python_tuple(const std::vector<std::string>& rendered_items) {
  if (rendered_items.size() == 1) return "(" + rendered_items[0] + ",)";
  return "(" + join(rendered_items, ", ") + ")";
}

std::string python_int_tuple(const std::vector<int64_t>& values) {
  std::vector<std::string> items;
  items.reserve(values.size());
  for (const int64_t v : values) items.push_back(std::to_string(v));
  return python_tuple(items);
}

std::string python_list(const std::vector<std::string>& rendered_items) {
  return "[" + join(rendered_items, ", ") + "]";
}

std::string ipython_pretty_list(const std::vector<std::string>& rendered_items, std::size_t width) {
  std::string one_line = python_list(rendered_items);
  if (one_line.size() <= width) return one_line;
  return "[" + join(rendered_items, ",\n ") + "]";
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i != 0) out += separator;
    out += parts[i];
  }
  return out;
}

int64_t product(const std::vector<int64_t>& values) { return checked_product(values, "shape"); }

}  // namespace shardscope
