// Reverse mode through shard_map and pmap: gradients against analytic values and central differences.
#include <doctest/doctest.h>

#include <cmath>

#include "base/error.h"
#include "core/transforms/autodiff_test_util.h"
#include "device/presets.h"
#include "exec/pmap.h"
#include "exec/shard_map.h"
#include "ir/axis_env.h"
#include "ir/jaxpr_printer.h"
#include "ops/ops.h"

using namespace shardscope;
using namespace shardscope::testing;

namespace {

const Params kNoSharding{{"out_sharding", ParamValue::None{}}};

ShardMapSpec spec_8(std::vector<std::string> in, std::vector<std::string> out, bool check_vma = true) {
  ShardMapSpec spec;
  spec.mesh = make_mesh({8}, {"x"}, make_device_preset("tpu-v3-8").devices, JaxProfile());
  for (const std::string& text : in) spec.in_specs.push_back(parse_partition_spec(text));
  for (const std::string& text : out) spec.out_specs.push_back(parse_partition_spec(text));
  spec.check_vma = check_vma;
  return spec;
}

Var local_arg(JaxprBuilder& b, const ShardMapSpec& spec, std::size_t i, const Shape& global) {
  return b.arg(shard_map_local_aval(f64_aval(global), spec.in_specs[i], spec.mesh, spec.check_vma));
}

Atom sum_all(JaxprBuilder& b, const Atom& x) {
  std::vector<int64_t> axes;
  for (std::size_t d = 0; d < atom_aval(x).rank(); ++d) axes.push_back(static_cast<int64_t>(d));
  return b.bind1("reduce_sum", {x}, {{"axes", ParamValue::int_tuple(axes)}, {"out_sharding", ParamValue::None{}}});
}

// (args...) -> sum(mapped(args...)[0]), the mapped program bound by `bind`.
template <class Bind>
JaxprPtr summed_program(const std::vector<Shape>& shapes, Bind bind) {
  JaxprBuilder outer;
  std::vector<Atom> args;
  for (const Shape& shape : shapes) args.emplace_back(outer.arg(f64_aval(shape)));
  const std::vector<Atom> outs = bind(outer, args);
  return outer.build({sum_all(outer, outs.at(0))});
}

std::vector<double> grad_of(const Jaxpr& program, const std::vector<BufferPtr>& args, std::size_t argnum) {
  const JaxprPtr grad = grad_jaxpr(program, {static_cast<int64_t>(argnum)}, false);
  return values_of(evaluate_jaxpr(*grad, args).at(0));
}

std::vector<double> fd_grad(const Jaxpr& program, const std::vector<BufferPtr>& args, std::size_t argnum) {
  const auto n = static_cast<std::size_t>(args[argnum]->size());
  std::vector<double> out(n);
  for (std::size_t k = 0; k < n; ++k) {
    std::vector<double> unit(n, 0.0);
    unit[k] = 1.0;
    out[k] = directional_fd(program, args, argnum, unit)[0];
  }
  return out;
}

double sigmoid(double z) { return 1.0 / (1.0 + std::exp(-z)); }

}  // namespace

TEST_CASE("grad of sum(shard_map(sin(x) * 2)) with P('x') in and out is 2 cos(x)") {
  ensure_core_primitives();
  for (const bool check_vma : {true, false}) {
    CAPTURE(check_vma);
    const ShardMapSpec spec = spec_8({"P('x')"}, {"P('x')"}, check_vma);
    JaxprPtr body;
    {
      const AxisEnvScope axes({{"x", 8}});
      JaxprBuilder b;
      const Var x = local_arg(b, spec, 0, {16});
      body = b.build({b.bind1("mul", {b.bind1("sin", {x}), scalar_literal(2.0, DType::kFloat64, true)})});
    }
    const JaxprPtr program = summed_program({{16}}, [&](JaxprBuilder& outer, const std::vector<Atom>& args) {
      return bind_shard_map(outer, body, args, spec);
    });
    const std::vector<double> xs = ramp(16, -1.3, 0.21);
    const std::vector<BufferPtr> args = {f64({16}, xs)};
    std::vector<double> analytic;
    for (const double x : xs) analytic.push_back(2.0 * std::cos(x));
    const std::vector<double> grad = grad_of(*program, args, 0);
    check_close(grad, analytic);
    check_close(grad, fd_grad(*program, args, 0));
    check_derivatives(*program, args);
  }
}

TEST_CASE("grad through a shard_map splits it into a primal shard_map and a transposed shard_map") {
  ensure_core_primitives();
  const ShardMapSpec spec = spec_8({"P('x')"}, {"P('x')"});
  JaxprPtr body;
  {
    const AxisEnvScope axes({{"x", 8}});
    JaxprBuilder b;
    const Var x = local_arg(b, spec, 0, {16});
    body = b.build({b.bind1("sin", {x})});
  }
  const JaxprPtr program = summed_program({{16}}, [&](JaxprBuilder& outer, const std::vector<Atom>& args) {
    return bind_shard_map(outer, body, args, spec);
  });
  const JaxprPtr grad = grad_jaxpr(*program, {0}, false);
  std::size_t shard_maps = 0;
  for (const Eqn& eqn : grad->eqns) {
    if (eqn.primitive->name != "shard_map") continue;
    ++shard_maps;
    const auto* ref = param(eqn.params, "jaxpr").get_if<ParamValue::JaxprRef>();
    REQUIRE(ref != nullptr);
    const JaxprPtr inner_ptr = *ref;
    REQUIRE(inner_ptr != nullptr);
    const Jaxpr& inner = *inner_ptr;
    // The residual cos(x) comes out of the primal map sharded like x and goes into the transposed one.
    if (shard_maps == 1) {
      CHECK(inner.eqns.size() == 2);
      CHECK(param(eqn.params, "out_specs").as_items("out_specs").size() == 2);
    } else {
      CHECK(inner.eqns.size() == 1);
      CHECK(inner.eqns[0].primitive->name == "mul");
    }
    for (const ParamValue& spec_value : param(eqn.params, "out_specs").as_items("out_specs")) {
      CHECK(*spec_value.get_if<PartitionSpec>() == parse_partition_spec("P('x')"));
    }
  }
  CHECK(shard_maps == 2);
}

TEST_CASE("seed 000: grad of sum(layer_sharded) with psum in the body matches the analytic gradient") {
  ensure_core_primitives();
  // in_specs=(P('x'), P('x', None), P(None)), out_specs=P(None); body sigmoid(psum(x @ w, 'x') + b).
  const ShardMapSpec spec = spec_8({"P('x')", "P('x', None)", "P(None)"}, {"P(None)"});
  JaxprPtr body;
  {
    const AxisEnvScope axes({{"x", 8}});
    JaxprBuilder b;
    const Var x = local_arg(b, spec, 0, {32});
    const Var w = local_arg(b, spec, 1, {32, 4});
    const Var bias = local_arg(b, spec, 2, {4});
    const Params contract = {
        {"dimension_numbers",
         ParamValue::tuple({ParamValue::tuple({ParamValue::int_tuple({0}), ParamValue::int_tuple({0})}),
                            ParamValue::tuple({ParamValue::int_tuple({}), ParamValue::int_tuple({})})})},
        {"precision", ParamValue::None{}},
        {"preferred_element_type", ParamValue::None{}}};
    const Atom partial = b.bind1("dot_general", {x, w}, contract);
    const Atom total = b.bind1("psum_invariant", {partial}, {{"axes", ParamValue::name_tuple({"x"})}});
    body = b.build({b.bind1("logistic", {b.bind1("add", {total, bias})})});
  }
  const JaxprPtr program = summed_program(
      {{32}, {32, 4}, {4}},
      [&](JaxprBuilder& outer, const std::vector<Atom>& args) { return bind_shard_map(outer, body, args, spec); });
  const std::vector<double> xs = ramp(32, -0.8, 0.05);
  std::vector<double> ws(128);
  for (std::size_t k = 0; k < ws.size(); ++k) ws[k] = 0.3 * std::sin(0.7 * static_cast<double>(k));
  const std::vector<double> bs = {0.1, -0.2, 0.3, -0.4};
  const std::vector<BufferPtr> args = {f64({32}, xs), f64({32, 4}, ws), f64({4}, bs)};
  // d sum(sigmoid(z)) / dz = s (1 - s), with z = x @ w + b.
  std::vector<double> dz(4);
  for (std::size_t j = 0; j < 4; ++j) {
    double z = bs[j];
    for (std::size_t i = 0; i < 32; ++i) z += xs[i] * ws[i * 4 + j];
    dz[j] = sigmoid(z) * (1.0 - sigmoid(z));
  }
  std::vector<double> dx(32, 0.0);
  std::vector<double> dw(128);
  for (std::size_t i = 0; i < 32; ++i) {
    for (std::size_t j = 0; j < 4; ++j) {
      dx[i] += ws[i * 4 + j] * dz[j];
      dw[i * 4 + j] = xs[i] * dz[j];
    }
  }
  check_close(grad_of(*program, args, 0), dx);
  check_close(grad_of(*program, args, 1), dw);
  check_close(grad_of(*program, args, 2), dz);
  check_close(grad_of(*program, args, 2), fd_grad(*program, args, 2));
  check_derivatives(*program, args);
}

TEST_CASE("grad through shard_map with a replicated operand sums its per-device cotangents") {
  ensure_core_primitives();
  // f(x, w) = psum(sum(x * w * w), 'x') with x sharded and w replicated: df/dw = 2 w sum(x).
  for (const bool check_vma : {true, false}) {
    CAPTURE(check_vma);
    const ShardMapSpec spec = spec_8({"P('x')", "P()"}, {"P()"}, check_vma);
    JaxprPtr body;
    {
      const AxisEnvScope axes({{"x", 8}});
      JaxprBuilder b;
      const Var x = local_arg(b, spec, 0, {16});
      const Var w = local_arg(b, spec, 1, {});
      const Atom local = sum_all(b, b.bind1("mul", {x, b.bind1("mul", {w, w})}));
      const Atom total =
          check_vma ? b.bind1("psum_invariant", {local}, {{"axes", ParamValue::name_tuple({"x"})}})
                    : b.bind1("psum", {local},
                              {{"axes", ParamValue::name_tuple({"x"})}, {"axis_index_groups", ParamValue::None{}}});
      body = b.build({total});
    }
    const JaxprPtr program = summed_program({{16}, {}}, [&](JaxprBuilder& outer, const std::vector<Atom>& args) {
      return bind_shard_map(outer, body, args, spec);
    });
    const std::vector<double> xs = ramp(16, -0.5, 0.13);
    const double w = 0.7;
    const std::vector<BufferPtr> args = {f64({16}, xs), f64({}, {w})};
    double sum_x = 0;
    for (const double x : xs) sum_x += x;
    check_close(grad_of(*program, args, 1), {2.0 * w * sum_x});
    check_close(grad_of(*program, args, 0), std::vector<double>(16, w * w));
    check_derivatives(*program, args);
  }
}

TEST_CASE("grad of sum(xla_pmap(f)(x, s)) with s broadcast (in_axes=None) and a psum in the body") {
  ensure_core_primitives();
  // f(x, s) = sin(x) * s + psum(x, 'i') per instance; x mapped over 4 instances, s shared.
  JaxprPtr body;
  {
    const AxisEnvScope axes({{"i", 4}});
    JaxprBuilder b;
    const Var x = b.arg(f64_aval({3}));
    const Var s = b.arg(f64_aval({3}));
    const Atom total =
        b.bind1("psum", {x}, {{"axes", ParamValue::name_tuple({"i"})}, {"axis_index_groups", ParamValue::None{}}});
    body = b.build({b.bind1("add", {b.bind1("mul", {b.bind1("sin", {x}), s}), total})});
  }
  PmapSpec spec;
  spec.axis_name = "i";
  spec.in_axes = {0, std::nullopt};
  spec.out_axes = {0};
  const std::vector<Device>& devices = make_device_preset("tpu-v3-8").devices;
  for (const JaxVersion version : {JaxVersion{0, 4, 3}, JaxVersion{0, 4, 20}, JaxVersion{0, 9, 0}}) {
    CAPTURE(version.minor);
    const JaxProfile profile(version);
    const JaxprPtr program = summed_program({{4, 3}, {3}}, [&](JaxprBuilder& outer, const std::vector<Atom>& args) {
      return bind_pmap(outer, body, args, spec, devices, profile);
    });
    const bool old_pmap = version < JaxVersion{0, 8, 0};
    CHECK((program->eqns.at(0).primitive->name == "xla_pmap") == old_pmap);
    const std::vector<double> xs = ramp(12, -1.0, 0.17);
    const std::vector<double> ss = {0.5, -1.5, 2.0};
    const std::vector<BufferPtr> args = {f64({4, 3}, xs), f64({3}, ss)};
    // d/dx[r][c] = cos(x[r][c]) s[c] + 4 (each instance adds psum over all four); d/ds[c] = sum_r sin(x[r][c]).
    std::vector<double> dx(12);
    std::vector<double> ds(3, 0.0);
    for (std::size_t r = 0; r < 4; ++r) {
      for (std::size_t c = 0; c < 3; ++c) {
        dx[r * 3 + c] = std::cos(xs[r * 3 + c]) * ss[c] + 4.0;
        ds[c] += std::sin(xs[r * 3 + c]);
      }
    }
    check_close(grad_of(*program, args, 0), dx);
    check_close(grad_of(*program, args, 1), ds);
    check_derivatives(*program, args);
  }
}

TEST_CASE("grad of an xla_pmap with out_axes=None raises JAX's NotImplementedError") {
  ensure_core_primitives();
  JaxprPtr body;
  {
    const AxisEnvScope axes({{"i", 4}});
    JaxprBuilder b;
    const Var x = b.arg(f64_aval({}));
    body = b.build({b.bind1("psum", {b.bind1("sin", {x})},
                            {{"axes", ParamValue::name_tuple({"i"})}, {"axis_index_groups", ParamValue::None{}}})});
  }
  PmapSpec spec;
  spec.axis_name = "i";
  spec.in_axes = {0};
  spec.out_axes = {std::nullopt};
  const JaxProfile profile(JaxVersion{0, 4, 20});
  const JaxprPtr program = summed_program({{4}}, [&](JaxprBuilder& outer, const std::vector<Atom>& args) {
    return bind_pmap(outer, body, args, spec, make_device_preset("tpu-v3-8").devices, profile);
  });
  CHECK_THROWS_WITH_AS((void)grad_jaxpr(*program, {0}, false),
                       "autodiff of pmap functions with out_axes=None is not supported. Consider using shard_map "
                       "instead.",
                       Error);
}
