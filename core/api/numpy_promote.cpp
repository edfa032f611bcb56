// jnp's argument handling: dtype promotion on JAX's lattice (weak types included) and rank promotion.
#include <algorithm>
#include <set>

#include "api/numpy.h"
#include "api/session.h"
#include "base/error.h"
#include "explicit/mesh_context.h"

namespace shardscope::api::jnp {
namespace {

std::string shape_repr(const Shape& shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    text += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  }
  return text + (shape.size() == 1 ? ",)" : ")");
}

DType to_inexact(DType dtype) {
  switch (dtype) {
    case DType::kInt64:
    case DType::kUInt64: return canonicalize_dtype(DType::kFloat64, session().enable_x64);
    default: return is_floating(dtype) ? dtype : DType::kFloat32;
  }
}

std::vector<Value> convert_all(const std::vector<Value>& values, DType dtype, bool weak) {
  std::vector<Value> out;
  out.reserve(values.size());
  for (const Value& value : values) out.push_back(lax::convert_element_type(value, dtype, weak));
  return out;
}

}  // namespace

WeakDType result_type(const std::vector<Value>& values) {
  if (values.empty()) throw value_error("at least one array or dtype is required");
  const bool x64 = session().enable_x64;
  WeakDType result = weak_dtype_of(values[0]);
  result.dtype = canonicalize_dtype(result.dtype, x64);
  for (std::size_t i = 1; i < values.size(); ++i) result = promote_types(result, weak_dtype_of(values[i]), x64);
  return result;
}

std::vector<Value> promote_dtypes(const std::vector<Value>& values) {
  if (values.size() < 2) return values;
  const WeakDType to = result_type(values);
  return convert_all(values, to.dtype, to.weak);
}

std::vector<Value> promote_dtypes_inexact(const std::vector<Value>& values) {
  const WeakDType to = result_type(values);
  return convert_all(values, to_inexact(to.dtype), to.weak);
}

std::vector<Value> promote_dtypes_numeric(const std::vector<Value>& values) {
  const WeakDType to = result_type(values);
  return convert_all(values, to.dtype == DType::kBool ? default_int_dtype(session().enable_x64) : to.dtype, to.weak);
}

Shape broadcast_shapes(const std::vector<Shape>& shapes) {
  std::size_t rank = 0;
  for (const Shape& shape : shapes) rank = std::max(rank, shape.size());
  Shape result(rank, 1);
  for (const Shape& shape : shapes) {
    const std::size_t lead = rank - shape.size();
    for (std::size_t d = 0; d < shape.size(); ++d) {
      int64_t& out = result[lead + d];
      if (shape[d] == out || shape[d] == 1) continue;
      if (out != 1) {
        std::string listed = "[";
        for (std::size_t i = 0; i < shapes.size(); ++i) listed += (i > 0 ? ", " : "") + shape_repr(shapes[i]);
        throw value_error("Incompatible shapes for broadcasting: shapes=" + listed + "]");
      }
      out = shape[d];
    }
  }
  return result;
}

std::vector<Value> promote_shapes(const std::string& name, const std::vector<Value>& values) {
  (void)name;  // named in rank-promotion warnings, which shardscope does not raise ("allow" is JAX's default)
  if (values.size() < 2) return values;
  std::set<std::size_t> ranks;
  std::set<std::size_t> nonscalar_ranks;
  std::vector<Shape> shapes;
  for (const Value& value : values) {
    ranks.insert(value.aval().rank());
    if (value.aval().rank() > 0) nonscalar_ranks.insert(value.aval().rank());
    shapes.push_back(shape_of(value));
  }
  if (ranks.size() == 1 || nonscalar_ranks.size() < 2) return values;
  const auto rank = static_cast<int64_t>(broadcast_shapes(shapes).size());
  std::vector<Value> out;
  for (const Value& value : values) out.push_back(lax::broadcast_to_rank(value, rank));
  return out;
}

namespace {

// jnp.broadcast_to's checks: ValueError naming both shapes when `x` cannot broadcast to `shape`.
void check_broadcast_shape(const Value& x, const Shape& shape) {
  const Shape& from = shape_of(x);
  if (shape.size() < from.size()) {
    throw value_error("Cannot broadcast to shape with fewer dimensions: arr_shape=" + shape_repr(from) +
                      " shape=" + shape_repr(shape));
  }
  const std::size_t lead = shape.size() - from.size();
  for (std::size_t d = 0; d < from.size(); ++d) {
    if (from[d] != 1 && from[d] != shape[lead + d]) {
      Aval wanted = Aval::of(shape, dtype_of(x));
      throw value_error("Incompatible types for broadcasting: input type=" + x.aval().str_short(false) +
                        " and requested type=" + wanted.str_short(false));
    }
  }
}

}  // namespace

Value broadcast_to(const Value& x, const Shape& shape) {
  const Shape& from = shape_of(x);
  if (from == shape) return x;
  check_broadcast_shape(x, shape);
  std::vector<int64_t> dims;
  for (std::size_t d = shape.size() - from.size(); d < shape.size(); ++d) dims.push_back(static_cast<int64_t>(d));
  return lax::broadcast_in_dim(x, shape, dims);
}

namespace {

using DimAxes = std::vector<std::vector<std::string>>;

// A value's Explicit sharding per dim, all dims unsharded when its type names none.
DimAxes typed_dim_axes(const Aval& aval) {
  return aval.dim_axes.size() == aval.rank() ? aval.dim_axes : DimAxes(aval.rank());
}

bool any_sharded(const DimAxes& dims) {
  return std::any_of(dims.begin(), dims.end(), [](const auto& axes) { return !axes.empty(); });
}

// JAX's lax.broadcast_shardings: when every operand's sharding is the trailing part of the highest-rank operand's,
// that one's sharding; otherwise, dim by dim, the sharding of the operands that are not size 1 there. nullopt when
// they disagree (the op's own sharding rule reports it).
std::optional<DimAxes> broadcast_shardings(const std::vector<Value>& values, const Shape& shape) {
  const auto widest = std::max_element(
      values.begin(), values.end(), [](const Value& a, const Value& b) { return a.aval().rank() < b.aval().rank(); });
  const DimAxes widest_axes = typed_dim_axes(widest->aval());
  const std::size_t rank = widest_axes.size();
  const bool rank_promotion = std::all_of(values.begin(), values.end(), [&](const Value& v) {
    const DimAxes own = typed_dim_axes(v.aval());
    return std::equal(own.begin(), own.end(), widest_axes.begin() + static_cast<std::ptrdiff_t>(rank - own.size()));
  });
  if (rank_promotion) return widest_axes;
  DimAxes out(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    std::optional<std::vector<std::string>> chosen;
    for (const Value& v : values) {
      const DimAxes own = typed_dim_axes(v.aval());
      const std::size_t lead = shape.size() - own.size();
      if (d < lead || v.aval().shape[d - lead] == 1) continue;
      if (chosen && *chosen != own[d - lead]) return std::nullopt;
      chosen = own[d - lead];
    }
    if (chosen) out[d] = *chosen;
  }
  return out;
}

}  // namespace

std::vector<Value> broadcast_arrays(const std::vector<Value>& values) {
  std::vector<Shape> shapes;
  for (const Value& value : values) shapes.push_back(shape_of(value));
  if (shapes.empty() || std::all_of(shapes.begin(), shapes.end(), [&](const Shape& s) { return s == shapes[0]; })) {
    return values;
  }
  const Shape shape = broadcast_shapes(shapes);
  // Under an Explicit mesh the broadcast operands are typed with the shared result sharding, as jnp's
  // broadcast_arrays passes lax.broadcast_shardings to broadcast_to (a scalar beside a sharded array takes its
  // sharding).
  const std::optional<DimAxes> sharding = broadcast_shardings(values, shape);
  const bool typed = sharding && any_sharded(*sharding) && !is_empty(get_abstract_mesh());
  std::vector<Value> out;
  for (const Value& value : values) {
    const Shape& from = shape_of(value);
    if (!typed || from == shape || typed_dim_axes(value.aval()) == *sharding) {
      out.push_back(broadcast_to(value, shape));
      continue;
    }
    check_broadcast_shape(value, shape);
    std::vector<int64_t> dims;
    for (std::size_t d = shape.size() - from.size(); d < shape.size(); ++d) dims.push_back(static_cast<int64_t>(d));
    std::vector<SpecEntry> entries;
    for (const auto& axes : *sharding) entries.push_back(SpecEntry::of_axes(axes));
    out.push_back(bind1("broadcast_in_dim", {value},
                        {{"broadcast_dimensions", ParamValue::int_tuple(dims)},
                         {"shape", ParamValue::int_tuple(shape)},
                         {"sharding", PartitionSpec(std::move(entries))}}));
  }
  return out;
}

Value astype(const Value& x, DType dtype) { return lax::convert_element_type(x, dtype, false); }

}  // namespace shardscope::api::jnp
