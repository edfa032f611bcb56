// dtype names and JAX's promotion lattice, weak types included.
#include "base/dtype.h"

#include <doctest/doctest.h>

using namespace shardscope;

namespace {
WeakDType strong(DType d) { return {d, false}; }
WeakDType weak(DType d) { return {d, true}; }
}  // namespace

TEST_CASE("names in reprs and jaxprs") {
  CHECK(dtype_name(DType::kBFloat16) == "bfloat16");
  CHECK(dtype_short_name(DType::kBFloat16) == "bf16");
  CHECK(dtype_short_name(DType::kUInt8) == "u8");
  CHECK(dtype_short_name(DType::kBool) == "bool");
  CHECK(parse_dtype("jnp.float32") == DType::kFloat32);
  CHECK(parse_dtype("i16") == DType::kInt16);
  CHECK_FALSE(parse_dtype("complex64").has_value());
  CHECK(dtype_size(DType::kFloat16) == 2);
}

TEST_CASE("promotion follows JAX's lattice") {
  CHECK(promote_types(strong(DType::kInt32), strong(DType::kFloat32)) == strong(DType::kFloat32));
  CHECK(promote_types(strong(DType::kUInt8), strong(DType::kInt8)) == strong(DType::kInt16));
  CHECK(promote_types(strong(DType::kUInt32), strong(DType::kInt32)) == strong(DType::kInt32));  // int64 without x64
  CHECK(promote_types(strong(DType::kUInt32), strong(DType::kInt32), true) == strong(DType::kInt64));
  CHECK(promote_types(strong(DType::kBFloat16), strong(DType::kFloat16)) == strong(DType::kFloat32));
  CHECK(promote_types(strong(DType::kInt64), strong(DType::kBFloat16), true) == strong(DType::kBFloat16));
  CHECK(promote_types(strong(DType::kBool), strong(DType::kUInt8)) == strong(DType::kUInt8));
  CHECK(promote_types(strong(DType::kBool), strong(DType::kBool)) == strong(DType::kBool));
}

TEST_CASE("weak types give way to strong ones of the same kind") {
  // x_f16 * 2.0 stays float16; x_i8 + 1 stays int8; x_i32 * 0.5 becomes a weak float32.
  CHECK(promote_types(strong(DType::kFloat16), weak(DType::kFloat32)) == strong(DType::kFloat16));
  CHECK(promote_types(strong(DType::kInt8), weak(DType::kInt32)) == strong(DType::kInt8));
  CHECK(promote_types(strong(DType::kInt32), weak(DType::kFloat32)) == weak(DType::kFloat32));
  CHECK(promote_types(strong(DType::kUInt8), weak(DType::kFloat32)) == weak(DType::kFloat32));
  CHECK(promote_types(weak(DType::kInt32), weak(DType::kFloat32)) == weak(DType::kFloat32));
  CHECK(promote_types(weak(DType::kInt32), weak(DType::kInt32)) == weak(DType::kInt32));
  CHECK(promote_types(weak(DType::kFloat32), strong(DType::kBFloat16)) == strong(DType::kBFloat16));
  CHECK(promote_types(weak(DType::kFloat64), weak(DType::kFloat64), true) == weak(DType::kFloat64));
  CHECK(promote_types(strong(DType::kBool), weak(DType::kInt32)) == weak(DType::kInt32));
}
