// Shardings (NamedSharding, SingleDeviceSharding) and their geometry: shard shapes and device indices.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "base/python_format.h"
#include "compat/jax_version.h"
#include "device/device.h"
#include "mesh/mesh.h"
#include "sharding/partition_spec.h"

namespace shardscope {

struct NamedSharding {
  Mesh mesh;
  PartitionSpec spec;
  std::optional<std::string> memory_kind;  // canonical: nullopt only when the profile prints none
  bool operator==(const NamedSharding&) const = default;
};

struct SingleDeviceSharding {
  Device device;
  std::optional<std::string> memory_kind;
  bool operator==(const SingleDeviceSharding&) const = default;
};

using Sharding = std::variant<NamedSharding, SingleDeviceSharding>;

// NamedSharding(mesh, spec, memory_kind=...): checks the spec against the mesh the way JAX's
// constructor does (unknown axis: ValueError; axis used twice: DuplicateSpecError; bad memory kind:
// ValueError) and canonicalizes the memory kind to the platform default for the profile.
[[nodiscard]] NamedSharding make_named_sharding(Mesh mesh, PartitionSpec spec, const JaxProfile& profile,
                                                std::optional<std::string> memory_kind = std::nullopt);
[[nodiscard]] SingleDeviceSharding make_single_device_sharding(Device device, const JaxProfile& profile,
                                                               std::optional<std::string> memory_kind = std::nullopt);

// repr(sharding), which is also its str().
[[nodiscard]] std::string sharding_repr(const Sharding& sharding, const JaxProfile& profile);

// All devices of the sharding in mesh (row-major) order.
[[nodiscard]] std::vector<Device> sharding_devices(const Sharding& sharding);
[[nodiscard]] Platform sharding_platform(const Sharding& sharding);

// ValueError when the spec is longer than the array's rank (JAX's check_compatible_aval).
void check_rank_compatible(const Sharding& sharding, std::size_t rank, const JaxProfile& profile);

// Number of shards along each dimension of an array of rank `rank`.
[[nodiscard]] std::vector<int64_t> tiling_factors(const Sharding& sharding, std::size_t rank);

// sharding.shard_shape(shape): IndivisibleError (JAX's message) when a sharded dimension is not divisible.
[[nodiscard]] Shape shard_shape(const Sharding& sharding, const Shape& shape, const JaxProfile& profile);

// check_rank_compatible's error as jit and device_put report it: "One of <what> [with pytree key path <keypath>]
// is incompatible with its sharding annotation <sharding>: <error>".
void check_annotation_rank(const std::string& what, const std::string& keypath, const Sharding& sharding,
                           std::size_t rank, const JaxProfile& profile);

// The check device_put and jit run on their arguments (JAX's pjit_check_aval_sharding per version): a spec
// longer than the rank is "incompatible with its sharding annotation"; otherwise uneven shards raise. `what` is
// "device_put args", "pjit arguments", "pjit outputs", ...; `keypath` names the value (empty: none);
// `source` is the user's `file:line (function)` the newest JAX quotes.
void check_argument_divisible(const std::string& what, const std::string& keypath, const Sharding& sharding,
                              const Shape& shape, const JaxProfile& profile, const std::string& source = "");

// Whether every sharded dimension of `shape` splits into equal shards.
[[nodiscard]] bool divides_evenly(const Sharding& sharding, const Shape& shape);

[[nodiscard]] bool is_fully_replicated(const Sharding& sharding);

// The simulated session runs as process 0: on multi-host presets only process 0's devices are addressable
// (jax.process_index() is 0), as on the first host of a real slice.
[[nodiscard]] inline bool is_addressable(const Device& device) { return device.process_index == 0; }

// One dimension of a device's index: `full` is Python's slice(None); otherwise [start, stop).
struct DimSlice {
  bool full = true;
  int64_t start = 0;
  int64_t stop = 0;
  int64_t block = 0;  // which of the dimension's shards this is (0 for a full slice)
  auto operator<=>(const DimSlice&) const = default;
  [[nodiscard]] std::string repr() const;  // slice(None, None, None) / slice(0, 4, None)
};

struct DeviceIndex {
  Device device;
  std::vector<DimSlice> index;
  int64_t replica_id = 0;  // position among the devices holding the same index, in mesh order
};

// How shards are cut when a dimension does not divide evenly.
enum class ShardCut {
  kEven,    // JAX: raise IndivisibleError
  kPadded,  // beyond JAX (shown as such): XLA-style ceil-sized blocks, the last ones short or empty
};

// sharding.devices_indices_map(shape), in mesh order, with replica ids.
[[nodiscard]] std::vector<DeviceIndex> devices_indices_map(const Sharding& sharding, const Shape& shape,
                                                           const JaxProfile& profile, ShardCut cut = ShardCut::kEven);

// ---- queries (sharding_queries.cpp) ----
[[nodiscard]] int64_t num_devices(const Sharding& sharding);
[[nodiscard]] bool is_fully_addressable(const Sharding& sharding);
// In the sharding's device-assignment (mesh) order.
[[nodiscard]] std::vector<Device> addressable_devices(const Sharding& sharding);
[[nodiscard]] std::vector<DeviceIndex> addressable_devices_indices_map(const Sharding& sharding, const Shape& shape,
                                                                       const JaxProfile& profile);
// sharding.is_equivalent_to(other, ndim): same devices in the same order, same memory kind, and every device
// holding the same block of an ndim-dimensional array (specs may differ, e.g. P('x', None) and P('x')).
[[nodiscard]] bool is_equivalent_to(const Sharding& a, const Sharding& b, std::size_t ndim, const JaxProfile& profile);

}  // namespace shardscope
