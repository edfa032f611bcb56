// Per-device schedules of an explained program: compute and collective intervals, one after another (serial) or
// with collectives on their own stream as soon as their data is ready (overlapped), from the same estimates.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cost/explain.h"

namespace shardscope {

struct TimelineInterval {
  std::size_t row = 0;         // the explain row it draws
  std::string label;           // the row's op ("dot_general") or collective with axes ("all-gather 'y'")
  std::string category;        // "compute", "memory" (equations by bound) or "collective"
  bool communication = false;  // drawn on the device's communication track
  double start = 0;            // seconds from the program's start
  double seconds = 0;
  [[nodiscard]] double end() const { return start + seconds; }
};

enum class Schedule { kSerial, kOverlapped };

struct ProgramTimeline {
  std::string program;
  Schedule schedule = Schedule::kSerial;
  double total_seconds = 0;
  // Every device of an SPMD program runs the same intervals (the estimates are per device, for the slowest one);
  // `devices` lists the mesh positions drawn.
  std::vector<int64_t> devices;
  std::vector<TimelineInterval> intervals;  // rows with no time are left out
};

// Serial: every row after the previous one, the explanation's serial step time in total.
// Overlapped: equations in order on the compute track; each collective on the communication track once the
// previous collective is done and the equation making its value has finished, and the first equation reading
// what it delivers waits for it. The total lies between the overlapped lower bound and the serial time.
[[nodiscard]] ProgramTimeline program_timeline(const ProgramExplanation& explanation, Schedule schedule,
                                               int64_t max_devices = 4);

}  // namespace shardscope
