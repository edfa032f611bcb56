// Hardware figures per device kind (peak flops, memory and interconnect bandwidth) for cost estimates.
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
  double link_bandwidth = 0;      // bytes/s a ring step can move per device (ICI bidirectional, NVLink egress)
  double link_latency = 0;        // seconds per collective step (the alpha of the alpha-beta model)
  bool multi_axis_links = false;  // torus: a collective over k mesh axes uses k dimensions' links at once
  std::string source;             // where the numbers come from
};

// The row for a device kind ("TPU v3", "TPU v5 lite", "NVIDIA H100 80GB HBM3", "cpu", ...);
// ValueError naming the kind when no row matches.
[[nodiscard]] const HardwareSpec& hardware_for_kind(const std::string& device_kind);
[[nodiscard]] const HardwareSpec& hardware_for(const Device& device);
// Every row, for the GUI's picker and for tests.
[[nodiscard]] const std::vector<HardwareSpec>& hardware_table();

}  // namespace shardscope
