// Device view layout: physical placement of simulated devices.
#include "ui/model/device_view.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace shardscope::ui {
namespace {

constexpr double kChip = 96.0;        // chip square
constexpr double kChipPitch = 128.0;  // chip square plus the gap where links are drawn
constexpr double kHostMargin = 10.0;
constexpr double kPlaneGap = 48.0;
constexpr double kDevicePad = 6.0;

bool torus_generation(const std::string& kind) {
  return kind.find("v4") != std::string::npos || kind.find("v5p") != std::string::npos ||
         kind.find("v5 p") != std::string::npos;
}

void frame_hosts(DeviceViewLayout& view, const std::map<int, Rect>& extents, const std::string& word) {
  for (const auto& [process, rect] : extents) {
    view.hosts.push_back(
        {process,
         {rect.x0 - kHostMargin, rect.y0 - kHostMargin - 14, rect.x1 + kHostMargin, rect.y1 + kHostMargin},
         word + " " + std::to_string(process)});
  }
}

void grow(std::map<int, Rect>& extents, int key, const Rect& rect) {
  auto [it, inserted] = extents.try_emplace(key, rect);
  if (!inserted) {
    it->second = {std::min(it->second.x0, rect.x0), std::min(it->second.y0, rect.y0), std::max(it->second.x1, rect.x1),
                  std::max(it->second.y1, rect.y1)};
  }
}

DeviceViewLayout layout_tpu(const std::vector<Device>& devices) {
  DeviceViewLayout view;
  std::array<int, 3> bounds{1, 1, 1};
  int cores = 1;
  for (const Device& d : devices) {
    for (std::size_t a = 0; a < 3; ++a) bounds[a] = std::max(bounds[a], d.coords[a] + 1);
    cores = std::max(cores, d.core_on_chip + 1);
  }
  const double plane_width = bounds[0] * kChipPitch;
  const double top = 22.0;  // room for host labels
  const auto chip_origin = [&](const std::array<int, 3>& c) {
    return std::pair<double, double>{c[2] * (plane_width + kPlaneGap) + c[0] * kChipPitch + 16,
                                     top + c[1] * kChipPitch + 16};
  };
  std::set<std::array<int, 3>> chips;
  std::map<int, Rect> host_extents;
  for (const Device& d : devices) {
    chips.insert(d.coords);
    const auto [cx, cy] = chip_origin(d.coords);
    const double core_width = (kChip - kDevicePad * (cores + 1)) / cores;
    const double x0 = cx + kDevicePad + d.core_on_chip * (core_width + kDevicePad);
    view.devices.push_back(
        {d.id, {x0, cy + kDevicePad, x0 + core_width, cy + kChip - kDevicePad}, std::to_string(d.id)});
    grow(host_extents, d.process_index, {cx, cy, cx + kChip, cy + kChip});
  }
  for (const auto& c : chips) {
    const auto [cx, cy] = chip_origin(c);
    view.chips.push_back({c, {cx, cy, cx + kChip, cy + kChip}});
    // Links to the +x and +y neighbours inside the plane; wraparounds on torus axes.
    for (std::size_t axis = 0; axis < 2; ++axis) {
      std::array<int, 3> next = c;
      ++next[axis];
      const double half = kChip / 2;
      if (chips.count(next) != 0) {
        const auto [nx, ny] = chip_origin(next);
        view.links.push_back(axis == 0 ? Link{cx + kChip, cy + half, nx, ny + half, false}
                                       : Link{cx + half, cy + kChip, nx + half, ny, false});
      }
    }
  }
  const bool torus = !devices.empty() && torus_generation(devices.front().device_kind);
  if (torus) {
    for (const auto& c : chips) {
      const auto [cx, cy] = chip_origin(c);
      const double half = kChip / 2;
      if (bounds[0] >= 4 && c[0] == 0) {
        const double right = cx + (bounds[0] - 1) * kChipPitch + kChip;
        view.links.push_back({cx - 14, cy + half, right + 14, cy + half, true});
      }
      if (bounds[1] >= 4 && c[1] == 0) {
        const double bottom = cy + (bounds[1] - 1) * kChipPitch + kChip;
        view.links.push_back({cx + half, cy - 14, cx + half, bottom + 14, true});
      }
    }
  }
  frame_hosts(view, host_extents, "host");
  view.width = bounds[2] * plane_width + (bounds[2] - 1) * kPlaneGap + 32;
  view.height = top + bounds[1] * kChipPitch + 16;
  if (bounds[2] > 1) {
    for (int z = 0; z < bounds[2]; ++z) {
      const double x0 = z * (plane_width + kPlaneGap);
      view.plane_titles.push_back("z=" + std::to_string(z));
      view.plane_rects.push_back({x0, 0, x0 + plane_width, top});
    }
  }
  return view;
}

DeviceViewLayout layout_gpu(const std::vector<Device>& devices) {
  DeviceViewLayout view;
  constexpr int kPerNode = 8;
  constexpr double kBox = 72.0;
  constexpr double kPitch = 84.0;
  constexpr double kNodeWidth = 4 * kPitch + 24;
  constexpr double kNodeHeight = 2 * kPitch + 40;
  std::vector<Device> sorted = devices;
  std::sort(sorted.begin(), sorted.end(), [](const Device& a, const Device& b) { return a.id < b.id; });
  const int nodes = static_cast<int>((sorted.size() + kPerNode - 1) / kPerNode);
  const int nodes_per_row = std::max(1, std::min(nodes, 4));
  std::map<int, Rect> node_extents;
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const int node = static_cast<int>(i) / kPerNode;
    const int slot = static_cast<int>(i) % kPerNode;
    const double nx = (node % nodes_per_row) * (kNodeWidth + 24) + 22;
    const double ny = (node / nodes_per_row) * (kNodeHeight + 24) + 34;
    const double x0 = nx + (slot % 4) * kPitch;
    const double y0 = ny + (slot / 4) * kPitch;
    view.devices.push_back({sorted[i].id, {x0, y0, x0 + kBox, y0 + kBox}, std::to_string(sorted[i].id)});
    grow(node_extents, node, {x0, y0, x0 + kBox, y0 + kBox});
  }
  frame_hosts(view, node_extents, "node");
  // NVSwitch: every GPU of a node reaches every other; drawn as a bus under each row.
  for (const auto& [node, rect] : node_extents) {
    const double mid = (rect.y0 + rect.y1) / 2;
    view.links.push_back({rect.x0, mid, rect.x1, mid, false});
  }
  view.width = nodes_per_row * (kNodeWidth + 24) + 20;
  view.height = ((nodes + nodes_per_row - 1) / nodes_per_row) * (kNodeHeight + 24) + 30;
  return view;
}

DeviceViewLayout layout_grid(const std::vector<Device>& devices) {
  DeviceViewLayout view;
  constexpr double kBox = 64.0;
  constexpr double kPitch = 76.0;
  std::vector<Device> sorted = devices;
  std::sort(sorted.begin(), sorted.end(), [](const Device& a, const Device& b) { return a.id < b.id; });
  const auto columns =
      std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(sorted.size())))));
  std::map<int, Rect> extents;
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const double x0 = 22 + static_cast<double>(i % columns) * kPitch;
    const double y0 = 34 + static_cast<double>(i / columns) * kPitch;
    view.devices.push_back({sorted[i].id, {x0, y0, x0 + kBox, y0 + kBox}, std::to_string(sorted[i].id)});
    grow(extents, sorted[i].process_index, {x0, y0, x0 + kBox, y0 + kBox});
  }
  frame_hosts(view, extents, "host");
  const std::size_t rows = (sorted.size() + columns - 1) / columns;
  view.width = static_cast<double>(columns) * kPitch + 32;
  view.height = static_cast<double>(rows) * kPitch + 44;
  return view;
}

}  // namespace

DeviceViewLayout layout_devices(const std::vector<Device>& devices) {
  if (devices.empty()) return {};
  switch (devices.front().platform) {
    case Platform::kTpu: return layout_tpu(devices);
    case Platform::kGpu: return layout_gpu(devices);
    case Platform::kCpu: return layout_grid(devices);
  }
  return layout_grid(devices);
}

std::map<int64_t, Rgb> device_colors(const VizLayout& layout) {
  std::map<int64_t, Rgb> colors;
  for (const VizPanel& panel : layout.panels) {
    for (const VizCell& cell : panel.cells) {
      for (const Device& device : cell.devices) colors.emplace(device.id, cell.background);
    }
  }
  return colors;
}

}  // namespace shardscope::ui
