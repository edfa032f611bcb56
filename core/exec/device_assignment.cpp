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

std::string describe_argument(const std::string& function_name, const PlacedArgument& argument,
                              const JaxProfile& profile) {
  return "argument " + argument.name + " of " + function_name + " with shape " + argument.aval.str_short(false) +
         (profile.has(JaxFeature::kDeviceMismatchWithDeviceIds) ? " and with device ids " : " and device ids ") +
         ids_and_platform(argument.devices);
}

}  // namespace

void throw_device_assignment_mismatch(const std::string& function_name, const PlacedArgument& first,
                                      const PlacedArgument& second, const JaxProfile& profile) {
  if (!profile.has(JaxFeature::kDeviceMismatchNamesArguments)) {
    throw value_error("Devices of all `Array` inputs and outputs should be the same. Got array device ids " +
                      ids_and_platform(first.devices) + " and another array's device ids " +
                      ids_and_platform(second.devices));
  }
  throw value_error("Received incompatible devices for jitted computation. Got " +
                    describe_argument(function_name, first, profile) + " and " +
                    describe_argument(function_name, second, profile));
}

void throw_device_put_mismatch(const std::string& function_name, const PlacedArgument& argument,
                               const std::vector<Device>& target, const std::string& where, const JaxProfile& profile) {
  if (!profile.has(JaxFeature::kDeviceMismatchNamesArguments)) {
    throw value_error("Devices of all `Array` inputs and outputs should be the same. Got array device ids " +
                      ids_and_platform(argument.devices) + " and another array's device ids " +
                      ids_and_platform(target));
  }
  throw value_error("Received incompatible devices for jitted computation. Got " +
                    describe_argument(function_name, argument, profile) + " and device_put inside jit" +
                    (profile.has(JaxFeature::kDeviceMismatchWithDeviceIds) ? " with device ids " : " device ids ") +
                    ids_and_platform(target) + " at " + where);
}

}  // namespace shardscope
