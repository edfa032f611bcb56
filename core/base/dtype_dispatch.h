// dtype dispatch for kernels: maps a DType to its storage type and the type arithmetic is done in.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "base/dtype.h"
#include "base/error.h"
#include "base/half_float.h"

namespace shardscope {

// bfloat16 and float16 are stored as their 16-bit patterns and computed in float, rounding back
// to nearest-even on store, as XLA's CPU backend does.

// Element access policy per dtype: `storage` is what the buffer holds, `compute` what kernels use.
template <DType D>
struct DTypeTraits;
template <>
struct DTypeTraits<DType::kBool> {
  using storage = uint8_t;
  using compute = bool;
};
template <>
struct DTypeTraits<DType::kInt8> {
  using storage = int8_t;
  using compute = int8_t;
};
template <>
struct DTypeTraits<DType::kInt16> {
  using storage = int16_t;
  using compute = int16_t;
};
template <>
struct DTypeTraits<DType::kInt32> {
  using storage = int32_t;
  using compute = int32_t;
};
template <>
struct DTypeTraits<DType::kInt64> {
  using storage = int64_t;
  using compute = int64_t;
};
template <>
struct DTypeTraits<DType::kUInt8> {
  using storage = uint8_t;
  using compute = uint8_t;
};
template <>
struct DTypeTraits<DType::kUInt16> {
  using storage = uint16_t;
  using compute = uint16_t;
};
template <>
struct DTypeTraits<DType::kUInt32> {
  using storage = uint32_t;
  using compute = uint32_t;
};
template <>
struct DTypeTraits<DType::kUInt64> {
  using storage = uint64_t;
  using compute = uint64_t;
};
template <>
struct DTypeTraits<DType::kBFloat16> {
  using storage = uint16_t;
  using compute = float;
};
template <>
struct DTypeTraits<DType::kFloat16> {
  using storage = uint16_t;
  using compute = float;
};
template <>
struct DTypeTraits<DType::kFloat32> {
  using storage = float;
  using compute = float;
};
template <>
struct DTypeTraits<DType::kFloat64> {
  using storage = double;
  using compute = double;
};

template <DType D>
[[nodiscard]] inline typename DTypeTraits<D>::compute load(typename DTypeTraits<D>::storage value) {
  if constexpr (D == DType::kBFloat16) {
    return bf16_to_float(value);
  } else if constexpr (D == DType::kFloat16) {
    return f16_to_float(value);
  } else if constexpr (D == DType::kBool) {
    return value != 0;
  } else {
    return value;
  }
}

template <DType D>
[[nodiscard]] inline typename DTypeTraits<D>::storage store(typename DTypeTraits<D>::compute value) {
  if constexpr (D == DType::kBFloat16) {
    return float_to_bf16(value);
  } else if constexpr (D == DType::kFloat16) {
    return float_to_f16(value);
  } else if constexpr (D == DType::kBool) {
    return value ? 1 : 0;
  } else {
    return value;
  }
}

// Calls fn(std::integral_constant<DType, D>{}) for the runtime dtype.
template <typename Fn>
decltype(auto) visit_dtype(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kBool: return fn(std::integral_constant<DType, DType::kBool>{});
    case DType::kInt8: return fn(std::integral_constant<DType, DType::kInt8>{});
    case DType::kInt16: return fn(std::integral_constant<DType, DType::kInt16>{});
    case DType::kInt32: return fn(std::integral_constant<DType, DType::kInt32>{});
    case DType::kInt64: return fn(std::integral_constant<DType, DType::kInt64>{});
    case DType::kUInt8: return fn(std::integral_constant<DType, DType::kUInt8>{});
    case DType::kUInt16: return fn(std::integral_constant<DType, DType::kUInt16>{});
    case DType::kUInt32: return fn(std::integral_constant<DType, DType::kUInt32>{});
    case DType::kUInt64: return fn(std::integral_constant<DType, DType::kUInt64>{});
    case DType::kBFloat16: return fn(std::integral_constant<DType, DType::kBFloat16>{});
    case DType::kFloat16: return fn(std::integral_constant<DType, DType::kFloat16>{});
    case DType::kFloat32: return fn(std::integral_constant<DType, DType::kFloat32>{});
    case DType::kFloat64: return fn(std::integral_constant<DType, DType::kFloat64>{});
  }
  throw value_error("unknown dtype");
}

}  // namespace shardscope
