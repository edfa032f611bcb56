// Questions JAX's Sharding API answers about a sharding: device counts, addressability, equivalence.
#include <map>

#include "sharding/sharding.h"

namespace shardscope {

int64_t num_devices(const Sharding& sharding) { return static_cast<int64_t>(sharding_devices(sharding).size()); }

bool is_fully_addressable(const Sharding& sharding) {
  for (const Device& device : sharding_devices(sharding)) {
    if (!is_addressable(device)) return false;
  }
  return true;
}

std::vector<Device> addressable_devices(const Sharding& sharding) {
  std::vector<Device> out;
  for (const Device& device : sharding_devices(sharding)) {
    if (is_addressable(device)) out.push_back(device);
  }
  return out;
}

std::vector<DeviceIndex> addressable_devices_indices_map(const Sharding& sharding, const Shape& shape,
                                                         const JaxProfile& profile) {
  std::vector<DeviceIndex> out;
  for (DeviceIndex& entry : devices_indices_map(sharding, shape, profile)) {
    if (is_addressable(entry.device)) out.push_back(std::move(entry));
  }
  return out;
}

bool is_equivalent_to(const Sharding& a, const Sharding& b, std::size_t ndim, const JaxProfile& profile) {
  const auto memory_kind = [](const Sharding& s) {
    return std::visit([](const auto& concrete) { return concrete.memory_kind; }, s);
  };
  if (memory_kind(a) != memory_kind(b)) return false;
  const std::vector<Device> devices = sharding_devices(a);
  if (devices != sharding_devices(b)) return false;
  const std::vector<int64_t> tiles = tiling_factors(a, ndim);
  if (tiles != tiling_factors(b, ndim)) return false;
  // Same devices in the same order and the same tiling: equivalent when every device holds the same block
  // (how XLA compares the two HloShardings), whatever the specs or meshes that produced them.
  const Shape probe(tiles.begin(), tiles.end());
  std::map<int64_t, std::vector<DimSlice>> blocks_of_a;
  for (const DeviceIndex& entry : devices_indices_map(a, probe, profile)) blocks_of_a[entry.device.id] = entry.index;
  for (const DeviceIndex& entry : devices_indices_map(b, probe, profile)) {
    if (blocks_of_a[entry.device.id] != entry.index) return false;
  }
  return true;
}

}  // namespace shardscope
