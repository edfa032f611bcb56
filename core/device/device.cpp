// Device reprs and memory kinds.
#include "device/device.h"

namespace shardscope {

std::string platform_name(Platform platform) {
  switch (platform) {
    case Platform::kCpu: return "cpu";
    case Platform::kGpu: return "gpu";
    case Platform::kTpu: return "tpu";
  }
  return "cpu";
}

std::string device_repr(const Device& device) { return device_repr(device, JaxProfile{}); }

std::string device_repr(const Device& device, const JaxProfile& profile) {
  const std::string id = std::to_string(device.id);
  switch (device.platform) {
    case Platform::kCpu: return "CpuDevice(id=" + id + ")";
    case Platform::kGpu: return "CudaDevice(id=" + id + ")";
    case Platform::kTpu: {
      const auto& c = device.coords;
      const char* process_field = profile.has(JaxFeature::kTpuDeviceReprProcessIndex) ? "process_index" : "host_id";
      return "TpuDevice(id=" + id + ", " + process_field + "=" + std::to_string(device.process_index) + ", coords=(" +
             std::to_string(c[0]) + "," + std::to_string(c[1]) + "," + std::to_string(c[2]) +
             "), core_on_chip=" + std::to_string(device.core_on_chip) + ")";
    }
  }
  return {};
}

std::string device_str(const Device& device, const JaxProfile& profile) {
  const std::string id = std::to_string(device.id);
  switch (device.platform) {
    case Platform::kCpu: return profile.has(JaxFeature::kCpuDeviceStrLowercase) ? "cpu:" + id : "TFRT_CPU_" + id;
    case Platform::kGpu: return "cuda:" + id;
    case Platform::kTpu: {
      const auto& c = device.coords;
      return "TPU_" + id + "(process=" + std::to_string(device.process_index) + ",(" + std::to_string(c[0]) + "," +
             std::to_string(c[1]) + "," + std::to_string(c[2]) + "," + std::to_string(device.core_on_chip) + "))";
    }
  }
  return {};
}

std::vector<std::string> addressable_memory_kinds(const Device& device) {
  switch (device.platform) {
    case Platform::kGpu: return {"device", "pinned_host"};
    case Platform::kCpu:
    case Platform::kTpu: return {"device", "pinned_host", "unpinned_host"};
  }
  return {"device"};
}

std::optional<std::string> default_memory_kind(Platform platform, const JaxProfile& profile) {
  if (platform == Platform::kCpu) {
    if (!profile.has(JaxFeature::kCpuMemoryKindInReprs)) return std::nullopt;
    return profile.has(JaxFeature::kCpuDefaultMemoryKindDevice) ? "device" : "unpinned_host";
  }
  if (!profile.has(JaxFeature::kTpuMemoryKindInReprs)) return std::nullopt;
  return "device";
}

}  // namespace shardscope
