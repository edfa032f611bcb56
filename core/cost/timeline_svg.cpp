// Draws explain's serial and overlapped schedules as SVG lanes: one scale per program so widths compare across the
// two schedules.
#include "cost/timeline_svg.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "cost/program_cost.h"
#include "viz/svg_renderer.h"

namespace shardscope {
namespace {

constexpr double kLeft = 110;  // room for lane names
constexpr double kCharWidth = 6.5;

std::string num(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

std::string fill(const std::string& category) {
  if (category == "compute") return "#4e79a7";
  if (category == "memory") return "#f28e2b";
  return "#e15759";  // collectives
}

void draw_schedule(std::ostringstream& out, const ProgramTimeline& timeline, double scale, double& y,
                   const TimelineSvgOptions& options) {
  const std::string name = timeline.schedule == Schedule::kSerial ? "serial" : "overlapped";
  out << "<g class=\"schedule\" data-schedule=\"" << name << "\" data-total-s=\"" << num(timeline.total_seconds)
      << "\">\n";
  out << "<text x=\"4\" y=\"" << num(y + 13) << "\" font-size=\"12\" font-weight=\"bold\">" << name
      << " schedule: " << xml_escape(format_seconds(timeline.total_seconds)) << "</text>\n";
  y += 20;
  const double track = options.track_height;
  for (const int64_t device : timeline.devices) {
    out << "<g class=\"lane\" data-device=\"" << device << "\">\n";
    out << "<text x=\"4\" y=\"" << num(y + track - 5) << "\" font-size=\"11\">device " << device << " compute</text>\n";
    out << "<text x=\"4\" y=\"" << num(y + 2 * track - 5) << "\" font-size=\"11\">device " << device
        << " comm</text>\n";
    out << "<rect class=\"track\" x=\"" << kLeft << "\" y=\"" << num(y) << "\" width=\""
        << num(timeline.total_seconds * scale) << "\" height=\"" << num(2 * track)
        << "\" fill=\"none\" stroke=\"#cccccc\"/>\n";
    for (const TimelineInterval& interval : timeline.intervals) {
      const double x = kLeft + interval.start * scale;
      const double width = interval.seconds * scale;
      const double top = y + (interval.communication ? track : 0) + 1;
      const std::string tip = interval.label + ": " + format_seconds(interval.seconds) + " from " +
                              format_seconds(interval.start) + " (row " + std::to_string(interval.row) + ")";
      out << "<rect class=\"interval " << interval.category << "\" data-row=\"" << interval.row << "\" data-start-s=\""
          << num(interval.start) << "\" data-seconds=\"" << num(interval.seconds) << "\" x=\"" << num(x) << "\" y=\""
          << num(top) << "\" width=\"" << num(width) << "\" height=\"" << num(track - 2) << "\" fill=\""
          << fill(interval.category) << "\" stroke=\"#ffffff\" stroke-width=\"0.5\">"
          << "<title>" << xml_escape(tip) << "</title></rect>\n";
      if (width > kCharWidth * static_cast<double>(interval.label.size()) + 4) {
        out << "<text class=\"label\" x=\"" << num(x + 2) << "\" y=\"" << num(top + track - 6)
            << "\" font-size=\"10\" fill=\"#ffffff\">" << xml_escape(interval.label) << "</text>\n";
      }
    }
    out << "</g>\n";
    y += 2 * track + 4;
  }
  out << "</g>\n";
  y += 8;
}

}  // namespace

std::string timeline_svg(const std::vector<ProgramExplanation>& programs, const TimelineSvgOptions& options) {
  std::ostringstream body;
  double y = 22;
  for (const ProgramExplanation& p : programs) {
    const ProgramTimeline serial = program_timeline(p, Schedule::kSerial, options.max_devices);
    const ProgramTimeline overlapped = program_timeline(p, Schedule::kOverlapped, options.max_devices);
    const double longest = std::max(serial.total_seconds, overlapped.total_seconds);
    const double scale = longest > 0 ? options.plot_width / longest : 0;
    body << "<g class=\"program\" data-program=\"" << xml_escape(p.program) << "\" data-px-per-s=\"" << num(scale)
         << "\">\n";
    body << "<text x=\"4\" y=\"" << num(y + 14) << "\" font-size=\"14\">program " << xml_escape(p.program) << ": "
         << p.device_count << " x " << xml_escape(p.hardware.name) << " (" << serial.devices.size() << " of "
         << p.device_count << " devices drawn; every device runs the same schedule)</text>\n";
    y += 24;
    draw_schedule(body, serial, scale, y, options);
    draw_schedule(body, overlapped, scale, y, options);
    body << "</g>\n";
  }
  std::ostringstream out;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(kLeft + options.plot_width + 20) << "\" height=\""
      << num(y + 10) << "\" font-family=\"sans-serif\">\n";
  out << "<text x=\"4\" y=\"14\" font-size=\"12\" fill=\"#606060\">shardscope estimate, not JAX output: "
         "compute (blue), memory-bound (orange), collectives (red)</text>\n";
  out << body.str() << "</svg>\n";
  return out.str();
}

}  // namespace shardscope
