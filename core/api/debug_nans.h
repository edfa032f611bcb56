// jax_debug_nans and jax_debug_infs: eager operations check their floating-point results and raise
// FloatingPointError on a NaN or an infinity while the option is on.
#pragma once

#include <string>
#include <vector>

#include "array/array.h"

namespace shardscope::api {

void set_debug_nans(bool on);
[[nodiscard]] bool debug_nans();
void set_debug_infs(bool on);
[[nodiscard]] bool debug_infs();

// FloatingPointError "invalid value (nan) encountered in <primitive>" when a floating output holds a NaN and
// debug_nans is on, "invalid value (inf) ..." for an infinity under debug_infs (NaNs are looked for first, as
// JAX's dispatch does).
void check_special_values(const std::string& primitive, const std::vector<Array>& outputs);

}  // namespace shardscope::api
