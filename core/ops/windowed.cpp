// Windowed reductions as lax defines them: reduce_window_sum, reduce_window_max and reduce_window_min (pooling),
// and select_and_gather_add / select_and_scatter_add (the max/min pools' derivatives): shape rules, print rules and
// kernels. Their jvp, transpose and batching rules are in transforms/window_rules.cpp, their factor rule in
// propagation/factor_rule.cpp, their Explicit rule in explicit/rules_structural.cpp.
#include "ops/windowed.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "base/dtype_dispatch.h"
#include "base/error.h"
#include "ops/convolution.h"
#include "ops/structural_internal.h"

namespace shardscope {

namespace {

std::vector<int64_t> ints_or_ones(const Params& params, const std::string& key, std::size_t rank) {
  const ParamValue* value = find_param(params, key);
  return value == nullptr ? std::vector<int64_t>(rank, 1) : value->as_ints(key);
}

}  // namespace

WindowParams window_params(const Params& params) {
  WindowParams window;
  window.window_dimensions = param(params, "window_dimensions").as_ints("window_dimensions");
  window.window_strides = param(params, "window_strides").as_ints("window_strides");
  for (const ParamValue& pair : param(params, "padding").as_items("padding")) {
    const std::vector<int64_t> lo_hi = pair.as_ints("padding");
    if (lo_hi.size() != 2) throw type_error("reduce_window padding entries must be (low, high) pairs");
    window.padding.emplace_back(lo_hi[0], lo_hi[1]);
  }
  const std::size_t rank = window.window_dimensions.size();
  window.base_dilation = ints_or_ones(params, "base_dilation", rank);
  window.window_dilation = ints_or_ones(params, "window_dilation", rank);
  return window;
}

Params window_params_to_params(const WindowParams& window) {
  std::vector<ParamValue> pads;
  for (const auto& [lo, hi] : window.padding) pads.push_back(ParamValue::int_tuple({lo, hi}));
  return {{"window_dimensions", ParamValue::int_tuple(window.window_dimensions)},
          {"window_strides", ParamValue::int_tuple(window.window_strides)},
          {"padding", ParamValue::tuple(pads)},
          {"base_dilation", ParamValue::int_tuple(window.base_dilation)},
          {"window_dilation", ParamValue::int_tuple(window.window_dilation)}};
}

Shape window_output_shape(const Shape& operand, const WindowParams& w) {
  const auto check = [](const std::vector<int64_t>& values, const std::string& what, bool positive) {
    for (const int64_t v : values) {
      if (v < 0 || (positive && v == 0)) {
        throw type_error("reduce_window " + what + " must have every element be " +
                         (positive ? "positive" : "nonnegative") + ", got " + structural::int_tuple(values) + ".");
      }
    }
  };
  check(w.window_dimensions, "window_dimensions", true);
  check(w.window_strides, "window_strides", true);
  check(w.base_dilation, "base_dilation", true);
  check(w.window_dilation, "window_dilation", true);
  const std::size_t rank = w.window_dimensions.size();
  if (operand.size() != rank) {
    throw type_error("reduce_window got the wrong number of window_dimensions for operand: got operand shape " +
                     structural::int_tuple(operand) + " with window_dimensions " +
                     structural::int_tuple(w.window_dimensions) + ".");
  }
  if (w.window_strides.size() != rank) {
    throw type_error("reduce_window got inconsistent window_strides and window_dimensions: got window_strides " +
                     structural::int_tuple(w.window_strides) + " and window_dimensions " +
                     structural::int_tuple(w.window_dimensions) + ".");
  }
  if (w.base_dilation.size() != rank || w.window_dilation.size() != rank || w.padding.size() != rank) {
    throw type_error(
        "reduce_window got inconsistent base_dilation, window_dilation or padding and "
        "window_dimensions " +
        structural::int_tuple(w.window_dimensions) + ".");
  }
  Shape out(rank);
  for (std::size_t d = 0; d < rank; ++d) {
    const int64_t padded = dilated_size(operand[d], w.base_dilation[d]) + w.padding[d].first + w.padding[d].second;
    const int64_t window = dilated_size(w.window_dimensions[d], w.window_dilation[d]);
    out[d] = padded < window ? 0 : (padded - window) / w.window_strides[d] + 1;
  }
  return out;
}

bool window_dim_untouched(const WindowParams& w, std::size_t d) {
  return w.window_dimensions[d] == 1 && w.window_strides[d] == 1 && w.padding[d].first == 0 &&
         w.padding[d].second == 0 && w.base_dilation[d] == 1 && w.window_dilation[d] == 1;
}

namespace structural {
namespace {}  // namespace

void for_each_tap(const Shape& in, const Shape& out, const WindowParams& w,
                  const std::function<void(int64_t, int64_t)>& visit) {
  const std::size_t rank = in.size();
  const int64_t outputs = product(out);
  const int64_t taps = product(w.window_dimensions);
  if (outputs == 0) return;
  std::vector<int64_t> o(rank, 0);
  for (int64_t flat_out = 0; flat_out < outputs; ++flat_out) {
    std::vector<int64_t> k(rank, 0);
    for (int64_t tap = 0; tap < taps; ++tap) {
      int64_t source = 0;
      bool inside = true;
      for (std::size_t d = 0; d < rank; ++d) {
        const int64_t dilated = o[d] * w.window_strides[d] - w.padding[d].first + k[d] * w.window_dilation[d];
        if (dilated < 0 || dilated % w.base_dilation[d] != 0 || dilated / w.base_dilation[d] >= in[d]) {
          inside = false;
          break;
        }
        source = source * in[d] + dilated / w.base_dilation[d];
      }
      visit(flat_out, inside ? source : -1);
      for (std::size_t d = rank; d-- > 0;) {
        if (++k[d] < w.window_dimensions[d]) break;
        k[d] = 0;
      }
    }
    for (std::size_t d = rank; d-- > 0;) {
      if (++o[d] < out[d]) break;
      o[d] = 0;
    }
  }
}

namespace {

template <typename T>
std::vector<T> values_of(const Buffer& buffer) {
  std::vector<T> values(static_cast<std::size_t>(buffer.size()));
  visit_dtype(buffer.dtype(), [&](auto tag) {
    constexpr DType kDType = decltype(tag)::value;
    using Storage = typename DTypeTraits<kDType>::storage;
    const auto stored = buffer.as<Storage>();
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<T>(load<kDType>(stored[i]));
  });
  return values;
}

template <typename T>
BufferPtr buffer_of(const std::vector<T>& values, DType dtype, const Shape& shape) {
  auto out = std::make_shared<Buffer>(dtype, shape, Buffer::Uninitialized{});
  visit_dtype(dtype, [&](auto tag) {
    constexpr DType kDType = decltype(tag)::value;
    using Storage = typename DTypeTraits<kDType>::storage;
    using Compute = typename DTypeTraits<kDType>::compute;
    auto stored = out->template as_mutable<Storage>();
    for (std::size_t i = 0; i < values.size(); ++i) stored[i] = store<kDType>(static_cast<Compute>(values[i]));
  });
  return out;
}

// Runs fn with the compute type of `dtype`: float for float32 and the half types, double for float64, int64 or
// uint64 for integers (bool too: vector<bool> has no references).
template <typename Fn>
BufferPtr with_compute_type(DType dtype, Fn&& fn) {
  if (dtype == DType::kFloat64) return fn(double{});
  if (is_floating(dtype)) return fn(float{});
  if (dtype_kind(dtype) == DTypeKind::kUnsigned) return fn(uint64_t{});
  return fn(int64_t{});
}

template <typename T>
T lowest() {
  if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
  return std::numeric_limits<T>::lowest();
}

template <typename T>
T highest() {
  if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::infinity();
  return std::numeric_limits<T>::max();
}

enum class Monoid { kSum, kMax, kMin };

BufferPtr reduce_window_kernel(Monoid monoid, std::span<const BufferPtr> inputs, const Aval& out,
                               const Params& params) {
  const WindowParams w = window_params(params);
  const Buffer& operand = *inputs[0];
  return with_compute_type(operand.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const std::vector<T> in = values_of<T>(operand);
    const T init = monoid == Monoid::kSum ? T{} : monoid == Monoid::kMax ? lowest<T>() : highest<T>();
    std::vector<T> result(static_cast<std::size_t>(product(out.shape)), init);
    for_each_tap(operand.shape(), out.shape, w, [&](int64_t o, int64_t source) {
      if (source < 0) return;  // padding holds the monoid's identity
      T& acc = result[static_cast<std::size_t>(o)];
      const T x = in[static_cast<std::size_t>(source)];
      if (monoid == Monoid::kSum) {
        acc = static_cast<T>(acc + x);
      } else if (monoid == Monoid::kMax) {
        // NaN propagates as XLA's max does.
        if constexpr (std::is_floating_point_v<T>) {
          acc = std::isnan(acc) || std::isnan(x) ? std::numeric_limits<T>::quiet_NaN() : std::max(acc, x);
        } else {
          acc = std::max(acc, x);
        }
      } else {
        if constexpr (std::is_floating_point_v<T>) {
          acc = std::isnan(acc) || std::isnan(x) ? std::numeric_limits<T>::quiet_NaN() : std::min(acc, x);
        } else {
          acc = std::min(acc, x);
        }
      }
    });
    return buffer_of(result, out.dtype, out.shape);
  });
}

bool selects_max(const Params& params) {
  const std::string& select = param(params, "select_prim").as_string("select_prim");
  if (select != "ge" && select != "le") throw value_error("select_prim must be ge or le, got " + select);
  return select == "ge";
}

// For each window, the tap the selection keeps: the first maximum (ge) or minimum (le) in tap order, as XLA's
// pairwise select(ge(acc, x), acc, x) keeps the earlier of equal values. Padding taps are never kept.
std::vector<int64_t> selected_taps(const std::vector<double>& operand, const Shape& in, const Shape& out,
                                   const WindowParams& w, bool max) {
  std::vector<int64_t> chosen(static_cast<std::size_t>(product(out)), -1);
  for_each_tap(in, out, w, [&](int64_t o, int64_t source) {
    if (source < 0) return;
    int64_t& best = chosen[static_cast<std::size_t>(o)];
    const double x = operand[static_cast<std::size_t>(source)];
    if (best < 0) {
      best = source;
      return;
    }
    const double kept = operand[static_cast<std::size_t>(best)];
    if (!(max ? kept >= x : kept <= x)) best = source;
  });
  return chosen;
}

// select_and_gather_add(tangents, operand): each window's tangent at the operand's selected tap.
BufferPtr gather_add_kernel(std::span<const BufferPtr> inputs, const Aval& out, const Params& params) {
  const WindowParams w = window_params(params);
  const std::vector<double> operand = values_of<double>(*inputs[1]);
  const std::vector<double> tangents = values_of<double>(*inputs[0]);
  const std::vector<int64_t> chosen = selected_taps(operand, inputs[1]->shape(), out.shape, w, selects_max(params));
  std::vector<double> result(chosen.size(), 0.0);
  for (std::size_t o = 0; o < chosen.size(); ++o) {
    if (chosen[o] >= 0) result[o] = tangents[static_cast<std::size_t>(chosen[o])];
  }
  return buffer_of(result, out.dtype, out.shape);
}

// select_and_scatter_add(source, operand): each window's source value added at the operand's selected tap.
BufferPtr scatter_add_kernel(std::span<const BufferPtr> inputs, const Aval& out, const Params& params) {
  const WindowParams w = window_params(params);
  const std::vector<double> operand = values_of<double>(*inputs[1]);
  return with_compute_type(out.dtype, [&](auto zero) {
    using T = decltype(zero);
    const std::vector<T> source = values_of<T>(*inputs[0]);
    const std::vector<int64_t> chosen =
        selected_taps(operand, inputs[1]->shape(), inputs[0]->shape(), w, selects_max(params));
    std::vector<T> result(static_cast<std::size_t>(product(out.shape)), T{});
    for (std::size_t o = 0; o < chosen.size(); ++o) {
      if (chosen[o] >= 0) result[static_cast<std::size_t>(chosen[o])] += source[o];
    }
    return buffer_of(result, out.dtype, out.shape);
  });
}

Aval reduce_window_rule(const std::string& name, std::span<const Aval> avals, const Params& params) {
  check_arity(name, avals, 1);
  const Aval& operand = avals[0];
  if (name == "reduce_window_sum" && (operand.dtype == DType::kBool)) {
    throw type_error("operand to reduce_window_sum must have a number dtype, got bool");
  }
  Aval out = derived_aval(operand, window_output_shape(operand.shape, window_params(params)), operand.dtype,
                          operand.weak_type);
  out.varying = union_varying(avals);
  return out;
}

Aval gather_add_rule(std::span<const Aval> avals, const Params& params) {
  check_arity("select_and_gather_add", avals, 2);
  if (avals[0].shape != avals[1].shape) {
    throw type_error("select_and_gather_add tangents and operand shapes must match, got " +
                     structural::int_tuple(avals[0].shape) + " and " + structural::int_tuple(avals[1].shape) + ".");
  }
  selects_max(params);
  Aval out = derived_aval(avals[0], window_output_shape(avals[1].shape, window_params(params)), avals[0].dtype,
                          avals[0].weak_type);
  out.varying = union_varying(avals);
  return out;
}

Aval scatter_add_rule(std::span<const Aval> avals, const Params& params) {
  check_arity("select_and_scatter_add", avals, 2);
  selects_max(params);
  const Shape expected = window_output_shape(avals[1].shape, window_params(params));
  if (expected != avals[0].shape) {
    throw type_error("select_and_scatter_add source shape " + structural::int_tuple(avals[0].shape) +
                     " must be the windowed operand's shape " + structural::int_tuple(expected));
  }
  Aval out = derived_aval(avals[1], avals[1].shape, avals[0].dtype, avals[0].weak_type);
  out.varying = union_varying(avals);
  return out;
}

Params sorted_params(const Eqn& eqn, const JaxProfile&) {
  Params printed = eqn.params;
  std::sort(printed.begin(), printed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return printed;
}

}  // namespace

void register_windowed_primitives() {
  for (const auto& [name, monoid] : std::vector<std::pair<std::string, Monoid>>{{"reduce_window_sum", Monoid::kSum},
                                                                                {"reduce_window_max", Monoid::kMax},
                                                                                {"reduce_window_min", Monoid::kMin}}) {
    register_single_result(
        name,
        [name = name](std::span<const Aval> avals, const Params& params) {
          return reduce_window_rule(name, avals, params);
        },
        [monoid = monoid](std::span<const BufferPtr> inputs, const Aval& out, const Params& params) {
          return reduce_window_kernel(monoid, inputs, out, params);
        },
        sorted_params);
  }
  register_single_result("select_and_gather_add", gather_add_rule, gather_add_kernel, sorted_params);
  register_single_result("select_and_scatter_add", scatter_add_rule, scatter_add_kernel, sorted_params);
}

}  // namespace structural
}  // namespace shardscope
