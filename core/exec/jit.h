// jit in Auto mode: propagate shardings, partition the program, run it per device with real collectives.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "array/array.h"
#include "ir/jaxpr.h"
#include "propagation/auto_propagation.h"
#include "spmd/comm_log.h"

namespace shardscope {

struct JitOptions {
  std::string name = "f";
  std::vector<std::optional<Sharding>> in_shardings;   // per argument; nullopt = unspecified
  std::vector<std::optional<Sharding>> out_shardings;  // per output; nullopt = unspecified
  std::optional<Device> default_device;                // where a program with no sharded inputs runs
  std::vector<std::string> arg_names;                  // per argument, for errors (args[i] when absent)
};

struct JitRun {
  std::vector<Array> outputs;
  CommLog log;  // every collective the partitioned program ran
  // The layout chosen for every value of the program; shared with the cached plan (never null after a run).
  std::shared_ptr<const LayoutMap> layouts = std::make_shared<const LayoutMap>();
  std::optional<Mesh> mesh;  // absent when the program ran on one device
};

// Runs `jaxpr` on `args`. Committed inputs keep their shardings, uncommitted ones are placed where
// propagation wants them, with_sharding_constraint and out_shardings pin values, and outputs read their
// sharding back the way JAX does (an input's own sharding object when equivalent).
[[nodiscard]] JitRun run_jit(const Jaxpr& jaxpr, const std::vector<Array>& args, const JitOptions& options,
                             const JaxProfile& profile);

}  // namespace shardscope
