// Sharding factors of scan, while and cond: when every body is elementwise over one shape, all of their
// non-scalar values share that shape's factors (a carry keeps its layout; xs and ys add an unsharded dim 0).
#pragma once

#include <optional>

#include "propagation/factor_rule.h"

namespace shardscope {

// The one shape every non-scalar value of the equation's bodies has when all of their equations are
// elementwise (so each device can run the bodies on its own blocks), or nullopt.
[[nodiscard]] std::optional<Shape> control_flow_local_shape(const Eqn& eqn);

// The factor rule for scan, while and cond (need-replication everywhere when the bodies are not elementwise).
[[nodiscard]] FactorRule control_flow_factor_rule(const Eqn& eqn);

}  // namespace shardscope
