// Named device presets (cpu:N, gpu:N, TPU slices of each generation) with JAX's numbering.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "device/device.h"

namespace shardscope {

struct DevicePreset {
  std::string name;             // canonical name, e.g. "tpu-v5e-16"
  std::string description;      // one line for people, e.g. "TPU v5e, 4x4 chips, 4 hosts"
  std::vector<Device> devices;  // in `jax.devices()` order
  int process_count = 1;
  std::array<int, 3> chip_bounds{1, 1, 1};  // TPU chip grid (x, y, z); 1x1x1 elsewhere
};

// Parses a preset name: "cpu:N" / "cpu-N", "gpu:N" / "gpu-N" (H100-class), "tpu-v2-8", "tpu-v3-32",
// "tpu-v4-8", "tpu-v4-4096", "tpu-v5e-16", "tpu-v5p-8", "tpu-v6e-256", ... Throws ValueError naming
// the text received and the accepted forms.
[[nodiscard]] DevicePreset make_device_preset(std::string_view name);

// A few representative preset names, for help texts and the GUI's picker.
[[nodiscard]] std::vector<std::string> example_preset_names();

// What `jax.devices()` shows for the preset in a notebook (IPython pretty list of reprs).
[[nodiscard]] std::string devices_listing(const std::vector<Device>& devices);

}  // namespace shardscope
