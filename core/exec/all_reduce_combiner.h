// XLA's all-reduce combiner over a partition plan: independent all-reduces of partial results that share their
// device groups, reduction and element type run as one all-reduce of a tuple.
#pragma once

#include <cstdint>
#include <vector>

#include "exec/partition_plan.h"

namespace shardscope {

// The limits the backend's combiner works within: XLA:CPU combines any number of bytes, up to 256 all-reduces
// per combined one; XLA:GPU stops a combined all-reduce at 30 MiB.
struct CombinerLimits {
  int64_t max_bytes = INT64_MAX;
  std::size_t max_count = 256;
};

// The limits of the platform `mesh`'s devices run on.
[[nodiscard]] CombinerLimits combiner_limits(const Mesh& mesh);

// Sets `combined` of every kLocal plan's reductions: the all-reduces of one combined group share an id, which is
// the position of the group's first all-reduce in program order (-1 for an all-reduce that runs alone). Walking
// the program in order, an all-reduce first closes every open group it depends on, then joins the open group of
// its key (groups, reduction, dtype) unless that group is full; otherwise it opens a new one.
void combine_all_reduces(const Jaxpr& jaxpr, const Mesh& mesh, std::vector<EquationPlan>& plans);

// The same combiner over a shard_map body's reductions (psum, pmax, pmin): per equation, the id of the combined
// all-reduce it belongs to (the position of the group's first reduction among the body's), or -1 when it reduces
// one value alone. A psum of several values is one all-reduce of their tuple, so it always has an id.
[[nodiscard]] std::vector<int64_t> combine_body_all_reduces(const Jaxpr& body, const Mesh& mesh);

}  // namespace shardscope
