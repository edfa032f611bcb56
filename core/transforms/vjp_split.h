// jax.vjp's program split: a forward pass that also returns the residuals reverse mode keeps, and a backward pass
// from those residuals and the output cotangents to the input cotangents.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "ir/jaxpr.h"

namespace shardscope {

struct VjpSplit {
  // (invars...) -> (outs..., residuals...): the program's outputs, then every value the backward pass reads.
  JaxprPtr forward;
  // (residuals..., one cotangent per differentiated output...) -> one cotangent per invar marked in `cotangent_out`,
  // zeros where the output does not depend on it. Cotangents of outputs in `output_zeros` are not read.
  JaxprPtr backward;
  // Per residual: the index of the invar it is (an argument saved as it was given), or nullopt for a value the
  // forward pass computed. jax.vjp keeps the former as `args_res` and the latter as opaque residuals.
  std::vector<std::optional<std::size_t>> residual_invar;
  // Per differentiated output: whether its tangent is structurally zero (JAX's out_zeros).
  std::vector<bool> output_zeros;
};

// Linearizes `jaxpr` in the invars marked in `tangent_in` (floating-point ones only get tangents) and transposes
// the linear half. Only the first `differentiated` outputs take cotangents; the rest (has_aux's values) pass
// through the forward program.
[[nodiscard]] VjpSplit vjp_split(const Jaxpr& jaxpr, const std::vector<bool>& tangent_in,
                                 const std::vector<bool>& cotangent_out, std::size_t differentiated);

}  // namespace shardscope
