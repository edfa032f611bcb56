// jax_debug_nans: eager operations check their floating-point results and raise FloatingPointError on a NaN.
#pragma once

#include <string>
#include <vector>

#include "array/array.h"

namespace shardscope::api {

void set_debug_nans(bool on);
[[nodiscard]] bool debug_nans();

// FloatingPointError "invalid value (nan) encountered in <primitive>" when a floating output holds a NaN.
void check_for_nans(const std::string& primitive, const std::vector<Array>& outputs);

}  // namespace shardscope::api
