// The Python side of the host (app/python/host_*.py), embedded at build time; in load order.
#pragma once

#include <vector>

namespace shardscope::python {

struct HostModuleSource {
  const char* module_name;
  const char* source;
};

[[nodiscard]] const std::vector<HostModuleSource>& host_module_sources();

}  // namespace shardscope::python
