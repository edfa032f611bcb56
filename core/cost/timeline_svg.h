// A program's per-device timeline as a standalone SVG: the serial and the overlapped schedule, one lane per device
// with a compute and a communication track, interval widths proportional to their estimated time.
#pragma once

#include <string>
#include <vector>

#include "cost/timeline.h"

namespace shardscope {

struct TimelineSvgOptions {
  double plot_width = 1000;  // pixels for the longest schedule of a program
  double track_height = 18;
  int64_t max_devices = 4;  // lanes per schedule (every device runs the same SPMD schedule)
};

// One <g class="schedule" data-schedule="serial|overlapped" data-total-s="..."> per schedule and program, lanes
// <g class="lane" data-device="d">, and per interval <rect class="interval CATEGORY" data-row data-start-s
// data-seconds> with a <title> tooltip and a label when it fits. Marked as shardscope's estimate.
[[nodiscard]] std::string timeline_svg(const std::vector<ProgramExplanation>& programs,
                                       const TimelineSvgOptions& options = {});

}  // namespace shardscope
