// x[idx] for static indices: JAX's static-slice strategy (slice, rev, squeeze, then expand_dims for None).
#include <algorithm>

#include "api/numpy.h"
#include "api/session.h"
#include "base/error.h"

namespace shardscope::api::jnp {
namespace {

struct SliceBounds {
  int64_t start, stop, step;
};

// Python's slice.indices(size).
SliceBounds python_slice_indices(const IndexItem& item, int64_t size) {
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
  return {clamp(item.start, step < 0 ? size - 1 : 0), clamp(item.stop, step < 0 ? -1 : size), step};
}

}  // namespace

Value getitem(const Value& x, const std::vector<IndexItem>& index) {
  const Shape& shape = shape_of(x);
  const auto rank = static_cast<int64_t>(shape.size());
  int64_t consuming = 0;
  int64_t ellipses = 0;
  for (const IndexItem& item : index) {
    if (item.kind == IndexItem::Kind::kInt || item.kind == IndexItem::Kind::kSlice) ++consuming;
    if (item.kind == IndexItem::Kind::kEllipsis) ++ellipses;
  }
  if (ellipses > 1) throw Error("IndexError", "an index can only have a single ellipsis ('...')");
  if (consuming > rank) {
    if (session().profile.has(JaxFeature::kIndexErrorArrayIsNDimensional)) {
      throw Error("IndexError", "Too many indices: array is " + std::to_string(rank) + "-dimensional, but " +
                                    std::to_string(consuming) + " were indexed");
    }
    throw Error("IndexError", "Too many indices: " + std::to_string(rank) + "-dimensional array indexed with " +
                                  std::to_string(consuming) +
                                  (consuming == 1 ? " regular index." : " regular indices."));
  }
  // Expand the ellipsis (or a missing one at the end) into full slices.
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

  std::vector<int64_t> start, limit, strides, rev_axes, squeeze_axes, newaxis_dims;
  int64_t axis = 0;
  for (const IndexItem& item : expanded) {
    if (item.kind == IndexItem::Kind::kNewAxis) {
      newaxis_dims.push_back(static_cast<int64_t>(start.size() - squeeze_axes.size() + newaxis_dims.size()));
      continue;
    }
    const int64_t size = shape[static_cast<std::size_t>(axis)];
    if (item.kind == IndexItem::Kind::kInt) {
      if (size == 0) {
        throw Error("IndexError", "index is out of bounds for axis " + std::to_string(axis) + " with size 0");
      }
      // JAX checks static indices only under jax_check_static_indices (off by default): an index out of
      // bounds becomes a dynamic_slice, which clamps it into the axis.
      const int64_t at = std::clamp(item.index < 0 ? item.index + size : item.index, int64_t{0}, size - 1);
      start.push_back(at);
      limit.push_back(at + 1);
      strides.push_back(1);
      squeeze_axes.push_back(axis);
    } else {
      const SliceBounds bounds = python_slice_indices(item, size);
      if (bounds.step < 0) {
        const int64_t stride = -bounds.step;
        const int64_t new_start = std::min(size, bounds.stop + 1 + (bounds.start - bounds.stop - 1) % stride);
        start.push_back(new_start);
        limit.push_back(std::max(new_start, bounds.start + 1));
        strides.push_back(stride);
        rev_axes.push_back(axis);
      } else {
        start.push_back(bounds.start);
        limit.push_back(std::max(bounds.start, bounds.stop));
        strides.push_back(bounds.step);
      }
    }
    ++axis;
  }
  const bool unit_strides = std::all_of(strides.begin(), strides.end(), [](int64_t s) { return s == 1; });
  bool trivial = unit_strides && start.size() == shape.size();
  for (std::size_t d = 0; trivial && d < shape.size(); ++d) trivial = start[d] == 0 && limit[d] == shape[d];
  Value result = x;
  if (!trivial) {
    result = lax::slice(x, start, limit, unit_strides ? std::nullopt : std::optional<std::vector<int64_t>>(strides));
  }
  if (!rev_axes.empty()) result = lax::rev(result, rev_axes);
  if (!squeeze_axes.empty()) result = lax::squeeze(result, squeeze_axes);
  if (!newaxis_dims.empty()) result = lax::expand_dims(result, newaxis_dims);
  return result;
}

}  // namespace shardscope::api::jnp
