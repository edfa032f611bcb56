// jnp shape manipulation: reshape, transposes, squeeze/expand_dims, concatenate/stack/split, tile/repeat.
#include <algorithm>
#include <numeric>

#include "api/numpy.h"
#include "api/session.h"
#include "base/error.h"

namespace shardscope::api::jnp {
namespace {

std::string tuple_text(const std::vector<int64_t>& values) {
  std::string text = "(";
  for (std::size_t i = 0; i < values.size(); ++i) text += (i > 0 ? ", " : "") + std::to_string(values[i]);
  return text + (values.size() == 1 ? ",)" : ")");
}

}  // namespace

Value reshape(const Value& x, const std::vector<int64_t>& shape) {
  const int64_t size = product(shape_of(x));
  Shape resolved(shape.begin(), shape.end());
  const auto unknown = std::count(shape.begin(), shape.end(), int64_t{-1});
  if (unknown > 1) {
    if (session().profile.has(JaxFeature::kReshapeUnknownAxisMessage)) {
      throw type_error("can only specify one unknown axis size with a `-1` value, got " + tuple_text(shape));
    }
    throw value_error("can only specify one unknown dimension");
  }
  if (unknown == 1) {
    int64_t known = 1;
    for (const int64_t d : shape) known *= d == -1 ? 1 : d;
    const auto at = static_cast<std::size_t>(std::find(shape.begin(), shape.end(), -1) - shape.begin());
    if (known == 0 || size % known != 0) {
      throw type_error("cannot reshape array of shape " + tuple_text(shape_of(x)) + " (size " + std::to_string(size) +
                       ") into shape " + tuple_text(shape) + " because the product of specified axis sizes (" +
                       std::to_string(known) + ") does not evenly divide " + std::to_string(size));
    }
    resolved[at] = size / known;
  }
  if (product(resolved) != size) {
    throw type_error("cannot reshape array of shape " + tuple_text(shape_of(x)) + " (size " + std::to_string(size) +
                     ") into shape " + tuple_text(shape) + " (size " + std::to_string(product(resolved)) + ")");
  }
  return lax::reshape(x, resolved);
}

Value ravel(const Value& x) { return lax::reshape(x, {product(shape_of(x))}); }

Value transpose(const Value& x, const std::optional<std::vector<int64_t>>& axes) {
  const int64_t rank = ndim_of(x);
  std::vector<int64_t> perm;
  if (axes) {
    for (const int64_t a : *axes) perm.push_back(canonicalize_axis(a, rank));
  } else {
    for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
  }
  return lax::transpose(x, perm);
}

Value swapaxes(const Value& x, int64_t axis1, int64_t axis2) {
  std::vector<int64_t> perm(static_cast<std::size_t>(ndim_of(x)));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[static_cast<std::size_t>(canonicalize_axis(axis1, ndim_of(x)))],
            perm[static_cast<std::size_t>(canonicalize_axis(axis2, ndim_of(x)))]);
  return lax::transpose(x, perm);
}

Value moveaxis(const Value& x, const std::vector<int64_t>& source, const std::vector<int64_t>& destination) {
  if (source.size() != destination.size()) {
    throw value_error("Inconsistent number of elements: " + std::to_string(source.size()) + " vs " +
                      std::to_string(destination.size()));
  }
  const int64_t rank = ndim_of(x);
  std::vector<std::pair<int64_t, int64_t>> moves;
  for (std::size_t i = 0; i < source.size(); ++i) {
    moves.emplace_back(canonicalize_axis(destination[i], rank), canonicalize_axis(source[i], rank));
  }
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::none_of(moves.begin(), moves.end(), [d](const auto& m) { return m.second == d; })) perm.push_back(d);
  }
  std::sort(moves.begin(), moves.end());
  for (const auto& [dest, src] : moves) perm.insert(perm.begin() + dest, src);
  return lax::transpose(x, perm);
}

Value expand_dims(const Value& x, const std::vector<int64_t>& axis) { return lax::expand_dims(x, axis); }

Value squeeze(const Value& x, const Axis& axis) {
  std::vector<int64_t> dims;
  if (!axis) {
    for (int64_t d = 0; d < ndim_of(x); ++d) {
      if (shape_of(x)[static_cast<std::size_t>(d)] == 1) dims.push_back(d);
    }
  } else {
    for (const int64_t a : *axis) {
      const int64_t d = canonicalize_axis(a, ndim_of(x));
      if (shape_of(x)[static_cast<std::size_t>(d)] != 1) {
        throw value_error("cannot select an axis to squeeze out which has size not equal to one, got shape=" +
                          tuple_text(shape_of(x)) + " and dimensions=" + tuple_text({d}));
      }
      dims.push_back(d);
    }
  }
  return lax::squeeze(x, dims);
}

Value concatenate(const std::vector<Value>& arrays, std::optional<int64_t> axis) {
  if (arrays.empty()) throw value_error("Need at least one array to concatenate.");
  if (!axis) {
    std::vector<Value> flat;
    for (const Value& a : arrays) flat.push_back(ravel(a));
    return concatenate(flat, 0);
  }
  if (ndim_of(arrays[0]) == 0) throw value_error("Zero-dimensional arrays cannot be concatenated.");
  const int64_t dim = canonicalize_axis(*axis, ndim_of(arrays[0]));
  std::vector<Value> promoted = promote_dtypes(arrays);
  if (promoted.size() == 1) return promoted[0];
  // JAX concatenates in groups of 16 operands to keep each equation small.
  constexpr std::size_t kGroup = 16;
  while (promoted.size() > 1) {
    std::vector<Value> next;
    for (std::size_t i = 0; i < promoted.size(); i += kGroup) {
      const auto end = std::min(promoted.size(), i + kGroup);
      next.push_back(lax::concatenate(
          {promoted.begin() + static_cast<std::ptrdiff_t>(i), promoted.begin() + static_cast<std::ptrdiff_t>(end)},
          dim));
    }
    promoted = std::move(next);
  }
  return promoted[0];
}

Value stack(const std::vector<Value>& arrays, int64_t axis, std::optional<DType> dtype) {
  if (arrays.empty()) throw value_error("Need at least one array to stack.");
  if (session().profile.has(JaxFeature::kStackPrimitives)) {
    // The primitive's shape rule checks the shapes (after promotion, as JAX orders it).
    std::vector<Value> converted;
    if (dtype) {
      for (const Value& a : arrays) converted.push_back(asarray(a, dtype));
    } else {
      converted = promote_dtypes(arrays);
    }
    return lax::stack(converted, axis);
  }
  const Shape& shape0 = shape_of(arrays[0]);
  const int64_t dim = canonicalize_axis(axis, ndim_of(arrays[0]) + 1);
  std::vector<Value> expanded;
  for (const Value& a : arrays) {
    if (shape_of(a) != shape0) throw value_error("All input arrays must have the same shape.");
    expanded.push_back(expand_dims(a, {dim}));
  }
  // jnp.concatenate(..., dtype=) converts each operand before concatenating.
  if (dtype) {
    for (Value& e : expanded) e = asarray(e, dtype);
  }
  return concatenate(expanded, dim);
}

Value stack_array(const Value& arrays, int64_t axis, std::optional<DType> dtype) {
  if (ndim_of(arrays) == 0) throw type_error("len() of unsized object");
  if (shape_of(arrays)[0] == 0) throw value_error("Need at least one array to stack.");
  const int64_t dim = canonicalize_axis(axis, ndim_of(arrays));
  const Value expanded = asarray(expand_dims(arrays, {dim + 1}), dtype);
  // jnp.concatenate of one array along `dim` (its _concatenate_array): a reshape that folds the leading dim
  // into dim `dim`, reading the dims in that order.
  const Shape& e = shape_of(expanded);
  const auto at = static_cast<std::size_t>(dim);
  Shape shape(e.begin() + 1, e.begin() + static_cast<std::ptrdiff_t>(at) + 1);
  shape.push_back(e[0] * e[at + 1]);
  shape.insert(shape.end(), e.begin() + static_cast<std::ptrdiff_t>(at) + 2, e.end());
  std::vector<int64_t> dimensions;
  for (int64_t d = 1; d <= dim; ++d) dimensions.push_back(d);
  dimensions.push_back(0);
  for (auto d = dim + 1; d < static_cast<int64_t>(e.size()); ++d) dimensions.push_back(d);
  const bool in_order = dim == 0;
  return api::bind1("reshape", {expanded},
                    {{"dimensions", in_order ? ParamValue(ParamValue::None{}) : ParamValue::int_tuple(dimensions)},
                     {"new_sizes", ParamValue::int_tuple(shape)},
                     {"sharding", ParamValue::None{}}});
}

std::vector<Value> unstack(const Value& x, int64_t axis) {
  if (session().profile.has(JaxFeature::kStackPrimitives)) return lax::unstack(x, axis);
  if (ndim_of(x) == 0) {
    throw value_error("Unstack requires arrays with rank > 0, however a scalar array was passed.");
  }
  // x.shape[axis] in Python: negative indices count from the end, others past it fail.
  const int64_t rank = ndim_of(x);
  if (axis < -rank || axis >= rank) throw Error("IndexError", "tuple index out of range");
  const int64_t dim = axis < 0 ? axis + rank : axis;
  const std::vector<int64_t> ones(static_cast<std::size_t>(shape_of(x)[static_cast<std::size_t>(dim)]), 1);
  std::vector<Value> out;
  for (const Value& piece : api::bind("split", {x}, {{"axis", dim}, {"sizes", ParamValue::int_tuple(ones)}})) {
    out.push_back(lax::squeeze(piece, {axis}));
  }
  return out;
}

std::vector<Value> split_at(const Value& x, const std::vector<int64_t>& indices, int64_t axis) {
  const int64_t dim = canonicalize_axis(axis, ndim_of(x));
  const int64_t size = shape_of(x)[static_cast<std::size_t>(dim)];
  std::vector<int64_t> sizes;
  int64_t previous = 0;
  for (const int64_t index : indices) {
    const int64_t at = std::clamp(index < 0 ? index + size : index, previous, size);
    sizes.push_back(at - previous);
    previous = at;
  }
  sizes.push_back(size - previous);
  return api::bind("split", {x}, {{"axis", dim}, {"sizes", ParamValue::int_tuple(sizes)}});
}

std::vector<Value> split(const Value& x, int64_t sections, int64_t axis) {
  const int64_t dim = canonicalize_axis(axis, ndim_of(x));
  const int64_t size = shape_of(x)[static_cast<std::size_t>(dim)];
  if (sections <= 0 || size % sections != 0) {
    if (sections > 0 && session().profile.has(JaxFeature::kSplitErrorNamesRest)) {
      throw value_error("array split does not result in an equal division: rest is " + std::to_string(size % sections));
    }
    throw value_error("array split does not result in an equal division");
  }
  std::vector<int64_t> indices;
  for (int64_t i = 1; i < sections; ++i) indices.push_back(i * (size / sections));
  return split_at(x, indices, dim);
}

Value tile(const Value& x, const std::vector<int64_t>& reps) {
  // Each axis of size s repeated r times: broadcast to (r, s) pairs, then merge them.
  const std::size_t rank = std::max(reps.size(), shape_of(x).size());
  std::vector<int64_t> padded(rank - reps.size(), 1);
  padded.insert(padded.end(), reps.begin(), reps.end());
  Shape shape(rank - shape_of(x).size(), 1);
  shape.insert(shape.end(), shape_of(x).begin(), shape_of(x).end());
  const Value a = lax::reshape(x, shape);
  Shape interleaved;
  std::vector<int64_t> dims;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    interleaved.push_back(padded[d]);
    interleaved.push_back(shape[d]);
    dims.push_back(static_cast<int64_t>(2 * d + 1));
  }
  Shape result;
  for (std::size_t d = 0; d < shape.size(); ++d) result.push_back(padded[d] * shape[d]);
  return lax::reshape(lax::broadcast_in_dim(a, interleaved, dims), result);
}

Value repeat(const Value& x, int64_t repeats, std::optional<int64_t> axis) {
  const Value a = axis ? x : ravel(x);
  const int64_t dim = canonicalize_axis(axis.value_or(0), ndim_of(a));
  Shape expanded = shape_of(a);
  expanded.insert(expanded.begin() + dim + 1, repeats);
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < ndim_of(a); ++d) dims.push_back(d <= dim ? d : d + 1);
  Shape result = shape_of(a);
  result[static_cast<std::size_t>(dim)] *= repeats;
  return lax::reshape(lax::broadcast_in_dim(a, expanded, dims), result);
}

}  // namespace shardscope::api::jnp

namespace shardscope::api::jnp {

std::vector<Value> meshgrid(const std::vector<Value>& arrays, bool sparse, const std::string& indexing) {
  if (indexing != "xy" && indexing != "ij") {
    throw value_error("Valid values for indexing are 'xy' and 'ij', got " + indexing);
  }
  std::vector<Value> args = arrays;
  for (const Value& a : args) {
    if (ndim_of(a) != 1) {
      throw value_error("Arrays passed to meshgrid must be 1D, got array with shape " + tuple_text(shape_of(a)));
    }
  }
  // "xy" indexing swaps the first two axes (Cartesian), "ij" keeps matrix order.
  const bool swap = indexing == "xy" && args.size() >= 2;
  if (swap) std::swap(args[0], args[1]);
  Shape shape;
  for (const Value& a : args) shape.push_back(sparse ? 1 : shape_of(a)[0]);
  std::vector<Value> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    Shape target = shape;
    target[i] = shape_of(args[i])[0];
    out.push_back(lax::broadcast_in_dim(args[i], target, {static_cast<int64_t>(i)}));
  }
  if (swap) std::swap(out[0], out[1]);
  return out;
}

}  // namespace shardscope::api::jnp
