// jax.custom_jvp / jax.custom_vjp through core: values come from the function, derivatives from the rules, the
// forward-mode error of a custom_vjp, and the printed equation.
#include "api/custom_derivatives.h"

#include <doctest/doctest.h>

#include <cmath>

#include "api/session.h"
#include "api/trace.h"
#include "api/transforms.h"
#include "base/error.h"

using namespace shardscope;
using namespace shardscope::api;

namespace {

Value scalar(double v) { return Value::scalar(scalar_literal(v, DType::kFloat32, false)); }

double value_of(const Value& value) { return value.array().gather()->element_as_double(0); }

Value mul(const Value& a, const Value& b) { return bind1("mul", {a, b}); }
Value sin_of(const Value& a) { return bind1("sin", {a}, {{"accuracy", ParamValue::None{}}}); }
Value cos_of(const Value& a) { return bind1("cos", {a}, {{"accuracy", ParamValue::None{}}}); }

// f(x) = sin(x) with a JVP rule that scales the tangent by 10 (a rule the true derivative would not give).
std::vector<Value> scaled_sin(const std::vector<Value>& x) {
  const Function f = [](const std::vector<Value>& a) { return std::vector<Value>{sin_of(a[0])}; };
  const Function jvp = [](const std::vector<Value>& a) {
    return std::vector<Value>{sin_of(a[0]), mul(mul(cos_of(a[0]), a[1]), scalar(10))};
  };
  return custom_jvp_call(f, jvp, x, {"scaled_sin", {"scaled_sin_jvp"}});
}

// g(x) = x * x with a backward rule that returns 3 * cotangent.
std::vector<Value> square_with_bwd(const std::vector<Value>& x) {
  const Function f = [](const std::vector<Value>& a) { return std::vector<Value>{mul(a[0], a[0])}; };
  const Function fwd = [](const std::vector<Value>& a) { return std::vector<Value>{mul(a[0], a[0]), a[0]}; };
  const Function bwd = [](const std::vector<Value>& a) { return std::vector<Value>{mul(a[1], scalar(3))}; };
  return custom_vjp_call(f, fwd, bwd, x, [] { return std::size_t{1}; }, {"square", {"square_fwd", "square_bwd"}});
}

}  // namespace

TEST_CASE("custom_jvp: the value is the function's, jvp and grad use the rule") {
  const Value x = scalar(0.5);
  CHECK(value_of(scaled_sin({x}).at(0)) == doctest::Approx(std::sin(0.5)));
  const std::vector<Value> jvp = call_jvp(scaled_sin, {x}, {scalar(1)}, "scaled_sin");
  CHECK(value_of(jvp.at(1)) == doctest::Approx(10 * std::cos(0.5)));
  const std::vector<Value> grad = call_grad(scaled_sin, {x}, {0}, false, false, "scaled_sin");
  CHECK(value_of(grad.at(0)) == doctest::Approx(10 * std::cos(0.5)));
}

TEST_CASE("custom_jvp prints as JAX prints custom_jvp_call: name, call_jaxpr, jvp, symbolic_zeros") {
  const std::string text = make_jaxpr_text(scaled_sin, {scalar(0.5)}, "scaled_sin");
  CHECK(text.find("custom_jvp_call[\n      name=scaled_sin\n      call_jaxpr={") != std::string::npos);
  CHECK(text.find("jvp=scaled_sin_jvp\n      symbolic_zeros=False\n    ]") != std::string::npos);
}

TEST_CASE("custom_vjp: the value is the function's, grad uses the backward rule, jvp is JAX's TypeError") {
  const Value x = scalar(2);
  CHECK(value_of(square_with_bwd({x}).at(0)) == doctest::Approx(4));
  const std::vector<Value> grad = call_grad(square_with_bwd, {x}, {0}, false, false, "square");
  CHECK(value_of(grad.at(0)) == doctest::Approx(3));
  try {
    (void)call_jvp(square_with_bwd, {x}, {scalar(1)}, "square");
    FAIL("jvp of a custom_vjp function ran");
  } catch (const Error& e) {
    CHECK(e.python_type() == "TypeError");
    CHECK(std::string(e.what()) == "can't apply forward-mode autodiff (jvp) to a custom_vjp function.");
  }
}

TEST_CASE("a custom_vjp backward rule with the wrong number of cotangents is JAX's TypeError") {
  const Function f = [](const std::vector<Value>& a) { return std::vector<Value>{mul(a[0], a[1])}; };
  const Function fwd = [](const std::vector<Value>& a) { return std::vector<Value>{mul(a[0], a[1])}; };
  const Function bwd = [](const std::vector<Value>& a) { return std::vector<Value>{a[0]}; };
  try {
    (void)custom_vjp_call(f, fwd, bwd, {scalar(1), scalar(2)}, [] { return std::size_t{1}; },
                          {"f", {"f_fwd", "f_bwd"}});
    FAIL("a backward rule with one cotangent for two arguments was accepted");
  } catch (const Error& e) {
    CHECK(e.python_type() == "TypeError");
  }
}
