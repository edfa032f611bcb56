// IEEE half-precision conversions (round to nearest even), used by every kernel on float16 data.
#include "ops/dispatch.h"

#include <cstring>

namespace shardscope {

float float16_to_float(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000U) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1FU;
  const uint32_t mantissa = bits & 0x3FFU;
  if (exponent == 0) {
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24F;
    return sign != 0 ? -magnitude : magnitude;
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7F800000U | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t float_to_float16(float value) {
  const auto bits = std::bit_cast<uint32_t>(value);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000U);
  const uint32_t magnitude = bits & 0x7FFFFFFFU;
  if (magnitude >= 0x7F800000U) {  // inf or nan
    return static_cast<uint16_t>(sign | 0x7C00U | (magnitude > 0x7F800000U ? 0x200U : 0U));
  }
  if (magnitude >= 0x477FF000U) return static_cast<uint16_t>(sign | 0x7C00U);  // rounds to inf
  if (magnitude < 0x38800000U) {  // subnormal half (or zero): scale and round to nearest even
    const float scaled = std::bit_cast<float>(magnitude) * 0x1p24F;
    const auto rounded = static_cast<uint32_t>(std::nearbyint(scaled));
    return static_cast<uint16_t>(sign | rounded);
  }
  const uint32_t rounding = 0xFFFU + ((magnitude >> 13) & 1U);
  return static_cast<uint16_t>(sign | ((magnitude - 0x38000000U + rounding) >> 13));
}

}  // namespace shardscope
