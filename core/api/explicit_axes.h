// jax.sharding.reshard, auto_axes and explicit_axes on user values: recorded in an active trace, or traced
// on the spot and run eagerly, as JAX does outside jit.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "api/transforms.h"
#include "sharding/sharding.h"

namespace shardscope::api {

// A bare spec needs a concrete context mesh (jax.set_mesh); JAX's ValueError otherwise.
using ReshardTarget = std::variant<PartitionSpec, NamedSharding>;
[[nodiscard]] Value reshard(const Value& x, const ReshardTarget& target);

// auto_axes(fun, axes=..., out_sharding=...)(*args) and its dual explicit_axes(fun, axes=..., in_sharding=...).
// `axes` empty means every mesh axis.
[[nodiscard]] std::vector<Value> auto_axes(const Function& fun, const std::vector<Value>& args,
                                           const std::optional<std::vector<PartitionSpec>>& out_shardings,
                                           const std::vector<std::string>& axes);
[[nodiscard]] std::vector<Value> explicit_axes(const Function& fun, const std::vector<Value>& args,
                                               const std::optional<std::vector<PartitionSpec>>& in_shardings,
                                               const std::vector<std::string>& axes);

}  // namespace shardscope::api
