// lax.conv_general_dilated and its shortcuts (lax.conv, conv_with_general_padding) over user values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/lax.h"

namespace shardscope::api::lax {

// Which dimension of each operand is batch/feature/spatial: lhs (N, C, spatial...), rhs (O, I, spatial...),
// out (N, C, spatial...), spatial dimensions listed in the kernel's order.
struct ConvDimensionNumbers {
  std::vector<int64_t> lhs_spec, rhs_spec, out_spec;
};

// From JAX's string form ('NHWC', 'HWIO', 'NHWC'); nullopt specs mean ('NC...', 'OI...', 'NC...').
ConvDimensionNumbers conv_dimension_numbers(std::size_t rank, const std::optional<std::vector<std::string>>& specs);

// `padding` is either explicit (low, high) pairs per spatial dimension or "SAME" / "SAME_LOWER" / "VALID".
struct ConvPadding {
  std::optional<std::string> name;
  std::vector<std::pair<int64_t, int64_t>> pairs;
};

// JAX's conv_general_dilated: the named padding resolved as lax.padtype_to_pads does, then one
// conv_general_dilated equation (core/ops/convolution.cpp holds its rules).
Value conv_general_dilated(const Value& lhs, const Value& rhs, const std::vector<int64_t>& window_strides,
                           const ConvPadding& padding, const std::vector<int64_t>& lhs_dilation,
                           const std::vector<int64_t>& rhs_dilation, const ConvDimensionNumbers& dims,
                           int64_t feature_group_count = 1, int64_t batch_group_count = 1,
                           std::optional<DType> preferred_element_type = std::nullopt);

}  // namespace shardscope::api::lax
