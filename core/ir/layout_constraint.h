// Equations that pin their result's layout: with_sharding_constraint and a device_put inside a program.
#pragma once

#include "ir/jaxpr.h"
#include "sharding/sharding.h"

namespace shardscope {

// True for sharding_constraint and device_put: the value passes through unchanged and the partitioner
// moves it to the layout its target names.
[[nodiscard]] bool is_layout_constraint(const Eqn& eqn);

// The NamedSharding a layout constraint pins its result to; null when it names none (an unconstrained
// constraint, or a device_put to a device or a memory kind only).
[[nodiscard]] const NamedSharding* layout_constraint_target(const Eqn& eqn);

}  // namespace shardscope
