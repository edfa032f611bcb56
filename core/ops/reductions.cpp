// Reductions: reduce_sum/prod/max/min/and/or/xor, argmax/argmin and the cumulative cumsum/cumprod/cummax/cummin.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <set>

#include "base/dtype_dispatch.h"
#include "base/error.h"
#include "ops/structural_internal.h"

namespace shardscope::structural {
namespace {

enum class Combine { kSum, kProd, kMax, kMin, kAnd, kOr, kXor };

// ---- arithmetic in the compute type ---------------------------------------------------------

// Integer arithmetic wraps as XLA's does; it runs in the unsigned type (widened past int promotion)
// so that overflow is defined.
template <typename T>
T wrapping_add(T a, T b) {
  using U = std::make_unsigned_t<T>;
  using Wide = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
  return static_cast<T>(static_cast<U>(static_cast<Wide>(static_cast<U>(a)) + static_cast<Wide>(static_cast<U>(b))));
}

template <typename T>
T wrapping_mul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  using Wide = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
  return static_cast<T>(static_cast<U>(static_cast<Wide>(static_cast<U>(a)) * static_cast<Wide>(static_cast<U>(b))));
}

template <Combine Op, typename C>
C combine(C a, C b) {
  if constexpr (std::is_same_v<C, bool>) {
    if constexpr (Op == Combine::kSum || Op == Combine::kMax || Op == Combine::kOr) {
      return a || b;
    } else if constexpr (Op == Combine::kXor) {
      return a != b;
    } else {
      return a && b;
    }
  } else if constexpr (std::is_floating_point_v<C>) {
    if constexpr (Op == Combine::kSum) {
      return a + b;
    } else if constexpr (Op == Combine::kProd) {
      return a * b;
    } else if constexpr (Op == Combine::kMax) {
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
      return a < b ? b : a;
    } else if constexpr (Op == Combine::kMin) {
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
      return b < a ? b : a;
    } else {
      throw type_error("bitwise reduction of a floating-point value");
    }
  } else {
    if constexpr (Op == Combine::kSum) {
      return wrapping_add(a, b);
    } else if constexpr (Op == Combine::kProd) {
      return wrapping_mul(a, b);
    } else if constexpr (Op == Combine::kMax) {
      return std::max(a, b);
    } else if constexpr (Op == Combine::kMin) {
      return std::min(a, b);
    } else if constexpr (Op == Combine::kAnd) {
      return static_cast<C>(a & b);
    } else if constexpr (Op == Combine::kOr) {
      return static_cast<C>(a | b);
    } else {
      return static_cast<C>(a ^ b);
    }
  }
}

template <Combine Op, typename C>
C identity() {
  if constexpr (Op == Combine::kSum || Op == Combine::kOr || Op == Combine::kXor) {
    return C{};
  } else if constexpr (Op == Combine::kProd) {
    return static_cast<C>(1);
  } else if constexpr (Op == Combine::kAnd) {
    if constexpr (std::is_same_v<C, bool>) {
      return true;
    } else {
      return static_cast<C>(~C{});
    }
  } else if constexpr (Op == Combine::kMax) {
    if constexpr (std::is_floating_point_v<C>) {
      return -std::numeric_limits<C>::infinity();
    } else {
      return std::numeric_limits<C>::lowest();
    }
  } else {
    if constexpr (std::is_floating_point_v<C>) {
      return std::numeric_limits<C>::infinity();
    } else {
      return std::numeric_limits<C>::max();
    }
  }
}

// numpy's pairwise summation (eight running sums in blocks of 128, halves above): accurate for
// long rows without the cost of compensated summation.
// The recursion is log2(count / 128) deep.
template <DType D>
typename DTypeTraits<D>::compute pairwise_sum(  // NOLINT(misc-no-recursion)
    const typename DTypeTraits<D>::storage* values, int64_t count) {
  using C = typename DTypeTraits<D>::compute;
  if (count < 8) {
    C sum = C{};
    for (int64_t i = 0; i < count; ++i) sum += load<D>(values[i]);
    return sum;
  }
  if (count <= 128) {
    std::array<C, 8> partial{};
    for (std::size_t j = 0; j < 8; ++j) partial[j] = load<D>(values[j]);
    int64_t i = 8;
    for (; i + 8 <= count; i += 8) {
      for (std::size_t j = 0; j < 8; ++j) partial[j] += load<D>(values[i + static_cast<int64_t>(j)]);
    }
    C sum = ((partial[0] + partial[1]) + (partial[2] + partial[3])) +
            ((partial[4] + partial[5]) + (partial[6] + partial[7]));
    for (; i < count; ++i) sum += load<D>(values[i]);
    return sum;
  }
  int64_t half = count / 2;
  half -= half % 8;
  return pairwise_sum<D>(values, half) + pairwise_sum<D>(values + half, count - half);
}

// ---- layout: [outer, extent, inner] with the reduced dims in the middle -------------------------

struct ReduceView {
  std::shared_ptr<const Buffer> data;  // the operand, or a transposed copy of it
  int64_t outer = 1;
  int64_t extent = 1;
  int64_t inner = 1;
};

ReduceView reduce_view(const BufferPtr& operand, const std::vector<int64_t>& axes) {
  const Shape& shape = operand->shape();
  const std::set<int64_t> reduced(axes.begin(), axes.end());
  // Size-1 dims never change the order of elements, so only the others must be contiguous.
  std::vector<std::size_t> significant_reduced;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (reduced.contains(static_cast<int64_t>(d)) && shape[d] != 1) significant_reduced.push_back(d);
  }
  ReduceView view;
  view.data = operand;
  bool contiguous = true;
  for (std::size_t d = 0; d < shape.size() && !significant_reduced.empty(); ++d) {
    if (d > significant_reduced.front() && d < significant_reduced.back() &&
        !reduced.contains(static_cast<int64_t>(d)) && shape[d] != 1) {
      contiguous = false;
    }
  }
  if (contiguous) {
    for (std::size_t d = 0; d < shape.size(); ++d) {
      if (reduced.contains(static_cast<int64_t>(d))) {
        view.extent *= shape[d];
      } else if (!significant_reduced.empty() && d > significant_reduced.back()) {
        view.inner *= shape[d];
      } else {
        view.outer *= shape[d];
      }
    }
    return view;
  }
  std::vector<int64_t> permutation;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (!reduced.contains(static_cast<int64_t>(d))) {
      permutation.push_back(static_cast<int64_t>(d));
      view.outer *= shape[d];
    }
  }
  for (const int64_t d : axes) {
    permutation.push_back(d);
    view.extent *= shape[static_cast<std::size_t>(d)];
  }
  view.data = transposed(*operand, permutation);
  return view;
}

template <Combine Op>
BufferPtr reduce_kernel(std::span<const BufferPtr> inputs, const Aval& out, const Params& params) {
  // Logical reductions accept np.delete-style negative and repeated axes.
  const auto rank = static_cast<int64_t>(inputs[0]->shape().size());
  std::set<int64_t> axes;
  for (const int64_t axis : ints_param(params, "axes")) axes.insert(axis < 0 ? axis + rank : axis);
  const ReduceView view = reduce_view(inputs[0], {axes.begin(), axes.end()});
  auto result = new_buffer(out.dtype, out.shape);
  visit_dtype(out.dtype, [&](auto tag) {
    constexpr DType kDType = decltype(tag)::value;
    using Storage = typename DTypeTraits<kDType>::storage;
    using C = typename DTypeTraits<kDType>::compute;
    if constexpr (std::is_floating_point_v<C> && (Op == Combine::kAnd || Op == Combine::kOr || Op == Combine::kXor)) {
      throw type_error("logical reduction of a floating-point value");
    } else {
      const Storage* src = view.data->template as<Storage>().data();
      Storage* dst = result->template as_mutable<Storage>().data();
      if (view.inner == 1) {
        for (int64_t o = 0; o < view.outer; ++o) {
          const Storage* row = src + o * view.extent;
          C acc = identity<Op, C>();
          if constexpr (Op == Combine::kSum && std::is_floating_point_v<C>) {
            acc = pairwise_sum<kDType>(row, view.extent);
          } else {
            for (int64_t r = 0; r < view.extent; ++r) acc = combine<Op>(acc, load<kDType>(row[r]));
          }
          dst[o] = store<kDType>(acc);
        }
        return;
      }
      // Whole rows combine into per-column accumulators, which keeps the reads contiguous.
      // Not std::vector, which packs bool into bits.
      const auto acc_storage = std::make_unique<C[]>(static_cast<std::size_t>(view.inner));  // NOLINT(*-c-arrays)
      C* acc = acc_storage.get();
      for (int64_t o = 0; o < view.outer; ++o) {
        std::fill(acc, acc + view.inner, identity<Op, C>());
        for (int64_t r = 0; r < view.extent; ++r) {
          const Storage* row = src + (o * view.extent + r) * view.inner;
          for (int64_t i = 0; i < view.inner; ++i) acc[i] = combine<Op>(acc[i], load<kDType>(row[i]));
        }
        for (int64_t i = 0; i < view.inner; ++i) dst[o * view.inner + i] = store<kDType>(acc[i]);
      }
    }
  });
  return result;
}

// ---- shape rules ----------------------------------------------------------------------------

Aval reduced_aval(const Aval& operand, const std::vector<int64_t>& axes, DType dtype, bool weak_type) {
  const std::set<int64_t> removed(axes.begin(), axes.end());
  Shape shape;
  std::vector<int64_t> sources;
  for (std::size_t d = 0; d < operand.rank(); ++d) {
    if (removed.contains(static_cast<int64_t>(d))) continue;
    shape.push_back(operand.shape[d]);
    sources.push_back(static_cast<int64_t>(d));
  }
  Aval out = derived_aval(operand, shape, dtype, weak_type);
  map_dim_axes(out, operand, sources);
  return out;
}

void check_reduction_axes(const Aval& operand, const std::vector<int64_t>& axes) {
  if (std::set<int64_t>(axes.begin(), axes.end()).size() != axes.size()) {
    throw value_error("duplicate value in 'axes' of reduction: " + int_tuple(axes));
  }
  const auto rank = static_cast<int64_t>(operand.rank());
  if (std::any_of(axes.begin(), axes.end(), [&](int64_t a) { return a < 0 || a >= rank; })) {
    throw value_error("reduction axes " + int_tuple(axes) + " contains out-of-bounds indices for " + aval_str(operand) +
                      ".");
  }
}

void check_number(const std::string& name, DType dtype) {
  if (dtype == DType::kBool) {
    throw type_error(name + " does not accept dtype bool. Accepted dtypes are subtypes of number.");
  }
}

ShapeRule numeric_reduction_rule(const std::string& name, bool numbers_only) {
  return [name, numbers_only](std::span<const Aval> avals, const Params& params) {
    check_arity(name, avals, 1);
    const Aval& operand = avals[0];
    const std::vector<int64_t> axes = ints_param(params, "axes");
    check_reduction_axes(operand, axes);
    if (numbers_only) check_number(name, operand.dtype);
    Aval out = reduced_aval(operand, axes, operand.dtype, operand.weak_type);
    apply_sharding_param(out, params, "out_sharding");
    return out;
  };
}

ShapeRule logical_reduction_rule(const std::string& name) {
  return [name](std::span<const Aval> avals, const Params& params) {
    check_arity(name, avals, 1);
    const Aval& operand = avals[0];
    if (is_floating(operand.dtype)) {
      throw type_error("logical reduction requires operand dtype bool or int, got " +
                       std::string(dtype_name(operand.dtype)) + ".");
    }
    const std::vector<int64_t> axes = ints_param(params, "axes");
    const auto rank = static_cast<int64_t>(operand.rank());
    // np.delete's own complaint, which is what JAX surfaces for a bad axis here.
    for (const int64_t axis : axes) {
      if (axis < -rank || axis >= rank) {
        throw Error("IndexError",
                    "index " + std::to_string(axis) + " is out of bounds for axis 0 with size " + std::to_string(rank));
      }
    }
    std::vector<int64_t> normalized;
    normalized.reserve(axes.size());
    for (const int64_t axis : axes) normalized.push_back(axis < 0 ? axis + rank : axis);
    return reduced_aval(operand, normalized, operand.dtype, false);
  };
}

// ---- argmax / argmin ------------------------------------------------------------------------

ShapeRule argminmax_rule(const std::string& name) {
  return [name](std::span<const Aval> avals, const Params& params) {
    check_arity(name, avals, 1);
    const Aval& operand = avals[0];
    const std::vector<int64_t> axes = ints_param(params, "axes");
    // JAX unpacks `axis, = axes`; these are Python 3.11's words for a wrong count.
    if (axes.empty()) throw value_error("not enough values to unpack (expected 1, got 0)");
    if (axes.size() > 1) throw value_error("too many values to unpack (expected 1)");
    const int64_t axis = axes[0];
    if (axis < 0 || axis >= static_cast<int64_t>(operand.rank())) {
      throw value_error("Invalid axis " + std::to_string(axis) + " for operand shape " + int_tuple(operand.shape));
    }
    if (operand.shape[static_cast<std::size_t>(axis)] < 1) {
      throw value_error("argmin and argmax require non-empty reduced dimension. operand.shape=" +
                        int_tuple(operand.shape) + " axis=" + std::to_string(axis));
    }
    const DType index_dtype = dtype_param(params, "index_dtype");
    if (!is_integral(index_dtype)) {
      throw type_error("index_dtype must be an integer type, but got " + std::string(dtype_name(index_dtype)));
    }
    return reduced_aval(operand, axes, index_dtype, false);
  };
}

template <bool kMax>
BufferPtr argminmax_kernel(std::span<const BufferPtr> inputs, const Aval& out, const Params& params) {
  const BufferPtr& operand = inputs[0];
  const ReduceView view = reduce_view(operand, ints_param(params, "axes"));
  std::vector<int64_t> chosen(static_cast<std::size_t>(view.outer * view.inner), 0);
  visit_dtype(operand->dtype(), [&](auto tag) {
    constexpr DType kDType = decltype(tag)::value;
    using Storage = typename DTypeTraits<kDType>::storage;
    using C = typename DTypeTraits<kDType>::compute;
    const Storage* src = view.data->template as<Storage>().data();
    for (int64_t o = 0; o < view.outer; ++o) {
      for (int64_t i = 0; i < view.inner; ++i) {
        const Storage* column = src + o * view.extent * view.inner + i;
        C best = load<kDType>(column[0]);
        int64_t best_index = 0;
        for (int64_t r = 1; r < view.extent; ++r) {
          if constexpr (std::is_floating_point_v<C>) {
            if (std::isnan(best)) break;  // the first NaN wins, as in numpy
          }
          const C value = load<kDType>(column[r * view.inner]);
          bool better = kMax ? best < value : value < best;
          if constexpr (std::is_floating_point_v<C>) better = better || std::isnan(value);
          if (better) {
            best = value;
            best_index = r;
          }
        }
        chosen[static_cast<std::size_t>(o * view.inner + i)] = best_index;
      }
    }
  });
  auto result = new_buffer(out.dtype, out.shape);
  visit_dtype(out.dtype, [&](auto tag) {
    constexpr DType kDType = decltype(tag)::value;
    using Storage = typename DTypeTraits<kDType>::storage;
    using C = typename DTypeTraits<kDType>::compute;
    auto values = result->template as_mutable<Storage>();
    for (std::size_t i = 0; i < chosen.size(); ++i) values[i] = store<kDType>(static_cast<C>(chosen[i]));
  });
  return result;
}

// ---- cumulative reductions ------------------------------------------------------------------

ShapeRule cumulative_rule(const std::string& name) {
  return [name](std::span<const Aval> avals, const Params& params) {
    check_arity(name, avals, 1);
    const Aval& operand = avals[0];
    const int64_t axis = int_param(params, "axis");
    if (axis < 0) throw value_error("XLA operations do not allow negative axes");
    if (axis >= static_cast<int64_t>(operand.rank())) {
      throw value_error("axis " + std::to_string(axis) + " is out of bounds for array of shape " +
                        int_tuple(operand.shape));
    }
    check_number(name, operand.dtype);
    const auto dim = static_cast<std::size_t>(axis);
    if (dim < operand.dim_axes.size() && !operand.dim_axes[dim].empty()) {
      throw Error("ShardingTypeError", "Input should be unsharded over the axis being reduced. Got input type=" +
                                           aval_str(operand) + " and axis=" + std::to_string(axis));
    }
    Aval out = derived_aval(operand, operand.shape, operand.dtype, operand.weak_type);
    out.dim_axes = operand.dim_axes;
    return out;
  };
}

template <Combine Op>
BufferPtr cumulative_kernel(std::span<const BufferPtr> inputs, const Aval& out, const Params& params) {
  const Buffer& operand = *inputs[0];
  const auto axis = static_cast<std::size_t>(int_param(params, "axis"));
  const bool reverse = bool_param(params, "reverse", false);
  const Shape& shape = operand.shape();
  const int64_t extent = shape[axis];
  const int64_t inner = row_major_strides(shape)[axis];
  const int64_t outer = extent == 0 || inner == 0 ? 0 : product(shape) / (extent * inner);
  auto result = new_buffer(out.dtype, out.shape);
  visit_dtype(out.dtype, [&](auto tag) {
    constexpr DType kDType = decltype(tag)::value;
    using Storage = typename DTypeTraits<kDType>::storage;
    using C = typename DTypeTraits<kDType>::compute;
    if constexpr (std::is_same_v<C, bool>) {
      throw type_error("cumulative reduction of a bool value");
    } else {
      const Storage* src = operand.as<Storage>().data();
      Storage* dst = result->as_mutable<Storage>().data();
      const auto acc_storage = std::make_unique<C[]>(static_cast<std::size_t>(inner));  // NOLINT(*-c-arrays)
      C* acc = acc_storage.get();
      for (int64_t o = 0; o < outer; ++o) {
        std::fill(acc, acc + inner, identity<Op, C>());
        for (int64_t step = 0; step < extent; ++step) {
          const int64_t r = reverse ? extent - 1 - step : step;
          const int64_t offset = (o * extent + r) * inner;
          for (int64_t i = 0; i < inner; ++i) {
            acc[i] = combine<Op>(acc[i], load<kDType>(src[offset + i]));
            dst[offset + i] = store<kDType>(acc[i]);
          }
        }
      }
    }
  });
  return result;
}

}  // namespace

void register_reduction_primitives() {
  const auto axes_only = versioned_printer({{"axes"}});
  register_single_result(
      "reduce_sum", numeric_reduction_rule("reduce_sum", true), reduce_kernel<Combine::kSum>,
      versioned_printer({{"axes"}, {"out_sharding", JaxFeature::kReduceSumOutShardingParam, ParamValue::None{}}}));
  register_single_result("reduce_prod", numeric_reduction_rule("reduce_prod", true), reduce_kernel<Combine::kProd>,
                         axes_only);
  register_single_result(
      "reduce_max", numeric_reduction_rule("reduce_max", false), reduce_kernel<Combine::kMax>,
      versioned_printer({{"axes"}, {"out_sharding", JaxFeature::kReduceMaxMinOutShardingParam, ParamValue::None{}}}));
  register_single_result(
      "reduce_min", numeric_reduction_rule("reduce_min", false), reduce_kernel<Combine::kMin>,
      versioned_printer({{"axes"}, {"out_sharding", JaxFeature::kReduceMaxMinOutShardingParam, ParamValue::None{}}}));
  register_single_result("reduce_and", logical_reduction_rule("reduce_and"), reduce_kernel<Combine::kAnd>, axes_only);
  register_single_result("reduce_or", logical_reduction_rule("reduce_or"), reduce_kernel<Combine::kOr>, axes_only);
  register_single_result("reduce_xor", logical_reduction_rule("reduce_xor"), reduce_kernel<Combine::kXor>, axes_only);
  const auto arg_printer = versioned_printer({{"axes"}, {"index_dtype"}});
  register_single_result("argmax", argminmax_rule("argmax"), argminmax_kernel<true>, arg_printer);
  register_single_result("argmin", argminmax_rule("argmin"), argminmax_kernel<false>, arg_printer);
  const auto cumulative_printer = versioned_printer({{"axis"}, {"reverse", std::nullopt, false}});
  register_single_result("cumsum", cumulative_rule("cumsum"), cumulative_kernel<Combine::kSum>, cumulative_printer);
  register_single_result("cumprod", cumulative_rule("cumprod"), cumulative_kernel<Combine::kProd>, cumulative_printer);
  register_single_result("cummax", cumulative_rule("cummax"), cumulative_kernel<Combine::kMax>, cumulative_printer);
  register_single_result("cummin", cumulative_rule("cummin"), cumulative_kernel<Combine::kMin>, cumulative_printer);
}

}  // namespace shardscope::structural
