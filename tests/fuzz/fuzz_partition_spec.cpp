// libFuzzer harness: PartitionSpec text as a user types it ("P('x', ('y', 'z'), None)").
#include "fuzz_support.h"
#include "sharding/partition_spec.h"
#include "sharding/sharding_recipe.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = shardscope::fuzz::as_text(data, size);
  shardscope::fuzz::expect_handled([&] { (void)shardscope::parse_partition_spec(text); });
  shardscope::fuzz::expect_handled([&] { (void)shardscope::parse_axis_types(std::string(text)); });
  return 0;
}
