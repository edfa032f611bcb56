// Placing a collective's step on the device view: device box centres, arrows shortened to the box edges and
// shifted sideways so opposite sends stay apart.
#include "ui/model/collective_animation.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "cost/hardware.h"

namespace shardscope::ui {

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

}  // namespace shardscope::ui
