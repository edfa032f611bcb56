// The simulated `jax` package's Python modules (app/python/jax/**.py), compiled into the binary.
#pragma once

#include <vector>

namespace shardscope::python {

struct JaxModuleSource {
  const char* module_name;  // "jax", "jax.numpy", "jax.experimental.shard_map", ...
  const char* source;
};

[[nodiscard]] const std::vector<JaxModuleSource>& jax_module_sources();

}  // namespace shardscope::python
