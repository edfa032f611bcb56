// Test helpers for autodiff: float64 buffers, evaluation, and central finite differences as the reference.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "exec/interpreter.h"
#include "trace/builder.h"
#include "transforms/autodiff.h"

namespace shardscope::testing {

inline BufferPtr f64(const Shape& shape, const std::vector<double>& values) {
  return make_buffer<double>(DType::kFloat64, shape, values);
}

inline std::vector<double> values_of(const BufferPtr& buffer) {
  const auto data = buffer->as<double>();
  return {data.begin(), data.end()};
}

inline std::vector<double> run(const Jaxpr& jaxpr, const std::vector<BufferPtr>& args, std::size_t output = 0) {
  return values_of(evaluate_jaxpr(jaxpr, args).at(output));
}

inline Aval f64_aval(const Shape& shape) { return Aval::of(shape, DType::kFloat64); }

// Central differences of output `output` of `jaxpr` along direction `direction` of argument `arg`.
inline std::vector<double> directional_fd(const Jaxpr& jaxpr, std::vector<BufferPtr> args, std::size_t arg,
                                          const std::vector<double>& direction, std::size_t output = 0,
                                          double step = 1e-6) {
  const std::vector<double> base = values_of(args[arg]);
  std::vector<double> plus = base;
  std::vector<double> minus = base;
  for (std::size_t i = 0; i < base.size(); ++i) {
    plus[i] += step * direction[i];
    minus[i] -= step * direction[i];
  }
  const Shape shape = args[arg]->shape();
  args[arg] = f64(shape, plus);
  const std::vector<double> up = run(jaxpr, args, output);
  args[arg] = f64(shape, minus);
  const std::vector<double> down = run(jaxpr, args, output);
  std::vector<double> out(up.size());
  for (std::size_t i = 0; i < up.size(); ++i) out[i] = (up[i] - down[i]) / (2 * step);
  return out;
}

inline void check_close(const std::vector<double>& actual, const std::vector<double>& expected, double tol = 1e-5) {
  REQUIRE(actual.size() == expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    CAPTURE(i);
    CHECK(actual[i] == doctest::Approx(expected[i]).epsilon(tol).scale(1.0));
  }
}

inline std::vector<double> ramp(std::size_t n, double start, double step) {
  std::vector<double> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = start + step * static_cast<double>(i);
  return out;
}

// Checks jvp_jaxpr (every argument perturbed at once) and the gradient of sum(outputs[0]) with respect to
// every float argument against central differences of the original program.
inline void check_derivatives(const Jaxpr& jaxpr, const std::vector<BufferPtr>& args, double tol = 1e-5) {
  std::vector<std::vector<double>> directions;
  std::vector<BufferPtr> jvp_args = args;
  for (std::size_t i = 0; i < args.size(); ++i) {
    directions.push_back(ramp(static_cast<std::size_t>(args[i]->size()), 0.3 + 0.1 * static_cast<double>(i), 0.17));
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i]->dtype() == DType::kFloat64) {
      jvp_args.push_back(f64(args[i]->shape(), directions[i]));
    } else {
      jvp_args.push_back(args[i]);  // integer operands: tangent ignored
    }
  }
  const JaxprPtr jvp = jvp_jaxpr(jaxpr);
  const std::vector<BufferPtr> jvp_outs = evaluate_jaxpr(*jvp, jvp_args);
  std::vector<double> expected;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i]->dtype() != DType::kFloat64) continue;
    const std::vector<double> part = directional_fd(jaxpr, args, i, directions[i]);
    if (expected.empty()) expected.assign(part.size(), 0.0);
    for (std::size_t k = 0; k < part.size(); ++k) expected[k] += part[k];
  }
  {
    INFO("jvp against central differences");
    check_close(values_of(jvp_outs.at(jaxpr.outvars.size())), expected, tol);
  }
  // Reverse mode on sum(f(args)).
  JaxprBuilder b;
  std::vector<Atom> inner_args;
  std::vector<int64_t> argnums;
  for (std::size_t i = 0; i < jaxpr.invars.size(); ++i) {
    inner_args.emplace_back(b.arg(jaxpr.invars[i].aval));
    if (is_floating(jaxpr.invars[i].aval.dtype)) argnums.push_back(static_cast<int64_t>(i));
  }
  const std::vector<Atom> outs = inline_jaxpr(b, jaxpr, inner_args);
  std::vector<int64_t> axes;
  for (std::size_t d = 0; d < atom_aval(outs[0]).rank(); ++d) axes.push_back(static_cast<int64_t>(d));
  const Atom total =
      b.bind1("reduce_sum", {outs[0]}, {{"axes", ParamValue::int_tuple(axes)}, {"out_sharding", ParamValue::None{}}});
  const JaxprPtr scalar = b.build({total});
  const JaxprPtr grad = grad_jaxpr(*scalar, argnums, false);
  const std::vector<BufferPtr> grads = evaluate_jaxpr(*grad, args);
  for (std::size_t g = 0; g < argnums.size(); ++g) {
    const auto arg = static_cast<std::size_t>(argnums[g]);
    const std::vector<double> grad_values = values_of(grads[g]);
    std::vector<double> fd(grad_values.size());
    for (std::size_t k = 0; k < fd.size(); ++k) {
      std::vector<double> unit(fd.size(), 0.0);
      unit[k] = 1.0;
      fd[k] = directional_fd(*scalar, args, arg, unit)[0];
    }
    INFO("gradient against central differences, argument ", arg);
    check_close(grad_values, fd, tol);
  }
}

}  // namespace shardscope::testing
