// A collective's data movement drawn on the device view: the arrows of one step (which device sends a chunk to
// which), placed on the device boxes, from core's step model (cost/collective_steps) for every group.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cost/collective_steps.h"
#include "spmd/comm_log.h"
#include "ui/model/device_view.h"
#include "viz/colors.h"

namespace shardscope::ui {

struct AnimationArrow {
  double x0 = 0;  // content units, from the sender's box edge
  double y0 = 0;
  double x1 = 0;  // to the receiver's
  double y1 = 0;
  bool wraparound = false;
  int64_t from = 0;  // device ids
  int64_t to = 0;
};

struct CollectiveFrame {
  int step = 0;  // 0-based, wrapped into range
  int steps = 0;
  std::string caption;  // "all-gather over 'y', step 2/3 (all-gather): bidirectional ring ..."
  std::vector<AnimationArrow> arrows;
};

// Every group's steps, on the physical ring the cost model prices.
[[nodiscard]] std::vector<CollectiveAnimation> record_animations(const CollectiveRecord& record,
                                                                 const std::vector<Device>& devices);

// The arrows of `step` (taken modulo the step count) for all groups on `layout`. A pair of opposite sends between
// the same two devices is drawn as two parallel arrows, each shifted to its right, so both stay visible.
[[nodiscard]] CollectiveFrame collective_frame(const DeviceViewLayout& layout,
                                               const std::vector<CollectiveAnimation>& animations, int step);

// Where a chunk in flight is drawn: `clock` (0 at the sender, 1 at the receiver, clamped) of the way along its arrow.
[[nodiscard]] std::pair<double, double> chunk_position(const AnimationArrow& arrow, double clock);

// The line above the device view: "all-gather over y, step 1/3 (all-gather): line (no wraparound link) ...".
[[nodiscard]] std::string animation_caption(const CollectiveRecord& record, const CollectiveFrame& frame);

// One frame of the animation as a standalone SVG in the layout's content units, drawn as the window draws it: hosts,
// ICI links (wraparound links dashed), chips, devices (filled with their shard's colour where `colors` has one),
// then every send of the step as an arrow with its chunk `clock` of the way along. Elements carry their ids
// (data-device, data-from, data-to) so the picture can be checked against the step.
[[nodiscard]] std::string collective_frame_svg(const DeviceViewLayout& layout, const CollectiveRecord& record,
                                               const CollectiveFrame& frame, double clock,
                                               const std::map<int64_t, Rgb>& colors = {});

}  // namespace shardscope::ui
