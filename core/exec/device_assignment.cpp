// The device-assignment mismatch error, worded per JAX era.
#include "exec/device_assignment.h"

#include <algorithm>

#include "base/error.h"

namespace shardscope {
namespace {

std::string ids_and_platform(const std::vector<Device>& devices) {
  std::string ids = "[";
  for (std::size_t i = 0; i < devices.size(); ++i) ids += (i ? ", " : "") + std::to_string(devices[i].id);
  std::string platform = devices.empty() ? std::string("cpu") : platform_name(devices.front().platform);
  std::transform(platform.begin(), platform.end(), platform.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return ids + "] on platform " + platform;
}

}  // namespace

void throw_device_assignment_mismatch(const std::string& function_name, const PlacedArgument& first,
                                      const PlacedArgument& second, const JaxProfile& profile) {
  if (!profile.has(JaxFeature::kDeviceMismatchNamesArguments)) {
    throw value_error("Devices of all `Array` inputs and outputs should be the same. Got array device ids " +
                      ids_and_platform(first.devices) + " and another array's device ids " +
                      ids_and_platform(second.devices));
  }
  const auto describe = [&](const PlacedArgument& argument) {
    return "argument " + argument.name + " of " + function_name + " with shape " + argument.aval.str_short(false) +
           (profile.has(JaxFeature::kDeviceMismatchWithDeviceIds) ? " and with device ids " : " and device ids ") +
           ids_and_platform(argument.devices);
  };
  throw value_error("Received incompatible devices for jitted computation. Got " + describe(first) + " and " +
                    describe(second));
}

}  // namespace shardscope
