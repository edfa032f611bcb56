// Simulated devices with JAX's attributes, and their repr/str per JAX version profile.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compat/jax_version.h"

namespace shardscope {

enum class Platform { kCpu, kGpu, kTpu };

// "cpu", "gpu", "tpu": the value of `device.platform`.
[[nodiscard]] std::string platform_name(Platform platform);

struct Device {
  int64_t id = 0;
  Platform platform = Platform::kCpu;
  std::string device_kind = "cpu";
  int process_index = 0;
  // TPU only: chip coordinates (x, y, z) and the core index within the chip.
  std::array<int, 3> coords{0, 0, 0};
  int core_on_chip = 0;
  // TPU only: TensorCores per JAX device (2 for megacore chips), absent elsewhere.
  std::optional<int> num_cores;
  // Multi-slice TPU deployments only.
  std::optional<int> slice_index;

  auto operator<=>(const Device&) const = default;
};

// `repr(device)`: CpuDevice(id=0), CudaDevice(id=0), TpuDevice(id=0, process_index=0, coords=(0,0,0), core_on_chip=0).
[[nodiscard]] std::string device_repr(const Device& device);
// As the profile's JAX printed it (TpuDevice showed host_id= before 0.2.13).
[[nodiscard]] std::string device_repr(const Device& device, const JaxProfile& profile);

// `str(device)`: cpu:0 (TFRT_CPU_0 before 0.10), cuda:0, TPU_3(process=0,(1,0,0,1)).
[[nodiscard]] std::string device_str(const Device& device, const JaxProfile& profile);

// The memory kinds a device can address, default first.
[[nodiscard]] std::vector<std::string> addressable_memory_kinds(const Device& device);

// The memory kind a sharding on `device` reports when none is given; nullopt when the profile's
// JAX printed no memory kind at all for this platform.
[[nodiscard]] std::optional<std::string> default_memory_kind(Platform platform, const JaxProfile& profile);

}  // namespace shardscope
