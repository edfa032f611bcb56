// Primitives automatic differentiation emits: add_any (cotangent accumulation), scatter-add (gather's
// transpose) and polygamma (digamma's derivative).
#include <algorithm>
#include <cmath>
#include <numbers>

#include "base/dtype_dispatch.h"
#include "base/error.h"
#include "base/python_format.h"
#include "ops/ops.h"
#include "ops/structural.h"
#include "ops/structural_internal.h"

namespace shardscope {
namespace {

Primitive add_any_primitive() {
  Primitive p;
  p.name = "add_any";
  p.abstract_eval = [](std::span<const Aval> in, const Params&) {
    if (in.size() != 2 || in[0].shape != in[1].shape || in[0].dtype != in[1].dtype) {
      throw type_error("add_any takes two operands of one type");
    }
    return std::vector<Aval>{in[0]};
  };
  p.impl = [](std::span<const BufferPtr> in, std::span<const Aval> avals, const Params& params) {
    return find_primitive("add")->impl(in, avals, params);
  };
  p.elementwise = true;
  return p;
}

// polygamma(m, x) = d^m/dx^m digamma(x): shifted up by the recurrence, then the asymptotic series.
double polygamma_value(double order, double x) {
  if (order != std::floor(order) || order < 0) return std::nan("");
  const int m = static_cast<int>(order);
  constexpr int kShift = 16;
  // Bernoulli numbers B_2, B_4, ..., B_12.
  constexpr double kBernoulli[] = {1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66, -691.0 / 2730};
  double head = 0;
  for (int k = 0; k < kShift; ++k) head += m == 0 ? 1 / (x + k) : std::pow(x + k, -(m + 1));
  const double z = x + kShift;
  if (m == 0) {
    double tail = std::log(z) - 0.5 / z;
    double zpow = z * z;
    for (int j = 1; j <= 6; ++j) {
      tail -= kBernoulli[j - 1] / (2.0 * j * zpow);
      zpow *= z * z;
    }
    return tail - head;
  }
  // sum_{k>=0} (z+k)^-(m+1) by Euler-Maclaurin; psi^(m) = (-1)^(m+1) m! times the full sum.
  double tail = 1 / (m * std::pow(z, m)) + 0.5 / std::pow(z, m + 1);
  double rising = m + 1;  // (m+1)(m+2)...(m+2j-1)
  double factorial = 2;   // (2j)!
  for (int j = 1; j <= 6; ++j) {
    tail += kBernoulli[j - 1] / factorial * rising / std::pow(z, m + 2 * j);
    rising *= (m + 2 * j) * (m + 2 * j + 1);
    factorial *= (2 * j + 1) * (2 * j + 2);
  }
  return ((m + 1) % 2 == 0 ? 1 : -1) * std::tgamma(m + 1) * (head + tail);
}

Primitive polygamma_primitive() {
  Primitive p;
  p.name = "polygamma";
  p.abstract_eval = [](std::span<const Aval> in, const Params&) {
    if (in.size() != 2) throw type_error("polygamma takes two operands");
    if (!is_floating(in[1].dtype) || in[0].dtype != in[1].dtype) {
      throw type_error("polygamma does not accept dtype " + std::string(dtype_name(in[0].dtype)) + ", " +
                       std::string(dtype_name(in[1].dtype)) + ".");
    }
    if (!in[0].shape.empty() && in[0].shape != in[1].shape) throw type_error("polygamma operand shapes differ");
    Aval out = in[1];
    out.weak_type = in[0].weak_type && in[1].weak_type;
    return std::vector<Aval>{out};
  };
  p.impl = [](std::span<const BufferPtr> in, std::span<const Aval>, const Params&) {
    const Buffer& order = *in[0];
    const Buffer& x = *in[1];
    return std::vector<BufferPtr>{visit_dtype(x.dtype(), [&](auto tag) -> BufferPtr {
      constexpr DType D = decltype(tag)::value;
      using Storage = typename DTypeTraits<D>::storage;
      using Compute = typename DTypeTraits<D>::compute;
      if constexpr (std::is_floating_point_v<Compute>) {
        auto out = structural::new_buffer(D, x.shape());
        const Storage* orders = order.as<Storage>().data();
        const Storage* xs = x.as<Storage>().data();
        Storage* dst = out->as_mutable<Storage>().data();
        const int64_t order_step = order.size() == x.size() ? 1 : 0;
        for (int64_t i = 0; i < x.size(); ++i) {
          const double value = polygamma_value(static_cast<double>(load<D>(orders[i * order_step])),
                                               static_cast<double>(load<D>(xs[i])));
          dst[i] = store<D>(static_cast<Compute>(value));
        }
        return out;
      } else {
        throw type_error("polygamma needs floating-point operands");
      }
    })};
  };
  p.elementwise = true;
  return p;
}

// ---- scatter-add ----

struct ScatterDims {
  std::vector<int64_t> update_window_dims;
  std::vector<int64_t> inserted_window_dims;
  std::vector<int64_t> scatter_dims_to_operand_dims;
  std::vector<int64_t> operand_batching_dims;
  std::vector<int64_t> scatter_indices_batching_dims;
};

ScatterDims scatter_dims(const Params& params) {
  const auto groups = structural::int_groups(param(params, "dimension_numbers"), "dimension_numbers");
  if (groups.size() != 5) throw type_error("scatter dimension_numbers must hold 5 tuples of ints");
  return {groups[0], groups[1], groups[2], groups[3], groups[4]};
}

bool contains(const std::vector<int64_t>& values, int64_t value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

// XLA's scatter with addition: every update element lands at its window start plus offset; windows
// starting out of bounds are clamped (CLIP) or dropped (FILL_OR_DROP, PROMISE_IN_BOUNDS).
template <DType D>
BufferPtr scatter_add_typed(const Buffer& operand, const Buffer& indices, const Buffer& updates,
                            const ScatterDims& dims, GatherMode mode) {
  using Storage = typename DTypeTraits<D>::storage;
  auto out = structural::new_buffer(D, operand.shape());
  std::copy(operand.bytes().begin(), operand.bytes().end(), out->mutable_bytes().begin());
  Storage* dst = out->as_mutable<Storage>().data();
  const Storage* src = updates.as<Storage>().data();
  const Shape& operand_shape = operand.shape();
  const Shape& update_shape = updates.shape();
  const std::vector<int64_t> operand_strides = structural::row_major_strides(operand_shape);
  std::vector<std::size_t> window_operand_dims;
  for (std::size_t d = 0; d < operand_shape.size(); ++d) {
    const auto dim = static_cast<int64_t>(d);
    if (!contains(dims.inserted_window_dims, dim) && !contains(dims.operand_batching_dims, dim)) {
      window_operand_dims.push_back(d);
    }
  }
  std::vector<std::size_t> scatter_update_dims;
  std::vector<std::size_t> window_update_dims;
  for (std::size_t d = 0; d < update_shape.size(); ++d) {
    (contains(dims.update_window_dims, static_cast<int64_t>(d)) ? window_update_dims : scatter_update_dims)
        .push_back(d);
  }
  Shape window_sizes(operand_shape.size(), 1);
  for (std::size_t i = 0; i < window_update_dims.size(); ++i) {
    window_sizes[window_operand_dims[i]] = update_shape[window_update_dims[i]];
  }
  const std::size_t depth = dims.scatter_dims_to_operand_dims.size();
  std::vector<int64_t> index(update_shape.size());
  for (int64_t u = 0; u < updates.size(); ++u) {
    int64_t rest = u;
    for (std::size_t d = update_shape.size(); d-- > 0;) {
      index[d] = rest % update_shape[d];
      rest /= update_shape[d];
    }
    int64_t scatter_flat = 0;
    for (const std::size_t d : scatter_update_dims) scatter_flat = scatter_flat * update_shape[d] + index[d];
    std::vector<int64_t> start(operand_shape.size(), 0);
    bool in_bounds = true;
    for (std::size_t k = 0; k < depth; ++k) {
      const auto d = static_cast<std::size_t>(dims.scatter_dims_to_operand_dims[k]);
      const int64_t raw =
          structural::scalar_index(indices, scatter_flat * static_cast<int64_t>(depth) + static_cast<int64_t>(k));
      const int64_t upper = operand_shape[d] - window_sizes[d];
      if (raw < 0 || raw > upper) in_bounds = false;
      start[d] = std::clamp<int64_t>(raw, 0, upper);
    }
    for (std::size_t i = 0; i < dims.operand_batching_dims.size(); ++i) {
      const auto d = static_cast<std::size_t>(dims.operand_batching_dims[i]);
      start[d] = index[scatter_update_dims[static_cast<std::size_t>(dims.scatter_indices_batching_dims[i])]];
    }
    if (!in_bounds && mode != GatherMode::kClip) continue;
    int64_t offset = 0;
    for (std::size_t d = 0; d < operand_shape.size(); ++d) offset += start[d] * operand_strides[d];
    for (std::size_t i = 0; i < window_update_dims.size(); ++i) {
      offset += index[window_update_dims[i]] * operand_strides[window_operand_dims[i]];
    }
    const auto at = static_cast<std::size_t>(offset);
    dst[at] = store<D>(
        static_cast<typename DTypeTraits<D>::compute>(load<D>(dst[at]) + load<D>(src[static_cast<std::size_t>(u)])));
  }
  return out;
}

Primitive scatter_add_primitive() {
  Primitive p;
  p.name = "scatter-add";
  p.abstract_eval = [](std::span<const Aval> in, const Params&) {
    if (in.size() != 3) throw type_error("scatter-add takes operand, indices and updates");
    if (in[0].dtype != in[2].dtype) {
      throw type_error("scatter_add operand and updates must have the same dtype, got " +
                       std::string(dtype_name(in[0].dtype)) + " and " + std::string(dtype_name(in[2].dtype)) + ".");
    }
    if (!is_integral(in[1].dtype)) throw type_error("scatter_add indices must be integers");
    Aval out = in[0];
    out.varying = structural::union_varying(in);
    return std::vector<Aval>{out};
  };
  p.impl = [](std::span<const BufferPtr> in, std::span<const Aval>, const Params& params) {
    const ScatterDims dims = scatter_dims(params);
    const ParamValue* mode_param = find_param(params, "mode");
    const GatherMode mode = mode_param != nullptr ? parse_gather_mode(*mode_param) : GatherMode::kFillOrDrop;
    return std::vector<BufferPtr>{visit_dtype(in[0]->dtype(), [&](auto tag) -> BufferPtr {
      constexpr DType D = decltype(tag)::value;
      if constexpr (D == DType::kBool) {
        throw type_error("scatter_add does not accept dtype bool");
      } else {
        return scatter_add_typed<D>(*in[0], *in[1], *in[2], dims, mode);
      }
    })};
  };
  return p;
}

}  // namespace

ParamValue scatter_dimension_numbers_param(const std::vector<int64_t>& update_window_dims,
                                           const std::vector<int64_t>& inserted_window_dims,
                                           const std::vector<int64_t>& scatter_dims_to_operand_dims,
                                           const std::vector<int64_t>& operand_batching_dims,
                                           const std::vector<int64_t>& scatter_indices_batching_dims) {
  return ParamValue::tuple({ParamValue::int_tuple(update_window_dims), ParamValue::int_tuple(inserted_window_dims),
                            ParamValue::int_tuple(scatter_dims_to_operand_dims),
                            ParamValue::int_tuple(operand_batching_dims),
                            ParamValue::int_tuple(scatter_indices_batching_dims)});
}

void register_ad_primitives() {
  register_primitive(add_any_primitive());
  register_primitive(polygamma_primitive());
  register_primitive(scatter_add_primitive());
}

}  // namespace shardscope
