// Serial and overlapped schedules of an explanation's rows, with each collective's data dependencies.
#include "cost/timeline.h"

#include <algorithm>
#include <map>

namespace shardscope {
namespace {

TimelineInterval interval_of(const ExplainRow& row, std::size_t index) {
  TimelineInterval interval;
  interval.row = index;
  interval.seconds = row.seconds;
  if (row.kind == "equation") {
    interval.label = row.op;
    interval.category = row.bound == "memory" ? "memory" : "compute";
  } else {
    interval.label = row.kind + (row.axes.empty() ? "" : " '" + row.axes + "'");
    interval.category = "collective";
    interval.communication = true;
  }
  return interval;
}

}  // namespace

ProgramTimeline program_timeline(const ProgramExplanation& e, Schedule schedule, int64_t max_devices) {
  ProgramTimeline out;
  out.program = e.program;
  out.schedule = schedule;
  for (int64_t d = 0; d < std::min(e.device_count, std::max<int64_t>(max_devices, 1)); ++d) out.devices.push_back(d);

  if (schedule == Schedule::kSerial) {
    double clock = 0;
    for (std::size_t r = 0; r < e.rows.size(); ++r) {
      if (e.rows[r].seconds <= 0) continue;
      TimelineInterval interval = interval_of(e.rows[r], r);
      interval.start = clock;
      clock = interval.end();
      out.intervals.push_back(std::move(interval));
    }
    out.total_seconds = clock;
    return out;
  }

  // Overlapped: two tracks. Rows come in program order (a collective before the equation it serves), so one pass
  // knows every equation's end before a collective that waits for it, except moves of a later equation's result,
  // which wait until that equation is placed.
  std::map<int64_t, double> equation_end;        // equation index -> end on the compute track
  std::map<int64_t, double> ready_for_equation;  // equation index -> its delivered operands' latest end
  std::vector<std::size_t> pending;              // collectives whose producer is not yet placed
  double compute_clock = 0;
  double comm_clock = 0;
  const auto place_collective = [&](std::size_t r, double ready) {
    const ExplainRow& row = e.rows[r];
    TimelineInterval interval = interval_of(row, r);
    interval.start = std::max(comm_clock, ready);
    comm_clock = interval.end();
    if (row.needed_by >= 0) {
      double& wait = ready_for_equation[row.needed_by];
      wait = std::max(wait, interval.end());
    }
    if (row.seconds > 0) out.intervals.push_back(std::move(interval));
  };
  for (std::size_t r = 0; r < e.rows.size(); ++r) {
    const ExplainRow& row = e.rows[r];
    if (row.kind != "equation") {
      const auto made = equation_end.find(row.produced_by);
      if (row.produced_by >= 0 && made == equation_end.end()) {
        pending.push_back(r);
      } else {
        place_collective(r, made == equation_end.end() ? 0.0 : made->second);
      }
      continue;
    }
    const auto index = static_cast<int64_t>(row.equation);
    TimelineInterval interval = interval_of(row, r);
    const auto wait = ready_for_equation.find(index);
    interval.start = std::max(compute_clock, wait == ready_for_equation.end() ? 0.0 : wait->second);
    compute_clock = interval.end();
    equation_end[index] = compute_clock;
    if (row.seconds > 0) out.intervals.push_back(std::move(interval));
    // Result moves of this equation can go now.
    for (auto it = pending.begin(); it != pending.end();) {
      if (e.rows[*it].produced_by == index) {
        place_collective(*it, compute_clock);
        it = pending.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const std::size_t r : pending) place_collective(r, compute_clock);
  out.total_seconds = std::max(compute_clock, comm_clock);
  std::stable_sort(out.intervals.begin(), out.intervals.end(),
                   [](const TimelineInterval& a, const TimelineInterval& b) { return a.start < b.start; });
  return out;
}

}  // namespace shardscope
