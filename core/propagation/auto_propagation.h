// Auto-mode sharding propagation through a jaxpr: factor by factor, in Shardy's op-priority rounds.
#pragma once

#include <map>

#include "ir/jaxpr.h"
#include "propagation/factor_rule.h"
#include "spmd/reshard.h"

namespace shardscope {

struct TensorLayoutState {
  Layout layout;
  bool closed = false;  // committed inputs, constraints and out_shardings never change
};

// Layouts keyed by variable id.
using LayoutMap = std::map<int64_t, TensorLayoutState>;

// Fills in a layout for every variable of `jaxpr` (and of no nested jaxpr), starting from `known`.
// `sharding_constraint` results are closed to their constraint. Values nothing constrains stay
// replicated.
[[nodiscard]] LayoutMap propagate_layouts(const Jaxpr& jaxpr, const Mesh& mesh, LayoutMap known);

// The axes each factor carries in a tensor with this layout (a dim's axes are split over its factors,
// major to minor).
[[nodiscard]] std::map<int, std::vector<std::string>> factor_axes(const std::vector<std::vector<int>>& dims,
                                                                  const Layout& layout, const FactorRule& rule,
                                                                  const Mesh& mesh);

}  // namespace shardscope
