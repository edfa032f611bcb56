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

// Draws `text` centred in [a, b] at the largest size not above `size` that fits, down to 55% of it; false
// (nothing drawn) when it does not fit.
bool centred_text(ImDrawList* list, ImFont* font, float size, ImVec2 a, ImVec2 b, ImU32 color, const std::string& text,
                  std::vector<CanvasLabel>* drawn_labels) {
  if (font == nullptr || text.empty()) return false;
  const float width = b.x - a.x - 4.0f;
  const float height = b.y - a.y;
  float scale = 1.0f;
  ImVec2 extent = font->CalcTextSizeA(size, FLT_MAX, 0.0f, text.c_str());
  if (extent.x > width) scale = width / extent.x;
  if (scale < 0.55f || size * scale > height) return false;
  const float drawn = size * scale;
  extent = font->CalcTextSizeA(drawn, FLT_MAX, 0.0f, text.c_str());
  const ImVec2 at(a.x + (b.x - a.x - extent.x) / 2, a.y + (height - extent.y) / 2);
  list->AddText(font, drawn, at, color, text.c_str());
  if (drawn_labels != nullptr) drawn_labels->push_back({text, {at.x, at.y, at.x + extent.x, at.y + extent.y}});
  return true;
}

// Dense headers take the canvas font, smaller where their band is short at this zoom.
float header_size(const AxisLabel& label, const ViewTransform& view, const GridPaint& paint) {
  return std::min(paint.font_size, static_cast<float>(label.rect.height() * view.zoom) * 0.8f);
}

bool fits(const std::string& text, const AxisLabel& label, const ViewTransform& view, const GridPaint& paint) {
  const float width = paint.font->CalcTextSizeA(header_size(label, view, paint), FLT_MAX, 0.0f, text.c_str()).x;
  return width <= static_cast<float>(label.rect.width() * view.zoom) - 2.0f;
}

// One edge label in its rect, when it fits at a legible size.
void axis_label(ImDrawList* list, const AxisLabel& label, const std::string& text, const ViewTransform& view,
                ImVec2 origin, const GridPaint& paint) {
  const ImVec2 a = screen(view, origin, label.rect.x0, label.rect.y0);
  const ImVec2 b = screen(view, origin, label.rect.x1, label.rect.y1);
  const float size = header_size(label, view, paint);
  if (size < 7.0f || text.empty()) return;
  const ImVec2 extent = paint.font->CalcTextSizeA(size, FLT_MAX, 0.0f, text.c_str());
  if (extent.x > b.x - a.x - 2.0f) return;
  // Row headers sit against the grid; column headers and titles are centred over their columns.
  const float x = label.row ? b.x - extent.x : (a.x + b.x - extent.x) / 2;
  const float y = (a.y + b.y - extent.y) / 2;
  list->AddText(paint.font, size, ImVec2(x, y), paint.title, text.c_str());
  if (paint.drawn != nullptr) paint.drawn->push_back({text, {x, y, x + extent.x, y + extent.y}});
}

// Draws a dense grid's edge labels: every row's (and every column's) index range where all of them fit, else
// every one's number, so the headers never mix the two.
void axis_labels(ImDrawList* list, const PanelPlacement& panel, const ViewTransform& view, ImVec2 origin,
                 const GridPaint& paint) {
  bool short_rows = false;
  bool short_columns = false;
  for (const AxisLabel& label : panel.axis_labels) {
    if (!label.short_text.empty() && !fits(label.text, label, view, paint))
      (label.row ? short_rows : short_columns) = true;
  }
  for (const AxisLabel& label : panel.axis_labels) {
    const bool use_short = !label.short_text.empty() && (label.row ? short_rows : short_columns);
    axis_label(list, label, use_short ? label.short_text : label.text, view, origin, paint);
  }
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
    if (paint.drawn != nullptr) {
      const ImVec2 extent = paint.font->CalcTextSizeA(size, FLT_MAX, 0.0f, panel.title.c_str());
      paint.drawn->push_back({panel.title, {at.x, at.y, at.x + extent.x, at.y + extent.y}});
    }
  }
  for (const PanelPlacement& panel : geometry.panels) {
    if (paint.font == nullptr) break;
    axis_labels(list, panel, view, origin, paint);
  }
  const float border = std::clamp(static_cast<float>(view.zoom), 0.5f, 2.0f);
  // A dense panel shows JAX's labels only when every one fits, else every cell's grid position: never a mix.
  std::vector<bool> short_panels(geometry.panels.size(), false);
  for (const CellPlacement& placed : geometry.cells) {
    if (placed.short_label.empty() || paint.font == nullptr || short_panels[placed.panel]) continue;
    const std::string& label = layout.panels[placed.panel].cells[placed.cell].label;
    const float width = paint.font->CalcTextSizeA(paint.font_size, FLT_MAX, 0.0f, label.c_str()).x;
    const float room = static_cast<float>(placed.rect.width() * view.zoom) - 4.0f;
    const float height = static_cast<float>(placed.rect.height() * view.zoom);
    const float scale = std::min(1.0f, room / width);
    // Readable or not at all: JAX's labels shrunk much below the canvas font are a wall of specks at 16x16.
    if (scale < 0.8f || paint.font_size * scale > height) short_panels[placed.panel] = true;
  }
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
    const bool jax_label = placed.short_label.empty() || !short_panels[placed.panel];
    centred_text(list, paint.font, paint.font_size, a, b, to_imgui_color(cell.text_color),
                 jax_label ? cell.label : placed.short_label, paint.drawn);
  }
}

void draw_device_view(ImDrawList* list, const DeviceViewLayout& devices, const std::map<int64_t, Rgb>& colors,
                      const ViewTransform& view, ImVec2 origin, const DevicePaint& paint) {
  const auto zoom = static_cast<float>(view.zoom);
  for (const HostBox& host : devices.hosts) {
    const ImVec2 a = screen(view, origin, host.rect.x0, host.rect.y0);
    const ImVec2 b = screen(view, origin, host.rect.x1, host.rect.y1);
    list->AddRect(a, b, paint.host, 6.0f * zoom, 0, 1.0f);
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
  }
  if (paint.font == nullptr) return;
  // Labels last, where the layout model found room for them (none overlap, none cover a chip).
  ViewTransform at_origin = view;
  at_origin.pan_x += origin.x;
  at_origin.pan_y += origin.y;
  for (const ViewLabel& label : place_view_labels(devices, at_origin, label_font(paint))) {
    ImU32 color = paint.text;
    if (label.kind == ViewLabel::Kind::kHost) color = paint.host;
    if (label.kind != ViewLabel::Kind::kDevice && paint.label_background != 0) {
      list->AddRectFilled(ImVec2(static_cast<float>(label.rect.x0) - 2, static_cast<float>(label.rect.y0)),
                          ImVec2(static_cast<float>(label.rect.x1) + 2, static_cast<float>(label.rect.y1)),
                          paint.label_background);
    }
    if (label.kind == ViewLabel::Kind::kDevice) {
      const auto found = colors.find(label.id);
      color = to_imgui_color(found == colors.end() ? Rgb{220, 220, 220} : text_color_for(found->second));
    }
    list->AddText(paint.font, static_cast<float>(label.size),
                  ImVec2(static_cast<float>(label.rect.x0), static_cast<float>(label.rect.y0)), color,
                  label.text.c_str());
    if (paint.drawn != nullptr) paint.drawn->push_back({label.text, label.rect});
  }
}

LabelFont label_font(const DevicePaint& paint) {
  LabelFont font;
  font.max_size = paint.font_size;
  font.min_size = std::min(8.0, static_cast<double>(paint.font_size));
  if (paint.font != nullptr && paint.font_size > 0) {
    font.advance = paint.font->CalcTextSizeA(paint.font_size, FLT_MAX, 0.0f, "0").x / paint.font_size;
  }
  return font;
}

}  // namespace shardscope::ui
