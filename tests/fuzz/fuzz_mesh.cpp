// libFuzzer harness: mesh axis sizes, axis types, device ids and spec on a preset, resolved to a sharding
// as `shardscope viz --devices --mesh --axis-types --device-ids --spec` does.
#include "fuzz_recipe.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  shardscope::fuzz::expect_handled([&] {
    const auto fields = shardscope::fuzz::key_values(shardscope::fuzz::as_text(data, size));
    const shardscope::JaxProfile profile = shardscope::fuzz::profile_from(fields);
    const shardscope::ResolvedSharding resolved =
        shardscope::resolve_sharding(shardscope::fuzz::recipe_from(fields), profile);
    (void)shardscope::sharding_repr(resolved.sharding, profile);
  });
  return 0;
}
