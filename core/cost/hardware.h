// Hardware figures per device kind (compute, memory, interconnect, host links) for cost estimates, each with its
// source.
#pragma once

#include <string>
#include <vector>

#include "device/device.h"

namespace shardscope {

// Figures for ONE JAX device (a TPU v2/v3 core is half a chip; a v4/v5p megacore chip is one device).
struct HardwareSpec {
  std::string name;         // e.g. "TPU v5e"
  std::string device_kind;  // JAX's device_kind string this row matches
  double matmul_flops = 0;  // dot_general at the backend's default precision, FLOP/s
  double vector_flops = 0;  // elementwise and reduction arithmetic, FLOP/s
  double transcendentals_per_second = 0;
  double memory_bandwidth = 0;    // HBM (or DRAM) bytes/s
  double memory_capacity = 0;     // HBM bytes; 0 where the device has no memory of its own (a CPU core)
  double link_bandwidth = 0;      // bytes/s one link carries in both directions together (ICI bidirectional,
                                  // NVLink egress): what a ring with a wraparound link moves per device
  double link_one_way = 0;        // bytes/s one link carries in one direction: a line without wraparound
  double link_latency = 0;        // seconds per hop (the alpha of the alpha-beta model)
  int links_per_chip = 0;         // ICI neighbours: 4 on a 2-D torus, 6 on a 3-D one; NVLink: links per GPU
  bool multi_axis_links = false;  // torus: a collective over k physical axes uses k dimensions' links at once
  // When a torus dimension has its wraparound link: at every size that is a multiple of `wrap_multiple`
  // (v4/v5p's optical cubes), or only at the full pod size `wrap_full_dim` (v2/v3, v5e/v6e); 0 = never.
  int wrap_multiple = 0;
  int wrap_full_dim = 0;
  double host_link_bandwidth = 0;  // PCIe between a chip and its host, bytes/s one way
  double dcn_bandwidth = 0;        // between hosts not joined by ICI/NVLink (DCN, InfiniBand), bytes/s per device
  // Where each group of figures comes from.
  std::string compute_source;
  std::string memory_source;
  std::string interconnect_source;
  std::string host_source;
  std::string source;  // all of the above, joined, for one-line displays

  // Whether a torus dimension of `size` chips has its wraparound link.
  [[nodiscard]] bool wraps(int size) const;
};

// The row for a device kind ("TPU v3", "TPU v5 lite", "NVIDIA H100 80GB HBM3", "cpu", ...);
// ValueError naming the kind when no row matches.
[[nodiscard]] const HardwareSpec& hardware_for_kind(const std::string& device_kind);
[[nodiscard]] const HardwareSpec& hardware_for(const Device& device);
// Every row, for the GUI's picker and for tests.
[[nodiscard]] const std::vector<HardwareSpec>& hardware_table();

}  // namespace shardscope
