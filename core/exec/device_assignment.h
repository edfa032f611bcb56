// JAX's error for a computation whose sharded inputs live on different device assignments.
#pragma once

#include <string>
#include <vector>

#include "compat/jax_version.h"
#include "device/device.h"
#include "ir/aval.h"

namespace shardscope {

struct PlacedArgument {
  std::string name;             // the parameter's name, or args[i] when the function has none
  Aval aval;                    // printed as its short form
  std::vector<Device> devices;  // the sharding's device assignment, in mesh order
};

// ValueError: the message JAX gives for the profile (from 0.4.4 it names both arguments and their shapes).
[[noreturn]] void throw_device_assignment_mismatch(const std::string& function_name, const PlacedArgument& first,
                                                   const PlacedArgument& second, const JaxProfile& profile);

// The same error for a device_put inside the jitted function that targets other devices than its arguments':
// "... and device_put inside jit with device ids [...] on platform CPU at file:line:column (function)".
[[noreturn]] void throw_device_put_mismatch(const std::string& function_name, const PlacedArgument& argument,
                                            const std::vector<Device>& target, const std::string& where,
                                            const JaxProfile& profile);

}  // namespace shardscope
