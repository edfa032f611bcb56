// libFuzzer harness: device preset names ("tpu-v5e-16", "cpu:8", "gpu:2x4", ...) and their listing.
#include "device/presets.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  shardscope::fuzz::expect_handled([&] {
    const shardscope::DevicePreset preset = shardscope::make_device_preset(shardscope::fuzz::as_text(data, size));
    (void)shardscope::devices_listing(preset.devices);
  });
  return 0;
}
