// jvp / grad / value_and_grad as program transformations: compositions, argnums, has_aux, jit, errors.
#include <doctest/doctest.h>

#include <cmath>

#include "base/error.h"
#include "core/transforms/autodiff_test_util.h"
#include "ops/structural.h"

using namespace shardscope;
using namespace shardscope::testing;

namespace {

const Params kAccuracy{{"accuracy", ParamValue::None{}}};

Params sum_axes(std::vector<int64_t> axes) {
  return {{"axes", ParamValue::int_tuple(axes)}, {"out_sharding", ParamValue::None{}}};
}

// loss(w1, b1, w2, x) = sum(logistic(tanh(x @ w1 + b1) @ w2)^2): a small MLP with broadcasting.
JaxprPtr mlp_loss() {
  JaxprBuilder b;
  const Var w1 = b.arg(f64_aval({3, 4}));
  const Var b1 = b.arg(f64_aval({4}));
  const Var w2 = b.arg(f64_aval({4, 2}));
  const Var x = b.arg(f64_aval({5, 3}));
  const Params matmul{{"dimension_numbers", dot_dimension_numbers_param({1}, {0}, {}, {})},
                      {"precision", ParamValue::None{}},
                      {"preferred_element_type", DType::kFloat64}};
  const Atom xw = b.bind1("dot_general", {x, w1}, matmul);
  const Atom bias = b.bind1("broadcast_in_dim", {b1},
                            {{"broadcast_dimensions", ParamValue::int_tuple({1})},
                             {"shape", ParamValue::int_tuple({5, 4})},
                             {"sharding", ParamValue::None{}}});
  const Atom h = b.bind1("tanh", {b.bind1("add", {xw, bias})}, kAccuracy);
  const Atom y = b.bind1("logistic", {b.bind1("dot_general", {h, w2}, matmul)}, kAccuracy);
  const Atom sq = b.bind1("integer_pow", {y}, {{"y", 2}});
  const Atom scaled = b.bind1("mul", {sq, scalar_literal(0.5, DType::kFloat64, true)});
  return b.build({b.bind1("reduce_sum", {scaled}, sum_axes({0, 1}))});
}

std::vector<BufferPtr> mlp_args() {
  return {f64({3, 4}, ramp(12, -0.6, 0.1)), f64({4}, {0.1, -0.2, 0.3, 0.05}), f64({4, 2}, ramp(8, 0.4, -0.11)),
          f64({5, 3}, ramp(15, -1.0, 0.13))};
}

std::vector<std::string> primitive_names(const Jaxpr& jaxpr) {
  std::vector<std::string> names;
  for (const Eqn& eqn : jaxpr.eqns) names.push_back(eqn.primitive->name);
  return names;
}

}  // namespace

TEST_CASE("grad of a small MLP loss matches finite differences for every parameter") {
  const JaxprPtr loss = mlp_loss();
  const std::vector<BufferPtr> args = mlp_args();
  const JaxprPtr grads = grad_jaxpr(*loss, {0, 1, 2}, false);
  REQUIRE(grads->outvars.size() == 3);
  const std::vector<BufferPtr> values = evaluate_jaxpr(*grads, args);
  for (std::size_t p = 0; p < 3; ++p) {
    CAPTURE(p);
    const std::vector<double> g = values_of(values[p]);
    std::vector<double> fd(g.size());
    for (std::size_t k = 0; k < g.size(); ++k) {
      std::vector<double> unit(g.size(), 0.0);
      unit[k] = 1;
      fd[k] = directional_fd(*loss, args, p, unit)[0];
    }
    check_close(g, fd, 1e-6);
  }
  check_derivatives(*loss, args, 1e-6);
}

TEST_CASE("value_and_grad returns the value first, then the gradients of the argnums in order") {
  const JaxprPtr loss = mlp_loss();
  const std::vector<BufferPtr> args = mlp_args();
  const JaxprPtr vg = value_and_grad_jaxpr(*loss, {2, 0}, false);
  REQUIRE(vg->outvars.size() == 3);
  const std::vector<BufferPtr> outs = evaluate_jaxpr(*vg, args);
  CHECK(values_of(outs[0])[0] == doctest::Approx(run(*loss, args)[0]));
  CHECK(outs[1]->shape() == Shape{4, 2});
  CHECK(outs[2]->shape() == Shape{3, 4});
  std::vector<double> unit(8, 0.0);
  unit[3] = 1;
  CHECK(values_of(outs[1])[3] == doctest::Approx(directional_fd(*loss, args, 2, unit)[0]).epsilon(1e-6));
}

TEST_CASE("has_aux differentiates the first output and passes the others through") {
  JaxprBuilder b;
  const Var x = b.arg(f64_aval({}));
  const Atom s = b.bind1("sin", {x}, kAccuracy);
  const Atom aux = b.bind1("mul", {x, scalar_literal(10.0, DType::kFloat64, true)});
  const JaxprPtr f = b.build({s, aux});
  const JaxprPtr g = grad_jaxpr(*f, {0}, true);
  REQUIRE(g->outvars.size() == 2);
  const std::vector<BufferPtr> outs = evaluate_jaxpr(*g, {f64({}, {0.3})});
  CHECK(values_of(outs[0])[0] == doctest::Approx(std::cos(0.3)));
  CHECK(values_of(outs[1])[0] == doctest::Approx(3.0));
  const JaxprPtr vg = value_and_grad_jaxpr(*f, {0}, true);
  const std::vector<BufferPtr> vouts = evaluate_jaxpr(*vg, {f64({}, {0.3})});
  CHECK(values_of(vouts[0])[0] == doctest::Approx(std::sin(0.3)));
  CHECK(values_of(vouts[1])[0] == doctest::Approx(3.0));
  CHECK(values_of(vouts[2])[0] == doctest::Approx(std::cos(0.3)));
}

TEST_CASE("grad of sin emits the equations JAX emits: sin, cos, then mul 1.0 by the residual") {
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({}, DType::kFloat32));
  const JaxprPtr f = b.build({b.bind1("sin", {x}, kAccuracy)});
  const JaxprPtr g = grad_jaxpr(*f, {0}, false);
  // make_jaxpr(jax.grad(jnp.sin))(1.0): { lambda ; a:f32[]. let b = sin a; c = cos a; d = mul 1.0:f32[] c in (d,) }
  CHECK(primitive_names(*g) == std::vector<std::string>{"sin", "cos", "mul"});
  const Eqn& product = g->eqns[2];
  const auto* one = std::get_if<Literal>(&product.inputs[0]);
  REQUIRE(one != nullptr);
  CHECK(std::get<double>(one->value) == 1.0);
  CHECK(std::get<Var>(product.inputs[1]) == g->eqns[1].outputs[0]);
  CHECK(std::get<Var>(g->outvars[0]) == product.outputs[0]);
}

TEST_CASE("grad of x * y with respect to x transposes mul into a mul by y") {
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({}, DType::kFloat32));
  const Var y = b.arg(Aval::of({}, DType::kFloat32));
  const JaxprPtr g = grad_jaxpr(*b.build({b.bind1("mul", {x, y})}), {0}, false);
  // make_jaxpr(grad(lambda x, y: x * y))(1., 2.): { lambda ; a b. let c = mul a b; d = mul 1.0:f32[] b in (d,) }
  CHECK(primitive_names(*g) == std::vector<std::string>{"mul", "mul"});
  CHECK(std::holds_alternative<Literal>(g->eqns[1].inputs[0]));
  CHECK(std::get<Var>(g->eqns[1].inputs[1]) == g->invars[1]);
}

TEST_CASE("jvp of sin multiplies the tangent by cos x") {
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({3}, DType::kFloat32));
  const JaxprPtr j = jvp_jaxpr(*b.build({b.bind1("sin", {x}, kAccuracy)}));
  CHECK(primitive_names(*j) == std::vector<std::string>{"sin", "cos", "mul"});
  CHECK(std::get<Var>(j->eqns[2].inputs[0]) == j->invars[1]);
  REQUIRE(j->outvars.size() == 2);
}

TEST_CASE("grad through a nested jit equation splits it into a primal jit and a transposed jit") {
  JaxprBuilder inner;
  const Var u = inner.arg(f64_aval({3}));
  const Var v = inner.arg(f64_aval({3}));
  const Atom prod = inner.bind1("mul", {inner.bind1("sin", {u}, kAccuracy), v});
  const JaxprPtr body = inner.build({inner.bind1("reduce_sum", {prod}, sum_axes({0}))});
  JaxprBuilder outer;
  const Var x = outer.arg(f64_aval({3}));
  const Var y = outer.arg(f64_aval({3}));
  const Atom called = outer.bind1("jit", {x, y}, {{"jaxpr", ParamValue(body)}, {"name", "f"}});
  const JaxprPtr f = outer.build({outer.bind1("exp", {called}, kAccuracy)});
  const JaxprPtr g = grad_jaxpr(*f, {0, 1}, false);
  const std::vector<std::string> names = primitive_names(*g);
  CHECK(std::count(names.begin(), names.end(), "jit") == 2);
  const std::vector<BufferPtr> args{f64({3}, {0.1, 0.5, -0.3}), f64({3}, {0.7, -0.2, 0.4})};
  const std::vector<BufferPtr> grads = evaluate_jaxpr(*g, args);
  for (std::size_t p = 0; p < 2; ++p) {
    std::vector<double> fd(3);
    for (std::size_t k = 0; k < 3; ++k) {
      std::vector<double> unit(3, 0.0);
      unit[k] = 1;
      fd[k] = directional_fd(*f, args, p, unit)[0];
    }
    check_close(values_of(grads[p]), fd, 1e-6);
  }
  check_derivatives(*f, args, 1e-6);
}

TEST_CASE("grad raises JAX's TypeErrors for non-scalar outputs, integer inputs and missing arguments") {
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({3}, DType::kFloat32));
  const Var n = b.arg(Aval::of({}, DType::kInt32));
  const JaxprPtr vector_out = b.build({b.bind1("sin", {x}, kAccuracy)});
  auto message = [](const auto& call) -> std::pair<std::string, std::string> {
    try {
      call();
    } catch (const Error& e) {
      return {e.python_type(), e.what()};
    }
    return {"", ""};
  };
  auto [type, text] = message([&] { (void)grad_jaxpr(*vector_out, {0}, false); });
  CHECK(type == "TypeError");
  CHECK(text ==
        "Gradient only defined for scalar-output functions. Output had shape: (3,). To get the gradient, reduce the "
        "output to a scalar with output.sum(), or use jax.jacobian to differentiate a function with a non-scalar "
        "output.");
  std::tie(type, text) = message([&] { (void)grad_jaxpr(*vector_out, {1}, false); });
  CHECK(type == "TypeError");
  CHECK(text ==
        "grad requires real- or complex-valued inputs (input dtype that is a sub-dtype of np.inexact), but got int32. "
        "If you want to use Boolean- or integer-valued inputs, use vjp or set allow_int to True.");
  std::tie(type, text) = message([&] { (void)grad_jaxpr(*vector_out, {3}, false); });
  CHECK(type == "TypeError");
  CHECK(text ==
        "differentiating with respect to argnums=3 requires at least 4 positional arguments to be passed by the "
        "caller, but got only 2 positional arguments.");
  JaxprBuilder ib;
  const Var i = ib.arg(Aval::of({}, DType::kFloat32));
  const JaxprPtr int_out =
      ib.build({ib.bind1("convert_element_type", {i},
                         {{"new_dtype", DType::kInt32}, {"sharding", ParamValue::None{}}, {"weak_type", false}})});
  std::tie(type, text) = message([&] { (void)grad_jaxpr(*int_out, {0}, false); });
  CHECK(type == "TypeError");
  CHECK(text ==
        "grad requires real-valued outputs (output dtype that is a sub-dtype of np.floating), but got int32. For "
        "differentiation of functions with integer outputs, use jax.vjp directly.");
  (void)n;
}

TEST_CASE("a function that does not depend on the argument has a zero gradient") {
  JaxprBuilder b;
  const Var x = b.arg(f64_aval({2}));
  const Var y = b.arg(f64_aval({}));
  const JaxprPtr f = b.build({b.bind1("sin", {y}, kAccuracy)});
  const JaxprPtr g = grad_jaxpr(*f, {0}, false);
  check_close(run(*g, {f64({2}, {1, 2}), f64({}, {0.5})}), {0.0, 0.0});
  (void)x;
}
