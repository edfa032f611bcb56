// dtype names, sizes and JAX's type-promotion lattice.
#include "base/dtype.h"

#include <array>
#include <vector>

namespace shardscope {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  std::string_view short_name;
  DTypeKind kind;
  int bits;
};

constexpr std::array<DTypeInfo, 13> kInfo = {{
    {DType::kBool, "bool", "bool", DTypeKind::kBool, 8},
    {DType::kInt8, "int8", "i8", DTypeKind::kSigned, 8},
    {DType::kInt16, "int16", "i16", DTypeKind::kSigned, 16},
    {DType::kInt32, "int32", "i32", DTypeKind::kSigned, 32},
    {DType::kInt64, "int64", "i64", DTypeKind::kSigned, 64},
    {DType::kUInt8, "uint8", "u8", DTypeKind::kUnsigned, 8},
    {DType::kUInt16, "uint16", "u16", DTypeKind::kUnsigned, 16},
    {DType::kUInt32, "uint32", "u32", DTypeKind::kUnsigned, 32},
    {DType::kUInt64, "uint64", "u64", DTypeKind::kUnsigned, 64},
    {DType::kBFloat16, "bfloat16", "bf16", DTypeKind::kFloat, 16},
    {DType::kFloat16, "float16", "f16", DTypeKind::kFloat, 16},
    {DType::kFloat32, "float32", "f32", DTypeKind::kFloat, 32},
    {DType::kFloat64, "float64", "f64", DTypeKind::kFloat, 64},
}};

const DTypeInfo& info(DType dtype) { return kInfo[static_cast<std::size_t>(dtype)]; }

// Nodes of JAX's promotion lattice: the concrete dtypes plus the weak Python-scalar categories.
enum Node : uint8_t {
  kB1,
  kI8,
  kI16,
  kI32,
  kI64,
  kU8,
  kU16,
  kU32,
  kU64,
  kBF16,
  kF16,
  kF32,
  kF64,
  kWeakInt,
  kWeakFloat,
  kNodeCount
};

// Direct successors in the lattice (each edge "may be promoted to").
const std::array<std::vector<Node>, kNodeCount>& lattice_edges() {
  static const std::array<std::vector<Node>, kNodeCount> edges = [] {
    std::array<std::vector<Node>, kNodeCount> e{};
    e[kB1] = {kWeakInt};
    e[kWeakInt] = {kU8, kI8};
    e[kU8] = {kU16, kI16};
    e[kU16] = {kU32, kI32};
    e[kU32] = {kU64, kI64};
    e[kU64] = {kWeakFloat};
    e[kI8] = {kI16};
    e[kI16] = {kI32};
    e[kI32] = {kI64};
    e[kI64] = {kWeakFloat};
    e[kWeakFloat] = {kBF16, kF16};
    e[kBF16] = {kF32};
    e[kF16] = {kF32};
    e[kF32] = {kF64};
    e[kF64] = {};
    return e;
  }();
  return edges;
}

// upper_bounds[n] = every node reachable from n, itself included.
const std::array<uint32_t, kNodeCount>& upper_bounds() {
  static const std::array<uint32_t, kNodeCount> bounds = [] {
    std::array<uint32_t, kNodeCount> result{};
    for (int start = 0; start < kNodeCount; ++start) {
      uint32_t seen = 0;
      std::vector<Node> stack = {static_cast<Node>(start)};
      while (!stack.empty()) {
        const Node n = stack.back();
        stack.pop_back();
        if ((seen & (1U << n)) != 0) continue;
        seen |= 1U << n;
        for (const Node next : lattice_edges()[n]) stack.push_back(next);
      }
      result[static_cast<std::size_t>(start)] = seen;
    }
    return result;
  }();
  return bounds;
}

Node node_of(DType dtype, bool weak) {
  if (weak) {
    if (dtype == DType::kBool) return kB1;
    return is_floating(dtype) ? kWeakFloat : kWeakInt;
  }
  return static_cast<Node>(static_cast<int>(dtype));
}

// The least upper bound: the common upper bound that every other common upper bound lies above.
Node least_upper_bound(Node a, Node b) {
  const uint32_t common = upper_bounds()[a] & upper_bounds()[b];
  for (int candidate = 0; candidate < kNodeCount; ++candidate) {
    if ((common & (1U << candidate)) == 0) continue;
    if ((upper_bounds()[static_cast<std::size_t>(candidate)] & common) == common) return static_cast<Node>(candidate);
  }
  return kF64;
}

}  // namespace

DTypeKind dtype_kind(DType dtype) { return info(dtype).kind; }
bool is_floating(DType dtype) { return dtype_kind(dtype) == DTypeKind::kFloat; }
bool is_integral(DType dtype) {
  return dtype_kind(dtype) == DTypeKind::kSigned || dtype_kind(dtype) == DTypeKind::kUnsigned;
}
std::size_t dtype_size(DType dtype) { return static_cast<std::size_t>(info(dtype).bits / 8); }
int dtype_bits(DType dtype) { return info(dtype).bits; }
std::string_view dtype_name(DType dtype) { return info(dtype).name; }
std::string_view dtype_short_name(DType dtype) { return info(dtype).short_name; }

std::optional<DType> parse_dtype(std::string_view text) {
  for (const std::string_view prefix : {"jnp.", "np.", "jax.numpy.", "numpy."}) {
    if (text.starts_with(prefix)) text.remove_prefix(prefix.size());
  }
  for (const DTypeInfo& i : kInfo) {
    if (text == i.name || text == i.short_name) return i.dtype;
  }
  if (text == "float") return DType::kFloat32;
  if (text == "int") return DType::kInt32;
  if (text == "bool_") return DType::kBool;
  if (text == "half") return DType::kFloat16;
  if (text == "double") return DType::kFloat64;
  return std::nullopt;
}

DType canonicalize_dtype(DType dtype, bool enable_x64) {
  if (enable_x64) return dtype;
  switch (dtype) {
    case DType::kInt64: return DType::kInt32;
    case DType::kUInt64: return DType::kUInt32;
    case DType::kFloat64: return DType::kFloat32;
    default: return dtype;
  }
}

DType default_int_dtype(bool enable_x64) { return enable_x64 ? DType::kInt64 : DType::kInt32; }
DType default_float_dtype(bool enable_x64) { return enable_x64 ? DType::kFloat64 : DType::kFloat32; }

WeakDType promote_types(WeakDType a, WeakDType b, bool enable_x64) {
  if (a.dtype == b.dtype && !(a.weak && b.weak)) return {a.dtype, false};
  const bool all_weak = a.weak && b.weak;
  // With only weak operands the bound is taken over their strong counterparts, then made weak.
  const Node bound = all_weak ? least_upper_bound(node_of(a.dtype, false), node_of(b.dtype, false))
                              : least_upper_bound(node_of(a.dtype, a.weak), node_of(b.dtype, b.weak));
  WeakDType result;
  switch (bound) {
    case kWeakInt: result = {default_int_dtype(enable_x64), true}; break;
    case kWeakFloat: result = {default_float_dtype(enable_x64), true}; break;
    default: result = {static_cast<DType>(static_cast<int>(bound)), all_weak}; break;
  }
  result.dtype = canonicalize_dtype(result.dtype, enable_x64);
  if (result.dtype == DType::kBool) result.weak = false;
  return result;
}

}  // namespace shardscope
