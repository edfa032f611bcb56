// Small text parsers with errors that name the option and the value received.
#include "base/text_parse.h"

#include <cctype>
#include <charconv>

#include "base/error.h"

namespace shardscope {
namespace {
Error bad_value(std::string_view what, std::string_view text, const std::string& expected) {
  return value_error("Invalid " + std::string(what) + " '" + std::string(text) + "': " + expected);
}
}  // namespace

std::string trim(std::string_view text) {
  std::size_t begin = 0;
  std::size_t end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin])) != 0) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1])) != 0) --end;
  return std::string(text.substr(begin, end - begin));
}

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = text.find(separator, start);
    parts.push_back(trim(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start)));
    if (at == std::string_view::npos) break;
    start = at + 1;
  }
  return parts;
}

std::vector<int64_t> parse_int_list(std::string_view text, std::string_view what) {
  std::string body = trim(text);
  if (body.size() >= 2 &&
      ((body.front() == '(' && body.back() == ')') || (body.front() == '[' && body.back() == ']'))) {
    body = trim(std::string_view(body).substr(1, body.size() - 2));
  }
  std::vector<int64_t> values;
  if (body.empty()) return values;
  const char separator = body.find(',') == std::string::npos && body.find('x') != std::string::npos ? 'x' : ',';
  std::vector<std::string> parts = split(body, separator);
  if (separator == ',' && parts.size() > 1 && parts.back().empty()) parts.pop_back();  // "(5,)"
  for (const std::string& part : parts) {
    int64_t value = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size() || value < 0) {
      throw bad_value(what, text, "expected non-negative integers separated by commas, e.g. 8,8");
    }
    values.push_back(value);
  }
  return values;
}

std::vector<std::pair<std::string, int64_t>> parse_axis_sizes(std::string_view text, std::string_view what) {
  std::vector<std::pair<std::string, int64_t>> axes;
  if (trim(text).empty()) return axes;
  for (const std::string& part : split(text, ',')) {
    const std::size_t equals = part.find('=');
    if (equals == std::string::npos || equals == 0) {
      throw bad_value(what, text, "expected name=size pairs separated by commas, e.g. x=2,y=4");
    }
    const std::string name = trim(std::string_view(part).substr(0, equals));
    const std::string size_text = trim(std::string_view(part).substr(equals + 1));
    int64_t size = 0;
    const auto [end, ec] = std::from_chars(size_text.data(), size_text.data() + size_text.size(), size);
    if (size_text.empty() || ec != std::errc() || end != size_text.data() + size_text.size() || size <= 0) {
      throw bad_value(what, text, "axis '" + name + "' needs a positive integer size, got '" + size_text + "'");
    }
    axes.emplace_back(name, size);
  }
  return axes;
}

double parse_number(std::string_view text, std::string_view what) {
  const std::string body = trim(text);
  double value = 0;
  const auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), value);
  if (body.empty() || ec != std::errc() || end != body.data() + body.size()) {
    throw bad_value(what, text, "expected a number");
  }
  return value;
}

}  // namespace shardscope
