// PmapSharding: how the old pmap (jax 0.4.1 to 0.7.x) describes its outputs' layout, and JAX's text for it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "compat/jax_version.h"
#include "device/device.h"
#include "sharding/sharding.h"

namespace shardscope {

struct PmapShardingLayout {
  std::vector<Device> devices;  // one per instance, in order
  std::size_t rank = 0;         // the output array's rank
  std::size_t mapped_dim = 0;   // the dimension the instances are stacked on (pmap's out_axes)
  bool chunked = false;         // shards keep their leading 1 (jax_pmap_no_rank_reduction, 0.4.34+)
};

// The PmapSharding of a pmap output whose engine sharding is `stacked` (a one-axis mesh over the instances'
// devices sharding one dimension); nullopt when it is not such a sharding or the profile has no PmapSharding
// (ShardedDeviceArray before 0.4.1; the new pmap's NamedSharding from 0.8.0).
[[nodiscard]] std::optional<PmapShardingLayout> pmap_sharding_layout(const Sharding& stacked, std::size_t rank,
                                                                     const JaxProfile& profile);

// ShardingSpec((Unstacked(8), NoSharding()), (ShardedAxis(axis=0),)): the sharding_spec attribute's repr.
[[nodiscard]] std::string sharding_spec_repr(const PmapShardingLayout& layout);

// str(PmapSharding): PmapSharding(sharding_spec=..., device_ids=[0, 1], device_platform=CPU, device_shape=(2,)).
[[nodiscard]] std::string pmap_sharding_str(const PmapShardingLayout& layout);

// The shape of one device's shard: the mapped dim removed, or kept as 1 when chunked.
[[nodiscard]] Shape pmap_shard_shape(const PmapShardingLayout& layout, const Shape& global_shape);

}  // namespace shardscope
