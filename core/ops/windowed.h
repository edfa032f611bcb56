// The windowed reductions' params (reduce_window_sum/max/min, select_and_gather_add, select_and_scatter_add) as
// one struct, shared by their kernels and by their rules in higher layers.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "base/python_format.h"
#include "ir/param.h"

namespace shardscope {

struct WindowParams {
  std::vector<int64_t> window_dimensions, window_strides;
  std::vector<std::pair<int64_t, int64_t>> padding;
  std::vector<int64_t> base_dilation, window_dilation;  // all ones for select_and_scatter_add, which has neither
};

[[nodiscard]] WindowParams window_params(const Params& params);
// reduce_window_* and select_and_gather_add's params, in the order lax binds them.
[[nodiscard]] Params window_params_to_params(const WindowParams& window);
// lax.reduce_window_shape_tuple: the dilated, padded operand strided by the dilated window.
[[nodiscard]] Shape window_output_shape(const Shape& operand, const WindowParams& window);
// Whether dim d's window is the identity (size 1, stride 1, no padding or dilation): the dim passes through.
[[nodiscard]] bool window_dim_untouched(const WindowParams& window, std::size_t d);

}  // namespace shardscope
