// Sharding factors of scan, while and cond from what their bodies do: a loop's carry, the block arguments and
// values its body yields share one sharding (Shardy's data-flow edges), the body's equations tie the dims they
// share, and scan's xs and ys add a dim 0 that each iteration indexes (so it is not sharded).
#pragma once

#include <optional>

#include "propagation/auto_propagation.h"
#include "propagation/factor_rule.h"

namespace shardscope {

// The one shape every non-scalar value of the equation's bodies has when all of their equations are
// elementwise (so each device can run the bodies on its own blocks), or nullopt.
[[nodiscard]] std::optional<Shape> control_flow_local_shape(const Eqn& eqn);

// The factor rule for scan, while and cond.
[[nodiscard]] FactorRule control_flow_factor_rule(const Eqn& eqn);

[[nodiscard]] bool is_control_flow(const Eqn& eqn);

// One body of a control-flow equation (scan's body; while's body then cond; each cond branch) with a layout for
// each of its values: its arguments and yielded values are pinned to the layouts the equation's operands and
// results have when it runs (`operands`, `results`), the rest propagated inside the body.
struct BodyLayouts {
  JaxprPtr body;
  LayoutMap layouts;
};
[[nodiscard]] std::vector<BodyLayouts> control_flow_body_layouts(const Eqn& eqn, const std::vector<Layout>& operands,
                                                                 const std::vector<Layout>& results, const Mesh& mesh);

}  // namespace shardscope
