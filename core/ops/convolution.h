// conv_general_dilated's params as one struct, shared by the op's kernel and by its rules in higher layers.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "base/dtype.h"
#include "base/python_format.h"
#include "ir/param.h"

namespace shardscope {

// lax.ConvDimensionNumbers: for lhs, rhs and out, the positions of (batch, feature, spatial...) and
// (out feature, in feature, spatial...) in each operand, spatial dims in the kernel's order.
struct ConvDims {
  std::vector<int64_t> lhs_spec, rhs_spec, out_spec;
};

struct ConvParams {
  std::vector<int64_t> window_strides;
  std::vector<std::pair<int64_t, int64_t>> padding;  // (low, high) per spatial dim; negative crops
  std::vector<int64_t> lhs_dilation, rhs_dilation;
  ConvDims dims;
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
  std::optional<DType> preferred_element_type;
  ParamValue precision = ParamValue::None{};
  ParamValue out_sharding = ParamValue::None{};
};

[[nodiscard]] ConvParams conv_params(const Params& params);
// The equation params, in the order lax binds them.
[[nodiscard]] Params conv_params_to_params(const ConvParams& conv);

// (d - 1) * dilation + 1, or 0 for an empty dim (lax._dilate_shape).
[[nodiscard]] int64_t dilated_size(int64_t size, int64_t dilation);

// The result shape of conv_general_dilated (JAX's shape rule and its ValueErrors).
[[nodiscard]] Shape conv_output_shape(const Shape& lhs, const Shape& rhs, const ConvParams& conv);

}  // namespace shardscope
