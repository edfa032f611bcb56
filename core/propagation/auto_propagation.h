// Auto-mode sharding propagation through a jaxpr: factor by factor, in Shardy's op-priority rounds.
#pragma once

#include <map>
#include <string>

#include "ir/jaxpr.h"
#include "propagation/factor_rule.h"
#include "spmd/reshard.h"

namespace shardscope {

struct TensorLayoutState {
  Layout layout;
  bool closed = false;  // committed inputs, constraints and out_shardings never change
  // Where the layout came from: "argument 0", "in_shardings[1]", "out_shardings[0]", "with_sharding_constraint",
  // "shard_map out_specs", "sharding in types", or "<op> from operand 1" / "<op> from its result" for a factor
  // propagated through an op; empty while nothing shards the value.
  std::string origin;
  // Per dim, where a propagated dim's axes came from: the origin text and the value that passed them on through
  // that op. Empty for values pinned as a whole (arguments, constraints, out_specs), which the origin describes.
  // The Why chain follows `from_var` back to the pins.
  struct DimSource {
    std::string origin;
    int64_t from_var = -1;
    bool operator==(const DimSource&) const = default;
  };
  std::vector<DimSource> dim_sources;
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
