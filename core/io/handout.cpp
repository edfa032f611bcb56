// Handout HTML: prose rendered from markdown, code and outputs in order, all styles inline in the page.
#include "io/handout.h"

#include "io/markdown.h"

namespace shardscope {
namespace {

constexpr const char* kStyle = R"css(
body { font-family: "DejaVu Sans", "Helvetica Neue", Arial, sans-serif; max-width: 60em; margin: 2em auto;
       padding: 0 1em; color: #1d1d22; background: #ffffff; line-height: 1.5; }
h1, h2, h3 { line-height: 1.25; }
code, pre { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.92em; }
p code, li code { background: #f0f0f3; padding: 0 0.2em; border-radius: 3px; }
pre.code { background: #f6f6f8; border-left: 3px solid #6b6ecf; padding: 0.6em 0.8em; overflow-x: auto; }
pre.output { margin: 0.4em 0; overflow-x: auto; }
pre.error { color: #a01010; background: #fff4f4; padding: 0.4em 0.8em; }
.grid { display: flex; flex-wrap: wrap; gap: 1.5em; align-items: flex-start; margin: 0.4em 0 1em 0; }
.diagram svg { max-width: 100%; height: auto; }
.math { font-family: "DejaVu Sans Mono", monospace; }
blockquote { color: #55555f; border-left: 3px solid #c8c8d0; margin-left: 0; padding-left: 1em; }
)css";

std::string without_xml_declaration(const std::string& svg) {
  if (!svg.starts_with("<?xml")) return svg;
  const std::size_t end = svg.find("?>");
  if (end == std::string::npos) return svg;
  std::size_t start = end + 2;
  while (start < svg.size() && (svg[start] == '\n' || svg[start] == '\r')) ++start;
  return svg.substr(start);
}

void render_outputs(const std::vector<HandoutOutput>& outputs, std::string& out) {
  std::size_t i = 0;
  while (i < outputs.size()) {
    const HandoutOutput& output = outputs[i];
    switch (output.kind) {
      case HandoutOutput::Kind::kText:
        out += "<pre class=\"output\">" + html_escape(output.content) + "</pre>\n";
        ++i;
        break;
      case HandoutOutput::Kind::kError:
        out += "<pre class=\"output error\">" + html_escape(output.content) + "</pre>\n";
        ++i;
        break;
      case HandoutOutput::Kind::kHtml:
      case HandoutOutput::Kind::kSvg:
        // A grid and its diagram side by side, as far as the page is wide.
        out += "<div class=\"grid\">\n";
        while (i < outputs.size() &&
               (outputs[i].kind == HandoutOutput::Kind::kHtml || outputs[i].kind == HandoutOutput::Kind::kSvg)) {
          if (outputs[i].kind == HandoutOutput::Kind::kHtml) {
            out += "<div class=\"rich\">" + outputs[i].content + "</div>\n";
          } else {
            out += "<div class=\"diagram\">" + without_xml_declaration(outputs[i].content) + "</div>\n";
          }
          ++i;
        }
        out += "</div>\n";
        break;
    }
  }
}

}  // namespace

std::string render_handout(const std::string& title, const std::vector<HandoutCell>& cells) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
                    html_escape(title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  for (const HandoutCell& cell : cells) {
    if (cell.markdown) {
      out += "<section class=\"prose\">\n" + markdown_html(parse_markdown(cell.source)) + "</section>\n";
      continue;
    }
    out += "<section class=\"cell\">\n<pre class=\"code\"><code class=\"language-python\">" + html_escape(cell.source) +
           "</code></pre>\n";
    render_outputs(cell.outputs, out);
    out += "</section>\n";
  }
  return out + "</body>\n</html>\n";
}

}  // namespace shardscope
