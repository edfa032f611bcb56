// `shardscope devices` and `shardscope profiles`: what jax.devices() lists, and the version table.
#include <iostream>

#include "cli/arguments.h"
#include "cli/commands.h"
#include "device/presets.h"

namespace shardscope::cli {

int run_devices(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return guarded(err, [&] {
    const Arguments arguments(args, {"--devices", "--jax-version"}, {"--describe"});
    (void)profile_from(arguments);  // validates --jax-version
    const DevicePreset preset = make_device_preset(arguments.value("--devices").value_or("tpu-v3-8"));
    if (arguments.flag("--describe")) out << preset.name << ": " << preset.description << "\n";
    out << devices_listing(preset.devices) << "\n";
    return 0;
  });
}

int run_profiles(std::ostream& out) {
  out << "JAX behaviour changes by release (newest profile: " << kNewestJax.to_string() << "):\n";
  for (const JaxFeatureChange& change : jax_feature_changes()) {
    out << "  " << change.introduced_in.to_string() << "  " << change.summary << "\n";
  }
  return 0;
}

}  // namespace shardscope::cli
