// Primitives automatic differentiation emits: add_any (cotangent accumulation) and polygamma (digamma's
// derivative); scatter-add, gather's transpose, is one of the scatter family (scatter.cpp).
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
}

}  // namespace shardscope
