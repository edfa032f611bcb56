// JAX's shared elementwise rules (accepted dtypes, same-dtype and broadcasting checks) and operand broadcasting.
#include "ops/elementwise_common.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "base/python_format.h"

namespace shardscope::elementwise {
namespace {

// Primitives whose same-dtype error suggests a promoting jnp function, keyed as JAX keys them
// (by lax function name, so only names that coincide with a primitive's get a tip).
const std::map<std::string, std::string>& jnp_equivalents() {
  static const std::map<std::string, std::string> table = {
      {"abs", "fabs"},
      {"acos", "arccos"},
      {"acosh", "arccosh"},
      {"add", "add"},
      {"asin", "arcsin"},
      {"asinh", "arcsinh"},
      {"atan", "arctan"},
      {"atan2", "arctan2"},
      {"atanh", "arctanh"},
      {"bitwise_and", "bitwise_and"},
      {"bitwise_not", "bitwise_not"},
      {"bitwise_or", "bitwise_or"},
      {"bitwise_xor", "bitwise_xor"},
      {"cbrt", "cbrt"},
      {"ceil", "ceil"},
      {"concatenate", "concatenate"},
      {"cos", "cos"},
      {"cosh", "cosh"},
      {"div", "divide"},
      {"eq", "equal"},
      {"exp", "exp"},
      {"expm1", "expm1"},
      {"floor", "floor"},
      {"greater", "greater"},
      {"greater_equal", "greater_equal"},
      {"less", "less"},
      {"less_equal", "less_equal"},
      {"log", "log"},
      {"logical_and", "logical_and"},
      {"logical_not", "logical_not"},
      {"logical_or", "logical_or"},
      {"logical_xor", "logical_xor"},
      {"log1p", "log1p"},
      {"max", "maximum"},
      {"min", "minimum"},
      {"mul", "multiply"},
      {"ne", "not_equal"},
      {"neg", "negative"},
      {"nextafter", "nextafter"},
      {"pow", "float_power"},
      {"round", "round"},
      {"select", "where"},
      {"shift_left", "left_shift"},
      {"shift_right_logical", "right_shift"},
      {"shift_right_arithmetic", "right_shift"},
      {"sign", "sign"},
      {"sin", "sin"},
      {"sinh", "sinh"},
      {"sqrt", "sqrt"},
      {"sub", "subtract"},
      {"tan", "tan"},
      {"tanh", "tanh"},
  };
  return table;
}

std::string rank_set(const std::vector<Shape>& shapes) {
  // A Python set of small ints iterates in ascending order.
  std::set<std::size_t> ranks;
  for (const Shape& shape : shapes) ranks.insert(shape.size());
  std::vector<std::string> items;
  for (std::size_t rank : ranks) items.push_back(std::to_string(rank));
  return "{" + join(items, ", ") + "}";
}

// The broadcast of shapes that all have the same rank; nullopt-like empty result signalled by `ok`.
Shape broadcast_same_rank(const std::vector<Shape>& shapes, bool& ok) {
  ok = true;
  Shape result(shapes.front().size(), 1);
  for (std::size_t d = 0; d < result.size(); ++d) {
    int64_t size = 1;
    for (const Shape& shape : shapes) {
      if (shape[d] == 1) continue;
      if (size != 1 && size != shape[d]) ok = false;
      size = shape[d];
    }
    result[d] = size;
  }
  return result;
}

void append_unique(std::vector<std::string>& into, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (std::find(into.begin(), into.end(), name) == into.end()) into.push_back(name);
  }
}

}  // namespace

std::string type_class_names(TypeClasses classes) {
  static const std::pair<TypeClass, const char*> names[] = {{kIntegerClass, "integer"},
                                                            {kSignedIntegerClass, "signedinteger"},
                                                            {kFloatingClass, "floating"},
                                                            {kComplexClass, "complexfloating"},
                                                            {kBoolClass, "bool"}};
  std::vector<std::string> parts;
  for (const auto& [type_class, name] : names) {
    if ((classes & type_class) != 0) parts.emplace_back(name);
  }
  return join(parts, ", ");
}

void check_arity(const std::string& name, std::span<const Aval> avals, std::size_t expected) {
  if (avals.size() != expected) {
    throw type_error(name + " takes " + std::to_string(expected) + " operand" + (expected == 1 ? "" : "s") + ", got " +
                     std::to_string(avals.size()));
  }
}

void check_unary_dtype(const std::string& name, const Aval& aval, TypeClasses accepted) {
  if (class_accepts(accepted, aval.dtype)) return;
  throw type_error(name + " does not accept dtype " + std::string(dtype_name(aval.dtype)) +
                   ". Accepted dtypes are subtypes of " + type_class_names(accepted) + ".");
}

void check_operand_dtypes(const std::string& name, std::span<const Aval> avals, std::span<const TypeClasses> accepted) {
  for (std::size_t i = 0; i < avals.size() && i < accepted.size(); ++i) {
    if (class_accepts(accepted[i], avals[i].dtype)) continue;
    const std::string position = std::to_string(i);
    throw type_error(name + " does not accept dtype " + std::string(dtype_name(avals[i].dtype)) + " at position " +
                     position + ". Accepted dtypes at position " + position + " are subtypes of " +
                     type_class_names(accepted[i]) + ".");
  }
}

void check_same_dtypes(const std::string& name, std::span<const Aval> avals) {
  if (avals.size() < 2) return;
  const bool same = std::all_of(avals.begin(), avals.end(), [&](const Aval& a) { return a.dtype == avals[0].dtype; });
  if (same) return;
  std::vector<std::string> dtypes;
  for (const Aval& aval : avals) dtypes.emplace_back(dtype_name(aval.dtype));
  std::string message = "lax." + name + " requires arguments to have the same dtypes, got " + join(dtypes, ", ") + ".";
  const auto& tips = jnp_equivalents();
  if (const auto it = tips.find(name); it != tips.end()) {
    message += " (Tip: jnp." + it->second + " is a similar function that does automatic type promotion on inputs).";
  }
  throw type_error(message);
}

Shape broadcasting_shape(const std::string& name, std::span<const Aval> avals) {
  std::vector<Shape> shapes;
  for (const Aval& aval : avals) {
    if (!aval.shape.empty()) shapes.push_back(aval.shape);
  }
  if (shapes.empty()) return {};
  const bool same_rank =
      std::all_of(shapes.begin(), shapes.end(), [&](const Shape& s) { return s.size() == shapes[0].size(); });
  if (!same_rank) {
    throw type_error(name + ": arrays must have the same number of dimensions, got " + rank_set(shapes));
  }
  bool ok = true;
  Shape result = broadcast_same_rank(shapes, ok);
  if (!ok) {
    std::vector<std::string> rendered;
    for (const Shape& shape : shapes) rendered.push_back(python_int_tuple(shape));
    throw type_error(name + " got incompatible shapes for broadcasting: " + join(rendered, ", ") + ".");
  }
  return result;
}

bool all_weak(std::span<const Aval> avals) {
  return std::all_of(avals.begin(), avals.end(), [](const Aval& a) { return a.weak_type; });
}

Aval unary_result(const Aval& operand, DType dtype, bool weak_type) {
  Aval out = operand;
  out.dtype = dtype;
  out.weak_type = weak_type;
  // JAX rejects unreduced operands of most unary ops; the result is never a pending sum.
  out.unreduced.clear();
  return out;
}

Aval nary_result(std::span<const Aval> avals, Shape shape, DType dtype, bool weak_type) {
  Aval out = Aval::of(std::move(shape), dtype, weak_type);
  bool memory_set = false;
  for (const Aval& aval : avals) {
    append_unique(out.varying, aval.varying);
    if (aval.shape.empty()) continue;
    if (!memory_set) {
      out.memory = aval.memory;
      memory_set = true;
    }
    // Per dimension, the first operand that shards it decides (a size-1 dimension never conflicts).
    if (aval.dim_axes.empty()) continue;
    if (out.dim_axes.empty()) out.dim_axes.assign(out.shape.size(), {});
    for (std::size_t d = 0; d < out.dim_axes.size() && d < aval.dim_axes.size(); ++d) {
      if (out.dim_axes[d].empty() && !aval.dim_axes[d].empty()) out.dim_axes[d] = aval.dim_axes[d];
    }
  }
  return out;
}

DType dtype_param(const ParamValue& value, const std::string& what) {
  if (const auto* dtype = value.get_if<DType>()) return *dtype;
  if (const auto* text = value.get_if<std::string>()) {
    if (const auto parsed = parse_dtype(*text)) return *parsed;
  }
  throw type_error(what + " must be a dtype, got " + value.repr(JaxProfile()));
}

Params sorted_params_without(const Eqn& eqn, const std::vector<std::string>& hidden_keys, bool hide_only_none) {
  Params params;
  for (const auto& [key, value] : eqn.params) {
    const bool listed = std::find(hidden_keys.begin(), hidden_keys.end(), key) != hidden_keys.end();
    if (listed && (!hide_only_none || value.is_none())) continue;
    params.emplace_back(key, value);
  }
  std::sort(params.begin(), params.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return params;
}

Shape broadcast_buffer_shape(const std::string& name, std::span<const BufferPtr> buffers) {
  // The common case (every non-scalar operand has one shape) needs no copies of the shapes.
  const Shape* common = nullptr;
  bool all_same = true;
  for (const BufferPtr& buffer : buffers) {
    if (buffer->shape().empty()) continue;
    if (common == nullptr) {
      common = &buffer->shape();
    } else if (*common != buffer->shape()) {
      all_same = false;
      break;
    }
  }
  if (common == nullptr) return {};
  if (all_same) return *common;
  std::vector<Shape> shapes;
  for (const BufferPtr& buffer : buffers) {
    if (!buffer->shape().empty()) shapes.push_back(buffer->shape());
  }
  if (shapes.empty()) return {};
  bool ok = std::all_of(shapes.begin(), shapes.end(), [&](const Shape& s) { return s.size() == shapes[0].size(); });
  Shape result = ok ? broadcast_same_rank(shapes, ok) : Shape{};
  if (!ok) {
    std::vector<std::string> rendered;
    for (const Shape& shape : shapes) rendered.push_back(python_int_tuple(shape));
    throw value_error(name + ": local operand shapes " + join(rendered, ", ") + " do not broadcast");
  }
  return result;
}

OperandView operand_view(const BufferPtr& buffer, const Shape& out_shape) {
  const int64_t out_size = product(out_shape);
  if (buffer->size() == out_size) return {buffer, false};
  if (buffer->size() == 1) return {buffer, true};
  // Same rank with some size-1 dimensions: materialise the broadcast once.
  const Shape& in_shape = buffer->shape();
  const std::size_t rank = out_shape.size();
  const std::size_t element = dtype_size(buffer->dtype());
  std::vector<int64_t> in_strides(rank, 0);
  int64_t stride = 1;
  for (std::size_t d = rank; d-- > 0;) {
    in_strides[d] = in_shape[d] == 1 ? 0 : stride;
    stride *= in_shape[d];
  }
  auto expanded = new_buffer(buffer->dtype(), out_shape);
  const std::byte* src = buffer->bytes().data();
  std::byte* dst = expanded->mutable_bytes().data();
  std::vector<int64_t> index(rank, 0);
  for (int64_t flat = 0; flat < out_size; ++flat) {
    int64_t offset = 0;
    for (std::size_t d = 0; d < rank; ++d) offset += index[d] * in_strides[d];
    std::memcpy(dst + static_cast<std::size_t>(flat) * element, src + static_cast<std::size_t>(offset) * element,
                element);
    for (std::size_t d = rank; d-- > 0;) {
      if (++index[d] < out_shape[d]) break;
      index[d] = 0;
    }
  }
  return {expanded, false};
}

}  // namespace shardscope::elementwise
