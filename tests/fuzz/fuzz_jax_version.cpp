// libFuzzer harness: the JAX version parser (--jax-version, scene files, jax_version()).
#include <cstdlib>

#include "compat/jax_version.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  shardscope::fuzz::expect_handled([&] {
    const shardscope::JaxVersion version = shardscope::JaxVersion::parse(shardscope::fuzz::as_text(data, size));
    // What the parser accepts it prints back as a version it reads the same way.
    if (shardscope::JaxVersion::parse(version.to_string()) != version) std::abort();
    const shardscope::JaxProfile profile(version);
    (void)profile;
  });
  return 0;
}
