// A small markdown reader for lesson prose: blocks (headings, paragraphs, lists, fenced code) of styled spans.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace shardscope {

// A run of text in one style. Math (`$...$`) arrives as plain text with `math` set.
struct MarkdownSpan {
  std::string text;
  bool bold = false;
  bool italic = false;
  bool code = false;
  bool math = false;
  std::string link;  // the target of [text](link); empty for other text
  bool operator==(const MarkdownSpan&) const = default;
};

enum class MarkdownBlockKind { kHeading, kParagraph, kListItem, kCode, kMath, kQuote, kRule };

struct MarkdownBlock {
  MarkdownBlockKind kind = MarkdownBlockKind::kParagraph;
  int level = 0;                    // heading: 1..6; list item: nesting depth from 0
  bool ordered = false;             // list item: numbered
  int number = 0;                   // list item: its number when ordered
  std::string language;             // fenced code: the info string's first word
  std::string text;                 // code and display math: the literal lines
  std::vector<MarkdownSpan> spans;  // headings, paragraphs, list items and quotes
};

// CommonMark's common subset: ATX headings, paragraphs (lines joined by spaces), `-`/`*`/`+` and `1.` list
// items with indented continuation lines, ``` and ~~~ fences, `$$` display math, `>` quotes and rules.
[[nodiscard]] std::vector<MarkdownBlock> parse_markdown(std::string_view text);

// Inline markup of one block's text: `code`, **bold**, *italic*, _italic_, [text](link), $math$, \escapes.
[[nodiscard]] std::vector<MarkdownSpan> parse_inline_markdown(std::string_view text);

// TeX as readable plain text: \times -> ×, \frac{a}{b} -> a/b, \text{x} -> x, braces dropped.
[[nodiscard]] std::string math_as_text(std::string_view tex);

// The spans' text run together, without styles.
[[nodiscard]] std::string plain_text(const std::vector<MarkdownSpan>& spans);

// A percent script's markdown cell as Jupytext reads it: each line's leading `# ` (or a lone `#`) removed.
[[nodiscard]] std::string uncomment_markdown(std::string_view cell_source);

// HTML for the blocks (handouts): h1-h6, p, ul/ol with li, pre><code, blockquote, hr; text escaped.
[[nodiscard]] std::string markdown_html(const std::vector<MarkdownBlock>& blocks);

// Escapes &, <, > and " for HTML text and attribute values.
[[nodiscard]] std::string html_escape(std::string_view text);

}  // namespace shardscope
