// Arrays of an unreduced sharding (JAX's P(unreduced=...)): every device of an unreduced group holds a partial
// value, and the array's value is their sum.
#pragma once

#include <optional>

#include "array/buffer.h"
#include "sharding/sharding.h"

namespace shardscope {

// Where `device` sits among the devices an unreduced sharding sums over (row-major over the unreduced axes in
// mesh order), and whether it is the first holder of its block along the other replicated axes; nullopt when
// the sharding has no unreduced axes or the device is not in its mesh.
struct UnreducedPlace {
  int64_t position = 0;       // 0 .. group_size - 1
  int64_t group_size = 1;     // product of the unreduced axes' sizes
  bool first_replica = true;  // coordinate 0 on every axis that neither shards a dim nor is unreduced
};
[[nodiscard]] std::optional<UnreducedPlace> unreduced_place(const Sharding& sharding, const Device& device);

// A replicated block turned into the partial value device `place.position` holds (Shardy's replicated-to-unreduced):
// the block is split along its first dimension the spec leaves unsharded and that the group divides, each device
// keeping its chunk with zeros elsewhere; with no such dimension the first device keeps the whole block.
[[nodiscard]] BufferPtr replicated_to_unreduced(const BufferPtr& block, const PartitionSpec& spec,
                                                const UnreducedPlace& place);

// target[index] += block, elementwise in the dtype's arithmetic.
void add_block(Buffer& target, const std::vector<DimSlice>& index, const Buffer& block);

}  // namespace shardscope
