// The Timeline view's geometry: segment widths proportional to time across the box, collectives on the
// communication track, many devices folded into one lane, hover hits, and the colours explain's SVG uses.
#include "ui/model/timeline_view.h"

#include <doctest/doctest.h>

#include <cctype>

#include "cost/timeline_svg.h"

namespace shardscope::ui {
namespace {

ExplainRow row(const std::string& kind, std::size_t equation, double seconds, int64_t bytes, int64_t produced_by = -1,
               int64_t needed_by = -1) {
  ExplainRow r;
  r.kind = kind;
  r.op = kind == "equation" ? "eq" + std::to_string(equation) : "dot_general";
  r.axes = kind == "equation" ? "" : "y";
  r.bound = kind == "equation" ? (equation == 1 ? "memory" : "compute") : "bandwidth";
  r.seconds = seconds;
  r.bytes_per_device = bytes;
  r.equation = equation;
  r.produced_by = produced_by;
  r.needed_by = needed_by;
  return r;
}

ProgramExplanation explanation(int64_t devices) {
  ProgramExplanation e;
  e.program = "p";
  e.device_count = devices;
  // eq0 (1 s) makes what an all-reduce (2 s) moves for eq2; eq1 (memory-bound, 1 s) overlaps the transfer.
  e.rows = {row("equation", 0, 1.0, 100), row("all-reduce", 2, 2.0, 4096, 0, 2), row("equation", 1, 1.0, 200),
            row("equation", 2, 0.5, 300)};
  return e;
}

}  // namespace

TEST_CASE("the serial timeline spans the box, one lane per device, collectives on the communication track") {
  const Rect box{100, 50, 1270, 60};  // 170 px of labels, then 1000 px for 4.5 s
  const TimelineViewLayout layout = timeline_view_layout(explanation(4), Schedule::kSerial, box);
  REQUIRE(layout.lanes.size() == 4);
  CHECK(layout.lanes[0].label == "device 0");
  CHECK(layout.lanes[3].label == "device 3");
  CHECK(layout.pixels_per_second == doctest::Approx(1000.0 / 4.5));
  REQUIRE(layout.segments.size() == 16);
  // Lane 0, in schedule order: eq0, the all-reduce, eq1, eq2.
  const TimelineSegment& all_reduce = layout.segments[1];
  CHECK(all_reduce.interval.label == "all-reduce 'y'");
  CHECK(all_reduce.rect.x0 == doctest::Approx(270 + 1000.0 / 4.5));
  CHECK(all_reduce.rect.width() == doctest::Approx(2 * 1000.0 / 4.5));
  CHECK(all_reduce.rect.y0 >= layout.lanes[0].communication.y0);
  CHECK(all_reduce.rect.y1 <= layout.lanes[0].communication.y1);
  CHECK(layout.segments[0].rect.y1 <= layout.lanes[0].compute.y1);
  CHECK(all_reduce.bytes_per_device == 4096);
  CHECK(all_reduce.tooltip.rfind("all-reduce 'y' (row 1): ", 0) == 0);
  CHECK(all_reduce.tooltip.find("2 s from 1 s, 4.1 kB sent per device, bandwidth bound") != std::string::npos);
  CHECK(layout.segments.back().rect.x1 == doctest::Approx(1270));
  CHECK(layout.segments[5].rect.y0 > layout.lanes[0].communication.y1);  // lane 1 lies below lane 0
  REQUIRE(layout.legend.size() == 3);
  CHECK(layout.legend[1].label == "memory-bound");
  // Hovering the middle of the all-reduce names it; the gap above the lanes names nothing.
  CHECK(timeline_hit(layout, (all_reduce.rect.x0 + all_reduce.rect.x1) / 2,
                     (all_reduce.rect.y0 + all_reduce.rect.y1) / 2) == std::optional<std::size_t>(1));
  CHECK_FALSE(timeline_hit(layout, 500, 40));
}

TEST_CASE("the overlapped timeline hides eq1 behind the all-reduce, many devices share one lane") {
  const Rect box{0, 0, 170 + 700, 10};
  const TimelineViewLayout layout = timeline_view_layout(explanation(64), Schedule::kOverlapped, box);
  REQUIRE(layout.lanes.size() == 1);
  CHECK(layout.lanes[0].label == "devices 0-63 (same schedule)");
  // eq0 0-1, all-reduce 1-3 beside eq1 1-2, eq2 3-3.5: 3.5 s over 700 px.
  CHECK(layout.timeline.total_seconds == doctest::Approx(3.5));
  CHECK(layout.pixels_per_second == doctest::Approx(200));
  for (const TimelineSegment& s : layout.segments) {
    if (s.interval.label == "eq2") CHECK(s.rect.x0 == doctest::Approx(170 + 600));
    if (s.interval.category == "memory") CHECK(s.rect.x0 == doctest::Approx(170 + 200));
  }
}

TEST_CASE("the window fills timeline segments with the colours of explain's SVG") {
  const std::string svg = timeline_svg({explanation(2)});
  for (const std::string category : {"compute", "memory", "collective"}) {
    INFO(category);
    const std::string hex = timeline_color(category).hex();
    std::string lower;
    for (const char c : hex) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    CHECK(svg.find("class=\"interval " + category + "\"") != std::string::npos);
    const std::size_t at = svg.find("class=\"interval " + category + "\"");
    CHECK(svg.find("fill=\"" + lower + "\"", at) < svg.find('>', at));
  }
}

}  // namespace shardscope::ui
