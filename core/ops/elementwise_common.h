// Shared machinery of the elementwise primitives: JAX's dtype/shape/weak-type rules and the typed kernel loops.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "array/buffer.h"
#include "base/dtype_dispatch.h"
#include "base/error.h"
#include "ir/primitive.h"

namespace shardscope::elementwise {

// ---- JAX's accepted-dtype sets ----

// The numpy abstract scalar types JAX's rules test with issubdtype; bit order is the order their
// names appear in error messages.
enum TypeClass : uint8_t {
  kIntegerClass = 1U << 0,
  kSignedIntegerClass = 1U << 1,
  kFloatingClass = 1U << 2,
  kComplexClass = 1U << 3,
  kBoolClass = 1U << 4,
};
using TypeClasses = uint8_t;

inline constexpr TypeClasses kFloatTypes = kFloatingClass;
inline constexpr TypeClasses kInexactTypes = kFloatingClass | kComplexClass;
inline constexpr TypeClasses kIntTypes = kIntegerClass;
inline constexpr TypeClasses kNumTypes = kIntegerClass | kFloatingClass | kComplexClass;
inline constexpr TypeClasses kAnyTypes = kIntegerClass | kFloatingClass | kComplexClass | kBoolClass;
inline constexpr TypeClasses kOrderedTypes = kIntegerClass | kFloatingClass | kBoolClass;
inline constexpr TypeClasses kBoolOrIntTypes = kIntegerClass | kBoolClass;
inline constexpr TypeClasses kIntOrFloatTypes = kIntegerClass | kFloatingClass;
inline constexpr TypeClasses kSignedNumTypes = kSignedIntegerClass | kFloatingClass | kComplexClass;

[[nodiscard]] constexpr bool class_accepts(TypeClasses classes, DType dtype) {
  switch (dtype) {
    case DType::kBool: return (classes & kBoolClass) != 0;
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64: return (classes & (kIntegerClass | kSignedIntegerClass)) != 0;
    case DType::kUInt8:
    case DType::kUInt16:
    case DType::kUInt32:
    case DType::kUInt64: return (classes & kIntegerClass) != 0;
    case DType::kBFloat16:
    case DType::kFloat16:
    case DType::kFloat32:
    case DType::kFloat64: return (classes & kFloatingClass) != 0;
  }
  return false;
}

// "integer, floating, complexfloating", as `t.__name__` joins them.
[[nodiscard]] std::string type_class_names(TypeClasses classes);

// ---- rules ----

void check_arity(const std::string& name, std::span<const Aval> avals, std::size_t expected);
// unop_dtype_rule: TypeError "sin does not accept dtype int32. Accepted dtypes are subtypes of ...".
void check_unary_dtype(const std::string& name, const Aval& aval, TypeClasses accepted);
// naryop_dtype_rule's per-position check.
void check_operand_dtypes(const std::string& name, std::span<const Aval> avals, std::span<const TypeClasses> accepted);
// check_same_dtypes: "lax.add requires arguments to have the same dtypes, got float32, int32. (Tip: ...)".
void check_same_dtypes(const std::string& name, std::span<const Aval> avals);
// broadcasting_shape_rule: rank-0 operands broadcast; the rest need equal ranks and equal-or-1 sizes.
[[nodiscard]] Shape broadcasting_shape(const std::string& name, std::span<const Aval> avals);
[[nodiscard]] bool all_weak(std::span<const Aval> avals);

// A unary result keeps the operand's sharding annotations.
[[nodiscard]] Aval unary_result(const Aval& operand, DType dtype, bool weak_type);
// An n-ary result merges the non-scalar operands' per-dimension axes and varying axes.
[[nodiscard]] Aval nary_result(std::span<const Aval> avals, Shape shape, DType dtype, bool weak_type);

// The dtype a param names (a DType value or its name); TypeError otherwise.
[[nodiscard]] DType dtype_param(const ParamValue& value, const std::string& what);

// printed_params for params JAX hides when they are None (and for profiles predating them).
[[nodiscard]] Params sorted_params_without(const Eqn& eqn, const std::vector<std::string>& hidden_keys,
                                           bool hide_only_none);

[[nodiscard]] inline Error kernel_dtype_error(const std::string& name, DType dtype) {
  return type_error(name + " has no kernel for dtype " + std::string(dtype_name(dtype)));
}

// ---- kernels ----

template <DType D>
using Storage = typename DTypeTraits<D>::storage;
template <DType D>
using Compute = typename DTypeTraits<D>::compute;

// Compile-time dtype tests for `if constexpr` guards inside dtype dispatch.
template <DType D>
inline constexpr bool kIsFloat =
    D == DType::kBFloat16 || D == DType::kFloat16 || D == DType::kFloat32 || D == DType::kFloat64;
template <DType D>
inline constexpr bool kIsSigned = D == DType::kInt8 || D == DType::kInt16 || D == DType::kInt32 || D == DType::kInt64;
template <DType D>
inline constexpr bool kIsUnsigned =
    D == DType::kUInt8 || D == DType::kUInt16 || D == DType::kUInt32 || D == DType::kUInt64;
template <DType D>
inline constexpr bool kIsInteger = kIsSigned<D> || kIsUnsigned<D>;

// Integer arithmetic wraps as XLA's does; done in an unsigned type at least 32 bits wide so that
// neither signed overflow nor promotion of narrow unsigned types to int can occur.
template <typename T>
using WrapType = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;

template <typename T>
[[nodiscard]] constexpr T wrapping_add(T a, T b) {
  return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b));
}
template <typename T>
[[nodiscard]] constexpr T wrapping_sub(T a, T b) {
  return static_cast<T>(static_cast<WrapType<T>>(a) - static_cast<WrapType<T>>(b));
}
template <typename T>
[[nodiscard]] constexpr T wrapping_mul(T a, T b) {
  return static_cast<T>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b));
}

// XLA's float max/min: a NaN in either operand is the result (a NaN lhs wins).
template <typename T>
[[nodiscard]] T xla_max(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return (a >= b || std::isnan(a)) ? a : b;
  } else {
    return a >= b ? a : b;
  }
}
template <typename T>
[[nodiscard]] T xla_min(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return (a <= b || std::isnan(a)) ? a : b;
  } else {
    return a <= b ? a : b;
  }
}

// convert_element_type's kernel (returns `buffer` itself when the dtype already matches).
[[nodiscard]] BufferPtr convert_buffer(const BufferPtr& buffer, DType dtype);

// The shape elementwise kernels produce from local (per-device) buffers, with the same broadcasting
// the shape rule allows; a mismatch here means shards that were never made compatible.
[[nodiscard]] Shape broadcast_buffer_shape(const std::string& name, std::span<const BufferPtr> buffers);

// An operand as a kernel reads it: either every element of the output's shape, or one element
// repeated. Operands broadcast along some dimensions only are first expanded (rare; a copy).
struct OperandView {
  BufferPtr owner;
  bool repeated = false;
};
[[nodiscard]] OperandView operand_view(const BufferPtr& buffer, const Shape& out_shape);

// Every elementwise kernel writes each element of its result, so the storage starts unfilled.
[[nodiscard]] inline std::shared_ptr<Buffer> new_buffer(DType dtype, const Shape& shape) {
  return std::make_shared<Buffer>(dtype, shape, Buffer::Uninitialized{});
}

namespace detail {
// body(i) for i in [0, n): blocks of a fixed count that -O2's vectoriser turns into whole vectors (it adds
// no epilogue loops of its own), then the rest one by one. The order of elements never changes a result.
template <typename Body>
[[gnu::always_inline]] inline void for_each_index(int64_t n, Body&& body) {
  constexpr int64_t kBlock = 16;
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    for (int64_t j = 0; j < kBlock; ++j) body(i + j);
  }
  for (; i < n; ++i) body(i);
}

// The loops are also compiled for AVX2 and picked at load time (8 floats per instruction instead of SSE2's 4).
// AVX2 without FMA: no multiply-add can be contracted, so each element's result is the same on both.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SHARDSCOPE_ELEMENTWISE_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define SHARDSCOPE_ELEMENTWISE_CLONES
#endif

// Results go to fresh storage, never an operand's (restrict); the bodies capture pointers by value, so the
// vectoriser need not fear that a store changes them.
template <DType In, DType Out, typename Fn>
[[gnu::noinline]] SHARDSCOPE_ELEMENTWISE_CLONES void unary_loop(const Storage<In>* __restrict src,
                                                                Storage<Out>* __restrict dst, int64_t n, Fn& fn) {
  for_each_index(n, [src, dst, &fn](int64_t i) { dst[i] = store<Out>(fn(load<In>(src[i]))); });
}

template <DType A, DType B, DType Out, bool RepeatA, bool RepeatB, typename Fn>
[[gnu::noinline]] SHARDSCOPE_ELEMENTWISE_CLONES void binary_loop(const Storage<A>* __restrict a,
                                                                 const Storage<B>* __restrict b,
                                                                 Storage<Out>* __restrict dst, int64_t n, Fn& fn) {
  if constexpr (RepeatA) {
    const Compute<A> a0 = load<A>(a[0]);
    for_each_index(n, [a0, b, dst, &fn](int64_t i) { dst[i] = store<Out>(fn(a0, load<B>(b[RepeatB ? 0 : i]))); });
  } else if constexpr (RepeatB) {
    const Compute<B> b0 = load<B>(b[0]);
    for_each_index(n, [a, b0, dst, &fn](int64_t i) { dst[i] = store<Out>(fn(load<A>(a[i]), b0)); });
  } else {
    for_each_index(n, [a, b, dst, &fn](int64_t i) { dst[i] = store<Out>(fn(load<A>(a[i]), load<B>(b[i]))); });
  }
}
}  // namespace detail

// out[i] = fn(in[i]) with fn on compute types (bfloat16/float16 computed in float, rounded on store).
template <DType In, DType Out, typename Fn>
[[nodiscard]] BufferPtr map_unary(const Buffer& in, Fn fn) {
  auto out = new_buffer(Out, in.shape());
  detail::unary_loop<In, Out>(in.as<Storage<In>>().data(), out->as_mutable<Storage<Out>>().data(), in.size(), fn);
  return out;
}

// out = fn(a, b) elementwise with broadcasting; the loop is specialised for repeated operands so
// that `x * 2.0` runs as a tight loop over x.
template <DType A, DType B, DType Out, typename Fn>
[[nodiscard]] BufferPtr map_binary(const std::string& name, const BufferPtr& a, const BufferPtr& b, Fn fn) {
  const BufferPtr operands[] = {a, b};
  const Shape shape = broadcast_buffer_shape(name, operands);
  const OperandView va = operand_view(a, shape);
  const OperandView vb = operand_view(b, shape);
  auto out = new_buffer(Out, shape);
  const Storage<A>* pa = va.owner->as<Storage<A>>().data();
  const Storage<B>* pb = vb.owner->as<Storage<B>>().data();
  Storage<Out>* dst = out->as_mutable<Storage<Out>>().data();
  const int64_t n = out->size();
  if (va.repeated && vb.repeated) {
    detail::binary_loop<A, B, Out, true, true>(pa, pb, dst, n, fn);
  } else if (va.repeated) {
    detail::binary_loop<A, B, Out, true, false>(pa, pb, dst, n, fn);
  } else if (vb.repeated) {
    detail::binary_loop<A, B, Out, false, true>(pa, pb, dst, n, fn);
  } else {
    detail::binary_loop<A, B, Out, false, false>(pa, pb, dst, n, fn);
  }
  return out;
}

// Registration of each family (called from register_elementwise_primitives).
void register_unary_primitives();
void register_binary_primitives();
void register_other_elementwise_primitives();

}  // namespace shardscope::elementwise
