// Explicit sharding ("sharding in types"): each primitive's rule for the sharding of its result types.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "ir/aval.h"
#include "ir/param.h"
#include "ir/primitive.h"

namespace shardscope {

// Runs after a primitive's shape rule (JaxprBuilder::bind): gives `outputs` the dim_axes and unreduced axes JAX's
// sharding rule assigns, or raises JAX's error (ShardingTypeError, ValueError, ...). Names in dim_axes refer to the
// context mesh (explicit/mesh_context.h). With no Explicit axis in the context and no sharded input the rules are
// skipped, as in JAX: results are unsharded over the context mesh (untouched when there is no mesh).
void apply_explicit_sharding(const Primitive& primitive, std::span<const Aval> inputs, const Params& params,
                             std::vector<Aval>& outputs);

// str(jax.typeof(x)) for the profile: `ShapedArray(int32[4@X,2])` before JAX 0.6.1, `int32[4@X,2]` after
// The PartitionSpec of a value's type (jax.typeof(x).sharding.spec): one entry per dimension, then the unreduced
// and reduced axes.
[[nodiscard]] PartitionSpec type_partition_spec(const Aval& aval);

// pvary and pcast's casts set the varying, unreduced and reduced axes of their results themselves: neither the
// sharding rules nor the varying-axes union of ordinary ops apply to them.
[[nodiscard]] bool is_manual_type_cast(const std::string& primitive);

// (`~` in front of weak types).
[[nodiscard]] std::string typeof_str(const Aval& aval, const JaxProfile& profile);
// repr(jax.typeof(x)): `ShapedArray(int32[4@X,2])`, `ShapedArray(float32[], weak_type=True)`.
[[nodiscard]] std::string typeof_repr(const Aval& aval);

// The type a value gets from a NamedSharding (device_put, jit arguments): only Explicit axes of the sharding's mesh
// stay, the spec is padded to the rank; ValueError when it is too long or does not divide the shape.
[[nodiscard]] Aval typed_aval(const Aval& aval, const NamedSharding& sharding, const JaxProfile& profile);
// The same type for an array that already lies on the sharding (its shape was checked when it was placed).
[[nodiscard]] Aval placed_array_aval(const Aval& aval, const NamedSharding& sharding, const JaxProfile& profile);

}  // namespace shardscope
