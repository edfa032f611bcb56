// Handout pages: prose rendered, code escaped, grids and diagrams side by side, nothing fetched from elsewhere.
#include "io/handout.h"

#include <doctest/doctest.h>

using namespace shardscope;

TEST_CASE("a handout is one page: markdown as HTML, code escaped, outputs in order, SVG inlined") {
  std::vector<HandoutCell> cells;
  cells.push_back({true, "# Lesson <1>\n\nSplit **rows**.", {}});
  HandoutCell code{false, "x = a < b", {}};
  code.outputs.push_back({HandoutOutput::Kind::kText, "P('x') -> <4>\n"});
  code.outputs.push_back(
      {HandoutOutput::Kind::kHtml, "<pre><span style=\"background-color: #393b79\">  </span></pre>"});
  code.outputs.push_back({HandoutOutput::Kind::kSvg, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg></svg>\n"});
  code.outputs.push_back({HandoutOutput::Kind::kError, "ValueError: <bad>"});
  cells.push_back(code);
  const std::string page = render_handout("Lesson & more", cells);
  CHECK(page.starts_with("<!DOCTYPE html>"));
  CHECK(page.find("<title>Lesson &amp; more</title>") != std::string::npos);
  CHECK(page.find("<h1>Lesson &lt;1&gt;</h1>\n<p>Split <strong>rows</strong>.</p>") != std::string::npos);
  CHECK(page.find("<code class=\"language-python\">x = a &lt; b</code>") != std::string::npos);
  CHECK(page.find("<pre class=\"output\">P('x') -&gt; &lt;4&gt;\n</pre>") != std::string::npos);
  CHECK(page.find("<div class=\"grid\">\n<div class=\"rich\"><pre><span style=\"background-color: #393b79\">") !=
        std::string::npos);
  CHECK(page.find("<div class=\"diagram\"><svg></svg>\n</div>\n</div>") != std::string::npos);
  CHECK(page.find("<?xml") == std::string::npos);
  CHECK(page.find("<pre class=\"output error\">ValueError: &lt;bad&gt;</pre>") != std::string::npos);
  // Offline: no scripts, stylesheets or images to fetch.
  CHECK(page.find("<script") == std::string::npos);
  CHECK(page.find("<link") == std::string::npos);
  CHECK(page.find("src=") == std::string::npos);
  CHECK(page.find("http") == std::string::npos);
}
