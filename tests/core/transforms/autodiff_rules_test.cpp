// Per-primitive AD rules: completeness of the registry, and each rule against finite differences.
#include <doctest/doctest.h>

#include <cmath>
#include <iostream>

#include "core/transforms/autodiff_test_util.h"
#include "ir/jaxpr_printer.h"
#include "ir/primitive.h"
#include "ops/ops.h"
#include "ops/structural.h"

using namespace shardscope;
using namespace shardscope::testing;

TEST_CASE("every registered primitive has a JVP rule, and the transposable ones are listed") {
  ensure_autodiff_rules();
  std::vector<std::string> missing;
  for (const Primitive* primitive : all_primitives()) {
    if (find_jvp_rule(primitive->name) == nullptr) missing.push_back(primitive->name);
  }
  std::string missing_names;
  for (const std::string& name : missing) missing_names += name + " ";
  CAPTURE(missing_names);
  CHECK(missing.empty());
  const std::vector<std::string> transposable = transposable_primitives();
  std::string listed;
  for (const std::string& name : transposable) listed += name + " ";
  MESSAGE("linear-transposable primitives: " << listed);
  for (const char* name : {"add",
                           "sub",
                           "neg",
                           "mul",
                           "div",
                           "convert_element_type",
                           "reduce_sum",
                           "broadcast_in_dim",
                           "reshape",
                           "transpose",
                           "squeeze",
                           "concatenate",
                           "pad",
                           "slice",
                           "dynamic_slice",
                           "dynamic_update_slice",
                           "gather",
                           "select_n",
                           "dot_general",
                           "cumsum",
                           "rev",
                           "copy",
                           "split",
                           "stack",
                           "unstack",
                           "psum",
                           "psum_invariant",
                           "all_gather",
                           "reduce_scatter",
                           "ppermute",
                           "all_to_all",
                           "pvary",
                           "sharding_constraint",
                           "jit",
                           "add_any"}) {
    CAPTURE(name);
    CHECK(find_transpose_rule(name) != nullptr);
  }
}

namespace {

JaxprPtr unary_program(const std::string& name, const Shape& shape, Params params = {}) {
  JaxprBuilder b;
  const Var x = b.arg(f64_aval(shape));
  return b.build({b.bind1(name, {x}, std::move(params))});
}

JaxprPtr binary_program(const std::string& name, const Shape& shape) {
  JaxprBuilder b;
  const Var x = b.arg(f64_aval(shape));
  const Var y = b.arg(f64_aval(shape));
  return b.build({b.bind1(name, {x, y})});
}

}  // namespace

TEST_CASE("unary elementwise JVPs and gradients match finite differences") {
  const Params accuracy{{"accuracy", ParamValue::None{}}};
  struct Case {
    const char* name;
    double start;
    double step;
  };
  for (const Case c : {Case{"sin", -1.0, 0.7}, {"cos", -1.0, 0.7},      {"tan", -0.6, 0.3},    {"exp", -1.0, 0.5},
                       {"exp2", -1.0, 0.5},    {"log", 0.3, 0.6},       {"log1p", 0.3, 0.6},   {"expm1", -1.0, 0.5},
                       {"tanh", -1.0, 0.5},    {"logistic", -1.0, 0.5}, {"sqrt", 0.3, 0.6},    {"rsqrt", 0.3, 0.6},
                       {"cbrt", 0.3, 0.6},     {"asin", -0.5, 0.3},     {"acos", -0.5, 0.3},   {"atan", -1.0, 0.6},
                       {"sinh", -1.0, 0.6},    {"cosh", -1.0, 0.6},     {"asinh", -1.0, 0.6},  {"acosh", 1.2, 0.6},
                       {"atanh", -0.5, 0.3},   {"erf", -1.0, 0.6},      {"erfc", -1.0, 0.6},   {"erf_inv", -0.5, 0.3},
                       {"lgamma", 0.5, 0.7},   {"digamma", 0.5, 0.7},   {"square", -1.0, 0.6}, {"abs", -1.1, 0.6},
                       {"neg", -1.0, 0.6},     {"copy", -1.0, 0.6}}) {
    CAPTURE(c.name);
    const bool has_accuracy = std::string(c.name) != "asin" && std::string(c.name) != "acos" &&
                              std::string(c.name) != "atan" && std::string(c.name).find("sinh") == std::string::npos &&
                              std::string(c.name).find("cosh") == std::string::npos && std::string(c.name) != "atanh" &&
                              std::string(c.name).find("erf") == std::string::npos && std::string(c.name) != "lgamma" &&
                              std::string(c.name) != "digamma" && std::string(c.name) != "square" &&
                              std::string(c.name) != "abs" && std::string(c.name) != "neg" &&
                              std::string(c.name) != "copy";
    const JaxprPtr program = unary_program(c.name, {4}, has_accuracy ? accuracy : Params{});
    check_derivatives(*program, {f64({4}, ramp(4, c.start, c.step))}, 1e-4);
  }
}

TEST_CASE("binary elementwise JVPs and gradients match finite differences") {
  for (const char* name : {"add", "sub", "mul", "div", "max", "min", "atan2", "pow", "rem"}) {
    CAPTURE(name);
    check_derivatives(*binary_program(name, {3}), {f64({3}, {0.5, 1.7, 2.2}), f64({3}, {1.3, 0.4, 2.9})}, 1e-4);
  }
}

TEST_CASE("gradients of sin, tanh and mul against their analytic derivatives") {
  const std::vector<double> x = {-0.7, 0.2, 1.1};
  const JaxprPtr sin_grad = grad_jaxpr(
      *[] {
        JaxprBuilder b;
        const Var v = b.arg(f64_aval({3}));
        const Atom s = b.bind1("sin", {v}, {{"accuracy", ParamValue::None{}}});
        return b.build(
            {b.bind1("reduce_sum", {s}, {{"axes", ParamValue::int_tuple({0})}, {"out_sharding", ParamValue::None{}}})});
      }(),
      {0}, false);
  std::vector<double> expected;
  for (const double v : x) expected.push_back(std::cos(v));
  check_close(run(*sin_grad, {f64({3}, x)}), expected, 1e-12);

  const JaxprPtr tanh_grad = grad_jaxpr(
      *[] {
        JaxprBuilder b;
        const Var v = b.arg(f64_aval({}));
        return b.build({b.bind1("tanh", {v}, {{"accuracy", ParamValue::None{}}})});
      }(),
      {0}, false);
  CHECK(run(*tanh_grad, {f64({}, {0.4})})[0] == doctest::Approx(1 - std::tanh(0.4) * std::tanh(0.4)));

  JaxprBuilder b;
  const Var u = b.arg(f64_aval({}));
  const Var v = b.arg(f64_aval({}));
  const JaxprPtr product = b.build({b.bind1("mul", {u, v})});
  const JaxprPtr both = grad_jaxpr(*product, {0, 1}, false);
  const std::vector<BufferPtr> grads = evaluate_jaxpr(*both, {f64({}, {3.0}), f64({}, {-2.0})});
  CHECK(values_of(grads[0])[0] == doctest::Approx(-2.0));
  CHECK(values_of(grads[1])[0] == doctest::Approx(3.0));
}

TEST_CASE("structural and reduction JVPs and gradients match finite differences") {
  const BufferPtr x23 = f64({2, 3}, {0.5, -1.2, 2.0, 0.3, 1.7, -0.4});
  auto check1 = [&](const std::string& name, const Params& params, const BufferPtr& arg) {
    CAPTURE(name);
    JaxprBuilder b;
    const Var x = b.arg(f64_aval(arg->shape()));
    check_derivatives(*b.build({b.bind1(name, {x}, params)}), {arg});
  };
  const ParamValue none = ParamValue::None{};
  check1("reduce_sum", {{"axes", ParamValue::int_tuple({1})}, {"out_sharding", none}}, x23);
  check1("reduce_max", {{"axes", ParamValue::int_tuple({0})}, {"out_sharding", none}}, x23);
  check1("reduce_min", {{"axes", ParamValue::int_tuple({1})}, {"out_sharding", none}}, x23);
  check1("reduce_prod", {{"axes", ParamValue::int_tuple({1})}}, x23);
  check1("reduce_prod", {{"axes", ParamValue::int_tuple({0})}}, f64({2, 2}, {0.0, 2.0, 3.0, 0.5}));
  check1("broadcast_in_dim",
         {{"broadcast_dimensions", ParamValue::int_tuple({0, 2})},
          {"shape", ParamValue::int_tuple({2, 4, 3})},
          {"sharding", none}},
         x23);
  check1("reshape", {{"dimensions", none}, {"new_sizes", ParamValue::int_tuple({3, 2})}, {"sharding", none}}, x23);
  check1("transpose", {{"permutation", ParamValue::int_tuple({1, 0})}}, x23);
  check1("rev", {{"dimensions", ParamValue::int_tuple({1})}}, x23);
  check1("squeeze", {{"dimensions", ParamValue::int_tuple({0})}}, f64({1, 3}, {1.0, 2.0, 3.0}));
  check1("slice",
         {{"start_indices", ParamValue::int_tuple({0, 1})},
          {"limit_indices", ParamValue::int_tuple({2, 3})},
          {"strides", none}},
         x23);
  check1("slice",
         {{"start_indices", ParamValue::int_tuple({0, 0})},
          {"limit_indices", ParamValue::int_tuple({2, 3})},
          {"strides", ParamValue::int_tuple({1, 2})}},
         x23);
  check1("cumsum", {{"axis", 1}, {"reverse", false}}, x23);
  check1("cumsum", {{"axis", 0}, {"reverse", true}}, x23);
  check1("cumprod", {{"axis", 1}, {"reverse", false}}, x23);
  check1("cummax", {{"axis", 1}, {"reverse", false}}, x23);
  check1("cummin", {{"axis", 1}, {"reverse", true}}, x23);
  check1("integer_pow", {{"y", 3}}, x23);
  check1("integer_pow", {{"y", -2}}, x23);
  check1("convert_element_type", {{"new_dtype", DType::kFloat64}, {"sharding", none}, {"weak_type", false}}, x23);
}

TEST_CASE("pad, concatenate, split, select_n, clamp and dot_general derivatives match finite differences") {
  const BufferPtr x23 = f64({2, 3}, {0.5, -1.2, 2.0, 0.3, 1.7, -0.4});
  const BufferPtr y23 = f64({2, 3}, {1.5, 0.2, -2.0, 0.8, 0.7, 1.4});
  {
    JaxprBuilder b;
    const Var x = b.arg(f64_aval({2, 3}));
    const Var p = b.arg(f64_aval({}));
    const Atom padded = b.bind1(
        "pad", {x, p},
        {{"padding_config", ParamValue::tuple({ParamValue::int_tuple({1, -1, 1}), ParamValue::int_tuple({0, 2, 0})})}});
    check_derivatives(*b.build({padded}), {x23, f64({}, {0.25})});
  }
  {
    JaxprBuilder b;
    const Var x = b.arg(f64_aval({2, 3}));
    const Var y = b.arg(f64_aval({2, 3}));
    check_derivatives(*b.build({b.bind1("concatenate", {x, y}, {{"dimension", 1}})}), {x23, y23});
  }
  {
    JaxprBuilder b;
    const Var x = b.arg(f64_aval({2, 3}));
    const std::vector<Atom> parts = b.bind("split", {x}, {{"sizes", ParamValue::int_tuple({1, 2})}, {"axis", 1}});
    const Atom scaled = b.bind1("mul", {parts[1], scalar_literal(3.0, DType::kFloat64, false)});
    const Atom head = b.bind1("broadcast_in_dim",
                              {b.bind1("reshape", {parts[0]},
                                       {{"dimensions", ParamValue::None{}},
                                        {"new_sizes", ParamValue::int_tuple({2})},
                                        {"sharding", ParamValue::None{}}})},
                              {{"broadcast_dimensions", ParamValue::int_tuple({0})},
                               {"shape", ParamValue::int_tuple({2, 2})},
                               {"sharding", ParamValue::None{}}});
    check_derivatives(*b.build({b.bind1("add", {scaled, b.bind1("sin", {head}, {{"accuracy", ParamValue::None{}}})})}),
                      {x23});
  }
  {
    JaxprBuilder b;
    const Var x = b.arg(f64_aval({2, 3}));
    const Var y = b.arg(f64_aval({2, 3}));
    const Atom pred = b.bind1("gt", {x, y});
    check_derivatives(*b.build({b.bind1("select_n", {pred, x, b.bind1("mul", {x, y})})}), {x23, y23});
  }
  {
    JaxprBuilder b;
    const Var lo = b.arg(f64_aval({}));
    const Var x = b.arg(f64_aval({2, 3}));
    const Var hi = b.arg(f64_aval({}));
    check_derivatives(*b.build({b.bind1("clamp", {lo, x, hi})}), {f64({}, {0.0}), x23, f64({}, {1.0})});
  }
  {
    JaxprBuilder b;
    const Var x = b.arg(f64_aval({2, 3}));
    const Var y = b.arg(f64_aval({3, 4}));
    const Params numbers{{"dimension_numbers", dot_dimension_numbers_param({1}, {0}, {}, {})},
                         {"precision", ParamValue::None{}},
                         {"preferred_element_type", DType::kFloat64}};
    check_derivatives(*b.build({b.bind1("dot_general", {x, y}, numbers)}), {x23, f64({3, 4}, ramp(12, -1.0, 0.21))});
  }
  {
    // Batched contraction over a non-leading dim: exercises the transposes' permutations.
    JaxprBuilder b;
    const Var x = b.arg(f64_aval({2, 3, 4}));
    const Var y = b.arg(f64_aval({4, 2, 5}));
    const Params numbers{{"dimension_numbers", dot_dimension_numbers_param({2}, {0}, {0}, {1})},
                         {"precision", ParamValue::None{}},
                         {"preferred_element_type", DType::kFloat64}};
    check_derivatives(*b.build({b.bind1("dot_general", {x, y}, numbers)}),
                      {f64({2, 3, 4}, ramp(24, -1.0, 0.09)), f64({4, 2, 5}, ramp(40, 0.7, -0.04))});
  }
}

TEST_CASE("stack and unstack derivatives match finite differences, and transpose to each other") {
  const BufferPtr x23 = f64({2, 3}, {0.5, -1.2, 2.0, 0.3, 1.7, -0.4});
  const BufferPtr y23 = f64({2, 3}, {1.5, 0.2, -2.0, 0.8, 0.7, 1.4});
  const Params accuracy{{"accuracy", ParamValue::None{}}};
  {
    // stack of two inputs and a constant (no cotangent for it), then a nonlinearity.
    JaxprBuilder b;
    const Var x = b.arg(f64_aval({2, 3}));
    const Var y = b.arg(f64_aval({2, 3}));
    const Atom constant = b.bind1("broadcast_in_dim", {scalar_literal(0.5, DType::kFloat64, false)},
                                  {{"broadcast_dimensions", ParamValue::int_tuple({})},
                                   {"shape", ParamValue::int_tuple({2, 3})},
                                   {"sharding", ParamValue::None{}}});
    const Atom stacked = b.bind1("stack", {x, b.bind1("sin", {y}, accuracy), constant}, {{"axis", 1}});
    check_derivatives(*b.build({b.bind1("mul", {stacked, stacked})}), {x23, y23});
  }
  {
    // Only two of three results are used: the unused one's cotangent is a symbolic zero, instantiated.
    JaxprBuilder b;
    const Var x = b.arg(f64_aval({2, 3}));
    const std::vector<Atom> columns = b.bind("unstack", {x}, {{"axis", 1}});
    REQUIRE(columns.size() == 3);
    const Atom scaled = b.bind1("mul", {columns[2], scalar_literal(3.0, DType::kFloat64, false)});
    check_derivatives(*b.build({b.bind1("add", {scaled, b.bind1("sin", {columns[0]}, accuracy)})}), {x23});
  }
  // The transposes: d/dx sum(unstack(x)[1] * 3) is 3 on row 1 and zero elsewhere, through a stack of cotangents.
  JaxprBuilder b;
  const Var x = b.arg(f64_aval({2, 3}));
  const std::vector<Atom> rows = b.bind("unstack", {x}, {{"axis", 0}});
  const Atom total = b.bind1("reduce_sum", {b.bind1("mul", {rows[1], scalar_literal(3.0, DType::kFloat64, false)})},
                             {{"axes", ParamValue::int_tuple({0})}, {"out_sharding", ParamValue::None{}}});
  const JaxprPtr program = b.build({total});
  const JaxprPtr gradient = grad_jaxpr(*program, {0}, false);
  const std::string text = print_jaxpr(*gradient, JaxProfile());
  CHECK(text.find("= stack[axis=0] ") != std::string::npos);
  CHECK(run(*gradient, {x23}) == std::vector<double>{0, 0, 0, 3, 3, 3});
}

TEST_CASE("dynamic_slice, dynamic_update_slice and gather derivatives match finite differences") {
  const BufferPtr x = f64({4, 3}, ramp(12, -1.0, 0.23));
  const BufferPtr start = make_buffer<int32_t>(DType::kInt32, {}, {1});
  {
    JaxprBuilder b;
    const Var v = b.arg(f64_aval({4, 3}));
    const Var i = b.arg(Aval::of({}, DType::kInt32));
    check_derivatives(*b.build({b.bind1("dynamic_slice", {v, i, scalar_literal(0, DType::kInt32, false)},
                                        {{"slice_sizes", ParamValue::int_tuple({2, 3})}})}),
                      {x, start});
  }
  {
    JaxprBuilder b;
    const Var v = b.arg(f64_aval({4, 3}));
    const Var u = b.arg(f64_aval({2, 2}));
    const Var i = b.arg(Aval::of({}, DType::kInt32));
    check_derivatives(*b.build({b.bind1("dynamic_update_slice", {v, u, i, scalar_literal(1, DType::kInt32, false)})}),
                      {x, f64({2, 2}, {0.1, 0.2, 0.3, 0.4}), start});
  }
  {
    // x[idx] with repeated indices: the transpose must add the repeated rows' cotangents.
    JaxprBuilder b;
    const Var v = b.arg(f64_aval({4, 3}));
    const Var idx = b.arg(Aval::of({3, 1}, DType::kInt32));
    const Params params{{"dimension_numbers", gather_dimension_numbers_param({{1}, {0}, {0}, {}, {}})},
                        {"fill_value", ParamValue::None{}},
                        {"indices_are_sorted", false},
                        {"mode", gather_mode_param(GatherMode::kPromiseInBounds)},
                        {"slice_sizes", ParamValue::int_tuple({1, 3})},
                        {"unique_indices", false}};
    check_derivatives(*b.build({b.bind1("gather", {v, idx}, params)}),
                      {x, make_buffer<int32_t>(DType::kInt32, {3, 1}, {2, 0, 2})});
  }
}
