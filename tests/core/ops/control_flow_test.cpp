// scan / while / cond / remat2: values against Python-loop references, JAX's jaxpr text and errors, and the
// JVP, grad and vmap rules.
#include "ops/control_flow.h"

#include <doctest/doctest.h>

#include "api/control_flow.h"
#include "api/lax.h"
#include "api/numpy.h"
#include "api/session.h"
#include "base/error.h"
#include "cost/cost_rules.h"
#include "exec/interpreter.h"
#include "ir/jaxpr_printer.h"
#include "ops/ops.h"
#include "trace/builder.h"
#include "transforms/autodiff.h"
#include "transforms/batching.h"

namespace shardscope::api {
namespace {

Value f32(Shape shape, std::vector<float> values) {
  ensure_core_primitives();
  return jnp::asarray(make_buffer(DType::kFloat32, std::move(shape), values));
}

std::vector<double> host(const Value& value) {
  const BufferPtr buffer = value.array().gather();
  std::vector<double> out;
  for (int64_t i = 0; i < buffer->size(); ++i) out.push_back(buffer->element_as_double(i));
  return out;
}

std::vector<double> host(const BufferPtr& buffer) {
  std::vector<double> out;
  for (int64_t i = 0; i < buffer->size(); ++i) out.push_back(buffer->element_as_double(i));
  return out;
}

// carry, x -> (carry * 0.5 + x, carry + x): a scan whose carry and ys both depend on the order.
std::vector<Value> decay_body(const std::vector<Value>& args) {
  const Value next = lax::add(lax::mul(args[0], py_float(0.5)), args[1]);
  return {next, lax::add(args[0], args[1])};
}

std::vector<double> decay_reference(double carry, const std::vector<double>& xs, bool reverse,
                                    std::vector<double>& ys) {
  ys.assign(xs.size(), 0.0);
  for (std::size_t step = 0; step < xs.size(); ++step) {
    const std::size_t i = reverse ? xs.size() - 1 - step : step;
    ys[i] = carry + xs[i];
    carry = carry * 0.5 + xs[i];
  }
  return {carry};
}

ScanSpec scan_spec(int64_t length, bool reverse = false) {
  ScanSpec spec;
  spec.carry_names = {"the input carry c"};
  spec.length = length;
  spec.reverse = reverse;
  return spec;
}

TEST_CASE("scan equals the Python loop forwards and in reverse") {
  const std::vector<double> xs{1.0, 0.25, -2.0, 0.0625};
  for (const bool reverse : {false, true}) {
    const std::vector<Value> out =
        scan(decay_body, {f32({}, {3.0F})}, {f32({4}, {1.0F, 0.25F, -2.0F, 0.0625F})}, scan_spec(4, reverse));
    std::vector<double> ys;
    const std::vector<double> carry = decay_reference(3.0, xs, reverse, ys);
    CHECK(host(out[0]) == carry);
    CHECK(host(out[1]) == ys);
  }
}

TEST_CASE("scan prints JAX 0.11's params and moves forwarded carries to the constants") {
  const std::string text = make_jaxpr_text(
      [](const std::vector<Value>& args) { return scan(decay_body, {args[0]}, {args[1]}, scan_spec(3)); },
      {f32({}, {0.0F}), f32({3}, {0.0F, 0.0F, 0.0F})}, "f");
  CHECK(text.find("scan[\n      ft_in=((), (None,), (None,))\n      ft_out=((None,), (RightsOnly(Right(None)),))") !=
        std::string::npos);
  CHECK(text.find("length=3") != std::string::npos);
  CHECK(text.find("reverse=False") != std::string::npos);
  CHECK(text.find("unroll=1") != std::string::npos);
  // A carry returned unchanged is read-only: it becomes the first constant.
  const std::string forwarded = make_jaxpr_text(
      [](const std::vector<Value>& args) {
        return scan(
            [](const std::vector<Value>& a) {
              return std::vector<Value>{a[0], lax::add(a[0], a[1])};
            },
            {args[0]}, {args[1]}, scan_spec(3));
      },
      {f32({}, {0.0F}), f32({3}, {0.0F, 0.0F, 0.0F})}, "f");
  CHECK(forwarded.find("ft_in=((None,), (), (None,))") != std::string::npos);
}

TEST_CASE("scan's carry type error names the component and both types") {
  try {
    (void)scan(
        [](const std::vector<Value>& a) {
          return std::vector<Value>{lax::convert_element_type(a[0], DType::kInt32), a[1]};
        },
        {f32({}, {1.0F})}, {f32({2}, {1.0F, 2.0F})}, scan_spec(2));
    FAIL("expected a TypeError");
  } catch (const Error& error) {
    CHECK(error.python_type() == "TypeError");
    CHECK(std::string(error.what()) ==
          "scan body function carry input and carry output must have equal types, but they differ:\n\n"
          "The input carry c has type float32[] but the corresponding output carry component has type int32[], so "
          "the dtypes do not match.\n\nRevise the function so that all output types match the corresponding input "
          "types.");
  }
}

TEST_CASE("while_loop counts as the Python loop does and cond must return a boolean scalar") {
  LoopSpec spec;
  spec.what = "while_loop body";
  spec.carry_names = {"the input carry v[0]", "the input carry v[1]"};
  const auto cond = [](const std::vector<Value>& v) { return std::vector<Value>{lax::binary("lt", v[0], py_int(5))}; };
  const auto body = [](const std::vector<Value>& v) {
    return std::vector<Value>{lax::add(v[0], py_int(1)), lax::mul(v[1], py_float(2.0))};
  };
  const std::vector<Value> out = while_loop(
      cond, body, {jnp::asarray(make_buffer(DType::kInt32, {}, std::vector<int32_t>{0})), f32({}, {0.0625F})}, spec);
  CHECK(host(out[0]) == std::vector<double>{5});
  CHECK(host(out[1]) == std::vector<double>{2.0});
  CHECK_THROWS_WITH_AS(
      (void)while_loop([](const std::vector<Value>& v) { return std::vector<Value>{v[0]}; }, body,
                       {jnp::asarray(make_buffer(DType::kInt32, {}, std::vector<int32_t>{0})), f32({}, {1.0F})}, spec),
      "cond_fun must return a boolean scalar, but got output type(s) [ShapedArray(int32[])].", Error);
}

TEST_CASE("cond runs the chosen branch and switch clamps through the index the caller gives") {
  SwitchSpec spec{"cond", {"false_fun", "true_fun"}, {"f at x.py:1", "g at x.py:2"}, {}};
  spec.reference = 1;
  const auto double_it = [](const std::vector<Value>& v) { return std::vector<Value>{lax::mul(v[0], py_float(2.0))}; };
  const auto negate = [](const std::vector<Value>& v) { return std::vector<Value>{lax::neg(v[0])}; };
  const Value one = typed_scalar(1, DType::kInt32);
  const Value zero = typed_scalar(0, DType::kInt32);
  CHECK(host(switch_branches(one, {negate, double_it}, {f32({2}, {1.5F, -3.0F})}, spec)[0]) ==
        std::vector<double>{3.0, -6.0});
  CHECK(host(switch_branches(zero, {negate, double_it}, {f32({2}, {1.5F, -3.0F})}, spec)[0]) ==
        std::vector<double>{-1.5, 3.0});
  const auto to_int = [](const std::vector<Value>& v) {
    return std::vector<Value>{lax::convert_element_type(v[0], DType::kInt32)};
  };
  CHECK_THROWS_WITH_AS((void)switch_branches(one, {negate, to_int}, {f32({2}, {1.5F, -3.0F})}, spec),
                       "cond branches must have equal output types but they differ.\n\ntrue_fun is g at x.py:2\n"
                       "false_fun is f at x.py:1\n\nThe output of true_fun has type int32[2] but the corresponding "
                       "output of false_fun has type float32[2], so the dtypes do not match.\n\nRevise true_fun and/or "
                       "false_fun so that all output types match.",
                       Error);
}

// f(c0, xs) = final carry of the decay scan: linear in both, so the gradient is exact.
JaxprPtr decay_program(bool reverse) {
  const Traced traced = trace_function(
      [reverse](const std::vector<Value>& args) {
        const std::vector<Value> out = scan(decay_body, {args[0]}, {args[1]}, scan_spec(4, reverse));
        return std::vector<Value>{lax::add(out[0], lax::reduce("reduce_sum", lax::mul(out[1], out[1]), {0}))};
      },
      {Aval::of({}, DType::kFloat32), Aval::of({4}, DType::kFloat32)}, "f");
  return consts_as_args(*traced.jaxpr);
}

TEST_CASE("grad through scan equals the hand-derived gradient") {
  ensure_autodiff_rules();
  // loss = carry_final + sum(ys^2), carry_i+1 = carry_i/2 + x_i, ys_i = carry_i + x_i.
  const std::vector<double> xs{1.0, 0.5, -1.0, 0.25};
  const JaxprPtr grads = grad_jaxpr(*decay_program(false), {0, 1}, false);
  const std::vector<BufferPtr> out =
      evaluate_jaxpr(*grads, {make_buffer(DType::kFloat32, {}, std::vector<float>{2.0F}),
                              make_buffer(DType::kFloat32, {4}, std::vector<float>{1.0F, 0.5F, -1.0F, 0.25F})});
  // Reference by forward-mode over a Python loop: d/dc0 and d/dx_k with exact dual numbers.
  const auto loss_grad = [&](std::size_t which) {
    double c = 2.0;
    double dc = which == 0 ? 1.0 : 0.0;
    double loss = 0.0;
    double dloss = 0.0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const double dx = which == i + 1 ? 1.0 : 0.0;
      const double y = c + xs[i];
      const double dy = dc + dx;
      loss += y * y;
      dloss += 2 * y * dy;
      c = c * 0.5 + xs[i];
      dc = dc * 0.5 + dx;
    }
    (void)loss;
    return dloss + dc;
  };
  CHECK(host(out[0]) == std::vector<double>{loss_grad(0)});
  CHECK(host(out[1]) == std::vector<double>{loss_grad(1), loss_grad(2), loss_grad(3), loss_grad(4)});
}

TEST_CASE("reverse-mode through while_loop raises JAX's ValueError, forward mode works") {
  ensure_autodiff_rules();
  LoopSpec spec;
  spec.what = "while_loop body";
  spec.carry_names = {"the input carry v[0]", "the input carry v[1]"};
  const Traced traced = trace_function(
      [&](const std::vector<Value>& args) {
        const std::vector<Value> out = while_loop(
            [](const std::vector<Value>& v) { return std::vector<Value>{lax::binary("lt", v[0], py_int(3))}; },
            [](const std::vector<Value>& v) {
              return std::vector<Value>{lax::add(v[0], py_int(1)), lax::mul(v[1], v[1])};
            },
            {py_int(0), args[0]}, spec);
        return std::vector<Value>{out[1]};
      },
      {Aval::of({}, DType::kFloat32)}, "f");
  const JaxprPtr program = consts_as_args(*traced.jaxpr);
  CHECK_THROWS_WITH_AS((void)evaluate_jaxpr(*grad_jaxpr(*program, {0}, false),
                                            {make_buffer(DType::kFloat32, {}, std::vector<float>{1.5F})}),
                       "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with dynamic "
                       "start/stop values. Try using lax.scan, or using fori_loop with static start/stop.",
                       Error);
  // x^8: derivative 8 x^7 at x = 1.5.
  const JaxprPtr jvp = jvp_jaxpr(*program);
  const std::vector<BufferPtr> out = evaluate_jaxpr(*jvp, {make_buffer(DType::kFloat32, {}, std::vector<float>{1.5F}),
                                                           make_buffer(DType::kFloat32, {}, std::vector<float>{1.0F})});
  CHECK(host(out[0])[0] == doctest::Approx(25.62890625));
  CHECK(host(out[1])[0] == doctest::Approx(8 * 17.0859375));
}

TEST_CASE("vmap of cond with a batched predicate selects between both branches") {
  ensure_batch_rules();
  SwitchSpec spec{"cond", {"false_fun", "true_fun"}, {"f", "g"}, {}};
  const Traced traced = trace_function(
      [&](const std::vector<Value>& args) {
        const Value index = lax::convert_element_type(args[0], DType::kInt32);
        return switch_branches(
            index,
            {[](const std::vector<Value>& v) { return std::vector<Value>{lax::neg(v[0])}; },
             [](const std::vector<Value>& v) { return std::vector<Value>{lax::mul(v[0], py_float(2.0))}; }},
            {args[1]}, spec);
      },
      {Aval::of({}, DType::kBool), Aval::of({}, DType::kFloat32)}, "f");
  const JaxprPtr batched = vmap_jaxpr(*consts_as_args(*traced.jaxpr),
                                      {Aval::of({3}, DType::kBool), Aval::of({3}, DType::kFloat32)}, {0, 0}, {0});
  bool has_select = false;
  for (const Eqn& eqn : batched->eqns) has_select = has_select || eqn.primitive->name == "select_n";
  CHECK(has_select);
  const std::vector<BufferPtr> out =
      evaluate_jaxpr(*batched, {make_buffer(DType::kBool, {3}, std::vector<uint8_t>{1, 0, 1}),
                                make_buffer(DType::kFloat32, {3}, std::vector<float>{1.0F, 2.0F, -0.5F})});
  CHECK(host(out[0]) == std::vector<double>{2.0, -2.0, -1.0});
}

TEST_CASE("vmap of scan batches the carry the body makes batched") {
  ensure_batch_rules();
  const Traced traced = trace_function(
      [](const std::vector<Value>& args) { return scan(decay_body, {py_float(0.0)}, {args[0]}, scan_spec(4)); },
      {Aval::of({4}, DType::kFloat32)}, "f");
  const JaxprPtr batched = vmap_jaxpr(*consts_as_args(*traced.jaxpr), {Aval::of({2, 4}, DType::kFloat32)}, {0}, {0, 0});
  const std::vector<BufferPtr> out = evaluate_jaxpr(
      *batched, {make_buffer(DType::kFloat32, {2, 4}, std::vector<float>{1, 0.5F, -1, 0.25F, 2, 2, 2, 2})});
  std::vector<double> ys0;
  std::vector<double> ys1;
  const double c0 = decay_reference(0.0, {1, 0.5, -1, 0.25}, false, ys0)[0];
  const double c1 = decay_reference(0.0, {2, 2, 2, 2}, false, ys1)[0];
  CHECK(host(out[0]) == std::vector<double>{c0, c1});
  std::vector<double> ys = ys0;
  ys.insert(ys.end(), ys1.begin(), ys1.end());
  CHECK(host(out[1]) == ys);
}

TEST_CASE("checkpoint binds remat2 with JAX's params and grad through it is exact") {
  ensure_autodiff_rules();
  const Traced traced = trace_function(
      [](const std::vector<Value>& args) {
        return checkpoint([](const std::vector<Value>& v) { return std::vector<Value>{lax::mul(v[0], v[0])}; }, args,
                          true, std::nullopt);
      },
      {Aval::of({}, DType::kFloat32)}, "f");
  const std::string text = print_jaxpr(*traced.jaxpr, session().profile);
  CHECK(text.find("remat2[") != std::string::npos);
  CHECK(text.find("differentiated=False") != std::string::npos);
  CHECK(text.find("policy=None") != std::string::npos);
  CHECK(text.find("prevent_cse=True") != std::string::npos);
  const JaxprPtr grads = grad_jaxpr(*consts_as_args(*traced.jaxpr), {0}, false);
  CHECK(host(evaluate_jaxpr(*grads, {make_buffer(DType::kFloat32, {}, std::vector<float>{1.5F})})[0]) ==
        std::vector<double>{3.0});
}

TEST_CASE("a scan costs its body times its length, a cond its most expensive branch") {
  ensure_cost_rules();
  const Traced traced = trace_function(
      [](const std::vector<Value>& args) {
        std::vector<Value> out = scan(decay_body, {args[0]}, {args[1]}, scan_spec(4));
        SwitchSpec spec{"switch", {"branch 0", "branch1"}, {"f", "g"}, {}};
        const Value cheap = switch_branches(
            typed_scalar(0, DType::kInt32),
            {[](const std::vector<Value>& v) { return std::vector<Value>{v[0]}; },
             [](const std::vector<Value>& v) { return std::vector<Value>{lax::mul(lax::add(v[0], v[0]), v[0])}; }},
            {out[1]}, spec)[0];
        return std::vector<Value>{out[0], cheap};
      },
      {Aval::of({}, DType::kFloat32), Aval::of({4}, DType::kFloat32)}, "f");
  const Jaxpr& program = *traced.jaxpr;
  REQUIRE(program.eqns.size() == 2);
  // The body does 3 scalar flops per iteration; the expensive branch 2 flops on 4 elements.
  CHECK(equation_cost(program.eqns[0]).flops == 12.0);
  CHECK(equation_cost(program.eqns[1]).flops == 8.0);
}

}  // namespace
}  // namespace shardscope::api
