// jax.ad_checkpoint.saved_residuals: the values reverse mode keeps from a program's forward pass, and where each
// comes from (an argument, a named value, an operation and the user code that traced it).
#pragma once

#include <string>
#include <vector>

#include "ir/jaxpr.h"

namespace shardscope {

struct SavedResidual {
  Aval aval;
  std::string source;  // "from the argument x", "output of sin from f.py:3:9 (g)", "named 'a' from ..."
};

// The residuals of linearizing `jaxpr` in every floating-point input, in JAX's order: literals, constants,
// arguments, then the equations that made them. `arg_names` names the invars ("" for an unnamed one).
[[nodiscard]] std::vector<SavedResidual> saved_residuals(const Jaxpr& jaxpr, const std::vector<std::string>& arg_names);

}  // namespace shardscope
