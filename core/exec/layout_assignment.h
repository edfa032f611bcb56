// Device-local layouts (major_to_minor) the compiler picks for parameters whose layout is left to it
// (jax.experimental.layout's Layout.AUTO), as XLA:CPU's layout assignment does for the pattern it is known for.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/jaxpr.h"

namespace shardscope {

// One major_to_minor order per parameter of `jaxpr`. A parameter whose only use is a slice (or dynamic_slice)
// that keeps exactly one dimension longer than 1 and cuts every other to length 1 (x[0, :], y[:, 0]) gets that
// dimension most minor, so the slice reads contiguous memory. Every other parameter gets the row-major default
// (0, 1, ..., rank - 1), and so does every parameter of a program with nested jaxprs, whose uses this rule does
// not follow. This models one pattern of XLA's heuristics, not the whole pass.
[[nodiscard]] std::vector<std::vector<int64_t>> auto_parameter_layouts(const Jaxpr& jaxpr);

}  // namespace shardscope
