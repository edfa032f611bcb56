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
constexpr double kDevicePad = 4.0;
// Between rows of hosts, room for a host label legible at the zoom that fits a 16x16 slice on a canvas;
// between hosts side by side, room for two frames.
constexpr double kHostBand = 40.0;
constexpr double kHostGap = 16.0;
constexpr double kTpuLabelBand = kHostBand + (kChipPitch - kChip) - 2 * kHostMargin - 4;
// On a canvas wider than the slice, labels go left of each host instead, where there is room to spare.
constexpr double kHostSideBand = 220.0;
constexpr double kTpuSideBand = kHostSideBand + (kChipPitch - kChip) - 2 * kHostMargin - 4;
constexpr double kPlaneTitle = 44.0;
constexpr double kEdge = 24.0;

bool torus_generation(const std::string& kind) {
  return kind.find("v4") != std::string::npos || kind.find("v5p") != std::string::npos ||
         kind.find("v5 p") != std::string::npos;
}

// A frame per host around its devices, `band` wider on the left (side) or taller at the top for the label.
void frame_hosts(DeviceViewLayout& view, const std::map<int, Rect>& extents, const std::string& word, double band,
                 bool side = false) {
  for (const auto& [process, rect] : extents) {
    const Rect frame{rect.x0 - kHostMargin - (side ? band : 0.0), rect.y0 - kHostMargin - (side ? 0.0 : band),
                     rect.x1 + kHostMargin, rect.y1 + kHostMargin};
    const Rect label_band = side ? Rect{frame.x0, frame.y0, frame.x0 + band, frame.y1}
                                 : Rect{frame.x0, frame.y0, frame.x1, frame.y0 + band};
    view.hosts.push_back({process, frame, word + " " + std::to_string(process), label_band});
  }
}

double fit_zoom(const DeviceViewLayout& view, double aspect) {
  return std::min(aspect / std::max(1.0, view.width), 1.0 / std::max(1.0, view.height));
}

void grow(std::map<int, Rect>& extents, int key, const Rect& rect) {
  auto [it, inserted] = extents.try_emplace(key, rect);
  if (!inserted) {
    it->second = {std::min(it->second.x0, rect.x0), std::min(it->second.y0, rect.y0), std::max(it->second.x1, rect.x1),
                  std::max(it->second.y1, rect.y1)};
  }
}

// How many of `count` blocks (each width x height, `gap` apart) go in a row so the whole is largest on a
// canvas of this aspect; aspect 0 keeps them in one row.
int blocks_per_row(int count, double width, double height, double gap, double aspect) {
  if (aspect <= 0 || count <= 1) return std::max(1, count);
  int best = 1;
  double best_zoom = 0;
  for (int per_row = 1; per_row <= count; ++per_row) {
    const int rows = (count + per_row - 1) / per_row;
    const double w = per_row * width + (per_row - 1) * gap;
    const double h = rows * height + (rows - 1) * gap;
    const double zoom = std::min(aspect / w, 1.0 / h);
    if (zoom > best_zoom * 1.0001) {
      best_zoom = zoom;
      best = per_row;
    }
  }
  return best;
}

DeviceViewLayout layout_tpu(const std::vector<Device>& devices, double aspect, bool side_labels) {
  DeviceViewLayout view;
  std::array<int, 3> bounds{1, 1, 1};
  int cores = 1;
  std::map<int, std::pair<int, int>> host_corner;  // process -> its chips' smallest x and y
  for (const Device& d : devices) {
    for (std::size_t a = 0; a < 3; ++a) bounds[a] = std::max(bounds[a], d.coords[a] + 1);
    cores = std::max(cores, d.core_on_chip + 1);
    auto [it, inserted] = host_corner.try_emplace(d.process_index, d.coords[0], d.coords[1]);
    if (!inserted) it->second = {std::min(it->second.first, d.coords[0]), std::min(it->second.second, d.coords[1])};
  }
  // Chip rows where a host starts get a label band above them; chip columns where one starts, a gap.
  std::vector<double> column_offset(static_cast<std::size_t>(bounds[0]), 0.0);
  std::vector<double> row_offset(static_cast<std::size_t>(bounds[1]), 0.0);
  std::set<int> host_columns;
  std::set<int> host_rows;
  for (const auto& [process, corner] : host_corner) {
    host_columns.insert(corner.first);
    host_rows.insert(corner.second);
  }
  for (int c = 0; c < bounds[0]; ++c) {
    const auto starts = static_cast<double>(std::distance(host_columns.begin(), host_columns.upper_bound(c)));
    column_offset[static_cast<std::size_t>(c)] =
        side_labels ? kHostSideBand * starts : kHostGap * std::max(0.0, starts - 1);
  }
  for (int r = 0; r < bounds[1]; ++r) {
    const auto starts = static_cast<double>(std::distance(host_rows.begin(), host_rows.upper_bound(r)));
    row_offset[static_cast<std::size_t>(r)] = side_labels ? kHostGap * std::max(0.0, starts - 1) : kHostBand * starts;
  }
  const double title = bounds[2] > 1 ? kPlaneTitle : 0.0;
  const double plane_width = 2 * kEdge + bounds[0] * kChipPitch + column_offset.back();
  const double plane_height = title + 2 * kEdge + bounds[1] * kChipPitch + row_offset.back();
  const int per_row = blocks_per_row(bounds[2], plane_width, plane_height, kPlaneGap, aspect);
  const auto plane_origin = [&](int z) {
    return std::pair<double, double>{(z % per_row) * (plane_width + kPlaneGap),
                                     (z / per_row) * (plane_height + kPlaneGap)};
  };
  const auto chip_origin = [&](const std::array<int, 3>& c) {
    const auto [px, py] = plane_origin(c[2]);
    return std::pair<double, double>{
        px + kEdge + c[0] * kChipPitch + column_offset[static_cast<std::size_t>(c[0])],
        py + title + kEdge + c[1] * kChipPitch + row_offset[static_cast<std::size_t>(c[1])]};
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
        const double right = chip_origin({bounds[0] - 1, c[1], c[2]}).first + kChip;
        view.links.push_back({cx - 14, cy + half, right + 14, cy + half, true});
      }
      if (bounds[1] >= 4 && c[1] == 0) {
        const double bottom = chip_origin({c[0], bounds[1] - 1, c[2]}).second + kChip;
        view.links.push_back({cx + half, cy - 14, cx + half, bottom + 14, true});
      }
    }
  }
  frame_hosts(view, host_extents, "host", side_labels ? kTpuSideBand : kTpuLabelBand, side_labels);
  const int plane_rows = (bounds[2] + per_row - 1) / per_row;
  const int plane_columns = std::min(per_row, bounds[2]);
  view.width = plane_columns * plane_width + (plane_columns - 1) * kPlaneGap;
  view.height = plane_rows * plane_height + (plane_rows - 1) * kPlaneGap;
  if (bounds[2] > 1) {
    for (int z = 0; z < bounds[2]; ++z) {
      const auto [x0, y0] = plane_origin(z);
      view.plane_titles.push_back("z=" + std::to_string(z));
      view.plane_rects.push_back({x0, y0, x0 + plane_width, y0 + title});
    }
  }
  return view;
}

DeviceViewLayout layout_gpu(const std::vector<Device>& devices, double aspect) {
  DeviceViewLayout view;
  constexpr int kPerNode = 8;
  constexpr double kBox = 72.0;
  constexpr double kPitch = 84.0;
  constexpr double kNodeWidth = 4 * kPitch + 24;
  constexpr double kNodeHeight = 2 * kPitch + 40;
  std::vector<Device> sorted = devices;
  std::sort(sorted.begin(), sorted.end(), [](const Device& a, const Device& b) { return a.id < b.id; });
  const int nodes = static_cast<int>((sorted.size() + kPerNode - 1) / kPerNode);
  const int nodes_per_row =
      aspect > 0 ? blocks_per_row(nodes, kNodeWidth, kNodeHeight, 24, aspect) : std::max(1, std::min(nodes, 4));
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
  frame_hosts(view, node_extents, "node", 14);
  // NVSwitch: every GPU of a node reaches every other; drawn as a bus under each row.
  for (const auto& [node, rect] : node_extents) {
    const double mid = (rect.y0 + rect.y1) / 2;
    view.links.push_back({rect.x0, mid, rect.x1, mid, false});
  }
  view.width = nodes_per_row * (kNodeWidth + 24) + 20;
  view.height = ((nodes + nodes_per_row - 1) / nodes_per_row) * (kNodeHeight + 24) + 30;
  return view;
}

DeviceViewLayout layout_grid(const std::vector<Device>& devices, double aspect) {
  DeviceViewLayout view;
  constexpr double kBox = 64.0;
  constexpr double kPitch = 76.0;
  std::vector<Device> sorted = devices;
  std::sort(sorted.begin(), sorted.end(), [](const Device& a, const Device& b) { return a.id < b.id; });
  // Near-square, or as wide as the canvas's shape asks.
  const double n = static_cast<double>(sorted.size());
  const auto columns = std::clamp<std::size_t>(
      static_cast<std::size_t>(std::ceil(std::sqrt(n * (aspect > 0 ? aspect : 1.0)))), 1, sorted.size());
  std::map<int, Rect> extents;
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const double x0 = 22 + static_cast<double>(i % columns) * kPitch;
    const double y0 = 34 + static_cast<double>(i / columns) * kPitch;
    view.devices.push_back({sorted[i].id, {x0, y0, x0 + kBox, y0 + kBox}, std::to_string(sorted[i].id)});
    grow(extents, sorted[i].process_index, {x0, y0, x0 + kBox, y0 + kBox});
  }
  frame_hosts(view, extents, "host", 14);
  const std::size_t rows = (sorted.size() + columns - 1) / columns;
  view.width = static_cast<double>(columns) * kPitch + 32;
  view.height = static_cast<double>(rows) * kPitch + 44;
  return view;
}

}  // namespace

DeviceViewLayout layout_devices(const std::vector<Device>& devices, double aspect) {
  if (devices.empty()) return {};
  switch (devices.front().platform) {
    case Platform::kTpu: {
      DeviceViewLayout top = layout_tpu(devices, aspect, false);
      if (aspect <= 0) return top;
      DeviceViewLayout side = layout_tpu(devices, aspect, true);
      return fit_zoom(side, aspect) > fit_zoom(top, aspect) ? side : top;
    }
    case Platform::kGpu: return layout_gpu(devices, aspect);
    case Platform::kCpu: return layout_grid(devices, aspect);
  }
  return layout_grid(devices, aspect);
}

std::vector<ViewLabel> place_view_labels(const DeviceViewLayout& layout, const ViewTransform& view,
                                         const LabelFont& font) {
  std::vector<ViewLabel> labels;
  const auto on_screen = [&](const Rect& r) {
    return Rect{view.to_screen_x(r.x0), view.to_screen_y(r.y0), view.to_screen_x(r.x1), view.to_screen_y(r.y1)};
  };
  // The largest size up to max_size at which `text` fits `box` less `pad` on each side; 0 when below min_size.
  const auto fit = [&](const std::string& text, const Rect& box, double pad) {
    const double by_width =
        (box.width() - 2 * pad) / (font.advance * static_cast<double>(std::max<std::size_t>(1, text.size())));
    const double size = std::min({font.max_size, box.height() * 0.85, by_width});
    return size >= font.min_size ? size : 0.0;
  };
  const auto overlaps = [&](const Rect& r) {
    return std::any_of(labels.begin(), labels.end(), [&](const ViewLabel& l) {
      return r.x0 < l.rect.x1 && l.rect.x0 < r.x1 && r.y0 < l.rect.y1 && l.rect.y0 < r.y1;
    });
  };
  const auto width_of = [&](const std::string& text, double size) {
    return font.advance * size * static_cast<double>(text.size());
  };
  for (std::size_t i = 0; i < layout.plane_titles.size() && i < layout.plane_rects.size(); ++i) {
    const Rect box = on_screen(layout.plane_rects[i]);
    const std::string& text = layout.plane_titles[i];
    if (const double size = fit(text, box, 4); size > 0) {
      const double y0 = box.y0 + (box.height() - size) / 2;
      const Rect rect{box.x0 + 4, y0, box.x0 + 4 + width_of(text, size), y0 + size};
      if (!overlaps(rect)) labels.push_back({ViewLabel::Kind::kPlane, static_cast<int64_t>(i), text, rect, size});
    }
  }
  for (const HostBox& host : layout.hosts) {
    const Rect box = on_screen(host.label_band);
    for (const std::string& text : {host.label, std::to_string(host.process_index)}) {
      const double size = fit(text, box, 4);
      if (size <= 0) continue;
      const double y0 = box.y0 + (box.height() - size) / 2;
      const Rect rect{box.x0 + 4, y0, box.x0 + 4 + width_of(text, size), y0 + size};
      if (overlaps(rect)) continue;
      labels.push_back({ViewLabel::Kind::kHost, host.process_index, text, rect, size});
      break;
    }
  }
  // Device boxes never overlap each other or a label band, so their labels need no check.
  for (const DeviceBox& device : layout.devices) {
    const Rect box = on_screen(device.rect);
    if (const double size = fit(device.label, box, 1); size > 0) {
      const double w = width_of(device.label, size);
      const double x0 = (box.x0 + box.x1 - w) / 2;
      const double y0 = (box.y0 + box.y1 - size) / 2;
      labels.push_back({ViewLabel::Kind::kDevice, device.id, device.label, {x0, y0, x0 + w, y0 + size}, size});
    }
  }
  return labels;
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
