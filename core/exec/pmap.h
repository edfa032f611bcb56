// pmap: one program instance per device over an array axis, traced (old xla_pmap or new jit(shard_map)) and run.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "array/array.h"
#include "ir/jaxpr.h"
#include "spmd/comm_log.h"
#include "trace/builder.h"

namespace shardscope {

struct PmapSpec {
  std::string function_name = "f";
  std::optional<std::string> axis_name;          // nullopt: an anonymous axis
  std::vector<std::optional<int64_t>> in_axes;   // per flattened argument; nullopt = not mapped
  std::vector<std::optional<int64_t>> out_axes;  // per flattened output; nullopt = instance 0's value
  std::optional<int64_t> axis_size;              // pmap's axis_size= argument
  std::vector<Device> devices;                   // pmap's devices= argument; empty = None
  std::vector<bool> donated_invars;              // per flattened argument; empty = none donated
};

// The name collectives in the body use for the mapped axis (JAX's default when unnamed).
[[nodiscard]] std::string pmap_axis_name(const PmapSpec& spec);
// The mapped size, from the first mapped argument; JAX's errors for none mapped or a bad axis_size=.
[[nodiscard]] int64_t pmap_axis_size(const PmapSpec& spec, std::span<const Aval> args);
// What one instance sees of an argument: the mapped axis removed.
[[nodiscard]] Aval pmap_instance_aval(const Aval& arg, std::optional<int64_t> in_axis);
// The devices instances run on: devices= or the first n available; JAX's error when there are too few.
[[nodiscard]] std::vector<Device> pmap_devices(const PmapSpec& spec, int64_t axis_size,
                                               const std::vector<Device>& available, const JaxProfile& profile);

// Traces pmap(f) into `builder`, `body` being f traced on the instance types (inside an axis scope of the
// axis name): an xla_pmap equation before jax 0.8, jit(shard_map(squeeze, f, expand_dims)) after.
std::vector<Atom> bind_pmap(JaxprBuilder& builder, const JaxprPtr& body, std::span<const Atom> args,
                            const PmapSpec& spec, const std::vector<Device>& available, const JaxProfile& profile);

struct PmapRun {
  std::vector<Array> outputs;  // sharded over a 1-D mesh of the instances' devices, one block per device
  CommLog log;
  Mesh mesh;
};

// Runs the instances in lockstep (collectives over the axis name work) and stacks their results.
[[nodiscard]] PmapRun run_pmap(const Jaxpr& body, const std::vector<Array>& args, const PmapSpec& spec,
                               const std::vector<Device>& available, const JaxProfile& profile);

// The `xla_pmap` primitive of old-JAX programs (shape rule, kernel, params per version).
void register_pmap_primitive();

}  // namespace shardscope
