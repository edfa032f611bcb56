// Timelines: the serial schedule adds up to explain's serial step, the overlapped one respects each collective's
// producer and reader, and the SVG draws every interval with a width proportional to its time.
#include "cost/timeline.h"

#include <doctest/doctest.h>

#include <regex>

#include "cost/timeline_svg.h"
#include "device/presets.h"
#include "sharding/partition_spec.h"
#include "trace/builder.h"

using namespace shardscope;

namespace {

const JaxProfile kProfile;

ExplainRow row(const std::string& kind, std::size_t equation, double seconds, int64_t produced_by = -1,
               int64_t needed_by = -1) {
  ExplainRow r;
  r.kind = kind;
  r.op = kind == "equation" ? "eq" + std::to_string(equation) : "dot_general";
  r.axes = kind == "equation" ? "" : "y";
  r.bound = "compute";
  r.seconds = seconds;
  r.equation = equation;
  r.produced_by = produced_by;
  r.needed_by = needed_by;
  return r;
}

ParamValue int_list(std::vector<int64_t> values) {
  std::vector<ParamValue> items;
  for (const int64_t v : values) items.emplace_back(v);
  return ParamValue::list(std::move(items));
}

}  // namespace

TEST_CASE("the overlapped schedule starts a collective when its value is made and holds up its reader") {
  // eq0 makes a value that an all-gather (2 s) moves for eq2; eq1 does not need it and overlaps the transfer.
  ProgramExplanation e;
  e.program = "p";
  e.device_count = 8;
  e.rows = {row("equation", 0, 1.0), row("all-gather", 2, 2.0, 0, 2), row("equation", 1, 1.0), row("equation", 2, 1.0)};
  const ProgramTimeline serial = program_timeline(e, Schedule::kSerial);
  CHECK(serial.total_seconds == doctest::Approx(5.0));
  CHECK(serial.devices.size() == 4);
  const ProgramTimeline overlapped = program_timeline(e, Schedule::kOverlapped, 2);
  CHECK(overlapped.devices == std::vector<int64_t>{0, 1});
  REQUIRE(overlapped.intervals.size() == 4);
  const auto find = [&](std::size_t r) {
    for (const TimelineInterval& i : overlapped.intervals) {
      if (i.row == r) return i;
    }
    FAIL("no interval for row " << r);
    return TimelineInterval{};
  };
  CHECK(find(1).start == doctest::Approx(1.0));  // after eq0
  CHECK(find(1).communication);
  CHECK(find(1).label == "all-gather 'y'");
  CHECK(find(2).start == doctest::Approx(1.0));  // eq1 overlaps the all-gather
  CHECK(find(3).start == doctest::Approx(3.0));  // eq2 waits for it
  CHECK(overlapped.total_seconds == doctest::Approx(4.0));
  // A result move (produced by the equation it follows) waits for that equation even when listed before it.
  e.rows = {row("all-reduce", 0, 0.5, 0, 1), row("equation", 0, 1.0), row("equation", 1, 1.0)};
  const ProgramTimeline moved = program_timeline(e, Schedule::kOverlapped);
  CHECK(moved.total_seconds == doctest::Approx(2.5));
}

TEST_CASE("a sharded matmul's timeline SVG has both schedules, every interval, and widths proportional to time") {
  const Mesh mesh = make_mesh({2, 4}, {"x", "y"}, make_device_preset("tpu-v5e-8").devices, kProfile,
                              std::vector<AxisType>{AxisType::kAuto, AxisType::kAuto});
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({256, 4096}, DType::kFloat32));
  const Var w = b.arg(Aval::of({4096, 4096}, DType::kFloat32));
  const Atom y = b.bind1("dot_general", {x, w},
                         {{"dimension_numbers", ParamValue::tuple({ParamValue::tuple({int_list({1}), int_list({0})}),
                                                                   ParamValue::tuple({int_list({}), int_list({})})})},
                          {"precision", ParamValue::None{}},
                          {"preferred_element_type", DType::kFloat32}});
  const JaxprPtr program = b.build({b.bind1("sin", {y})});
  const auto placed = [&](Shape shape, const char* spec) {
    ShapeDtypeStruct out;
    out.shape = std::move(shape);
    out.sharding = make_named_sharding(mesh, parse_partition_spec(spec), kProfile);
    return out;
  };
  const Lowered lowered(program, {placed({256, 4096}, "P('x', 'y')"), placed({4096, 4096}, "P('y', None)")}, {},
                        kProfile);
  const ProgramExplanation e = explain_compiled(lowered.compile(), "mm");
  const ProgramTimeline serial = program_timeline(e, Schedule::kSerial);
  CHECK(serial.total_seconds == doctest::Approx(e.serial_seconds));
  const ProgramTimeline overlapped = program_timeline(e, Schedule::kOverlapped);
  CHECK(overlapped.total_seconds <= e.serial_seconds + 1e-15);
  CHECK(overlapped.total_seconds >= e.overlapped_seconds - 1e-15);

  TimelineSvgOptions options;
  options.max_devices = 2;
  const std::string svg = timeline_svg({e}, options);
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(svg.find("shardscope estimate, not JAX output") != std::string::npos);
  CHECK(svg.find("data-schedule=\"serial\"") != std::string::npos);
  CHECK(svg.find("data-schedule=\"overlapped\"") != std::string::npos);
  CHECK(svg.find("<g class=\"lane\" data-device=\"1\">") != std::string::npos);
  CHECK(svg.find("<g class=\"lane\" data-device=\"2\">") == std::string::npos);
  const std::smatch scale_match = [&] {
    std::smatch m;
    std::regex_search(svg, m, std::regex("data-px-per-s=\"([0-9.e+-]+)\""));
    return m;
  }();
  REQUIRE(scale_match.size() == 2);
  const double scale = std::stod(scale_match[1]);
  CHECK(scale > 0);
  const std::regex rect(
      "<rect class=\"interval (compute|memory|collective)\" data-row=\"[0-9]+\" data-start-s=\"([0-9.e+-]+)\" "
      "data-seconds=\"([0-9.e+-]+)\" x=\"([0-9.e+-]+)\" y=\"[0-9.e+-]+\" width=\"([0-9.e+-]+)\"");
  int intervals = 0;
  int collectives = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), rect); it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    ++intervals;
    collectives += m[1] == "collective" ? 1 : 0;
    CHECK(std::stod(m[5]) == doctest::Approx(std::stod(m[3]) * scale).epsilon(1e-4));
    CHECK(std::stod(m[4]) == doctest::Approx(110 + std::stod(m[2]) * scale).epsilon(1e-4));
  }
  // Two schedules x two lanes, each with every timed row.
  CHECK(intervals == static_cast<int>(4 * serial.intervals.size()));
  CHECK(collectives >= 4);
  CHECK(svg.find("<title>all-reduce &apos;y&apos;: ") != std::string::npos);
  CHECK(svg.find(">dot_general</text>") != std::string::npos);
}
