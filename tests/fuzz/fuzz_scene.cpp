// libFuzzer harness: scene files (JSON), parsed and every step's sharding resolved, as opening a scene does.
#include "fuzz_support.h"
#include "io/scene.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  shardscope::fuzz::expect_handled([&] {
    const shardscope::Scene scene =
        shardscope::parse_scene(std::string(shardscope::fuzz::as_text(data, size)), "fuzz.json");
    const shardscope::JaxProfile profile =
        scene.jax_version ? shardscope::JaxProfile(*scene.jax_version) : shardscope::JaxProfile();
    (void)shardscope::make_device_preset(scene.devices_preset);
    for (const shardscope::SceneStep& step : scene.steps) {
      shardscope::fuzz::expect_handled([&] { (void)shardscope::resolve_sharding(step.recipe, profile); });
    }
  });
  return 0;
}
