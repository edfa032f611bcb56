// Element types (JAX's dtypes), their names in reprs and jaxprs, and JAX's type-promotion lattice.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace shardscope {

enum class DType : uint8_t {
  kBool,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kBFloat16,
  kFloat16,
  kFloat32,
  kFloat64,
};

enum class DTypeKind { kBool, kSigned, kUnsigned, kFloat };

[[nodiscard]] DTypeKind dtype_kind(DType dtype);
[[nodiscard]] bool is_floating(DType dtype);
[[nodiscard]] bool is_integral(DType dtype);        // signed or unsigned integers, not bool
[[nodiscard]] std::size_t dtype_size(DType dtype);  // bytes per element
[[nodiscard]] int dtype_bits(DType dtype);

// numpy's name, as `dtype=float32` and `jax.typeof` print it: "float32", "bfloat16", "bool".
[[nodiscard]] std::string_view dtype_name(DType dtype);
// The short form jaxprs and error messages use: "f32", "bf16", "i32", "u8", "bool".
[[nodiscard]] std::string_view dtype_short_name(DType dtype);
// Accepts numpy names, short names and common aliases ("float", "int", "f32", "jnp.float32").
[[nodiscard]] std::optional<DType> parse_dtype(std::string_view text);

// A dtype together with JAX's weak-type flag (Python scalars are weakly typed).
struct WeakDType {
  DType dtype = DType::kFloat32;
  bool weak = false;
  bool operator==(const WeakDType&) const = default;
};

// What 64-bit types become when jax_enable_x64 is off (int64 -> int32, float64 -> float32, ...).
[[nodiscard]] DType canonicalize_dtype(DType dtype, bool enable_x64);

// The default dtypes of Python scalars: int -> int32/int64, float -> float32/float64.
[[nodiscard]] DType default_int_dtype(bool enable_x64);
[[nodiscard]] DType default_float_dtype(bool enable_x64);

// jnp.result_type over the operands: JAX's lattice least upper bound with weak types
// (e.g. a weak int with float16 gives float16; two weak values give a weak result).
[[nodiscard]] WeakDType promote_types(WeakDType a, WeakDType b, bool enable_x64 = false);

}  // namespace shardscope
