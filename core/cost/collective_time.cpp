// Collective times per topology: latency-bound hops against bandwidth-bound bytes, the larger of the two.
#include "cost/collective_time.h"

#include <algorithm>
#include <set>

namespace shardscope {
namespace {

// The array size V the scaling book's formulas take, from what each device sends in the log's ring accounting.
double array_bytes(CollectiveKind kind, double n, double sent) {
  if (n <= 1) return 0;
  switch (kind) {
    case CollectiveKind::kAllGather: return sent * n / (n - 1);        // n shards of s, sent (n-1)s
    case CollectiveKind::kReduceScatter: return sent * n / (n - 1);    // the buffer b, sent (n-1)/n b
    case CollectiveKind::kAllReduce: return sent * n / (2 * (n - 1));  // the buffer b, sent 2(n-1)/n b
    case CollectiveKind::kAllToAll: return sent * n * n / (n - 1);     // n buffers of b, each sends (n-1)/n b
    case CollectiveKind::kCollectivePermute: return sent;              // one shard
  }
  return 0;
}

std::string kind_formula(CollectiveKind kind, bool wrap) {
  const std::string w = wrap ? "W_bidi" : "W_one_way";
  switch (kind) {
    case CollectiveKind::kAllGather: return wrap ? "V / (W_bidi * axes)" : "(n-1)/n V / (W_one_way * axes)";
    case CollectiveKind::kReduceScatter: return wrap ? "V / (W_bidi * axes)" : "(n-1)/n V / (W_one_way * axes)";
    case CollectiveKind::kAllReduce: return wrap ? "2 V / (W_bidi * axes)" : "2 (n-1)/n V / (W_one_way * axes)";
    case CollectiveKind::kAllToAll: return "V / (4 " + w + " * axes)";
    case CollectiveKind::kCollectivePermute: return "s / W_one_way";
  }
  return "";
}

}  // namespace

CollectiveTopology collective_topology(const std::vector<const Device*>& group, const std::vector<Device>& all_devices,
                                       const HardwareSpec& hardware) {
  CollectiveTopology topology;
  if (group.empty()) return topology;
  const Device& first = *group.front();
  if (first.platform != Platform::kTpu) {
    topology.switched = true;
    std::set<int> hosts;
    for (const Device* device : group) hosts.insert(device->process_index);
    topology.crosses_hosts = hosts.size() > 1;
    topology.link = first.platform == Platform::kCpu ? "host memory" : topology.crosses_hosts ? "network" : "NVLink";
    return topology;
  }
  std::array<int, 3> bounds{1, 1, 1};
  for (const Device& device : all_devices) {
    for (std::size_t d = 0; d < 3; ++d) bounds[d] = std::max(bounds[d], device.coords[d] + 1);
  }
  topology.physical_axes = 0;
  for (std::size_t d = 0; d < 3; ++d) {
    std::set<int> values;
    for (const Device* device : group) values.insert(device->coords[d]);
    if (values.size() <= 1) continue;
    ++topology.physical_axes;
    topology.extents.push_back(static_cast<int>(values.size()));
    // A ring closes only when the group covers the whole torus dimension and that dimension has its wrap link.
    topology.wraparound =
        topology.wraparound && static_cast<int>(values.size()) == bounds[d] && hardware.wraps(bounds[d]);
  }
  if (topology.physical_axes == 0) {
    topology.physical_axes = 1;
    topology.on_chip = group.size() > 1;
    topology.link = "on-chip";
    return topology;
  }
  topology.link = topology.wraparound ? "ICI" : "ICI, no wraparound";
  return topology;
}

CollectiveTime collective_time(CollectiveKind kind, int64_t group_size, double bytes_sent,
                               const CollectiveTopology& topology, const HardwareSpec& hardware) {
  CollectiveTime time;
  const auto n = static_cast<double>(group_size);
  if (group_size <= 1) {
    time.algorithm = "nothing to move: one device per group";
    return time;
  }
  const double hop = hardware.link_latency;
  const bool all_reduce = kind == CollectiveKind::kAllReduce;
  if (topology.on_chip || topology.switched) {
    // Through memory or a switch every member sends its share at its own rate: the log's bytes over the link.
    const double rate = topology.on_chip                                       ? hardware.memory_bandwidth
                        : topology.crosses_hosts && hardware.dcn_bandwidth > 0 ? hardware.dcn_bandwidth
                                                                               : hardware.link_bandwidth;
    const double steps = kind == CollectiveKind::kCollectivePermute ? 1 : (all_reduce ? 2 : 1) * (n - 1);
    time.latency_seconds = topology.on_chip ? 0.0 : steps * hop;
    time.bandwidth_seconds = bytes_sent / rate;
    time.algorithm = std::string(topology.on_chip ? "on-chip copy" : "ring through the switch") + " over " +
                     topology.link + ": bytes sent / W";
  } else {
    const double v = array_bytes(kind, n, bytes_sent);
    const double axes = std::max(topology.physical_axes, 1);
    const bool wrap = topology.wraparound;
    // Hops to reach every member: half of each ring with wraparound links, the whole line without.
    double hops = 0;
    for (const int extent : topology.extents) hops += wrap ? (extent + 1) / 2 : extent - 1;
    switch (kind) {
      case CollectiveKind::kAllGather:
      case CollectiveKind::kReduceScatter:
        time.bandwidth_seconds =
            wrap ? v / (hardware.link_bandwidth * axes) : (n - 1) / n * v / (hardware.link_one_way * axes);
        break;
      case CollectiveKind::kAllReduce:
        time.bandwidth_seconds =
            wrap ? 2 * v / (hardware.link_bandwidth * axes) : 2 * (n - 1) / n * v / (hardware.link_one_way * axes);
        hops *= 2;
        break;
      case CollectiveKind::kAllToAll:
        time.bandwidth_seconds = v / (4 * (wrap ? hardware.link_bandwidth : hardware.link_one_way) * axes);
        break;
      case CollectiveKind::kCollectivePermute:
        time.bandwidth_seconds = v / hardware.link_one_way;
        hops = 1;
        break;
    }
    time.latency_seconds = hops * hop;
    time.algorithm = std::string(wrap ? "bidirectional ring" : "one-way line") + " over " + topology.link + " (" +
                     std::to_string(topology.physical_axes) +
                     (topology.physical_axes == 1 ? " torus axis" : " torus axes") + "): " + kind_formula(kind, wrap);
  }
  time.seconds = std::max(time.latency_seconds, time.bandwidth_seconds);
  return time;
}

}  // namespace shardscope
