// The session: defaults to a TPU v3-8 and the newest JAX, as shardscope documents.
#include "api/session.h"

#include "device/presets.h"

namespace shardscope::api {

SessionConfig& session() {
  static SessionConfig config = [] {
    // Rules below this layer read the profile through compat's active_profile().
    set_profile_source([]() -> const JaxProfile& { return session().profile; });
    SessionConfig initial;
    initial.devices = make_device_preset(initial.device_preset).devices;
    return initial;
  }();
  return config;
}

void set_device_preset(const std::string& preset) {
  std::vector<Device> devices = make_device_preset(preset).devices;
  session().device_preset = preset;
  session().devices = std::move(devices);
}

const Device& default_device() { return session().devices.at(0); }

}  // namespace shardscope::api
