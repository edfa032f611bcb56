// How long one collective takes on the real topology: a ring along torus links (with or without the wraparound
// link), NVLink through a switch, or a network between hosts. shardscope's estimate, after the scaling book.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "cost/hardware.h"
#include "device/device.h"
#include "spmd/comm_log.h"

namespace shardscope {

// Where one group of a collective runs.
struct CollectiveTopology {
  int physical_axes = 1;       // torus dimensions the group spans (1 for switched and single-axis rings)
  std::vector<int> extents;    // chips along each spanned torus dimension
  bool wraparound = true;      // every spanned dimension closes its ring (both directions usable)
  bool on_chip = false;        // every member on one chip (a v2/v3 chip's two TensorCores)
  bool switched = false;       // GPUs and CPUs: every member reaches every other through a switch or memory
  bool crosses_hosts = false;  // a switched group spanning hosts: the network, not NVLink, carries it
  std::string link;            // "ICI", "ICI, no wraparound", "NVLink", "network", "on-chip", "host memory"
};

// The topology of a group of devices; `all_devices` gives the slice's extent (its torus size per dimension).
[[nodiscard]] CollectiveTopology collective_topology(const std::vector<const Device*>& group,
                                                     const std::vector<Device>& all_devices,
                                                     const HardwareSpec& hardware);

struct CollectiveTime {
  double latency_seconds = 0;    // hops times the per-hop latency
  double bandwidth_seconds = 0;  // bytes over the links that carry them
  double seconds = 0;            // the larger of the two: small buffers are latency-bound
  std::string algorithm;         // in words, with the formula used
};

// The time of a collective over a group of `n` devices in which each device sends `bytes_sent`, counted as the
// communication log counts a ring (all-gather (n-1)s, reduce-scatter (n-1)/n b, all-reduce 2(n-1)/n b,
// all-to-all (n-1)/n b, collective-permute s). On a torus with wraparound links it is the scaling book's
// V / (W_bidi * axes) for an all-gather or reduce-scatter of an array of V bytes, twice that for an all-reduce
// and a quarter of it for an all-to-all; without the wraparound link a line moves (n-1)/n V one way.
[[nodiscard]] CollectiveTime collective_time(CollectiveKind kind, int64_t n, double bytes_sent,
                                             const CollectiveTopology& topology, const HardwareSpec& hardware);

}  // namespace shardscope
