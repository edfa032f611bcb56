// Placing a collective's step on the device view: device box centres, arrows shortened to the box edges and
// shifted sideways so opposite sends stay apart.
#include "ui/model/collective_animation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "base/python_format.h"
#include "cost/hardware.h"
#include "viz/svg_renderer.h"

namespace shardscope::ui {
namespace {

// The window's colours (canvas_panel and the dark theme), so an exported frame reads like the screen.
constexpr const char* kSend = "#ffaa00";
constexpr const char* kWrapSend = "#ff3cc8";
constexpr const char* kBackground = "#1e1e1e";
constexpr const char* kChip = "#34363e";
constexpr const char* kLink = "#78a0dc";
constexpr const char* kIdleDevice = "#484a52";
constexpr const char* kText = "#dcdcdc";
constexpr double kChunk = 4.0;  // half the chunk square's side, as the window draws it at zoom 1

std::string num(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

}  // namespace

std::vector<CollectiveAnimation> record_animations(const CollectiveRecord& record, const std::vector<Device>& devices) {
  std::map<int64_t, const Device*> by_id;
  for (const Device& d : devices) by_id.emplace(d.id, &d);
  std::vector<CollectiveAnimation> out;
  if (devices.empty()) return out;
  const HardwareSpec& hardware = hardware_for(devices.front());
  for (const auto& ids : record.groups) {
    std::vector<const Device*> group;
    for (const int64_t id : ids) {
      if (const auto it = by_id.find(id); it != by_id.end()) group.push_back(it->second);
    }
    if (group.size() != ids.size() || group.size() < 2) continue;
    out.push_back(collective_animation(record.kind, group, collective_topology(group, devices, hardware)));
  }
  return out;
}

CollectiveFrame collective_frame(const DeviceViewLayout& layout, const std::vector<CollectiveAnimation>& animations,
                                 int step) {
  CollectiveFrame frame;
  std::map<int64_t, Rect> boxes;
  for (const DeviceBox& box : layout.devices) boxes.emplace(box.id, box.rect);
  for (const CollectiveAnimation& a : animations) frame.steps = std::max(frame.steps, static_cast<int>(a.steps.size()));
  if (frame.steps == 0) return frame;
  frame.step = ((step % frame.steps) + frame.steps) % frame.steps;
  for (const CollectiveAnimation& a : animations) {
    if (frame.step >= static_cast<int>(a.steps.size())) continue;
    const CollectiveStep& s = a.steps[static_cast<std::size_t>(frame.step)];
    if (frame.caption.empty()) {
      frame.caption = "step " + std::to_string(frame.step + 1) + "/" + std::to_string(frame.steps) + " (" + s.phase +
                      "): " + a.algorithm;
    }
    for (const ChunkTransfer& t : s.transfers) {
      const auto from = boxes.find(t.from);
      const auto to = boxes.find(t.to);
      if (from == boxes.end() || to == boxes.end()) continue;
      const double ax = (from->second.x0 + from->second.x1) / 2;
      const double ay = (from->second.y0 + from->second.y1) / 2;
      const double bx = (to->second.x0 + to->second.x1) / 2;
      const double by = (to->second.y0 + to->second.y1) / 2;
      const double length = std::hypot(bx - ax, by - ay);
      if (length <= 0) continue;
      const double ux = (bx - ax) / length;
      const double uy = (by - ay) / length;
      // Start and end a little inside the boxes' edges; shift to the right of the direction of travel.
      const double inset = std::min(from->second.width(), from->second.height()) * 0.3;
      const double shift = std::min(from->second.width(), from->second.height()) * 0.15;
      AnimationArrow arrow;
      arrow.x0 = ax + ux * inset - uy * shift;
      arrow.y0 = ay + uy * inset + ux * shift;
      arrow.x1 = bx - ux * inset - uy * shift;
      arrow.y1 = by - uy * inset + ux * shift;
      arrow.wraparound = t.wraparound;
      arrow.from = t.from;
      arrow.to = t.to;
      frame.arrows.push_back(arrow);
    }
  }
  return frame;
}

std::pair<double, double> chunk_position(const AnimationArrow& arrow, double clock) {
  const double t = std::clamp(clock, 0.0, 1.0);
  return {arrow.x0 + (arrow.x1 - arrow.x0) * t, arrow.y0 + (arrow.y1 - arrow.y0) * t};
}

std::string animation_caption(const CollectiveRecord& record, const CollectiveFrame& frame) {
  return collective_name(record.kind) + " over " + join(record.axes, "+") + ", " +
         (frame.steps == 0 ? std::string("nothing to move") : frame.caption);
}

std::string collective_frame_svg(const DeviceViewLayout& layout, const CollectiveRecord& record,
                                 const CollectiveFrame& frame, double clock, const std::map<int64_t, Rgb>& colors) {
  constexpr double kCaption = 28;  // the caption's band above the devices
  std::ostringstream out;
  const std::string caption = animation_caption(record, frame);
  // Wide enough for the caption too (13 px monospace is about 8 px a character).
  const double width = std::max(layout.width, 16 + 8.0 * static_cast<double>(caption.size()));
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width) << "\" height=\""
      << num(layout.height + kCaption) << "\" viewBox=\"0 " << num(-kCaption) << " " << num(width) << " "
      << num(layout.height + kCaption) << "\" font-family=\"monospace\" data-step=\"" << frame.step
      << "\" data-steps=\"" << frame.steps << "\" data-clock=\"" << num(clock) << "\">\n";
  out << "<rect x=\"0\" y=\"" << num(-kCaption) << "\" width=\"100%\" height=\"100%\" fill=\"" << kBackground
      << "\"/>\n";
  out << "<text class=\"caption\" x=\"8\" y=\"" << num(-kCaption / 2 + 4) << "\" font-size=\"13\" fill=\"" << kSend
      << "\">" << xml_escape(caption) << "</text>\n";
  for (std::size_t i = 0; i < layout.plane_titles.size(); ++i) {
    const Rect& r = layout.plane_rects[i];
    out << "<text x=\"" << num(r.x0 + 16) << "\" y=\"" << num(r.y0 + 14) << "\" font-size=\"12\" fill=\"" << kText
        << "\">" << xml_escape(layout.plane_titles[i]) << "</text>\n";
  }
  for (const HostBox& host : layout.hosts) {
    out << "<rect class=\"host\" x=\"" << num(host.rect.x0) << "\" y=\"" << num(host.rect.y0) << "\" width=\""
        << num(host.rect.width()) << "\" height=\"" << num(host.rect.height()) << "\" rx=\"6\" fill=\"none\" stroke=\""
        << kLink << "\"/>\n<text x=\"" << num(host.rect.x0 + 6) << "\" y=\"" << num(host.rect.y0 + 12)
        << "\" font-size=\"11\" fill=\"" << kLink << "\">" << xml_escape(host.label) << "</text>\n";
  }
  for (const Link& link : layout.links) {
    out << "<line class=\"link" << (link.wraparound ? " wraparound" : "") << "\" x1=\"" << num(link.x0) << "\" y1=\""
        << num(link.y0) << "\" x2=\"" << num(link.x1) << "\" y2=\"" << num(link.y1) << "\" stroke=\"" << kLink
        << (link.wraparound ? "\" stroke-width=\"1.5\" stroke-dasharray=\"8 8\"/>\n" : "\" stroke-width=\"3\"/>\n");
  }
  for (const ChipBox& chip : layout.chips) {
    out << "<rect class=\"chip\" x=\"" << num(chip.rect.x0) << "\" y=\"" << num(chip.rect.y0) << "\" width=\""
        << num(chip.rect.width()) << "\" height=\"" << num(chip.rect.height()) << "\" rx=\"4\" fill=\"" << kChip
        << "\"/>\n";
  }
  for (const DeviceBox& device : layout.devices) {
    const auto color = colors.find(device.id);
    const Rgb text = color == colors.end() ? Rgb{220, 220, 220} : text_color_for(color->second);
    out << "<rect class=\"device\" data-device=\"" << device.id << "\" x=\"" << num(device.rect.x0) << "\" y=\""
        << num(device.rect.y0) << "\" width=\"" << num(device.rect.width()) << "\" height=\""
        << num(device.rect.height()) << "\" rx=\"3\" fill=\""
        << (color == colors.end() ? std::string(kIdleDevice) : color->second.hex()) << "\"/>\n<text x=\""
        << num((device.rect.x0 + device.rect.x1) / 2) << "\" y=\"" << num((device.rect.y0 + device.rect.y1) / 2 + 4)
        << "\" font-size=\"13\" text-anchor=\"middle\" fill=\"" << text.hex() << "\">" << xml_escape(device.label)
        << "</text>\n";
  }
  for (const AnimationArrow& arrow : frame.arrows) {
    const char* color = arrow.wraparound ? kWrapSend : kSend;
    const std::string ids = "data-from=\"" + std::to_string(arrow.from) + "\" data-to=\"" + std::to_string(arrow.to) +
                            "\"" + (arrow.wraparound ? " data-wraparound=\"true\"" : "");
    // The head: a triangle at the receiver's end, as long as three line widths.
    const double length = std::max(1e-9, std::hypot(arrow.x1 - arrow.x0, arrow.y1 - arrow.y0));
    const double ux = (arrow.x1 - arrow.x0) / length;
    const double uy = (arrow.y1 - arrow.y0) / length;
    const double head = 12;
    out << "<line class=\"send\" " << ids << " x1=\"" << num(arrow.x0) << "\" y1=\"" << num(arrow.y0) << "\" x2=\""
        << num(arrow.x1) << "\" y2=\"" << num(arrow.y1) << "\" stroke=\"" << color << "\" stroke-width=\"4\"/>\n";
    out << "<polygon class=\"head\" points=\"" << num(arrow.x1) << "," << num(arrow.y1) << " "
        << num(arrow.x1 - ux * head - uy * head * 0.6) << "," << num(arrow.y1 - uy * head + ux * head * 0.6) << " "
        << num(arrow.x1 - ux * head + uy * head * 0.6) << "," << num(arrow.y1 - uy * head - ux * head * 0.6)
        << "\" fill=\"" << color << "\"/>\n";
    const auto [cx, cy] = chunk_position(arrow, clock);
    out << "<rect class=\"chunk\" " << ids << " data-cx=\"" << num(cx) << "\" data-cy=\"" << num(cy) << "\" x=\""
        << num(cx - kChunk) << "\" y=\"" << num(cy - kChunk) << "\" width=\"" << num(2 * kChunk) << "\" height=\""
        << num(2 * kChunk) << "\" fill=\"" << color << "\" stroke=\"#000000\" stroke-width=\"0.5\"/>\n";
  }
  out << "</svg>\n";
  return out.str();
}

}  // namespace shardscope::ui
