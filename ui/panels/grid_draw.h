// Drawing shard grids and device views into an ImGui draw list (the canvas, console thumbnails, PNG export).
#pragma once

#include <imgui.h>

#include <map>
#include <optional>
#include <vector>

#include "ui/model/canvas_geometry.h"
#include "ui/model/device_view.h"
#include "viz/layout.h"

namespace shardscope::ui {

[[nodiscard]] ImU32 to_imgui_color(Rgb color, int alpha = 255);

struct GridPaint {
  ImFont* font = nullptr;
  float font_size = 14.0f;
  ImU32 border = IM_COL32(255, 255, 255, 255);
  ImU32 title = IM_COL32(220, 220, 220, 255);
  std::optional<std::size_t> hovered;         // index into geometry.cells
  std::vector<CanvasLabel>* drawn = nullptr;  // when set, receives every label drawn (screen pixels)
};

// Cells filled with the layout's colours, JAX's labels centred where they fit (else the cell's grid position,
// else nothing), panel titles above, and a dense grid's axis titles and index ranges along its edges.
void draw_grid(ImDrawList* list, const VizLayout& layout, const CanvasGeometry& geometry, const ViewTransform& view,
               ImVec2 origin, const GridPaint& paint);

struct DevicePaint {
  ImFont* font = nullptr;
  float font_size = 14.0f;
  ImU32 chip = IM_COL32(90, 90, 100, 255);
  ImU32 host = IM_COL32(150, 150, 160, 255);
  ImU32 link = IM_COL32(120, 160, 220, 255);
  ImU32 text = IM_COL32(220, 220, 220, 255);
  ImU32 idle_device = IM_COL32(70, 70, 74, 255);  // a device that holds no shard of the array
  ImU32 label_background = 0;  // behind host and plane labels, so links under them do not strike the text (0: none)
  std::optional<int64_t> hovered_device;
  std::vector<CanvasLabel>* drawn = nullptr;  // when set, receives every label drawn (screen pixels)
};

// The label font of a device view drawn with `paint` (the mono font's advance, sizes from legible to the
// paint's size).
[[nodiscard]] LabelFont label_font(const DevicePaint& paint);

void draw_device_view(ImDrawList* list, const DeviceViewLayout& devices, const std::map<int64_t, Rgb>& colors,
                      const ViewTransform& view, ImVec2 origin, const DevicePaint& paint);

}  // namespace shardscope::ui
