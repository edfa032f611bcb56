// Shard grid and device view painting with ImDrawList.
#include "ui/panels/grid_draw.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace shardscope::ui {
namespace {

ImVec2 screen(const ViewTransform& view, ImVec2 origin, double x, double y) {
  return {origin.x + static_cast<float>(view.to_screen_x(x)), origin.y + static_cast<float>(view.to_screen_y(y))};
}

// Draws `text` centred in [a, b] at the largest size not above `size` that fits, down to 55% of it.
void centred_text(ImDrawList* list, ImFont* font, float size, ImVec2 a, ImVec2 b, ImU32 color,
                  const std::string& text) {
  if (font == nullptr || text.empty()) return;
  const float width = b.x - a.x - 4.0f;
  const float height = b.y - a.y;
  float scale = 1.0f;
  ImVec2 extent = font->CalcTextSizeA(size, FLT_MAX, 0.0f, text.c_str());
  if (extent.x > width) scale = width / extent.x;
  if (scale < 0.55f || size * scale > height) return;
  const float drawn = size * scale;
  extent = font->CalcTextSizeA(drawn, FLT_MAX, 0.0f, text.c_str());
  list->AddText(font, drawn, ImVec2(a.x + (b.x - a.x - extent.x) / 2, a.y + (height - extent.y) / 2), color,
                text.c_str());
}

}  // namespace

ImU32 to_imgui_color(Rgb color, int alpha) { return IM_COL32(color.r, color.g, color.b, alpha); }

void draw_grid(ImDrawList* list, const VizLayout& layout, const CanvasGeometry& geometry, const ViewTransform& view,
               ImVec2 origin, const GridPaint& paint) {
  for (const PanelPlacement& panel : geometry.panels) {
    if (panel.title.empty() || paint.font == nullptr) continue;
    const ImVec2 at = screen(view, origin, panel.title_rect.x0, panel.title_rect.y0);
    const float size =
        std::clamp(static_cast<float>(panel.title_rect.height() * view.zoom) * 0.8f, 8.0f, paint.font_size);
    list->AddText(paint.font, size, at, paint.title, panel.title.c_str());
  }
  const float border = std::clamp(static_cast<float>(view.zoom), 0.5f, 2.0f);
  for (std::size_t i = 0; i < geometry.cells.size(); ++i) {
    const CellPlacement& placed = geometry.cells[i];
    const VizCell& cell = layout.panels[placed.panel].cells[placed.cell];
    const ImVec2 a = screen(view, origin, placed.rect.x0, placed.rect.y0);
    const ImVec2 b = screen(view, origin, placed.rect.x1, placed.rect.y1);
    list->AddRectFilled(a, b, to_imgui_color(cell.background));
    if (cell.padded) list->AddLine(ImVec2(a.x, b.y), ImVec2(b.x, a.y), to_imgui_color(cell.text_color, 110), 1.0f);
    list->AddRect(a, b, paint.border, 0.0f, 0, border);
    if (paint.hovered == i) {
      list->AddRect(ImVec2(a.x + 1, a.y + 1), ImVec2(b.x - 1, b.y - 1), to_imgui_color(cell.text_color), 0.0f, 0, 2.0f);
    }
    centred_text(list, paint.font, paint.font_size, a, b, to_imgui_color(cell.text_color), cell.label);
  }
}

void draw_device_view(ImDrawList* list, const DeviceViewLayout& devices, const std::map<int64_t, Rgb>& colors,
                      const ViewTransform& view, ImVec2 origin, const DevicePaint& paint) {
  const auto zoom = static_cast<float>(view.zoom);
  for (std::size_t i = 0; i < devices.plane_titles.size(); ++i) {
    const Rect& r = devices.plane_rects[i];
    list->AddText(paint.font, paint.font_size, screen(view, origin, r.x0 + 16, r.y0 + 2), paint.text,
                  devices.plane_titles[i].c_str());
  }
  for (const HostBox& host : devices.hosts) {
    const ImVec2 a = screen(view, origin, host.rect.x0, host.rect.y0);
    const ImVec2 b = screen(view, origin, host.rect.x1, host.rect.y1);
    list->AddRect(a, b, paint.host, 6.0f * zoom, 0, 1.0f);
    list->AddText(paint.font, paint.font_size * std::clamp(zoom, 0.6f, 1.0f), ImVec2(a.x + 6, a.y + 2), paint.host,
                  host.label.c_str());
  }
  for (const Link& link : devices.links) {
    const ImVec2 a = screen(view, origin, link.x0, link.y0);
    const ImVec2 b = screen(view, origin, link.x1, link.y1);
    if (!link.wraparound) {
      list->AddLine(a, b, paint.link, std::max(1.0f, 3.0f * zoom));
      continue;
    }
    // A torus link: a dashed line across the slice, drawn behind the chips.
    const float length = std::hypot(b.x - a.x, b.y - a.y);
    const float dash = std::max(4.0f, 8.0f * zoom);
    for (float t = 0; t < length; t += 2 * dash) {
      const float t1 = std::min(length, t + dash);
      list->AddLine(ImVec2(a.x + (b.x - a.x) * t / length, a.y + (b.y - a.y) * t / length),
                    ImVec2(a.x + (b.x - a.x) * t1 / length, a.y + (b.y - a.y) * t1 / length), paint.link,
                    std::max(1.0f, 1.5f * zoom));
    }
  }
  for (const ChipBox& chip : devices.chips) {
    list->AddRectFilled(screen(view, origin, chip.rect.x0, chip.rect.y0),
                        screen(view, origin, chip.rect.x1, chip.rect.y1), paint.chip, 4.0f * zoom);
  }
  for (const DeviceBox& device : devices.devices) {
    const ImVec2 a = screen(view, origin, device.rect.x0, device.rect.y0);
    const ImVec2 b = screen(view, origin, device.rect.x1, device.rect.y1);
    const auto found = colors.find(device.id);
    const ImU32 fill = found == colors.end() ? paint.idle_device : to_imgui_color(found->second);
    list->AddRectFilled(a, b, fill, 3.0f * zoom);
    if (paint.hovered_device == device.id) list->AddRect(a, b, IM_COL32(255, 255, 255, 255), 3.0f * zoom, 0, 2.0f);
    const Rgb text = found == colors.end() ? Rgb{220, 220, 220} : text_color_for(found->second);
    centred_text(list, paint.font, paint.font_size, a, b, to_imgui_color(text), device.label);
  }
}

}  // namespace shardscope::ui
