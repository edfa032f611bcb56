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
// side, cores side by side inside a chip, a frame per host; links between neighbouring chips, and
// wraparound links along axes of 4 or more chips on 3-D torus generations (v4, v5p). GPU: 8 per node
// (4x2), one frame per node. CPU: a near-square grid.
[[nodiscard]] DeviceViewLayout layout_devices(const std::vector<Device>& devices);

// The colour of the grid cell holding each device's shard, by device id.
[[nodiscard]] std::map<int64_t, Rgb> device_colors(const VizLayout& layout);

}  // namespace shardscope::ui
