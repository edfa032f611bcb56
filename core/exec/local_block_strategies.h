// XLA's partitioning strategies that keep an operand sharded where a plain factor rule would gather it.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "exec/partition_plan.h"
#include "propagation/factor_rule.h"

namespace shardscope {

// Whether any dim of any of `layouts` is sharded over `axis`.
[[nodiscard]] bool uses_axis(std::initializer_list<const Layout*> layouts, const std::string& axis);

// Each adjusts a local plan in place where its strategy applies (and leaves it alone elsewhere): a gather from an
// operand sharded along the indexed dims, a one-element slice from the first block of a sharded dim (both by a
// masked all-reduce), and a scatter into the blocks its updates land in.
void gather_from_local_blocks(const Eqn& eqn, const LayoutMap& layouts, EquationPlan& plan);
void slice_from_local_blocks(const Eqn& eqn, const LayoutMap& layouts, const Mesh& mesh, EquationPlan& plan);
void scatter_into_local_blocks(const Eqn& eqn, const LayoutMap& layouts, EquationPlan& plan);

// The axes a dot keeps splitting its contraction `factor` over (XLA's base case), or none.
[[nodiscard]] std::vector<std::string> contraction_kept_sharded(const Eqn& eqn, const LayoutMap& layouts,
                                                                const FactorRule& rule, int factor, const Mesh& mesh);

}  // namespace shardscope
