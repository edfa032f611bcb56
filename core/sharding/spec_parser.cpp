// Reads PartitionSpecs written as Python source text (the CLI's --spec, scene files).
#include <cctype>
#include <memory>
#include <variant>

#include "base/error.h"
#include "base/python_format.h"
#include "sharding/partition_spec.h"

namespace shardscope {
namespace {

struct Token {
  enum class Kind { kName, kString, kPunct, kEnd };
  Kind kind;
  std::string text;
  std::size_t offset;
};

// A parsed Python literal: None, a string, a bare name (UNCONSTRAINED) or a tuple/list/set.
struct Literal {
  enum class Kind { kNone, kString, kName, kSequence };
  Kind kind = Kind::kNone;
  std::string text;
  std::vector<Literal> items;
  char opener = '(';

  [[nodiscard]] std::string repr() const {
    switch (kind) {
      case Kind::kNone: return "None";
      case Kind::kString: return python_string_repr(text);
      case Kind::kName: return text;
      case Kind::kSequence: {
        std::vector<std::string> parts;
        for (const Literal& item : items) parts.push_back(item.repr());
        if (opener == '(') return python_tuple(parts);
        if (opener == '[') return python_list(parts);
        return "{" + join(parts, ", ") + "}";
      }
    }
    return "None";
  }
};

class SpecParser {
 public:
  explicit SpecParser(std::string_view text) : text_(text) { tokenize(); }

  PartitionSpec parse() {
    const bool call = peek().kind == Token::Kind::kName && peek(1).text == "(" && is_spec_constructor(peek().text);
    if (call) {
      next();
      expect("(");
    }
    PartitionSpec spec = parse_arguments(call ? ")" : "");
    if (call) expect(")");
    if (peek().kind != Token::Kind::kEnd) fail("unexpected '" + peek().text + "'", peek().offset);
    return spec;
  }

 private:
  static bool is_spec_constructor(const std::string& name) {
    const std::size_t dot = name.rfind('.');
    const std::string last = dot == std::string::npos ? name : name.substr(dot + 1);
    return last == "P" || last == "PartitionSpec";
  }

  [[noreturn]] void fail(const std::string& what, std::size_t offset) const {
    throw value_error("Malformed PartitionSpec " + python_string_repr(text_) + ": " + what + " at column " +
                      std::to_string(offset + 1));
  }

  void tokenize() {
    std::size_t i = 0;
    while (i < text_.size()) {
      const char c = text_[i];
      if (std::isspace(static_cast<unsigned char>(c)) != 0) {
        ++i;
      } else if (c == '\'' || c == '"') {
        const std::size_t start = i++;
        std::string value;
        while (i < text_.size() && text_[i] != c) {
          if (text_[i] == '\\' && i + 1 < text_.size()) ++i;
          value += text_[i++];
        }
        if (i >= text_.size()) fail("unterminated string", start);
        ++i;
        tokens_.push_back({Token::Kind::kString, value, start});
      } else if (std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_') {
        const std::size_t start = i;
        while (i < text_.size() &&
               (std::isalnum(static_cast<unsigned char>(text_[i])) != 0 || text_[i] == '_' || text_[i] == '.')) {
          ++i;
        }
        tokens_.push_back({Token::Kind::kName, std::string(text_.substr(start, i - start)), start});
      } else if (std::string_view("()[]{},=").find(c) != std::string_view::npos) {
        tokens_.push_back({Token::Kind::kPunct, std::string(1, c), i});
        ++i;
      } else {
        fail(std::string("unexpected character '") + c + "'", i);
      }
    }
    tokens_.push_back({Token::Kind::kEnd, "end of text", text_.size()});
  }

  const Token& peek(std::size_t ahead = 0) const { return tokens_[std::min(position_ + ahead, tokens_.size() - 1)]; }
  const Token& next() {
    const Token& token = tokens_[position_];
    if (position_ + 1 < tokens_.size()) ++position_;
    return token;
  }
  void expect(const std::string& punct) {
    if (peek().text != punct || peek().kind != Token::Kind::kPunct) {
      fail("expected '" + punct + "' but found '" + peek().text + "'", peek().offset);
    }
    next();
  }

  Literal parse_literal() {
    const Token& token = next();
    if (token.kind == Token::Kind::kString) return {Literal::Kind::kString, token.text, {}, '('};
    if (token.kind == Token::Kind::kName) {
      if (token.text == "None") return {};
      if (token.text == "UNCONSTRAINED" || token.text.ends_with(".UNCONSTRAINED")) {
        return {Literal::Kind::kName, "UNCONSTRAINED", {}, '('};
      }
      if (token.text == "sum" || token.text == "max" || token.text == "min" || token.text.ends_with(".sum") ||
          token.text.ends_with(".max") || token.text.ends_with(".min")) {
        return {Literal::Kind::kName, token.text.substr(token.text.rfind('.') + 1), {}, '('};
      }
      fail("mesh axis names must be quoted strings, e.g. '" + token.text + "', not " + token.text, token.offset);
    }
    if (token.text == "(" || token.text == "[" || token.text == "{") {
      const std::string closer = token.text == "(" ? ")" : (token.text == "[" ? "]" : "}");
      Literal sequence{Literal::Kind::kSequence, "", {}, token.text[0]};
      while (peek().text != closer || peek().kind != Token::Kind::kPunct) {
        if (peek().kind == Token::Kind::kEnd) fail("missing '" + closer + "'", peek().offset);
        sequence.items.push_back(parse_literal());
        if (peek().text == ",") {
          next();
        } else if (peek().text != closer) {
          fail("expected ',' or '" + closer + "' but found '" + peek().text + "'", peek().offset);
        }
      }
      next();
      return sequence;
    }
    fail("expected a mesh axis name, None or a tuple of axis names but found '" + token.text + "'", token.offset);
  }

  SpecEntry to_entry(const Literal& literal, std::size_t offset) const {
    switch (literal.kind) {
      case Literal::Kind::kNone: return SpecEntry::none();
      case Literal::Kind::kString: return SpecEntry::of_axes({literal.text});
      case Literal::Kind::kName:
        if (literal.text == "UNCONSTRAINED") return SpecEntry::unconstrained();
        fail("unexpected name " + literal.text, offset);
      case Literal::Kind::kSequence: {
        std::vector<std::string> axes;
        for (const Literal& item : literal.items) {
          if (item.kind == Literal::Kind::kSequence) {
            throw value_error("A tuple inside PartitionSpec cannot contain a nested tuple. Got partition: " +
                              literal.repr() + " and the nested tuple: " + item.repr());
          }
          if (item.kind != Literal::Kind::kString) {
            fail("a tuple of mesh axes may hold only axis names, got " + literal.repr(), offset);
          }
          axes.push_back(item.text);
        }
        return SpecEntry::of_axes(std::move(axes));
      }
    }
    return SpecEntry::none();
  }

  std::vector<std::string> to_axis_names(const Literal& literal, const std::string& keyword, std::size_t offset) const {
    if (literal.kind == Literal::Kind::kString) return {literal.text};
    if (literal.kind == Literal::Kind::kNone) return {};
    if (literal.kind != Literal::Kind::kSequence) fail(keyword + " must name mesh axes", offset);
    std::vector<std::string> names;
    for (const Literal& item : literal.items) {
      if (item.kind != Literal::Kind::kString) fail(keyword + " must name mesh axes, got " + literal.repr(), offset);
      names.push_back(item.text);
    }
    return names;
  }

  PartitionSpec parse_arguments(const std::string& closer) {
    std::vector<SpecEntry> entries;
    std::vector<std::string> unreduced;
    std::vector<std::string> reduced;
    UnreducedKind kind = UnreducedKind::kSum;
    bool keywords_started = false;
    while (peek().kind != Token::Kind::kEnd && !(peek().kind == Token::Kind::kPunct && peek().text == closer)) {
      const std::size_t offset = peek().offset;
      if (peek().kind == Token::Kind::kName && peek(1).text == "=") {
        const std::string keyword = next().text;
        next();
        const Literal value = parse_literal();
        keywords_started = true;
        if (keyword == "unreduced") {
          unreduced = to_axis_names(value, keyword, offset);
        } else if (keyword == "reduced") {
          reduced = to_axis_names(value, keyword, offset);
        } else if (keyword == "unreduced_kind") {
          const std::string& name = value.text;
          if (name == "sum")
            kind = UnreducedKind::kSum;
          else if (name == "max")
            kind = UnreducedKind::kMax;
          else if (name == "min")
            kind = UnreducedKind::kMin;
          else
            fail("unreduced_kind must be sum, max or min, got " + value.repr(), offset);
        } else {
          fail("unknown keyword argument '" + keyword + "'", offset);
        }
      } else {
        if (keywords_started) fail("positional entry after a keyword argument", offset);
        entries.push_back(to_entry(parse_literal(), offset));
      }
      if (peek().text == ",") {
        next();
      } else if (peek().kind != Token::Kind::kEnd && peek().text != closer) {
        fail("expected ',' but found '" + peek().text + "'", peek().offset);
      }
    }
    PartitionSpec spec(std::move(entries));
    if (!unreduced.empty()) spec.set_unreduced(std::move(unreduced), kind);
    spec.set_reduced(std::move(reduced));
    return spec;
  }

  std::string_view text_;
  std::vector<Token> tokens_;
  std::size_t position_ = 0;
};

}  // namespace

PartitionSpec parse_partition_spec(std::string_view text) { return SpecParser(text).parse(); }

}  // namespace shardscope
