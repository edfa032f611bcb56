// The canvas: the selected array's shard grid (or its devices laid out physically), zoom, pan, tooltips.
#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "base/dtype.h"
#include "base/error.h"
#include "base/python_format.h"
#include "ui/explorer.h"
#include "ui/model/collective_animation.h"
#include "ui/model/device_view.h"
#include "ui/model/program_table.h"
#include "ui/panels/grid_draw.h"
#include "ui/panels/widgets.h"

namespace shardscope::ui {
namespace {

constexpr double kMinZoom = 0.05;
constexpr double kMaxZoom = 12.0;
// The animated collective's sends: amber over ICI neighbours, magenta over the link that closes the ring.
constexpr ImU32 kSendColor = IM_COL32(255, 170, 0, 255);
constexpr ImU32 kWrapSendColor = IM_COL32(255, 60, 200, 255);

// The collective chosen in the Program tab, one step at a time on the device view: an arrow per chunk sent and the
// chunk itself part way along (core's step model decides who sends what; this only draws it).
void draw_collective_animation(Explorer& explorer, ImDrawList* list, const DeviceViewLayout& devices, ImVec2 origin) {
  CollectiveAnimationState& a = explorer.animation;
  const auto& program = explorer.snapshot->program;
  if (!a.record || !program || *a.record >= program->collectives.size() || !explorer.canvas.view) return;
  const CollectiveRecord& record = program->collectives[*a.record];
  const std::vector<CollectiveAnimation> animations = record_animations(record, explorer.snapshot->devices);
  if (a.playing) {
    a.clock += static_cast<double>(ImGui::GetIO().DeltaTime * a.speed);
    for (; a.clock >= 1.0; a.clock -= 1.0) ++a.step;
  }
  const CollectiveFrame frame = collective_frame(devices, animations, a.step);
  a.step = frame.step;
  const ViewTransform& view = *explorer.canvas.view;
  const auto at = [&](double x, double y) {
    return ImVec2(origin.x + static_cast<float>(view.to_screen_x(x)),
                  origin.y + static_cast<float>(view.to_screen_y(y)));
  };
  const float zoom = static_cast<float>(view.zoom);
  const float width = std::max(2.0f, 4.0f * zoom);
  for (const AnimationArrow& arrow : frame.arrows) {
    const ImU32 color = arrow.wraparound ? kWrapSendColor : kSendColor;
    const ImVec2 p0 = at(arrow.x0, arrow.y0);
    const ImVec2 p1 = at(arrow.x1, arrow.y1);
    list->AddLine(p0, p1, color, width);
    const float length = std::max(1.0f, std::hypot(p1.x - p0.x, p1.y - p0.y));
    const ImVec2 u((p1.x - p0.x) / length, (p1.y - p0.y) / length);
    const float head = 3.0f * width;
    list->AddTriangleFilled(p1, ImVec2(p1.x - u.x * head - u.y * head * 0.6f, p1.y - u.y * head + u.x * head * 0.6f),
                            ImVec2(p1.x - u.x * head + u.y * head * 0.6f, p1.y - u.y * head - u.x * head * 0.6f),
                            color);
    const auto t = static_cast<float>(std::clamp(a.clock, 0.0, 1.0));
    const ImVec2 chunk(p0.x + (p1.x - p0.x) * t, p0.y + (p1.y - p0.y) * t);
    list->AddRectFilled(ImVec2(chunk.x - width, chunk.y - width), ImVec2(chunk.x + width, chunk.y + width), color);
  }
  const std::string caption = collective_name(record.kind) + " over " + join(record.axes, "+") + ", " +
                              (frame.steps == 0 ? std::string("nothing to move") : frame.caption);
  list->AddText(ImVec2(origin.x + 16, origin.y + 16), kSendColor, caption.c_str());
}

// The hovered cell's tooltip; its text is kept on the explorer for --stats.
void cell_tooltip(Explorer& explorer, const VizLayout& layout, const CellPlacement& placed) {
  const VizPanel& panel = layout.panels[placed.panel];
  const VizCell& cell = panel.cells[placed.cell];
  const VariableInfo* info = explorer.variable(explorer.canvas.name);
  std::vector<std::string> lines;
  std::string devices;
  for (const Device& d : cell.devices) devices += (devices.empty() ? "" : ", ") + std::to_string(d.id);
  lines.push_back("devices      " + devices);
  lines.push_back("holds        " + cell_index_text(panel, cell));
  if (info != nullptr && info->sharding) {
    try {
      const Shape shard = shard_shape(*info->sharding, info->aval.shape, explorer.snapshot->profile);
      lines.push_back("shard shape  " + python_int_tuple(shard));
      const auto bytes = product(shard) * static_cast<int64_t>(dtype_size(info->aval.dtype));
      lines.push_back("bytes        " + bytes_text(bytes) + " per device (" + std::to_string(bytes) + " B)");
    } catch (const Error&) {
      lines.emplace_back("shard shape  uneven (padded blocks)");
    }
    std::optional<std::string> kind;
    if (const auto* named = std::get_if<NamedSharding>(&*info->sharding)) kind = named->memory_kind;
    if (const auto* single = std::get_if<SingleDeviceSharding>(&*info->sharding)) kind = single->memory_kind;
    lines.push_back("memory kind  " + kind.value_or("(default)"));
  }
  if (cell.padded) lines.emplace_back("* padded: the block runs past the end of the array");
  ImGui::BeginTooltip();
  ImGui::TextUnformatted(cell.label.c_str());
  ImGui::Separator();
  for (const std::string& line : lines) ImGui::TextUnformatted(line.c_str());
  ImGui::EndTooltip();
  explorer.hover_text = cell.label;
  for (const std::string& line : lines) explorer.hover_text += "\n" + line;
}

// Wheel zooms about the mouse, dragging pans; double-click fits.
void handle_input(CanvasModel& canvas, ImVec2 origin, bool hovered) {
  ImGuiIO& io = ImGui::GetIO();
  if (!hovered || !canvas.view) return;
  if (io.MouseWheel != 0) {
    canvas.view->zoom_about(io.MouseWheel > 0 ? 1.15 : 1 / 1.15, io.MousePos.x - origin.x, io.MousePos.y - origin.y,
                            kMinZoom, kMaxZoom);
  }
  if (ImGui::IsMouseDragging(ImGuiMouseButton_Left) || ImGui::IsMouseDragging(ImGuiMouseButton_Middle) ||
      ImGui::IsMouseDragging(ImGuiMouseButton_Right)) {
    canvas.view->pan_x += io.MouseDelta.x;
    canvas.view->pan_y += io.MouseDelta.y;
  }
  if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) canvas.view.reset();
}

}  // namespace

void draw_canvas(Explorer& explorer) {
  CanvasModel& canvas = explorer.canvas;
  const Theme& theme = current_theme();
  explorer.hover_text.clear();
  canvas.labels.clear();
  // Toolbar.
  if (ImGui::RadioButton("Grid", !canvas.device_view)) {
    canvas.device_view = false;
    canvas.view.reset();
  }
  ImGui::SameLine();
  if (ImGui::RadioButton("Devices", canvas.device_view)) {
    canvas.device_view = true;
    canvas.view.reset();
  }
  ImGui::SameLine();
  if (ImGui::Button("Fit")) canvas.view.reset();
  ImGui::SameLine();
  ImGui::TextDisabled("%.0f%%", canvas.view ? canvas.view->zoom * 100 : 100.0);
  ImGui::SameLine();
  ImGui::TextUnformatted(canvas.caption.c_str());
  if (const VariableInfo* info = explorer.variable(canvas.name); info != nullptr) {
    ImGui::SameLine();
    ImGui::TextDisabled("%s", info->sharding_text.c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", info->sharding_text.c_str());
  }

  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 size = ImGui::GetContentRegionAvail();
  if (size.x < 8 || size.y < 8) return;
  explorer.canvas_screen_rect = {origin.x, origin.y, origin.x + size.x, origin.y + size.y};
  ImGui::InvisibleButton(
      "##canvas", size,
      ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonMiddle | ImGuiButtonFlags_MouseButtonRight);
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* list = ImGui::GetWindowDrawList();
  list->PushClipRect(origin, ImVec2(origin.x + size.x, origin.y + size.y), true);
  list->AddRectFilled(origin, ImVec2(origin.x + size.x, origin.y + size.y), theme.canvas_background);

  // The device view shows the session's devices even with no array selected (e.g. right after a preset switch).
  if (!canvas.layout && !(canvas.device_view && !explorer.snapshot->devices.empty())) {
    const std::string& message = canvas.error.empty() ? std::string("Run a cell that creates an array.") : canvas.error;
    list->AddText(ImVec2(origin.x + 16, origin.y + 16), theme.muted_text, message.c_str());
    list->PopClipRect();
    return;
  }
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (!canvas.device_view) {
    if (!canvas.view) {
      canvas.view = ViewTransform::fit(canvas.geometry.width, canvas.geometry.height, size.x, size.y, 24, 3.0);
    }
    handle_input(canvas, origin, hovered);
    std::optional<std::size_t> hit;
    if (hovered)
      hit = hit_test(canvas.geometry, canvas.view->to_content_x(mouse.x - origin.x),
                     canvas.view->to_content_y(mouse.y - origin.y));
    GridPaint paint;
    paint.font = explorer.fonts.mono;
    paint.font_size = explorer.settings.font_size * explorer.ui_scale *
                      std::clamp(static_cast<float>(canvas.view->zoom / explorer.ui_scale), 0.8f, 1.6f);
    paint.border = theme.grid_border;
    paint.title = theme.text;
    paint.hovered = hit;
    paint.drawn = &canvas.labels;
    draw_grid(list, *canvas.layout, canvas.geometry, *canvas.view, origin, paint);
    list->PopClipRect();
    for (const std::string& note : canvas.layout->notes) ImGui::TextDisabled("%s", note.c_str());
    if (hit) cell_tooltip(explorer, *canvas.layout, canvas.geometry.cells[*hit]);
    return;
  }
  // Planes and GPU nodes wrap into rows that fill the canvas's shape.
  const DeviceViewLayout devices = layout_devices(explorer.snapshot->devices, size.x / size.y);
  if (!canvas.view) canvas.view = ViewTransform::fit(devices.width, devices.height, size.x, size.y, 16, 2.0);
  handle_input(canvas, origin, hovered);
  DevicePaint paint;
  paint.font = explorer.fonts.mono;
  paint.font_size = explorer.settings.font_size * explorer.ui_scale;
  paint.text = theme.text;
  paint.chip = theme.chip;
  paint.host = theme.muted_text;
  paint.idle_device = theme.idle_device;
  paint.label_background = theme.canvas_background;
  paint.drawn = &canvas.labels;
  const DeviceBox* hit = nullptr;
  if (hovered) {
    const double cx = canvas.view->to_content_x(mouse.x - origin.x);
    const double cy = canvas.view->to_content_y(mouse.y - origin.y);
    for (const DeviceBox& box : devices.devices) {
      if (box.rect.contains(cx, cy)) hit = &box;
    }
  }
  if (hit != nullptr) paint.hovered_device = hit->id;
  draw_device_view(list, devices, canvas.layout ? device_colors(*canvas.layout) : std::map<int64_t, Rgb>{},
                   *canvas.view, origin, paint);
  draw_collective_animation(explorer, list, devices, origin);
  if (!canvas.layout && !explorer.animation.record) {
    const std::string& message =
        canvas.error.empty() ? std::string("No array selected: devices shown idle.") : canvas.error;
    list->AddText(ImVec2(origin.x + 16, origin.y + 16), theme.muted_text, message.c_str());
  }
  list->PopClipRect();
  if (hit != nullptr && !canvas.layout) {
    ImGui::SetTooltip("device %lld (holds nothing selected)", static_cast<long long>(hit->id));
    explorer.hover_text = "device " + std::to_string(hit->id);
  }
  if (hit != nullptr && canvas.layout) {
    for (std::size_t i = 0; i < canvas.geometry.cells.size(); ++i) {
      const CellPlacement& placed = canvas.geometry.cells[i];
      const VizCell& cell = canvas.layout->panels[placed.panel].cells[placed.cell];
      if (std::any_of(cell.devices.begin(), cell.devices.end(), [&](const Device& d) { return d.id == hit->id; })) {
        cell_tooltip(explorer, *canvas.layout, placed);
      }
    }
  }
}

}  // namespace shardscope::ui
