// The process-wide session the user code runs in: JAX version profile, devices and config flags.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compat/jax_version.h"
#include "device/device.h"

namespace shardscope::api {

struct SessionConfig {
  JaxProfile profile;
  std::string device_preset = "tpu-v3-8";
  std::vector<Device> devices;  // jax.devices(), in order
  bool enable_x64 = false;
  std::optional<bool> threefry_partitionable;  // nullopt: the profile's default
};

// The session's settings; the devices of `device_preset` until set otherwise.
[[nodiscard]] SessionConfig& session();
// Re-reads the device preset (ValueError naming the preset when unknown).
void set_device_preset(const std::string& preset);
// Where uncommitted values and eager operations run: jax.devices()[0].
[[nodiscard]] const Device& default_device();

}  // namespace shardscope::api
