// Markdown blocks and inline spans for lesson prose, and their HTML for handouts.
#include "io/markdown.h"

#include <cctype>
#include <utility>

#include "base/text_parse.h"

namespace shardscope {
namespace {

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = text.find('\n', start);
    std::string line(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return lines;
}

std::size_t indent_of(const std::string& line) {
  std::size_t n = 0;
  for (const char c : line) {
    if (c == ' ') {
      ++n;
    } else if (c == '\t') {
      n += 4;
    } else {
      break;
    }
  }
  return n;
}

bool is_blank(const std::string& line) { return trim(line).empty(); }

// `#`..`######` then a space (or nothing): the heading level, else 0.
int heading_level(const std::string& line) {
  const std::string t = trim(line);
  int level = 0;
  while (level < static_cast<int>(t.size()) && t[static_cast<std::size_t>(level)] == '#') ++level;
  if (level == 0 || level > 6) return 0;
  if (static_cast<std::size_t>(level) < t.size() && t[static_cast<std::size_t>(level)] != ' ') return 0;
  return level;
}

bool is_rule(const std::string& line) {
  std::string compact;
  for (const char c : line) {
    if (c != ' ' && c != '\t') compact += c;
  }
  if (compact.size() < 3) return false;
  const char first = compact.front();
  if (first != '-' && first != '*' && first != '_') return false;
  for (const char c : compact) {
    if (c != first) return false;
  }
  return true;
}

bool is_fence(const std::string& line, std::string* marker) {
  const std::string t = trim(line);
  if (t.starts_with("```") || t.starts_with("~~~")) {
    if (marker != nullptr) *marker = t.substr(0, 3);
    return true;
  }
  return false;
}

struct ListMarker {
  bool found = false;
  bool ordered = false;
  int number = 0;
  std::size_t indent = 0;
  std::size_t content = 0;  // where the item's text starts
};

ListMarker list_marker(const std::string& line) {
  ListMarker marker;
  const std::size_t at = line.find_first_not_of(" \t");
  if (at == std::string::npos) return marker;
  marker.indent = indent_of(line);
  const char c = line[at];
  if ((c == '-' || c == '*' || c == '+') && at + 1 < line.size() && line[at + 1] == ' ') {
    marker.found = true;
    marker.content = at + 2;
    return marker;
  }
  std::size_t end = at;
  while (end < line.size() && std::isdigit(static_cast<unsigned char>(line[end])) != 0 && end - at < 9) ++end;
  if (end > at && end + 1 < line.size() && (line[end] == '.' || line[end] == ')') && line[end + 1] == ' ') {
    marker.found = true;
    marker.ordered = true;
    marker.number = std::stoi(line.substr(at, end - at));
    marker.content = end + 2;
  }
  return marker;
}

// Starts a new block rather than continuing a paragraph.
bool interrupts_paragraph(const std::string& line) {
  return heading_level(line) != 0 || is_fence(line, nullptr) || list_marker(line).found ||
         trim(line).starts_with("$$") || trim(line).starts_with(">") || (is_rule(line) && trim(line).size() >= 3);
}

void append_joined(std::string& text, const std::string& piece) {
  if (!text.empty()) text += ' ';
  text += trim(piece);
}

// TeX commands and their plain-text forms.
constexpr std::pair<const char*, const char*> kTexSymbols[] = {
    {"times", "×"}, {"cdot", "·"},  {"to", "→"},     {"rightarrow", "→"}, {"leftarrow", "←"}, {"le", "≤"},
    {"leq", "≤"},   {"ge", "≥"},    {"geq", "≥"},    {"ne", "≠"},         {"neq", "≠"},       {"approx", "≈"},
    {"sum", "Σ"},   {"prod", "Π"},  {"infty", "∞"},  {"ldots", "…"},      {"cdots", "…"},     {"dots", "…"},
    {"in", "∈"},    {"alpha", "α"}, {"beta", "β"},   {"gamma", "γ"},      {"delta", "δ"},     {"lambda", "λ"},
    {"mu", "μ"},    {"sigma", "σ"}, {"theta", "θ"},  {"pi", "π"},         {"div", "÷"},       {"pm", "±"},
    {"lceil", "⌈"}, {"rceil", "⌉"}, {"lfloor", "⌊"}, {"rfloor", "⌋"},     {"quad", "  "},     {"qquad", "  "},
    {"left", ""},   {"right", ""},  {",", " "},      {";", " "},          {"mid", "|"},       {"vert", "|"},
    {"log", "log"}, {"max", "max"}, {"min", "min"},  {"{", "{"},          {"}", "}"},         {"%", "%"},
    {"_", "_"},     {"\\", " "},
};

// The `{...}` group at `at` (which must be '{'): its contents, and `at` moved past it.
std::string brace_group(std::string_view tex, std::size_t& at) {
  int depth = 0;
  const std::size_t start = at + 1;
  for (; at < tex.size(); ++at) {
    if (tex[at] == '{') ++depth;
    if (tex[at] == '}' && --depth == 0) {
      const std::string inner(tex.substr(start, at - start));
      ++at;
      return inner;
    }
  }
  return std::string(tex.substr(start));
}

}  // namespace

std::string math_as_text(std::string_view tex) {
  std::string out;
  std::size_t i = 0;
  while (i < tex.size()) {
    const char c = tex[i];
    if (c == '\\') {
      std::size_t end = i + 1;
      while (end < tex.size() && std::isalpha(static_cast<unsigned char>(tex[end])) != 0) ++end;
      if (end == i + 1 && end < tex.size()) ++end;  // a one-character command: \, \{ \\ ...
      const std::string name(tex.substr(i + 1, end - i - 1));
      i = end;
      if (name == "frac" || name == "dfrac" || name == "tfrac") {
        while (i < tex.size() && tex[i] == ' ') ++i;
        std::string top = i < tex.size() && tex[i] == '{' ? brace_group(tex, i) : "";
        while (i < tex.size() && tex[i] == ' ') ++i;
        std::string bottom = i < tex.size() && tex[i] == '{' ? brace_group(tex, i) : "";
        top = math_as_text(top);
        bottom = math_as_text(bottom);
        const auto wrap = [](const std::string& part) {
          return part.find_first_of(" +-") == std::string::npos ? part : "(" + part + ")";
        };
        out += wrap(top) + "/" + wrap(bottom);
        continue;
      }
      if (name == "text" || name == "mathrm" || name == "mathbf" || name == "mathit" || name == "operatorname" ||
          name == "texttt" || name == "textbf" || name == "mathtt") {
        while (i < tex.size() && tex[i] == ' ') ++i;
        if (i < tex.size() && tex[i] == '{') out += math_as_text(brace_group(tex, i));
        continue;
      }
      bool known = false;
      for (const auto& [command, text] : kTexSymbols) {
        if (name == command) {
          out += text;
          known = true;
          break;
        }
      }
      if (!known) out += name;
      continue;
    }
    if (c != '{' && c != '}') out += c;
    ++i;
  }
  return out;
}

std::vector<MarkdownSpan> parse_inline_markdown(std::string_view text) {
  std::vector<MarkdownSpan> spans;
  bool bold = false;
  bool italic_star = false;
  bool italic_under = false;
  std::string current;
  const auto flush = [&] {
    if (current.empty()) return;
    MarkdownSpan span;
    span.text = std::move(current);
    span.bold = bold;
    span.italic = italic_star || italic_under;
    if (!spans.empty() && spans.back().bold == span.bold && spans.back().italic == span.italic && !spans.back().code &&
        !spans.back().math && spans.back().link.empty()) {
      spans.back().text += span.text;
    } else {
      spans.push_back(std::move(span));
    }
    current.clear();
  };
  const auto push_special = [&](MarkdownSpan span) {
    flush();
    span.bold = bold;
    span.italic = italic_star || italic_under;
    spans.push_back(std::move(span));
  };
  const auto word_char = [&](std::size_t at) {
    return at < text.size() && (std::isalnum(static_cast<unsigned char>(text[at])) != 0);
  };
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size() && std::ispunct(static_cast<unsigned char>(text[i + 1])) != 0) {
      current += text[i + 1];
      i += 2;
      continue;
    }
    if (c == '`') {
      std::size_t ticks = 0;
      while (i + ticks < text.size() && text[i + ticks] == '`') ++ticks;
      const std::string fence(ticks, '`');
      const std::size_t close = text.find(fence, i + ticks);
      if (close != std::string_view::npos) {
        MarkdownSpan span;
        span.code = true;
        std::string inner(text.substr(i + ticks, close - i - ticks));
        // CommonMark strips one space on both sides when both are there (``` `` `x` `` ```).
        if (inner.size() >= 2 && inner.front() == ' ' && inner.back() == ' ') inner = inner.substr(1, inner.size() - 2);
        span.text = inner;
        push_special(std::move(span));
        i = close + ticks;
        continue;
      }
      current += fence;
      i += ticks;
      continue;
    }
    if (c == '$') {
      const bool display = i + 1 < text.size() && text[i + 1] == '$';
      const std::string fence = display ? "$$" : "$";
      const std::size_t close = text.find(fence, i + fence.size());
      // `$5 and $6` is money, not math (Pandoc's rule): the opening `$` is followed by a non-space, the closing
      // one preceded by a non-space and not followed by a digit.
      const bool valid = close != std::string_view::npos && close > i + fence.size() && text[i + fence.size()] != ' ' &&
                         text[close - 1] != ' ' &&
                         !(close + fence.size() < text.size() &&
                           std::isdigit(static_cast<unsigned char>(text[close + fence.size()])) != 0);
      if (valid) {
        MarkdownSpan span;
        span.math = true;
        span.text = math_as_text(text.substr(i + fence.size(), close - i - fence.size()));
        push_special(std::move(span));
        i = close + fence.size();
        continue;
      }
    }
    if (c == '[') {
      const std::size_t close = text.find(']', i + 1);
      if (close != std::string_view::npos && close + 1 < text.size() && text[close + 1] == '(') {
        const std::size_t end = text.find(')', close + 2);
        if (end != std::string_view::npos) {
          const std::string target(text.substr(close + 2, end - close - 2));
          flush();
          std::vector<MarkdownSpan> inner = parse_inline_markdown(text.substr(i + 1, close - i - 1));
          for (MarkdownSpan& span : inner) {
            span.link = target;
            span.bold = span.bold || bold;
            span.italic = span.italic || italic_star || italic_under;
            spans.push_back(std::move(span));
          }
          i = end + 1;
          continue;
        }
      }
    }
    if ((c == '*' || c == '_') && i + 1 < text.size() && text[i + 1] == c) {
      // A `__` inside a word (snake__case) stays text.
      if (c == '_' && word_char(i + 2) && i > 0 && word_char(i - 1)) {
        current += "__";
        i += 2;
        continue;
      }
      flush();
      bold = !bold;
      i += 2;
      continue;
    }
    if (c == '*') {
      const bool opens = !italic_star && i + 1 < text.size() && text[i + 1] != ' ';
      if (opens || italic_star) {
        flush();
        italic_star = !italic_star;
        ++i;
        continue;
      }
    }
    if (c == '_') {
      // Intraword underscores (shard_map, all_gather) are text, as CommonMark rules.
      const bool inside_word = (i > 0 && word_char(i - 1)) && word_char(i + 1);
      const bool opens = !italic_under && !(i > 0 && word_char(i - 1)) && i + 1 < text.size() && text[i + 1] != ' ';
      const bool closes = italic_under && !word_char(i + 1);
      if (!inside_word && (opens || closes)) {
        flush();
        italic_under = !italic_under;
        ++i;
        continue;
      }
    }
    current += c;
    ++i;
  }
  flush();
  return spans;
}

std::vector<MarkdownBlock> parse_markdown(std::string_view text) {
  const std::vector<std::string> lines = split_lines(text);
  std::vector<MarkdownBlock> blocks;
  std::size_t i = 0;
  const auto inline_block = [&](MarkdownBlockKind kind, const std::string& body) {
    MarkdownBlock block;
    block.kind = kind;
    block.spans = parse_inline_markdown(body);
    return block;
  };
  while (i < lines.size()) {
    const std::string& line = lines[i];
    if (is_blank(line)) {
      ++i;
      continue;
    }
    std::string fence;
    if (is_fence(line, &fence)) {
      MarkdownBlock block;
      block.kind = MarkdownBlockKind::kCode;
      const std::string info = trim(trim(line).substr(3));
      block.language = info.substr(0, info.find(' '));
      const std::size_t indent = indent_of(line);
      std::vector<std::string> body;
      for (++i; i < lines.size() && !trim(lines[i]).starts_with(fence); ++i) {
        // Lines keep their own indentation beyond the fence's.
        const std::size_t strip = std::min(indent, indent_of(lines[i]));
        body.push_back(lines[i].substr(std::min(strip, lines[i].size())));
      }
      ++i;  // the closing fence (or the end)
      for (std::size_t k = 0; k < body.size(); ++k) block.text += (k == 0 ? "" : "\n") + body[k];
      blocks.push_back(std::move(block));
      continue;
    }
    if (trim(line).starts_with("$$")) {
      std::string body = trim(line).substr(2);
      std::size_t close = body.find("$$");
      ++i;
      while (close == std::string::npos && i < lines.size()) {
        body += "\n" + lines[i++];
        close = body.find("$$");
      }
      MarkdownBlock block;
      block.kind = MarkdownBlockKind::kMath;
      block.text = trim(math_as_text(body.substr(0, close)));
      blocks.push_back(std::move(block));
      continue;
    }
    if (const int level = heading_level(line); level != 0) {
      std::string body = trim(trim(line).substr(static_cast<std::size_t>(level)));
      // An optional closing run of #s.
      while (!body.empty() && body.back() == '#') body.pop_back();
      MarkdownBlock block = inline_block(MarkdownBlockKind::kHeading, trim(body));
      block.level = level;
      blocks.push_back(std::move(block));
      ++i;
      continue;
    }
    if (is_rule(line)) {
      MarkdownBlock block;
      block.kind = MarkdownBlockKind::kRule;
      blocks.push_back(std::move(block));
      ++i;
      continue;
    }
    if (const ListMarker marker = list_marker(line); marker.found) {
      std::string body = line.substr(marker.content);
      for (++i; i < lines.size() && !is_blank(lines[i]); ++i) {
        // Continuation lines are indented past the marker's column (or lazily not, unless a new block starts).
        if (list_marker(lines[i]).found || heading_level(lines[i]) != 0 || is_fence(lines[i], nullptr)) break;
        append_joined(body, lines[i]);
      }
      MarkdownBlock block = inline_block(MarkdownBlockKind::kListItem, trim(body));
      block.level = static_cast<int>(marker.indent / 2);
      block.ordered = marker.ordered;
      block.number = marker.number;
      blocks.push_back(std::move(block));
      continue;
    }
    if (trim(line).starts_with(">")) {
      std::string body;
      for (; i < lines.size() && trim(lines[i]).starts_with(">"); ++i) append_joined(body, trim(lines[i]).substr(1));
      blocks.push_back(inline_block(MarkdownBlockKind::kQuote, body));
      continue;
    }
    std::string body;
    append_joined(body, line);
    for (++i; i < lines.size() && !is_blank(lines[i]) && !interrupts_paragraph(lines[i]); ++i) {
      append_joined(body, lines[i]);
    }
    blocks.push_back(inline_block(MarkdownBlockKind::kParagraph, body));
  }
  return blocks;
}

std::string plain_text(const std::vector<MarkdownSpan>& spans) {
  std::string out;
  for (const MarkdownSpan& span : spans) out += span.text;
  return out;
}

std::string uncomment_markdown(std::string_view cell_source) {
  std::string out;
  bool first = true;
  for (const std::string& line : split_lines(cell_source)) {
    if (!first) out += '\n';
    first = false;
    if (line.starts_with("# ")) {
      out += line.substr(2);
    } else if (line.starts_with("#")) {
      out += line.substr(1);
    } else {
      out += line;
    }
  }
  return out;
}

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {

std::string spans_html(const std::vector<MarkdownSpan>& spans) {
  std::string out;
  for (const MarkdownSpan& span : spans) {
    std::string piece = html_escape(span.text);
    if (span.code) piece = "<code>" + piece + "</code>";
    if (span.math) piece = "<span class=\"math\">" + piece + "</span>";
    if (span.italic) piece = "<em>" + piece + "</em>";
    if (span.bold) piece = "<strong>" + piece + "</strong>";
    if (!span.link.empty()) piece = "<a href=\"" + html_escape(span.link) + "\">" + piece + "</a>";
    out += piece;
  }
  return out;
}

}  // namespace

std::string markdown_html(const std::vector<MarkdownBlock>& blocks) {
  std::string out;
  // Open lists, innermost last: (depth, ordered).
  std::vector<std::pair<int, bool>> open;
  const auto close_to = [&](int depth) {
    while (!open.empty() && open.back().first > depth) {
      out += open.back().second ? "</ol>\n" : "</ul>\n";
      open.pop_back();
    }
  };
  for (const MarkdownBlock& block : blocks) {
    if (block.kind != MarkdownBlockKind::kListItem) close_to(-1);
    switch (block.kind) {
      case MarkdownBlockKind::kHeading: {
        const std::string tag = "h" + std::to_string(block.level);
        out += "<" + tag + ">" + spans_html(block.spans) + "</" + tag + ">\n";
        break;
      }
      case MarkdownBlockKind::kParagraph: out += "<p>" + spans_html(block.spans) + "</p>\n"; break;
      case MarkdownBlockKind::kQuote: out += "<blockquote>" + spans_html(block.spans) + "</blockquote>\n"; break;
      case MarkdownBlockKind::kRule: out += "<hr>\n"; break;
      case MarkdownBlockKind::kMath: out += "<p class=\"math\">" + html_escape(block.text) + "</p>\n"; break;
      case MarkdownBlockKind::kCode:
        out += "<pre><code" +
               (block.language.empty() ? "" : " class=\"language-" + html_escape(block.language) + "\"") + ">" +
               html_escape(block.text) + "</code></pre>\n";
        break;
      case MarkdownBlockKind::kListItem: {
        close_to(block.level);
        if (open.empty() || open.back().first < block.level || open.back().second != block.ordered) {
          if (!open.empty() && open.back().first == block.level) close_to(block.level - 1);
          out += block.ordered
                     ? (block.number != 1 ? "<ol start=\"" + std::to_string(block.number) + "\">\n" : "<ol>\n")
                     : "<ul>\n";
          open.emplace_back(block.level, block.ordered);
        }
        out += "<li>" + spans_html(block.spans) + "</li>\n";
        break;
      }
    }
  }
  close_to(-1);
  return out;
}

}  // namespace shardscope
