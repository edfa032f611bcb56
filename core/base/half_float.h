// bfloat16 and IEEE float16 as bit patterns: exact widening and round-to-nearest-even narrowing.
#pragma once

#include <cstdint>

namespace shardscope {

[[nodiscard]] float bf16_to_float(uint16_t bits);
[[nodiscard]] float f16_to_float(uint16_t bits);

// Round to nearest, ties to even, as XLA's convert does; NaN stays NaN, overflow becomes infinity.
[[nodiscard]] uint16_t float_to_bf16(float value);
[[nodiscard]] uint16_t float_to_f16(float value);
// Direct from double, so that a double is rounded once (not first to float, then again).
[[nodiscard]] uint16_t double_to_bf16(double value);
[[nodiscard]] uint16_t double_to_f16(double value);

}  // namespace shardscope
