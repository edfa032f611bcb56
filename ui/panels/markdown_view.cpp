// Markdown blocks as wrapped, styled text: each word placed with its face, code on a tinted box, links underlined.
#include "ui/panels/markdown_view.h"

#include <algorithm>
#include <string>

#include "ui/panels/widgets.h"

namespace shardscope::ui {
namespace {

struct Flow {
  ImDrawList* list;
  float left;   // where lines start
  float right;  // where they must end
  float x;
  float y;
  float line_height;
  Rect drawn{1e9, 1e9, -1e9, -1e9};
  void include(float x0, float y0, float x1, float y1) {
    drawn.x0 = std::min<double>(drawn.x0, x0);
    drawn.y0 = std::min<double>(drawn.y0, y0);
    drawn.x1 = std::max<double>(drawn.x1, x1);
    drawn.y1 = std::max<double>(drawn.y1, y1);
  }
};

ImFont* face(const MarkdownSpan& span, const TextFonts& fonts, ImFont* base) {
  if (span.code || span.math) return fonts.mono;
  if (base == fonts.heading) return base;
  if (span.bold) return fonts.bold;
  if (span.italic) return fonts.italic;
  return base;
}

// Words with the space before them, so a line break drops exactly one space.
std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> words;
  std::string current;
  for (const char c : text) {
    if (c == ' ' && !current.empty() && current.back() != ' ') {
      words.push_back(current);
      current.clear();
    }
    current += c;
  }
  if (!current.empty()) words.push_back(current);
  return words;
}

void flow_spans(Flow& flow, const std::vector<MarkdownSpan>& spans, const TextFonts& fonts, ImFont* base, ImU32 color) {
  const Theme& theme = current_theme();
  const ImU32 link_color = theme.dark ? IM_COL32(120, 170, 255, 255) : IM_COL32(20, 80, 200, 255);
  const ImU32 code_back = theme.dark ? IM_COL32(255, 255, 255, 28) : IM_COL32(0, 0, 0, 20);
  for (const MarkdownSpan& span : spans) {
    ImFont* font = face(span, fonts, base);
    const float size = font->FontSize;
    for (std::string word : words_of(span.text)) {
      float width = font->CalcTextSizeA(size, 1e9f, 0, word.c_str()).x;
      if (flow.x + width > flow.right && flow.x > flow.left) {
        flow.x = flow.left;
        flow.y += flow.line_height;
        if (word.front() == ' ') word.erase(0, 1);
        width = font->CalcTextSizeA(size, 1e9f, 0, word.c_str()).x;
      }
      const float baseline_shift = (flow.line_height - size) * 0.5f;
      const ImVec2 at(flow.x, flow.y + baseline_shift);
      if (span.code) {
        const float lead = word.front() == ' ' ? font->CalcTextSizeA(size, 1e9f, 0, " ").x : 0.0f;
        flow.list->AddRectFilled(ImVec2(at.x + lead - 2, at.y), ImVec2(at.x + width + 2, at.y + size), code_back, 3);
      }
      const ImU32 word_color = span.link.empty() ? color : link_color;
      flow.list->AddText(font, size, at, word_color, word.c_str());
      if (!span.link.empty()) {
        flow.list->AddLine(ImVec2(at.x, at.y + size), ImVec2(at.x + width, at.y + size), link_color);
      }
      flow.include(at.x, at.y, at.x + width, at.y + size);
      flow.x += width;
    }
  }
}

}  // namespace

std::optional<Rect> draw_markdown(const std::vector<MarkdownBlock>& blocks, const TextFonts& fonts, float width) {
  const Theme& theme = current_theme();
  ImDrawList* list = ImGui::GetWindowDrawList();
  const float body_size = fonts.body->FontSize;
  const float gap = body_size * 0.6f;
  std::optional<Rect> heading;
  for (const MarkdownBlock& block : blocks) {
    const ImVec2 start = ImGui::GetCursorScreenPos();
    float indent = 0;
    ImFont* base = fonts.body;
    ImU32 color = theme.text;
    if (block.kind == MarkdownBlockKind::kHeading) {
      // Level 1 and 2 in the heading face, deeper levels in bold.
      base = block.level <= 2 ? fonts.heading : fonts.bold;
    } else if (block.kind == MarkdownBlockKind::kListItem) {
      indent = body_size * (1.5f + 1.5f * static_cast<float>(block.level));
    } else if (block.kind == MarkdownBlockKind::kQuote) {
      indent = body_size;
      color = theme.muted_text;
    }
    Flow flow{list, start.x + indent, start.x + width, start.x + indent, start.y, base->FontSize * 1.3f};
    switch (block.kind) {
      case MarkdownBlockKind::kRule:
        list->AddLine(ImVec2(start.x, start.y + gap), ImVec2(start.x + width, start.y + gap), theme.muted_text);
        flow.y += gap * 2 - flow.line_height;
        break;
      case MarkdownBlockKind::kCode:
      case MarkdownBlockKind::kMath: {
        const ImVec2 size = fonts.mono->CalcTextSizeA(fonts.mono->FontSize, 1e9f, 0, block.text.c_str());
        const ImU32 back = theme.dark ? IM_COL32(255, 255, 255, 18) : IM_COL32(0, 0, 0, 14);
        const float pad = body_size * 0.4f;
        const float left =
            block.kind == MarkdownBlockKind::kMath ? start.x + std::max(0.0f, (width - size.x) / 2) : start.x + pad;
        if (block.kind == MarkdownBlockKind::kCode) {
          list->AddRectFilled(start, ImVec2(start.x + width, start.y + size.y + 2 * pad), back, 4);
        }
        list->AddText(fonts.mono, fonts.mono->FontSize, ImVec2(left, start.y + pad), theme.text, block.text.c_str());
        flow.y = start.y + size.y + 2 * pad - flow.line_height;
        break;
      }
      default: {
        if (block.kind == MarkdownBlockKind::kListItem) {
          const std::string marker = block.ordered ? std::to_string(block.number) + "." : "•";
          const float marker_width = fonts.body->CalcTextSizeA(body_size, 1e9f, 0, marker.c_str()).x;
          list->AddText(
              fonts.body, body_size,
              ImVec2(flow.left - marker_width - body_size * 0.4f, flow.y + (flow.line_height - body_size) * 0.5f),
              theme.text, marker.c_str());
        }
        if (block.kind == MarkdownBlockKind::kQuote) {
          list->AddRectFilled(ImVec2(start.x, start.y), ImVec2(start.x + body_size * 0.25f, start.y + flow.line_height),
                              theme.muted_text);
        }
        flow_spans(flow, block.spans, fonts, base, color);
        if (block.kind == MarkdownBlockKind::kHeading && !heading && flow.drawn.x1 > flow.drawn.x0)
          heading = flow.drawn;
        break;
      }
    }
    const float height = flow.y + flow.line_height - start.y;
    ImGui::Dummy(ImVec2(width, std::max(1.0f, height)));
    ImGui::Dummy(ImVec2(1, block.kind == MarkdownBlockKind::kHeading ? gap * 0.5f : gap * 0.3f));
  }
  return heading;
}

}  // namespace shardscope::ui
