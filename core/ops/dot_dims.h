// dot_general's dimension bookkeeping, shared by its shape rule, its kernel and the sharding rules.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace shardscope {

// Dims of an operand that are neither contracted nor batch, in increasing order (the result's free dims).
[[nodiscard]] std::vector<int64_t> dot_free_dims(std::size_t rank, const std::vector<int64_t>& contract,
                                                 const std::vector<int64_t>& batch);

}  // namespace shardscope
