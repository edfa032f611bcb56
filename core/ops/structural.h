// Param values of the structural primitives whose JAX params are Python objects (named tuples, enums).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/param.h"

namespace shardscope {

// lax.GatherDimensionNumbers; index_vector_dim is always the last dimension of the indices.
struct GatherDimensionNumbers {
  std::vector<int64_t> offset_dims;
  std::vector<int64_t> collapsed_slice_dims;
  std::vector<int64_t> start_index_map;
  std::vector<int64_t> operand_batching_dims;
  std::vector<int64_t> start_indices_batching_dims;
};

// lax.GatherScatterMode: how out-of-bounds gather indices behave.
enum class GatherMode { kClip, kFillOrDrop, kPromiseInBounds, kOneHot };

// The `dimension_numbers` param of gather: a tuple of the five int tuples, in field order
// (printed as `GatherDimensionNumbers(offset_dims=..., ...)`).
[[nodiscard]] ParamValue gather_dimension_numbers_param(const GatherDimensionNumbers& numbers);
[[nodiscard]] GatherDimensionNumbers parse_gather_dimension_numbers(const ParamValue& value);

// The `mode` param of gather: printed `GatherScatterMode.CLIP` and so on.
[[nodiscard]] ParamValue gather_mode_param(GatherMode mode);
// Accepts the param above and the strings lax.gather takes ("clip", "fill", "drop", "promise_in_bounds",
// "one_hot"); None means FILL_OR_DROP as in GatherScatterMode.from_any.
[[nodiscard]] GatherMode parse_gather_mode(const ParamValue& value);

// The `dimension_numbers` param of dot_general: ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)).
[[nodiscard]] ParamValue dot_dimension_numbers_param(const std::vector<int64_t>& lhs_contract,
                                                     const std::vector<int64_t>& rhs_contract,
                                                     const std::vector<int64_t>& lhs_batch,
                                                     const std::vector<int64_t>& rhs_batch);

}  // namespace shardscope
