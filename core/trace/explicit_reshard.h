// jax.sharding.reshard, auto_axes and explicit_axes as JAX traces them: reshard (and, before JAX 0.7.2, mesh_cast)
// equations around a function run under an abstract mesh with some axes switched to Auto or Explicit.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sharding/sharding.h"
#include "trace/builder.h"

namespace shardscope {

// Registers the reshard and mesh_cast primitives (called from ensure_core_primitives).
void register_explicit_primitives();

// reshard(x, P(...)) or reshard(x, NamedSharding): binds a `reshard` equation whose type carries the new sharding.
// A bare spec needs a concrete context mesh (jax.set_mesh). ValueError with JAX's messages otherwise.
Atom reshard(JaxprBuilder& builder, const Atom& x, const PartitionSpec& spec);
Atom reshard(JaxprBuilder& builder, const Atom& x, const NamedSharding& sharding);

// with_sharding_constraint in an all-Explicit context is an assertion and emits nothing; otherwise it binds a
// sharding_constraint equation (whose spec may name Auto axes only).
Atom with_sharding_constraint(JaxprBuilder& builder, const Atom& x, const NamedSharding& sharding);

using TracedFunction = std::function<std::vector<Atom>(JaxprBuilder&, const std::vector<Atom>&)>;

// auto_axes(fun, axes=..., out_sharding=...)(args): `axes` (all mesh axes when empty) become Auto while `fun` is
// traced; the arguments lose those axes from their types on the way in and the results are resharded to
// `out_shardings` (one spec per result) on the way out. TypeError when out_shardings is missing.
std::vector<Atom> auto_axes(JaxprBuilder& builder, const TracedFunction& fun, const std::vector<Atom>& args,
                            const std::optional<std::vector<PartitionSpec>>& out_shardings,
                            const std::vector<std::string>& axes = {});
// explicit_axes(fun, axes=..., in_sharding=...)(args): the dual of auto_axes.
std::vector<Atom> explicit_axes(JaxprBuilder& builder, const TracedFunction& fun, const std::vector<Atom>& args,
                                const std::optional<std::vector<PartitionSpec>>& in_shardings,
                                const std::vector<std::string>& axes = {});

}  // namespace shardscope
