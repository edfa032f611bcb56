// Helpers for the elementwise primitive tests: typed buffers in and out, rules and kernels by name.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "array/buffer.h"
#include "base/dtype_dispatch.h"
#include "base/error.h"
#include "ir/primitive.h"
#include "ops/ops.h"

namespace shardscope::elementwise_test {

inline const Primitive& prim(const std::string& name) {
  ensure_core_primitives();
  const Primitive* primitive = find_primitive(name);
  REQUIRE_MESSAGE(primitive != nullptr, "missing primitive " << name);
  return *primitive;
}

inline Aval aval(DType dtype, Shape shape = {}, bool weak = false) { return Aval::of(std::move(shape), dtype, weak); }

inline Aval eval(const std::string& name, const std::vector<Aval>& in, const Params& params = {}) {
  const std::vector<Aval> out = prim(name).abstract_eval(in, params);
  REQUIRE(out.size() == 1);
  return out[0];
}

// The message of the error the rule raises, with its Python type prefixed ("TypeError: ...").
inline std::string eval_error(const std::string& name, const std::vector<Aval>& in, const Params& params = {}) {
  try {
    (void)prim(name).abstract_eval(in, params);
  } catch (const Error& error) {
    return error.python_type() + ": " + error.what();
  }
  return "no error";
}

template <typename T>
BufferPtr buffer(DType dtype, Shape shape, const std::vector<T>& values) {
  return make_buffer<T>(dtype, std::move(shape), values);
}
template <typename T>
BufferPtr vec(DType dtype, const std::vector<T>& values) {
  return make_buffer<T>(dtype, {static_cast<int64_t>(values.size())}, values);
}
template <typename T>
BufferPtr scalar(DType dtype, T value) {
  return make_buffer<T>(dtype, {}, std::vector<T>{value});
}

// bfloat16 / float16 buffers from float values (rounded as stores round).
inline BufferPtr bf16(const std::vector<float>& values) {
  std::vector<uint16_t> bits;
  for (float v : values) bits.push_back(float_to_bf16(v));
  return vec(DType::kBFloat16, bits);
}
inline BufferPtr f16(const std::vector<float>& values) {
  std::vector<uint16_t> bits;
  for (float v : values) bits.push_back(float_to_f16(v));
  return vec(DType::kFloat16, bits);
}

inline BufferPtr run(const std::string& name, const std::vector<BufferPtr>& in, const Params& params = {}) {
  std::vector<Aval> avals;
  for (const BufferPtr& b : in) avals.push_back(Aval::of(b->shape(), b->dtype()));
  const std::vector<BufferPtr> out = prim(name).impl(in, avals, params);
  REQUIRE(out.size() == 1);
  return out[0];
}

template <typename T>
std::vector<T> values(const BufferPtr& buffer) {
  REQUIRE(buffer->nbytes() == static_cast<std::size_t>(buffer->size()) * sizeof(T));
  const auto view = buffer->as<T>();
  return {view.begin(), view.end()};
}

// Element values widened to double (bfloat16/float16 decoded), for any dtype.
inline std::vector<double> doubles(const BufferPtr& buffer) {
  std::vector<double> out;
  for (int64_t i = 0; i < buffer->size(); ++i) out.push_back(buffer->element_as_double(i));
  return out;
}

// Bitwise equality of doubles (so NaN == NaN and -0 != +0).
inline bool same_bits(double a, double b) {
  return std::signbit(a) == std::signbit(b) && (a == b || (a != a && b != b));
}

}  // namespace shardscope::elementwise_test
