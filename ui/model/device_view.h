// The device view's layout: devices placed by physical coordinates (TPU chips and cores, hosts, ICI
// links and torus wraparounds; GPU nodes; CPU grids), each to be painted with its shard's colour.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "device/device.h"
#include "ui/model/canvas_geometry.h"
#include "viz/layout.h"

namespace shardscope::ui {

struct DeviceBox {
  int64_t id = 0;
  Rect rect;
  std::string label;  // "0" for TPU/GPU/CPU device ids; the canvas adds the colour
};

struct ChipBox {
  std::array<int, 3> coords{0, 0, 0};
  Rect rect;
};

struct HostBox {
  int process_index = 0;
  Rect rect;
  std::string label;  // "host 0" / "node 0"
  Rect label_band;    // the strip along the frame's top where the label goes, clear of every chip
};

struct Link {
  double x0 = 0;
  double y0 = 0;
  double x1 = 0;
  double y1 = 0;
  bool wraparound = false;  // a torus link drawn as a short stub at both ends
};

struct DeviceViewLayout {
  std::vector<DeviceBox> devices;
  std::vector<ChipBox> chips;
  std::vector<HostBox> hosts;
  std::vector<Link> links;
  std::vector<std::string> plane_titles;  // "z=0", ... for 3-D slices
  std::vector<Rect> plane_rects;
  double width = 0;
  double height = 0;
};

// Places `devices` (any order) in content units. TPU: one square per chip at its (x, y), z planes side by
// side, cores side by side inside a chip, a frame per host with a band for its label (host rows and columns
// spaced apart for it); links between neighbouring chips, and wraparound links along axes of 4 or more chips
// on 3-D torus generations (v4, v5p). GPU: 8 per node (4x2), one frame per node. CPU: a near-square grid.
// `aspect` (width / height of the canvas; 0: one row) wraps z planes and GPU nodes into rows so the
// picture fills a canvas of that shape.
[[nodiscard]] DeviceViewLayout layout_devices(const std::vector<Device>& devices, double aspect = 0.0);

// A label the device view draws, in screen pixels relative to the canvas origin.
struct ViewLabel {
  enum class Kind { kPlane, kHost, kDevice };
  Kind kind = Kind::kDevice;
  int64_t id = 0;  // the device id or process index
  std::string text;
  Rect rect;
  double size = 0;  // font size in pixels
};

// The font the labels are measured with: a monospace advance per pixel of size, and the range of sizes.
struct LabelFont {
  double advance = 0.6;
  double min_size = 8.0;
  double max_size = 15.0;
};

// Which labels fit at this zoom and where: plane titles and host labels in their bands, device ids inside
// their boxes, each at the largest size up to max_size that fits; a host label falls back to its number, and
// a label that fits at no size of at least min_size is left out (the tooltip names it). No two overlap.
[[nodiscard]] std::vector<ViewLabel> place_view_labels(const DeviceViewLayout& layout, const ViewTransform& view,
                                                       const LabelFont& font);

// The colour of the grid cell holding each device's shard, by device id.
[[nodiscard]] std::map<int64_t, Rgb> device_colors(const VizLayout& layout);

}  // namespace shardscope::ui
