// Lesson prose: markdown blocks, inline styles, math as plain text, and the HTML handouts use.
#include "io/markdown.h"

#include <doctest/doctest.h>

using namespace shardscope;

TEST_CASE("headings, paragraphs, rules and quotes are blocks, paragraph lines join with spaces") {
  const auto blocks =
      parse_markdown("# Lesson 2: specs\n\nA `PartitionSpec` says\nhow to split.\n\n---\n> a note\n## Next ##\n");
  REQUIRE(blocks.size() == 5);
  CHECK(blocks[0].kind == MarkdownBlockKind::kHeading);
  CHECK(blocks[0].level == 1);
  CHECK(plain_text(blocks[0].spans) == "Lesson 2: specs");
  CHECK(blocks[1].kind == MarkdownBlockKind::kParagraph);
  CHECK(plain_text(blocks[1].spans) == "A PartitionSpec says how to split.");
  REQUIRE(blocks[1].spans.size() == 3);
  CHECK(blocks[1].spans[1].code);
  CHECK(blocks[1].spans[1].text == "PartitionSpec");
  CHECK(blocks[2].kind == MarkdownBlockKind::kRule);
  CHECK(blocks[3].kind == MarkdownBlockKind::kQuote);
  CHECK(plain_text(blocks[3].spans) == "a note");
  CHECK(blocks[4].level == 2);
  CHECK(plain_text(blocks[4].spans) == "Next");
  CHECK(parse_markdown("#hashtag is text")[0].kind == MarkdownBlockKind::kParagraph);
}

TEST_CASE("lists: bullets, numbers, nesting and continuation lines") {
  const auto blocks = parse_markdown("1. first\n   still first\n2. second\n   - inner\n* star\n");
  REQUIRE(blocks.size() == 4);
  CHECK(blocks[0].kind == MarkdownBlockKind::kListItem);
  CHECK(blocks[0].ordered);
  CHECK(blocks[0].number == 1);
  CHECK(plain_text(blocks[0].spans) == "first still first");
  CHECK(blocks[1].number == 2);
  CHECK_FALSE(blocks[2].ordered);
  CHECK(blocks[2].level == 1);
  CHECK(blocks[3].level == 0);
  CHECK(plain_text(blocks[3].spans) == "star");
}

TEST_CASE("fenced code keeps its lines and language, text after the fence goes on") {
  const auto blocks = parse_markdown("Run:\n```python\nx = 1\n  y = [2]\n```\nafter\n~~~\nraw\n~~~");
  REQUIRE(blocks.size() == 4);
  CHECK(blocks[1].kind == MarkdownBlockKind::kCode);
  CHECK(blocks[1].language == "python");
  CHECK(blocks[1].text == "x = 1\n  y = [2]");
  CHECK(plain_text(blocks[2].spans) == "after");
  CHECK(blocks[3].text == "raw");
  // An unclosed fence runs to the end instead of swallowing nothing.
  CHECK(parse_markdown("```\na\nb")[0].text == "a\nb");
}

TEST_CASE("emphasis, links and escapes, underscores inside names stay text") {
  const auto spans = parse_inline_markdown("**bold** and *it* or _it_, [docs](https://x.org/a), shard_map \\*x\\*");
  REQUIRE(spans.size() >= 7);
  CHECK(spans[0].text == "bold");
  CHECK(spans[0].bold);
  CHECK_FALSE(spans[1].bold);
  CHECK(spans[2].text == "it");
  CHECK(spans[2].italic);
  CHECK(spans[4].italic);
  CHECK(spans[6].text == "docs");
  CHECK(spans[6].link == "https://x.org/a");
  CHECK(spans.back().text == ", shard_map *x*");
  CHECK_FALSE(spans.back().italic);
  const auto nested = parse_inline_markdown("***both*** `a*b*c`");
  CHECK(nested[0].bold);
  CHECK(nested[0].italic);
  CHECK(nested.back().code);
  CHECK(nested.back().text == "a*b*c");
}

TEST_CASE("math becomes readable plain text") {
  CHECK(math_as_text("B \\times D") == "B × D");
  CHECK(math_as_text("\\frac{N}{2}") == "N/2");
  CHECK(math_as_text("\\frac{a + b}{c}") == "(a + b)/c");
  CHECK(math_as_text("\\text{bytes} \\le 2^{10}") == "bytes ≤ 2^10");
  const auto spans = parse_inline_markdown("costs $\\frac{N}{2} \\cdot B$ bytes, $5 and $6");
  REQUIRE(spans.size() == 3);
  CHECK(spans[1].math);
  CHECK(spans[1].text == "N/2 · B");
  CHECK(spans[2].text == " bytes, $5 and $6");
  const auto display = parse_markdown("$$\nT = \\frac{M}{W}\n$$\n");
  REQUIRE(display.size() == 1);
  CHECK(display[0].kind == MarkdownBlockKind::kMath);
  CHECK(display[0].text == "T = M/W");
}

TEST_CASE("a percent script's markdown cell loses its comment prefixes") {
  CHECK(uncomment_markdown("# # Title\n#\n# text with # inside") == "# Title\n\ntext with # inside");
}

TEST_CASE("HTML: blocks and spans, with lists opened and closed and text escaped") {
  const std::string html =
      markdown_html(parse_markdown("# A <b>\n\n- one **two**\n- [x](u?a=1&b=2)\n\n3. three\n\n`x<y`"));
  CHECK(html ==
        "<h1>A &lt;b&gt;</h1>\n<ul>\n<li>one <strong>two</strong></li>\n<li><a href=\"u?a=1&amp;b=2\">x</a></li>\n"
        "</ul>\n<ol start=\"3\">\n<li>three</li>\n</ol>\n<p><code>x&lt;y</code></p>\n");
  CHECK(markdown_html(parse_markdown("```py\nif a < b:\n```")) ==
        "<pre><code class=\"language-py\">if a &lt; b:</code></pre>\n");
}
