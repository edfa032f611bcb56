// The cursor and checks the notation parsers share (sharding/notation_parse*.cpp only).
#pragma once

#include <cctype>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "base/python_format.h"
#include "mesh/mesh.h"
#include "sharding/partition_spec.h"

namespace shardscope::notation_detail {

inline bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// A cursor over one notation's text that fails with a message naming the notation, the text and the column.
class Reader {
 public:
  Reader(std::string_view notation, std::string_view text) : notation_(notation), text_(text) {}

  [[noreturn]] void fail(const std::string& what) const {
    constexpr std::size_t kShown = 120;  // explicit device lists can be long; the start says which text it was
    const std::string shown = text_.size() > kShown ? std::string(text_.substr(0, kShown)) + "..." : std::string(text_);
    throw value_error(std::string(notation_) + " " + python_string_repr(shown) + ": " + what);
  }
  [[noreturn]] void fail_here(const std::string& what) const { fail(what + " at column " + std::to_string(pos_ + 1)); }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])) != 0) ++pos_;
  }
  [[nodiscard]] bool at_end() {
    skip_space();
    return pos_ >= text_.size();
  }
  [[nodiscard]] char peek() {
    skip_space();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  bool eat(std::string_view token) {
    skip_space();
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }
  void expect(std::string_view token) {
    if (!eat(token)) {
      if (at_end()) fail("expected '" + std::string(token) + "' but the text ended");
      fail_here("expected '" + std::string(token) + "'");
    }
  }
  void expect_end() {
    if (!at_end()) fail_here("unexpected '" + std::string(text_.substr(pos_)) + "'");
  }
  // Letters, digits and underscores (`allow_underscore` false stops at '_', as in the book's I_X).
  std::string word(std::string_view what, bool allow_underscore = true) {
    skip_space();
    const std::size_t start = pos_;
    while (pos_ < text_.size() && is_word_char(text_[pos_]) && (allow_underscore || text_[pos_] != '_')) ++pos_;
    if (pos_ == start) fail_here("expected " + std::string(what));
    return std::string(text_.substr(start, pos_ - start));
  }
  // A non-negative integer that fits an int64.
  int64_t integer(std::string_view what) {
    skip_space();
    const std::size_t start = pos_;
    int64_t value = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_])) != 0) {
      const int digit = text_[pos_] - '0';
      if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) {
        fail("the " + std::string(what) + " " + std::string(text_.substr(start, pos_ - start + 1)) +
             "... is too large");
      }
      value = value * 10 + digit;
      ++pos_;
    }
    if (pos_ == start) fail_here("expected " + std::string(what));
    return value;
  }
  std::vector<int64_t> integer_list(std::string_view open, std::string_view close, std::string_view what) {
    expect(open);
    std::vector<int64_t> values;
    if (eat(close)) return values;
    do {
      values.push_back(integer(what));
    } while (eat(","));
    expect(close);
    return values;
  }
  std::string quoted() {
    expect("\"");
    const std::size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != '"') ++pos_;
    if (pos_ >= text_.size()) fail("unterminated string starting at column " + std::to_string(start));
    const std::string out(text_.substr(start, pos_ - start));
    ++pos_;
    return out;
  }
  // Everything up to (not including) `stop`, consumed with it.
  std::string until(char stop) {
    const std::size_t start = pos_;
    const std::size_t end = text_.find(stop, pos_);
    if (end == std::string_view::npos)
      fail("'" + std::string(1, stop) + "' missing after column " + std::to_string(start));
    pos_ = end + 1;
    return std::string(text_.substr(start, end - start));
  }

 private:
  std::string_view notation_;
  std::string_view text_;
  std::size_t pos_ = 0;
};

// The mesh's axes and sizes for messages: ('x'=2, 'y'=4).
[[nodiscard]] std::string axes_list_text(const Mesh& mesh);
// The mesh axis `name` names: itself, or the one axis equal to it ignoring case (the book writes X for 'x').
[[nodiscard]] std::optional<std::string> resolve_axis(const Mesh& mesh, const std::string& name, bool any_case);
[[nodiscard]] std::string axis_or_fail(const Reader& reader, const Mesh& mesh, const std::string& name, bool any_case);
// Per-dim axes (nullopt: an open dim, P.UNCONSTRAINED) into a spec after the checks every notation shares.
[[nodiscard]] PartitionSpec finish(const Reader& reader,
                                   const std::vector<std::optional<std::vector<std::string>>>& dims,
                                   const std::vector<std::string>& unreduced, std::size_t rank);
[[nodiscard]] std::vector<std::optional<std::vector<std::string>>> closed(std::vector<std::vector<std::string>> dims);

}  // namespace shardscope::notation_detail
