// Placing a program's schedule in the Timeline view: lanes, tracks and one rectangle per interval, scaled so the
// schedule's total time fills the box.
#include "ui/model/timeline_view.h"

#include <algorithm>

#include "cost/program_cost.h"

namespace shardscope::ui {
namespace {

constexpr const char* kCategories[] = {"compute", "memory", "collective"};

std::string lane_label(const ProgramTimeline& timeline, std::size_t lane, int64_t device_count, bool merged) {
  if (!merged) return "device " + std::to_string(timeline.devices[lane]);
  return "devices 0-" + std::to_string(device_count - 1) + " (same schedule)";
}

std::string tooltip_of(const TimelineInterval& interval, const ExplainRow& row) {
  std::string text = interval.label + " (row " + std::to_string(interval.row) +
                     "): " + format_seconds(interval.seconds) + " from " + format_seconds(interval.start) + ", " +
                     format_bytes(static_cast<double>(row.bytes_per_device)) +
                     (interval.communication ? " sent per device" : " per device");
  if (!row.bound.empty()) text += ", " + row.bound + " bound";
  if (!row.reason.empty()) text += "\n" + row.reason;
  if (!row.algorithm.empty()) text += "\n" + row.algorithm;
  return text;
}

}  // namespace

Rgb timeline_color(const std::string& category) {
  // The fills of core/cost/timeline_svg, so the window and `explain --timeline` read the same.
  if (category == "compute") return {0x4e, 0x79, 0xa7};
  if (category == "memory") return {0xf2, 0x8e, 0x2b};
  return {0xe1, 0x57, 0x59};
}

TimelineViewLayout timeline_view_layout(const ProgramExplanation& explanation, Schedule schedule, const Rect& box,
                                        const TimelineViewOptions& options) {
  TimelineViewLayout out;
  const bool merged = explanation.device_count > options.max_lanes;
  out.timeline = program_timeline(explanation, schedule, merged ? 1 : options.max_lanes);
  const ProgramTimeline& timeline = out.timeline;
  const double left = box.x0 + options.label_width;
  const double plot = std::max(1.0, box.x1 - left);
  out.pixels_per_second = timeline.total_seconds > 0 ? plot / timeline.total_seconds : 0;
  double y = box.y0;
  for (std::size_t lane = 0; lane < timeline.devices.size(); ++lane) {
    TimelineLane drawn;
    drawn.label = lane_label(timeline, lane, explanation.device_count, merged);
    drawn.compute = {left, y, left + plot, y + options.track_height};
    drawn.communication = {left, y + options.track_height, left + plot, y + 2 * options.track_height};
    for (const TimelineInterval& interval : timeline.intervals) {
      const Rect& track = interval.communication ? drawn.communication : drawn.compute;
      TimelineSegment segment;
      segment.rect = {left + interval.start * out.pixels_per_second, track.y0 + 1,
                      left + interval.end() * out.pixels_per_second, track.y1 - 1};
      segment.lane = lane;
      segment.interval = interval;
      const ExplainRow& row = explanation.rows.at(interval.row);
      segment.bytes_per_device = row.bytes_per_device;
      segment.tooltip = tooltip_of(interval, row);
      out.segments.push_back(std::move(segment));
    }
    out.lanes.push_back(std::move(drawn));
    y += 2 * options.track_height + options.lane_gap;
  }
  out.height = y - box.y0;
  for (const char* category : kCategories) {
    const bool drawn = std::any_of(timeline.intervals.begin(), timeline.intervals.end(),
                                   [&](const TimelineInterval& i) { return i.category == category; });
    if (!drawn) continue;
    const std::string name = category;
    out.legend.push_back({name, name == "memory" ? "memory-bound" : name, timeline_color(name)});
  }
  return out;
}

std::optional<std::size_t> timeline_hit(const TimelineViewLayout& layout, double x, double y) {
  for (std::size_t i = 0; i < layout.segments.size(); ++i) {
    // Sub-pixel intervals still answer within half a pixel either side.
    Rect r = layout.segments[i].rect;
    if (r.width() < 1) {
      r.x0 -= 0.5;
      r.x1 += 0.5;
    }
    if (r.contains(x, y)) return i;
  }
  return std::nullopt;
}

}  // namespace shardscope::ui
