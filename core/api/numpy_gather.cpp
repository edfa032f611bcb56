// x[idx] with integer arrays and x.at[idx].op(y): indexing._index_to_gather and scatter._scatter_update, the
// gather/scatter that JAX's indexing lowers to; jnp.take and take_along_axis.
#include <algorithm>
#include <limits>
#include <numeric>

#include "api/numpy.h"
#include "api/session.h"
#include "base/error.h"
#include "explicit/mesh_context.h"
#include "ops/structural.h"

namespace shardscope::api::jnp {
namespace {

bool is_unsigned(DType dtype) {
  return dtype == DType::kUInt8 || dtype == DType::kUInt16 || dtype == DType::kUInt32 || dtype == DType::kUInt64;
}

bool is_array(const IndexItem& item) { return item.kind == IndexItem::Kind::kArray; }
bool is_scalar_index(const IndexItem& item) {
  return item.kind == IndexItem::Kind::kInt || (is_array(item) && ndim_of(*item.array) == 0);
}

// NDIndexer.expand_ellipses: the ellipsis (or the missing trailing dims) as full slices.
std::vector<IndexItem> expand_ellipses(const std::vector<IndexItem>& index, int64_t rank) {
  int64_t consuming = 0;
  int64_t ellipses = 0;
  for (const IndexItem& item : index) {
    if (item.kind != IndexItem::Kind::kNewAxis && item.kind != IndexItem::Kind::kEllipsis) ++consuming;
    if (item.kind == IndexItem::Kind::kEllipsis) ++ellipses;
  }
  if (ellipses > 1) throw Error("IndexError", "an index can only have a single ellipsis ('...')");
  if (consuming > rank) {
    throw Error("IndexError", "Too many indices: array is " + std::to_string(rank) + "-dimensional, but " +
                                  std::to_string(consuming) + " were indexed");
  }
  std::vector<IndexItem> expanded;
  bool filled = false;
  for (const IndexItem& item : index) {
    if (item.kind == IndexItem::Kind::kEllipsis) {
      for (int64_t i = 0; i < rank - consuming; ++i) expanded.push_back(IndexItem::all());
      filled = true;
    } else {
      expanded.push_back(item);
    }
  }
  if (!filled) {
    for (int64_t i = 0; i < rank - consuming; ++i) expanded.push_back(IndexItem::all());
  }
  return expanded;
}

// Python's slice.indices(size), as (start, step, size of the slice).
struct CanonicalSlice {
  int64_t start, step, size;
};

CanonicalSlice canonicalize_slice(const IndexItem& item, int64_t size) {
  const int64_t step = item.step.value_or(1);
  if (step == 0) throw value_error("slice step cannot be zero");
  const auto clamp = [&](std::optional<int64_t> value, int64_t fallback) {
    if (!value) return fallback;
    int64_t v = *value;
    if (v < 0) {
      v += size;
      if (v < 0) v = step < 0 ? -1 : 0;
    } else if (v >= size) {
      v = step < 0 ? size - 1 : size;
    }
    return v;
  };
  const int64_t start = clamp(item.start, step < 0 ? size - 1 : 0);
  const int64_t stop = clamp(item.stop, step < 0 ? -1 : size);
  int64_t length = 0;
  if (step > 0 && stop > start) length = (stop - start + step - 1) / step;
  if (step < 0 && start > stop) length = (start - stop + (-step) - 1) / (-step);
  return {start, step, length};
}

// NDIndexer.normalize_indices for an array index: negative entries count from the end (unsigned ones cannot be).
Value normalize_index(const Value& index, int64_t axis_size) {
  if (is_unsigned(dtype_of(index))) return index;
  const Value size = typed_scalar(static_cast<double>(axis_size), dtype_of(index));
  // Python evaluates the comparison before the sum: the equations come in that order.
  const Value negative = less(index, py_int(0));
  const Value wrapped = lax::add(index, size);
  return lax::select(negative, wrapped, index);
}

struct GatherIndexer {
  Shape slice_shape;
  std::vector<int64_t> gather_slice_shape;
  std::optional<Value> gather_indices;  // nullopt: no indices (JAX's empty np.zeros((0,)))
  GatherDimensionNumbers dnums;
  bool unique_indices = true;
  bool indices_are_sorted = true;
  std::vector<int64_t> reversed_y_dims;
  std::vector<int64_t> newaxis_dims;
  // The slice's Explicit sharding per dim (x's for sliced dims, the index arrays' for advanced ones).
  std::vector<std::vector<std::string>> slice_sharding;
};

std::vector<std::vector<std::string>> dim_axes_of(const Value& v) {
  const Aval& aval = v.aval();
  return aval.dim_axes.size() == aval.rank() ? aval.dim_axes : std::vector<std::vector<std::string>>(aval.rank());
}

// indexing._index_to_gather.
GatherIndexer index_to_gather(const Value& x, const std::vector<IndexItem>& raw_index, bool normalize) {
  const Shape& x_shape = shape_of(x);
  const std::vector<std::vector<std::string>> x_spec = dim_axes_of(x);
  const auto rank = static_cast<int64_t>(x_shape.size());
  for (const IndexItem& item : raw_index) {
    if (is_array(item) && !is_integral(dtype_of(*item.array))) {
      throw type_error("Indexer must have integer or boolean type, got indexer with type " +
                       std::string(dtype_name(dtype_of(*item.array))));
    }
  }
  // Positions of the advanced (integer and array) indices before the ellipsis is expanded, as JAX computes them.
  std::vector<std::size_t> advanced_positions;
  for (std::size_t i = 0; i < raw_index.size(); ++i) {
    if (raw_index[i].kind == IndexItem::Kind::kInt || is_array(raw_index[i])) advanced_positions.push_back(i);
  }
  bool contiguous = true;
  for (std::size_t i = 1; i < advanced_positions.size(); ++i) {
    contiguous = contiguous && advanced_positions[i] == advanced_positions[i - 1] + 1;
  }
  const std::vector<IndexItem> index = expand_ellipses(raw_index, rank);
  const bool advanced = std::any_of(index.begin(), index.end(),
                                    [](const IndexItem& item) { return is_array(item) && ndim_of(*item.array) > 0; });
  // The advanced indices as arrays (normalized), their positions in `index` and the x axes they consume.
  std::vector<Value> advanced_indexes;
  std::vector<std::size_t> idx_advanced_axes;
  std::vector<int64_t> x_advanced_axes;
  {
    int64_t x_axis = 0;
    for (std::size_t i = 0; i < index.size(); ++i) {
      const IndexItem& item = index[i];
      if (item.kind == IndexItem::Kind::kNewAxis) continue;
      if (advanced && (item.kind == IndexItem::Kind::kInt || is_array(item))) {
        const int64_t size = x_shape[static_cast<std::size_t>(x_axis)];
        Value value = is_array(item) ? *item.array : asarray(py_int(item.index));
        if (normalize) {
          if (is_array(item)) {
            value = normalize_index(value, size);
          } else if (item.index < 0) {
            value = asarray(py_int(item.index + size));
          }
        }
        advanced_indexes.push_back(value);
        idx_advanced_axes.push_back(i);
        x_advanced_axes.push_back(x_axis);
      }
      ++x_axis;
    }
  }
  const DType index_dtype = DType::kInt32;
  GatherIndexer out;
  out.unique_indices = out.indices_are_sorted = advanced_indexes.empty();
  std::vector<std::pair<Value, int64_t>> gather_indices;
  Shape gather_indices_shape;
  int64_t x_axis = 0;
  int64_t y_axis = 0;
  int64_t collapsed_y_axis = 0;
  for (std::size_t idx_pos = 0; idx_pos < index.size(); ++idx_pos) {
    const IndexItem& item = index[idx_pos];
    if (!advanced_indexes.empty() &&
        ((contiguous && idx_pos == idx_advanced_axes[0]) || (!contiguous && idx_pos == 0))) {
      const std::vector<Value> arrays = broadcast_arrays(advanced_indexes);
      const Shape shape = shape_of(arrays[0]);
      const auto start_dim = static_cast<int64_t>(gather_indices_shape.size());
      for (const Value& a : arrays) gather_indices.emplace_back(lax::convert_element_type(a, index_dtype), start_dim);
      gather_indices_shape.insert(gather_indices_shape.end(), shape.begin(), shape.end());
      out.dnums.start_index_map.insert(out.dnums.start_index_map.end(), x_advanced_axes.begin(), x_advanced_axes.end());
      out.dnums.collapsed_slice_dims.insert(out.dnums.collapsed_slice_dims.end(), x_advanced_axes.begin(),
                                            x_advanced_axes.end());
      out.slice_shape.insert(out.slice_shape.end(), shape.begin(), shape.end());
      const auto arrays_spec = dim_axes_of(arrays[0]);
      out.slice_sharding.insert(out.slice_sharding.end(), arrays_spec.begin(), arrays_spec.end());
      y_axis += static_cast<int64_t>(shape.size());
      collapsed_y_axis += static_cast<int64_t>(shape.size());
    }
    if (std::find(idx_advanced_axes.begin(), idx_advanced_axes.end(), idx_pos) != idx_advanced_axes.end()) {
      ++x_axis;
      out.gather_slice_shape.push_back(1);
      continue;
    }
    if (is_scalar_index(item)) {
      const int64_t size = x_shape[static_cast<std::size_t>(x_axis)];
      if (size == 0) {
        throw Error("IndexError", "index is out of bounds for axis " + std::to_string(x_axis) + " with size 0");
      }
      Value value = is_array(item) ? *item.array : py_int(item.index);
      if (normalize) {
        if (is_array(item)) {
          value = normalize_index(value, size);
        } else if (item.index < 0) {
          value = py_int(item.index + size);
        }
      }
      gather_indices.emplace_back(lax::convert_element_type(value, index_dtype),
                                  static_cast<int64_t>(gather_indices_shape.size()));
      out.dnums.collapsed_slice_dims.push_back(x_axis);
      out.gather_slice_shape.push_back(1);
      out.dnums.start_index_map.push_back(x_axis);
      ++x_axis;
    } else if (item.kind == IndexItem::Kind::kNewAxis) {
      out.slice_shape.push_back(1);
      out.slice_sharding.emplace_back();
      out.newaxis_dims.push_back(y_axis);
      ++y_axis;
    } else {
      const int64_t size = x_shape[static_cast<std::size_t>(x_axis)];
      const CanonicalSlice s = canonicalize_slice(item, size);
      out.slice_shape.push_back(s.size);
      out.slice_sharding.push_back(x_spec[static_cast<std::size_t>(x_axis)]);
      if (s.step == 1) {
        if (s.size != size) {
          gather_indices.emplace_back(lax::convert_element_type(py_int(s.start), index_dtype),
                                      static_cast<int64_t>(gather_indices_shape.size()));
          out.dnums.start_index_map.push_back(x_axis);
        }
        out.gather_slice_shape.push_back(s.size);
        out.dnums.offset_dims.push_back(collapsed_y_axis);
      } else {
        Value indices =
            lax::add(typed_scalar(static_cast<double>(s.start), index_dtype),
                     lax::mul(typed_scalar(static_cast<double>(s.step), index_dtype), lax::iota(index_dtype, s.size)));
        if (s.step < 0) {
          out.reversed_y_dims.push_back(collapsed_y_axis);
          indices = lax::rev(indices, {0});
        }
        out.gather_slice_shape.push_back(1);
        gather_indices.emplace_back(indices, static_cast<int64_t>(gather_indices_shape.size()));
        out.dnums.start_index_map.push_back(x_axis);
        gather_indices_shape.push_back(s.size);
        out.dnums.collapsed_slice_dims.push_back(x_axis);
      }
      ++collapsed_y_axis;
      ++y_axis;
      ++x_axis;
    }
  }
  if (gather_indices.size() == 1) {
    const Value& g = gather_indices[0].first;
    out.gather_indices = lax::expand_dims(g, {ndim_of(g)});
  } else if (gather_indices.size() > 1) {
    const auto last_dim = static_cast<int64_t>(gather_indices_shape.size());
    gather_indices_shape.push_back(1);
    std::vector<Value> pieces;
    for (const auto& [g, start] : gather_indices) {
      std::vector<int64_t> dims(static_cast<std::size_t>(ndim_of(g)));
      std::iota(dims.begin(), dims.end(), start);
      pieces.push_back(lax::broadcast_in_dim(g, gather_indices_shape, dims));
    }
    out.gather_indices = lax::concatenate(pieces, last_dim);
  }
  std::sort(out.dnums.collapsed_slice_dims.begin(), out.dnums.collapsed_slice_dims.end());
  return out;
}

// lax.gather's fill_value param: for FILL_OR_DROP the given value or the dtype's default (NaN, the integer
// minimum, the unsigned maximum, True); None in the other modes.
ParamValue gather_fill_param(GatherMode mode, const std::optional<double>& fill_value, DType dtype) {
  if (mode != GatherMode::kFillOrDrop) return ParamValue::None{};
  if (dtype == DType::kBool) return fill_value ? ParamValue(*fill_value != 0) : ParamValue(true);
  if (is_integral(dtype)) {
    if (fill_value) return ParamValue(static_cast<int64_t>(*fill_value));
    switch (dtype) {
      case DType::kInt8: return ParamValue(int64_t{-128});
      case DType::kInt16: return ParamValue(int64_t{-32768});
      case DType::kInt32: return ParamValue(int64_t{-2147483647 - 1});
      case DType::kUInt8: return ParamValue(int64_t{255});
      case DType::kUInt16: return ParamValue(int64_t{65535});
      case DType::kUInt32: return ParamValue(int64_t{4294967295});
      default: return ParamValue(std::numeric_limits<int64_t>::min());
    }
  }
  return ParamValue(fill_value.value_or(std::numeric_limits<double>::quiet_NaN()));
}

Value bind_gather(const Value& operand, const Value& indices, const GatherDimensionNumbers& dnums,
                  const std::vector<int64_t>& slice_sizes, const IndexOptions& options, bool unique, bool sorted,
                  GatherMode default_mode) {
  const GatherMode mode = options.mode ? parse_gather_mode(ParamValue(*options.mode)) : default_mode;
  return bind1("gather", {operand, indices},
               {{"dimension_numbers", gather_dimension_numbers_param(dnums)},
                {"fill_value", gather_fill_param(mode, options.fill_value, dtype_of(operand))},
                {"indices_are_sorted", sorted},
                {"mode", gather_mode_param(mode)},
                {"slice_sizes", ParamValue::int_tuple(slice_sizes)},
                {"unique_indices", unique}});
}

// jnp.broadcast_to(y, slice_shape, out_sharding=slice_sharding): under an Explicit mesh the updates are typed
// with the slice's sharding.
Value broadcast_to_slice(const Value& y, const Shape& shape, const std::vector<std::vector<std::string>>& sharding) {
  const bool typed = std::any_of(sharding.begin(), sharding.end(), [](const auto& axes) { return !axes.empty(); }) &&
                     !is_empty(get_abstract_mesh());
  if (!typed || dim_axes_of(y) == sharding) return broadcast_to(y, shape);
  const Shape& from = shape_of(y);
  if (from.size() > shape.size()) return broadcast_to(y, shape);  // broadcast_to raises JAX's error
  std::vector<int64_t> dims;
  for (std::size_t d = shape.size() - from.size(); d < shape.size(); ++d) dims.push_back(static_cast<int64_t>(d));
  std::vector<SpecEntry> entries;
  for (const auto& axes : sharding) entries.push_back(SpecEntry::of_axes(axes));
  return bind1("broadcast_in_dim", {y},
               {{"broadcast_dimensions", ParamValue::int_tuple(dims)},
                {"shape", ParamValue::int_tuple(shape)},
                {"sharding", PartitionSpec(std::move(entries))}});
}

bool has_array(const std::vector<IndexItem>& index) { return std::any_of(index.begin(), index.end(), is_array); }

}  // namespace

IndexItem IndexItem::of_array(const Value& value) {
  IndexItem item = all();
  item.kind = Kind::kArray;
  item.array = std::make_shared<const Value>(value);
  return item;
}

Value gather_index(const Value& x, const std::vector<IndexItem>& index, const IndexOptions& options) {
  const GatherIndexer indexer = index_to_gather(x, index, options.normalize_indices);
  if (product(indexer.slice_shape) == 0) return lax::full(indexer.slice_shape, typed_scalar(0, dtype_of(x)));
  Value y = x;
  if (indexer.gather_indices && product(shape_of(*indexer.gather_indices)) != 0) {
    y = bind_gather(y, *indexer.gather_indices, indexer.dnums, indexer.gather_slice_shape, options,
                    options.unique_indices || indexer.unique_indices,
                    options.indices_are_sorted || indexer.indices_are_sorted, GatherMode::kPromiseInBounds);
  }
  if (!indexer.reversed_y_dims.empty()) y = lax::rev(y, indexer.reversed_y_dims);
  return indexer.newaxis_dims.empty() ? y : lax::expand_dims(y, indexer.newaxis_dims);
}

namespace {

// NDIndexer.to_dynamic_slice's domain: scalar array indices, ints, None, ellipsis and unit-step slices.
bool dynamic_slice_applies(const std::vector<IndexItem>& index, const IndexOptions& options) {
  if (options.mode && *options.mode != "promise_in_bounds" && *options.mode != "clip" &&
      *options.mode != "GatherScatterMode.PROMISE_IN_BOUNDS" && *options.mode != "GatherScatterMode.CLIP") {
    return false;
  }
  return std::all_of(index.begin(), index.end(), [](const IndexItem& item) {
    if (is_array(item)) return ndim_of(*item.array) == 0 && is_integral(dtype_of(*item.array));
    if (item.kind == IndexItem::Kind::kSlice) return !item.step || *item.step == 1 || *item.step == -1;
    return true;
  });
}

// indexing._dynamic_slice: one dynamic_slice (start indices normalized as slicing._dynamic_slice_indices does),
// then rev, squeeze and expand_dims.
Value dynamic_slice_index(const Value& x, const std::vector<IndexItem>& raw_index, bool normalize) {
  const Shape& shape = shape_of(x);
  const std::vector<IndexItem> index = expand_ellipses(raw_index, ndim_of(x));
  std::vector<std::optional<Value>> arrays;  // per start: the array, or nullopt for a static start
  std::vector<int64_t> statics;
  std::vector<int64_t> sizes, rev_axes, squeeze_axes, newaxis_dims;
  int64_t axis = 0;
  for (const IndexItem& item : index) {
    if (item.kind == IndexItem::Kind::kNewAxis) {
      newaxis_dims.push_back(static_cast<int64_t>(sizes.size() - squeeze_axes.size() + newaxis_dims.size()));
      continue;
    }
    const int64_t size = shape[static_cast<std::size_t>(axis)];
    if (item.kind == IndexItem::Kind::kSlice) {
      const CanonicalSlice s = canonicalize_slice(item, size);
      const int64_t stop = s.start + s.step * s.size;
      if (s.step < 0) {
        const int64_t new_start = stop + 1;
        arrays.emplace_back();
        statics.push_back(new_start);
        sizes.push_back(std::max<int64_t>(0, s.start + 1 - new_start));
        rev_axes.push_back(axis);
      } else {
        arrays.emplace_back();
        statics.push_back(s.start);
        sizes.push_back(s.size);
      }
    } else {
      if (size == 0) {
        throw Error("IndexError", "index is out of bounds for axis " + std::to_string(axis) + " with size 0");
      }
      if (is_array(item)) {
        arrays.emplace_back(*item.array);
        statics.push_back(0);
      } else {
        arrays.emplace_back();
        statics.push_back(item.index);
      }
      sizes.push_back(1);
      squeeze_axes.push_back(axis);
    }
    ++axis;
  }
  std::vector<Value> starts;
  for (std::size_t d = 0; d < arrays.size(); ++d) {
    const int64_t size = shape[d];
    if (!arrays[d]) {
      const int64_t start = normalize && statics[d] < 0 ? statics[d] + size : statics[d];
      starts.push_back(typed_scalar(static_cast<double>(start), DType::kInt32));
      continue;
    }
    Value start = arrays.size() > 1 ? lax::convert_element_type(*arrays[d], DType::kInt32) : *arrays[d];
    if (normalize) start = normalize_index(start, size);
    starts.push_back(start);
  }
  Value result = lax::dynamic_slice(x, starts, sizes);
  if (!rev_axes.empty()) result = lax::rev(result, rev_axes);
  if (!squeeze_axes.empty()) result = lax::squeeze(result, squeeze_axes);
  if (!newaxis_dims.empty()) result = lax::expand_dims(result, newaxis_dims);
  return result;
}

}  // namespace

namespace {

// A static integer index outside its dim cannot be a slice (rewriting_take's _is_valid_integer_index_for_slice):
// JAX gathers it as an index array instead, so `mode='fill'` fills where a slice would clamp.
std::optional<std::vector<IndexItem>> out_of_bounds_ints_as_arrays(const Value& x,
                                                                   const std::vector<IndexItem>& index) {
  const Shape& shape = shape_of(x);
  if (index.size() > shape.size()) return std::nullopt;
  bool any = false;
  std::vector<IndexItem> rewritten = index;
  for (std::size_t d = 0; d < index.size(); ++d) {
    const IndexItem& item = index[d];
    if (item.kind != IndexItem::Kind::kInt && item.kind != IndexItem::Kind::kSlice) return std::nullopt;
    if (item.kind == IndexItem::Kind::kInt && (item.index < -shape[d] || item.index >= shape[d])) {
      rewritten[d] =
          IndexItem::of_array(asarray(make_buffer<int32_t>(DType::kInt32, {}, {static_cast<int32_t>(item.index)})));
      any = true;
    }
  }
  return any ? std::optional(rewritten) : std::nullopt;
}

}  // namespace

Value getitem_general(const Value& x, const std::vector<IndexItem>& index, const IndexOptions& options) {
  // rewriting_take's strategies in order: a static slice, a dynamic slice for scalar array indices, a gather.
  if (options.mode && !has_array(index)) {
    if (const auto gathered = out_of_bounds_ints_as_arrays(x, index)) return gather_index(x, *gathered, options);
  }
  if (!has_array(index)) return getitem(x, index);
  if (dynamic_slice_applies(index, options)) return dynamic_slice_index(x, index, options.normalize_indices);
  return gather_index(x, index, options);
}

Value scatter_update(const Value& x, const std::vector<IndexItem>& index, const Value& y_in, ScatterOp op,
                     const IndexOptions& options) {
  Value y = y_in;
  const GatherIndexer indexer = index_to_gather(x, index, options.normalize_indices);
  if (product(indexer.slice_shape) == 0) return x;
  const DType dtype = dtype_of(x);
  const bool weak_type = x.aval().weak_type;
  std::vector<Value> promoted = promote_dtypes({x, y});
  Value operand = promoted[0];
  y = broadcast_to_slice(promoted[1], indexer.slice_shape, indexer.slice_sharding);
  if (!indexer.newaxis_dims.empty()) y = lax::squeeze(y, indexer.newaxis_dims);
  if (!indexer.reversed_y_dims.empty()) y = lax::rev(y, indexer.reversed_y_dims);
  const Value indices = indexer.gather_indices ? *indexer.gather_indices : zeros(Shape{0}, DType::kInt32);
  static const char* const kNames[] = {"scatter",     "scatter-add", "scatter-sub",
                                       "scatter-mul", "scatter-min", "scatter-max"};
  const GatherMode mode = options.mode ? parse_gather_mode(ParamValue(*options.mode)) : GatherMode::kFillOrDrop;
  const GatherDimensionNumbers& d = indexer.dnums;
  const ParamValue dnums =
      ParamValue::tuple({ParamValue::int_tuple(d.offset_dims), ParamValue::int_tuple(d.collapsed_slice_dims),
                         ParamValue::int_tuple(d.start_index_map), ParamValue::int_tuple(d.operand_batching_dims),
                         ParamValue::int_tuple(d.start_indices_batching_dims)});
  const Value out = bind1(kNames[static_cast<int>(op)], {operand, indices, y},
                          {{"dimension_numbers", dnums},
                           {"indices_are_sorted", indexer.indices_are_sorted || options.indices_are_sorted},
                           {"mode", gather_mode_param(mode)},
                           {"unique_indices", indexer.unique_indices || options.unique_indices},
                           {"update_consts", ParamValue::tuple({})},
                           {"update_jaxpr", ParamValue::None{}}});
  return lax::convert_element_type(out, dtype, weak_type);
}

namespace {

Value take_body(const Value& a_in, const Value& indices_in, std::optional<int64_t> axis, const IndexOptions& options) {
  Value a = a_in;
  Value indices = indices_in;
  int64_t axis_idx = 0;
  if (!axis) {
    a = ravel(a);
  } else {
    axis_idx = canonicalize_axis(*axis, ndim_of(a));
  }
  const int64_t axis_size = shape_of(a)[static_cast<std::size_t>(axis_idx)];
  GatherMode mode = GatherMode::kFillOrDrop;
  const std::string mode_name = options.mode.value_or("fill");
  if (mode_name == "fill") {
    const Value negative = less(indices, py_int(0));
    const Value wrapped = add(indices, py_int(axis_size));
    indices = where(negative, wrapped, indices);
  } else if (mode_name == "raise") {
    throw not_implemented_error("The 'raise' mode to jnp.take is not supported.");
  } else if (mode_name == "wrap") {
    indices = remainder(indices, typed_scalar(static_cast<double>(axis_size), dtype_of(indices)));
    mode = GatherMode::kPromiseInBounds;
  } else if (mode_name == "clip") {
    mode = GatherMode::kClip;
  } else {
    throw value_error("Invalid mode '" + mode_name + "' for np.take");
  }
  const auto index_dims = ndim_of(indices);
  std::vector<int64_t> slice_sizes = shape_of(a);
  if (axis_size == 0) {
    if (product(shape_of(indices)) != 0)
      throw Error("IndexError", "Cannot do a non-empty jnp.take() from an empty axis.");
    return a;
  }
  slice_sizes[static_cast<std::size_t>(axis_idx)] = 1;
  GatherDimensionNumbers dnums;
  for (int64_t i = 0; i < axis_idx; ++i) dnums.offset_dims.push_back(i);
  for (int64_t i = axis_idx + index_dims; i < ndim_of(a) + index_dims - 1; ++i) dnums.offset_dims.push_back(i);
  dnums.collapsed_slice_dims = {axis_idx};
  dnums.start_index_map = {axis_idx};
  IndexOptions gather_options = options;
  gather_options.mode = std::nullopt;
  return bind_gather(a, lax::expand_dims(indices, {index_dims}), dnums, slice_sizes, gather_options,
                     options.unique_indices, options.indices_are_sorted, mode);
}

Value take_along_axis_body(const Value& arr_in, const Value& indices_in, std::optional<int64_t> axis,
                           const IndexOptions& options) {
  Value a = arr_in;
  Value indices = indices_in;
  if (!axis) {
    if (ndim_of(indices) != 1) {
      throw value_error("when axis=None, `indices` must have a single dimension.");
    }
    a = ravel(a);
    axis = 0;
  }
  const int64_t rank = ndim_of(a);
  if (rank != ndim_of(indices)) {
    throw value_error("indices and arr must have the same number of dimensions; " + std::to_string(ndim_of(indices)) +
                      " vs. " + std::to_string(rank));
  }
  const int64_t axis_int = canonicalize_axis(*axis, rank);
  const Shape idx_shape = shape_of(indices);
  Shape arr_shape = shape_of(a);
  const int64_t axis_size = arr_shape[static_cast<std::size_t>(axis_int)];
  arr_shape[static_cast<std::size_t>(axis_int)] = 1;
  const Shape out_shape = broadcast_shapes({idx_shape, arr_shape});
  if (axis_size == 0) return lax::full(out_shape, typed_scalar(0, dtype_of(a)));
  const bool wrap_negative = options.mode.value_or("fill") != "promise_in_bounds";
  indices = lax::convert_element_type(indices, DType::kInt32);
  if (wrap_negative) indices = normalize_index(indices, axis_size);
  Shape gather_index_shape;
  for (int64_t i = 0; i < rank; ++i) {
    const auto u = static_cast<std::size_t>(i);
    if (i == axis_int || idx_shape[u] != 1) gather_index_shape.push_back(out_shape[u]);
  }
  gather_index_shape.push_back(1);
  const Value gather_indices = lax::reshape(indices, gather_index_shape);
  std::vector<int64_t> slice_sizes;
  GatherDimensionNumbers dnums;
  std::vector<int64_t> dims_to_squeeze;
  int64_t new_i = 0;
  int64_t j = 0;
  for (int64_t i = 0; i < rank; ++i) {
    const auto u = static_cast<std::size_t>(i);
    if (i == axis_int) {
      slice_sizes.push_back(1);
      dnums.start_index_map.push_back(new_i);
      dnums.collapsed_slice_dims.push_back(new_i);
      ++new_i;
      ++j;
    } else if (idx_shape[u] == 1) {
      dnums.offset_dims.push_back(i);
      slice_sizes.push_back(arr_shape[u]);
      ++new_i;
    } else if (arr_shape[u] == 1) {
      dims_to_squeeze.push_back(i);
      ++j;
    } else {
      slice_sizes.push_back(arr_shape[u] == 0 ? 0 : 1);
      dnums.operand_batching_dims.push_back(new_i);
      dnums.start_indices_batching_dims.push_back(j);
      ++new_i;
      ++j;
    }
  }
  if (!dims_to_squeeze.empty()) a = lax::squeeze(a, dims_to_squeeze);
  IndexOptions gather_options = options;
  gather_options.mode = std::nullopt;
  const GatherMode mode = options.mode ? parse_gather_mode(ParamValue(*options.mode)) : GatherMode::kFillOrDrop;
  return bind_gather(a, gather_indices, dnums, slice_sizes, gather_options, false, false, mode);
}

}  // namespace

// Both are jitted functions in JAX (jaxprs show a jit equation named after them).
Value take(const Value& a, const Value& indices, std::optional<int64_t> axis, const IndexOptions& options) {
  return jitted("_take", {a, indices}, [&](const std::vector<Value>& in) {
    return std::vector<Value>{take_body(in[0], in[1], axis, options)};
  })[0];
}

Value take_along_axis(const Value& a, const Value& indices, std::optional<int64_t> axis, const IndexOptions& options) {
  return jitted("take_along_axis", {a, indices}, [&](const std::vector<Value>& in) {
    return std::vector<Value>{take_along_axis_body(in[0], in[1], axis, options)};
  })[0];
}

}  // namespace shardscope::api::jnp
