// The Program tab's Timeline view as geometry: a program's serial or overlapped schedule (core/cost/timeline) laid
// out in a pixel box, one lane per device (or one lane for all devices when there are many: every device of an SPMD
// program runs the same schedule), a compute and a communication track per lane, and hit tests for hovering.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cost/explain.h"
#include "cost/timeline.h"
#include "ui/model/canvas_geometry.h"
#include "viz/colors.h"

namespace shardscope::ui {

// The colours `shardscope explain --timeline` fills intervals with, by category ("compute", "memory", "collective").
[[nodiscard]] Rgb timeline_color(const std::string& category);

struct TimelineSegment {
  Rect rect;  // pixels
  std::size_t lane = 0;
  TimelineInterval interval;
  int64_t bytes_per_device = 0;  // the explain row's HBM bytes (an equation) or bytes sent (a collective)
  std::string tooltip;           // "all-reduce 'y' (row 3): 1.20 us from 4.50 us, 64.0 kB per device\n..."
};

struct TimelineLane {
  std::string label;  // "device 0", or "devices 0-63 (same schedule)"
  Rect compute;       // the compute track's box (pixels)
  Rect communication;
};

struct TimelineLegendEntry {
  std::string category;
  std::string label;  // "compute", "memory-bound", "collective"
  Rgb color;
};

struct TimelineViewLayout {
  ProgramTimeline timeline;
  std::vector<TimelineLane> lanes;
  std::vector<TimelineSegment> segments;
  std::vector<TimelineLegendEntry> legend;  // the categories drawn, in a fixed order
  double pixels_per_second = 0;
  double height = 0;  // pixels used from the box's top
};

struct TimelineViewOptions {
  double label_width = 170;  // left of the tracks, for lane names
  double track_height = 18;
  double lane_gap = 6;
  int64_t max_lanes = 8;  // more devices than this are drawn as one lane
};

// Lays `schedule` of `explanation` out in `box`: the schedule's total time spans the box's width after the labels.
[[nodiscard]] TimelineViewLayout timeline_view_layout(const ProgramExplanation& explanation, Schedule schedule,
                                                      const Rect& box, const TimelineViewOptions& options = {});

// The segment under a pixel, if any.
[[nodiscard]] std::optional<std::size_t> timeline_hit(const TimelineViewLayout& layout, double x, double y);

}  // namespace shardscope::ui
