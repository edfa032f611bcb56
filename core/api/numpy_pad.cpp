// jnp.pad (constant, edge, wrap, reflect, symmetric), jnp.roll and jnp.array_split: slices and concatenations
// along one axis at a time, in the order JAX's implementations emit them.
#include <algorithm>

#include "api/numpy.h"
#include "base/error.h"
#include "base/python_format.h"

namespace shardscope::api::jnp {
namespace {

// lax.slice_in_dim: [start, stop) along `axis`, everything else whole.
Value slice_in_dim(const Value& x, int64_t start, int64_t stop, int64_t axis) {
  const Shape& shape = shape_of(x);
  std::vector<int64_t> starts(shape.size(), 0);
  std::vector<int64_t> limits(shape.begin(), shape.end());
  starts[static_cast<std::size_t>(axis)] = start;
  limits[static_cast<std::size_t>(axis)] = stop;
  return lax::slice(x, starts, limits);
}

void check_no_padding(const PadWidth& width, const std::string& mode) {
  if (width.first > 0 || width.second > 0) {
    throw value_error("Cannot apply '" + mode + "' padding to empty axis");
  }
}

Value pad_constant(Value x, const std::vector<PadWidth>& widths, const Value& constant) {
  const Value fill = lax::convert_element_type(constant, dtype_of(x), x.aval().weak_type);
  // A scalar constant pads every axis at once with lax.pad, as JAX does; the partitioner keeps the operand's
  // sharding on a padded dim whose new size still divides.
  if (shape_of(fill).empty()) {
    std::vector<std::array<int64_t, 3>> config;
    config.reserve(widths.size());
    for (const PadWidth& width : widths) config.push_back({width.first, width.second, 0});
    return lax::pad(x, fill, config);
  }
  for (std::size_t i = 0; i < widths.size(); ++i) {
    const auto axis = static_cast<int64_t>(i);
    std::vector<Value> parts;
    const auto block = [&](int64_t width) {
      Shape shape = shape_of(x);
      shape[i] = width;
      return lax::full(shape, fill);
    };
    if (widths[i].first > 0) parts.push_back(block(widths[i].first));
    parts.push_back(x);
    if (widths[i].second > 0) parts.push_back(block(widths[i].second));
    if (parts.size() > 1) x = lax::concatenate(parts, axis);
  }
  return x;
}

Value pad_wrap(Value x, const std::vector<PadWidth>& widths) {
  for (std::size_t i = 0; i < widths.size(); ++i) {
    const auto axis = static_cast<int64_t>(i);
    const int64_t size = shape_of(x)[i];
    if (size == 0) {
      check_no_padding(widths[i], "wrap");
      continue;
    }
    const int64_t left_repeats = widths[i].first / size;
    const int64_t left_remainder = widths[i].first % size;
    const int64_t right_repeats = widths[i].second / size;
    const int64_t right_remainder = widths[i].second % size;
    std::vector<Value> parts;
    if (left_remainder > 0) parts.push_back(slice_in_dim(x, size - left_remainder, size, axis));
    for (int64_t r = 0; r < left_repeats + right_repeats + 1; ++r) parts.push_back(x);
    if (right_remainder > 0) parts.push_back(slice_in_dim(x, 0, right_remainder, axis));
    x = lax::concatenate(parts, axis);
  }
  return x;
}

Value pad_edge(Value x, const std::vector<PadWidth>& widths) {
  for (std::size_t i = 0; i < widths.size(); ++i) {
    const auto axis = static_cast<int64_t>(i);
    const int64_t n = shape_of(x)[i];
    if (n == 0) {
      check_no_padding(widths[i], "edge");
      continue;
    }
    const Value before = repeat(slice_in_dim(x, 0, 1, axis), widths[i].first, axis);
    const Value after = repeat(slice_in_dim(x, n - 1, n, axis), widths[i].second, axis);
    x = lax::concatenate({before, x, after}, axis);
  }
  return x;
}

// Mirror images of the array's ends, repeated while the padding is wider than the axis ("reflect" skips
// the edge element itself, "symmetric" repeats it).
Value pad_mirror(Value x, const std::vector<PadWidth>& widths, const std::string& mode) {
  for (std::size_t i = 0; i < widths.size(); ++i) {
    const auto axis = static_cast<int64_t>(i);
    const int64_t axis_size = shape_of(x)[i];
    if (axis_size == 0) {
      check_no_padding(widths[i], mode);
      continue;
    }
    const int64_t offset = mode == "reflect" && axis_size > 1 ? 1 : 0;
    for (const bool before : {true, false}) {
      int64_t padding = before ? widths[i].first : widths[i].second;
      while (padding > 0) {
        const int64_t current = std::min(padding, axis_size - offset);
        padding -= current;
        const int64_t n = shape_of(x)[i];
        Value piece =
            before ? slice_in_dim(x, offset, offset + current, axis)
                   : slice_in_dim(x, n - (current + offset), mode == "symmetric" || axis_size == 1 ? n : n - 1, axis);
        piece = lax::rev(piece, {axis});
        x = before ? lax::concatenate({piece, x}, axis) : lax::concatenate({x, piece}, axis);
      }
    }
  }
  return x;
}

}  // namespace

std::vector<PadWidth> broadcast_pad_width(const std::vector<int64_t>& values, const Shape& given_shape, int64_t rank) {
  const auto pairs = [&](int64_t before, int64_t after) {
    return std::vector<PadWidth>(static_cast<std::size_t>(rank), {before, after});
  };
  std::vector<PadWidth> widths;
  if (given_shape == Shape{rank, 2}) {
    for (std::size_t i = 0; i < static_cast<std::size_t>(rank); ++i)
      widths.emplace_back(values[2 * i], values[2 * i + 1]);
  } else if (given_shape == Shape{1, 2} || given_shape == Shape{2}) {
    widths = pairs(values[0], values[1]);
  } else if (given_shape == Shape{1} || given_shape == Shape{1, 1} || given_shape.empty()) {
    widths = pairs(values[0], values[0]);
  } else {
    std::string text = "(";
    for (std::size_t i = 0; i < given_shape.size(); ++i) text += (i ? ", " : "") + std::to_string(given_shape[i]);
    throw value_error("jnp.pad: pad_width with shape " + text + (given_shape.size() == 1 ? ",)" : ")") +
                      " cannot be broadcast to (" + std::to_string(rank) + ", 2)");
  }
  for (const PadWidth& w : widths) {
    if (w.first < 0 || w.second < 0) throw value_error("index can't contain negative values");
  }
  return widths;
}

Value pad(const Value& x, const std::vector<PadWidth>& widths, const std::string& mode, const Value& constant) {
  static const std::vector<std::string> supported = {"constant", "edge", "wrap", "reflect", "symmetric"};
  if (std::find(supported.begin(), supported.end(), mode) == supported.end()) {
    throw not_implemented_error("jnp.pad with mode='" + mode +
                                "' is not supported by shardscope (constant, edge, wrap, reflect, symmetric are)");
  }
  if (ndim_of(x) == 0) return x;
  if (static_cast<int64_t>(widths.size()) != ndim_of(x)) {
    throw value_error("Expected pad_width to have shape (" + std::to_string(ndim_of(x)) + ", 2); got (" +
                      std::to_string(widths.size()) + ", 2).");
  }
  return jitted("_pad", {x, constant}, [&](const std::vector<Value>& in) -> std::vector<Value> {
    if (mode == "constant") return {pad_constant(in[0], widths, in[1])};
    if (mode == "wrap") return {pad_wrap(in[0], widths)};
    if (mode == "edge") return {pad_edge(in[0], widths)};
    return {pad_mirror(in[0], widths, mode)};
  })[0];
}

Value roll(const Value& x, const std::vector<int64_t>& shifts, const std::optional<std::vector<int64_t>>& axes) {
  if (!axes) return reshape(roll(ravel(x), shifts, std::vector<int64_t>{0}), shape_of(x));
  std::vector<int64_t> canonical;
  for (const int64_t a : *axes) canonical.push_back(canonicalize_axis(a, ndim_of(x)));
  // An Explicit type sharded along a rolled axis: JAX refuses before slicing.
  const Aval& aval = x.aval();
  for (const int64_t a : canonical) {
    const auto d = static_cast<std::size_t>(a);
    if (d < aval.dim_axes.size() && !aval.dim_axes[d].empty()) {
      throw Error{"ShardingTypeError", "`a` cannot be sharded on the axis being rolled over. Got arr type=" +
                                           aval.str_short(true) + " and axis=" + python_int_tuple(canonical)};
    }
  }
  // shift and axis broadcast against each other (numpy's rule: equal lengths or one of them of length 1).
  const std::size_t n = std::max(shifts.size(), canonical.size());
  if ((shifts.size() != n && shifts.size() != 1) || (canonical.size() != n && canonical.size() != 1)) {
    throw value_error(
        "shape mismatch: objects cannot be broadcast to a single shape.  Mismatch is between arg 0 "
        "with shape (" +
        std::to_string(canonical.size()) + ",) and arg 1 with shape (" + std::to_string(shifts.size()) + ",).");
  }
  return jitted("_roll_static", {x}, [&](const std::vector<Value>& in) -> std::vector<Value> {
    Value a = in[0];
    for (std::size_t k = 0; k < n; ++k) {
      const int64_t axis = canonical[canonical.size() == 1 ? 0 : k];
      const int64_t shift = shifts[shifts.size() == 1 ? 0 : k];
      const int64_t size = shape_of(a)[static_cast<std::size_t>(axis)];
      if (size == 0) continue;
      const int64_t i = ((-shift) % size + size) % size;
      a = lax::concatenate({slice_in_dim(a, i, size, axis), slice_in_dim(a, 0, i, axis)}, axis);
    }
    return {a};
  })[0];
}

std::vector<Value> array_split(const Value& x, int64_t sections, int64_t axis) {
  const int64_t dim = canonicalize_axis(axis, ndim_of(x));
  const int64_t size = shape_of(x)[static_cast<std::size_t>(dim)];
  if (sections <= 0) throw value_error("number sections must be larger than 0.");
  // numpy's rule: the first size % sections parts get one extra element.
  const int64_t base = size / sections;
  const int64_t extra = size % sections;
  std::vector<int64_t> indices;
  int64_t at = 0;
  for (int64_t i = 0; i + 1 < sections; ++i) {
    at += base + (i < extra ? 1 : 0);
    indices.push_back(at);
  }
  return split_at(x, indices, dim);
}

}  // namespace shardscope::api::jnp
