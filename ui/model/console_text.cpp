// Console text helpers: a small scan of Python's brackets and strings, enough for Enter's decision.
#include "ui/model/console_text.h"

#include <algorithm>
#include <cctype>

namespace shardscope::ui {

bool needs_more_input(const std::string& source) {
  int depth = 0;
  char quote = 0;
  bool triple = false;
  for (std::size_t i = 0; i < source.size(); ++i) {
    const char c = source[i];
    if (quote != 0) {
      if (c == '\\') {
        ++i;
      } else if (triple && source.compare(i, 3, std::string(3, quote)) == 0) {
        quote = 0;
        i += 2;
      } else if (!triple && c == quote) {
        quote = 0;
      } else if (!triple && c == '\n') {
        quote = 0;  // an unterminated one-line string is a syntax error, not a continuation
      }
      continue;
    }
    if (c == '#') {
      while (i < source.size() && source[i] != '\n') ++i;
    } else if (c == '\'' || c == '"') {
      quote = c;
      triple = source.compare(i, 3, std::string(3, c)) == 0;
      if (triple) i += 2;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      depth = std::max(0, depth - 1);
    }
  }
  if (depth > 0 || (quote != 0 && triple)) return true;
  std::string last = source.substr(source.rfind('\n') == std::string::npos ? 0 : source.rfind('\n') + 1);
  if (const auto hash = last.find('#'); hash != std::string::npos) last.erase(hash);
  while (!last.empty() && std::isspace(static_cast<unsigned char>(last.back())) != 0) last.pop_back();
  return !last.empty() && (last.back() == ':' || last.back() == '\\');
}

std::string continuation_indent(const std::string& source) {
  const std::size_t start = source.rfind('\n') == std::string::npos ? 0 : source.rfind('\n') + 1;
  std::string indent;
  for (std::size_t i = start; i < source.size() && (source[i] == ' ' || source[i] == '\t'); ++i) indent += source[i];
  std::string trimmed = source.substr(start);
  while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.back())) != 0) trimmed.pop_back();
  if (!trimmed.empty() && trimmed.back() == ':') indent += "    ";
  return indent;
}

std::string completion_stem(const std::string& text, std::size_t cursor) {
  cursor = std::min(cursor, text.size());
  std::size_t begin = cursor;
  while (begin > 0) {
    const auto c = static_cast<unsigned char>(text[begin - 1]);
    if (std::isalnum(c) == 0 && c != '_' && c != '.') break;
    --begin;
  }
  return text.substr(begin, cursor - begin);
}

std::string common_prefix(const std::vector<std::string>& candidates) {
  if (candidates.empty()) return "";
  std::string prefix = candidates.front();
  for (const std::string& candidate : candidates) {
    std::size_t n = 0;
    while (n < prefix.size() && n < candidate.size() && prefix[n] == candidate[n]) ++n;
    prefix.resize(n);
  }
  return prefix;
}

}  // namespace shardscope::ui
