// Unary elementwise primitives: JAX's dtype rules and messages, print rules per JAX version, kernel values.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <numbers>

#include "core/ops/elementwise_test_support.h"
#include "ir/jaxpr_printer.h"
#include "trace/builder.h"

using namespace shardscope;
using namespace shardscope::elementwise_test;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

TEST_CASE("every elementwise primitive has a shape rule and a kernel") {
  const char* names[] = {"neg",
                         "sign",
                         "floor",
                         "ceil",
                         "round",
                         "is_finite",
                         "exp",
                         "exp2",
                         "log",
                         "log1p",
                         "expm1",
                         "tanh",
                         "logistic",
                         "sin",
                         "cos",
                         "tan",
                         "asin",
                         "acos",
                         "atan",
                         "sinh",
                         "cosh",
                         "asinh",
                         "acosh",
                         "atanh",
                         "sqrt",
                         "rsqrt",
                         "cbrt",
                         "abs",
                         "erf",
                         "erfc",
                         "erf_inv",
                         "lgamma",
                         "digamma",
                         "square",
                         "not",
                         "population_count",
                         "clz",
                         "add",
                         "sub",
                         "mul",
                         "div",
                         "rem",
                         "pow",
                         "max",
                         "min",
                         "atan2",
                         "nextafter",
                         "and",
                         "or",
                         "xor",
                         "shift_left",
                         "shift_right_logical",
                         "shift_right_arithmetic",
                         "eq",
                         "ne",
                         "lt",
                         "le",
                         "gt",
                         "ge",
                         "integer_pow",
                         "select_n",
                         "clamp",
                         "convert_element_type",
                         "copy"};
  for (const char* name : names) {
    CAPTURE(name);
    const Primitive& p = prim(name);
    CHECK(p.name == name);
    CHECK(static_cast<bool>(p.abstract_eval));
    CHECK(static_cast<bool>(p.impl));
  }
}

TEST_CASE("unary shape rules keep shape, sharding and weak type, is_finite gives bool") {
  Aval in = aval(DType::kFloat32, {8, 4}, true);
  in.dim_axes = {{"x"}, {}};
  in.varying = {"y"};
  const Aval out = eval("sin", {in}, {{"accuracy", ParamValue::None{}}});
  CHECK(out.shape == Shape{8, 4});
  CHECK(out.dtype == DType::kFloat32);
  CHECK(out.weak_type);
  CHECK(out.dim_axes == in.dim_axes);
  CHECK(out.varying == in.varying);

  CHECK_FALSE(eval("exp", {aval(DType::kBFloat16, {3})}).weak_type);
  const Aval finite = eval("is_finite", {aval(DType::kFloat16, {3}, true)});
  CHECK(finite.dtype == DType::kBool);
  CHECK(finite.weak_type);  // JAX's standard rule: weak when every input is
  CHECK(eval("neg", {aval(DType::kUInt8, {2})}).dtype == DType::kUInt8);
  CHECK(eval("not", {aval(DType::kBool)}).dtype == DType::kBool);
  CHECK(eval("clz", {aval(DType::kInt64, {5})}).dtype == DType::kInt64);
}

TEST_CASE("unary dtype errors name the accepted numpy types as JAX does") {
  CHECK(eval_error("sin", {aval(DType::kInt32, {3})}) ==
        "TypeError: sin does not accept dtype int32. Accepted dtypes are subtypes of floating, complexfloating.");
  CHECK(eval_error("floor", {aval(DType::kInt8)}) ==
        "TypeError: floor does not accept dtype int8. Accepted dtypes are subtypes of floating.");
  CHECK(eval_error("abs", {aval(DType::kUInt32)}) ==
        "TypeError: abs does not accept dtype uint32. Accepted dtypes are subtypes of signedinteger, floating, "
        "complexfloating.");
  CHECK(eval_error("neg", {aval(DType::kBool)}) ==
        "TypeError: neg does not accept dtype bool. Accepted dtypes are subtypes of integer, floating, "
        "complexfloating.");
  CHECK(eval_error("not", {aval(DType::kBFloat16)}) ==
        "TypeError: not does not accept dtype bfloat16. Accepted dtypes are subtypes of integer, bool.");
  CHECK(eval_error("population_count", {aval(DType::kBool)}) ==
        "TypeError: population_count does not accept dtype bool. Accepted dtypes are subtypes of integer.");
  CHECK(eval_error("erf_inv", {aval(DType::kInt32)}) ==
        "TypeError: erf_inv does not accept dtype int32. Accepted dtypes are subtypes of floating.");
}

TEST_CASE("float unary kernels agree with double-precision references in float32 and float64") {
  struct Case {
    const char* name;
    double (*reference)(double);
    std::vector<double> inputs;
  };
  const std::vector<Case> cases = {
      {"exp", [](double x) { return std::exp(x); }, {-3.5, 0.0, 0.25, 7.0}},
      {"exp2", [](double x) { return std::exp2(x); }, {-3.0, 0.5, 10.0}},
      {"log", [](double x) { return std::log(x); }, {0.001, 1.0, 2.5, 1e6}},
      {"log1p", [](double x) { return std::log1p(x); }, {-0.5, 1e-7, 3.0}},
      {"expm1", [](double x) { return std::expm1(x); }, {-2.0, 1e-7, 1.5}},
      {"tanh", [](double x) { return std::tanh(x); }, {-2.0, 0.1, 4.0}},
      {"logistic", [](double x) { return 1 / (1 + std::exp(-x)); }, {-6.0, 0.0, 0.3, 9.0}},
      {"sin", [](double x) { return std::sin(x); }, {-2.0, 0.5, 3.0, 100.0}},
      {"cos", [](double x) { return std::cos(x); }, {-2.0, 0.5, 1.0}},
      {"tan", [](double x) { return std::tan(x); }, {-1.0, 0.5, 1.2}},
      {"asin", [](double x) { return std::asin(x); }, {-0.9, 0.1, 0.5}},
      {"acos", [](double x) { return std::acos(x); }, {-0.9, 0.1, 0.5}},
      {"atan", [](double x) { return std::atan(x); }, {-5.0, 0.1, 2.0}},
      {"sinh", [](double x) { return std::sinh(x); }, {-2.0, 0.1, 3.0}},
      {"cosh", [](double x) { return std::cosh(x); }, {-2.0, 0.1, 3.0}},
      {"asinh", [](double x) { return std::asinh(x); }, {-2.0, 0.1, 3.0}},
      {"acosh", [](double x) { return std::acosh(x); }, {1.5, 3.0, 10.0}},
      {"atanh", [](double x) { return std::atanh(x); }, {-0.5, 0.1, 0.9}},
      {"sqrt", [](double x) { return std::sqrt(x); }, {0.25, 2.0, 1e6}},
      {"rsqrt", [](double x) { return 1 / std::sqrt(x); }, {0.25, 2.0, 4.0}},
      {"cbrt", [](double x) { return std::cbrt(x); }, {-27.0, 0.001, 8.0}},
      {"erf", [](double x) { return std::erf(x); }, {-1.0, 0.2, 2.0}},
      {"erfc", [](double x) { return std::erfc(x); }, {-1.0, 0.2, 2.0}},
      {"lgamma", [](double x) { return std::lgamma(x); }, {0.5, 3.0, 10.5, -2.5}},
      {"floor", [](double x) { return std::floor(x); }, {-1.5, -0.0, 2.7}},
      {"ceil", [](double x) { return std::ceil(x); }, {-1.5, 0.2, 2.7}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    std::vector<float> f32_in;
    for (double x : c.inputs) f32_in.push_back(static_cast<float>(x));
    const std::vector<float> f32_out = values<float>(run(c.name, {vec(DType::kFloat32, f32_in)}));
    const std::vector<double> f64_out = values<double>(run(c.name, {vec(DType::kFloat64, c.inputs)}));
    for (std::size_t i = 0; i < c.inputs.size(); ++i) {
      CAPTURE(c.inputs[i]);
      const double expected32 = c.reference(static_cast<double>(f32_in[i]));
      CHECK(static_cast<double>(f32_out[i]) ==
            doctest::Approx(expected32).epsilon(2e-6).scale(std::max(1.0, std::fabs(expected32))));
      CHECK(f64_out[i] == doctest::Approx(c.reference(c.inputs[i])).epsilon(1e-14));
    }
  }
}

TEST_CASE("bfloat16 and float16 kernels compute in float and round to nearest even") {
  // exp(1) = 2.71828...: the bfloat16 grid near 2.7 has step 1/64, so 2.71875.
  CHECK(doubles(run("exp", {bf16({1.0F})})) == std::vector<double>{2.71875});
  // sqrt(2) = 1.41421...: float16 step near 1.4 is 2^-10, so 1448/1024.
  CHECK(doubles(run("sqrt", {f16({2.0F})})) == std::vector<double>{1.4140625});
  const BufferPtr out = run("sin", {bf16({0.5F, -3.0F})});
  CHECK(out->dtype() == DType::kBFloat16);
  const std::vector<uint16_t> bits = values<uint16_t>(out);
  CHECK(bits[0] == float_to_bf16(std::sin(0.5F)));
  CHECK(bits[1] == float_to_bf16(std::sin(-3.0F)));
  CHECK(doubles(run("neg", {f16({1.5F, -0.0F})}))[0] == -1.5);
}

TEST_CASE("integer unary kernels wrap like XLA") {
  CHECK(values<int8_t>(run("neg", {vec<int8_t>(DType::kInt8, {-128, 5, 0})})) == std::vector<int8_t>{-128, -5, 0});
  CHECK(values<uint8_t>(run("neg", {vec<uint8_t>(DType::kUInt8, {1, 0})})) == std::vector<uint8_t>{255, 0});
  const int32_t int_min = std::numeric_limits<int32_t>::min();
  CHECK(values<int32_t>(run("abs", {vec<int32_t>(DType::kInt32, {int_min, -7, 7})})) ==
        std::vector<int32_t>{int_min, 7, 7});
  CHECK(values<int16_t>(run("sign", {vec<int16_t>(DType::kInt16, {-9, 0, 3})})) == std::vector<int16_t>{-1, 0, 1});
  CHECK(values<uint32_t>(run("sign", {vec<uint32_t>(DType::kUInt32, {0, 9})})) == std::vector<uint32_t>{0, 1});
  CHECK(values<int8_t>(run("square", {vec<int8_t>(DType::kInt8, {16, -3})})) == std::vector<int8_t>{0, 9});
  CHECK(values<uint16_t>(run("square", {vec<uint16_t>(DType::kUInt16, {65535})})) == std::vector<uint16_t>{1});
  CHECK(values<int32_t>(run("not", {vec<int32_t>(DType::kInt32, {0, 5})})) == std::vector<int32_t>{-1, -6});
  CHECK(values<uint8_t>(run("not", {vec<uint8_t>(DType::kBool, {0, 1})})) == std::vector<uint8_t>{1, 0});
  CHECK(values<uint8_t>(run("not", {vec<uint8_t>(DType::kUInt8, {0x0F})})) == std::vector<uint8_t>{0xF0});
  CHECK(values<int32_t>(run("population_count", {vec<int32_t>(DType::kInt32, {-1, 7, 0})})) ==
        std::vector<int32_t>{32, 3, 0});
  CHECK(values<int8_t>(run("clz", {vec<int8_t>(DType::kInt8, {1, -1, 0})})) == std::vector<int8_t>{7, 0, 8});
  CHECK(values<uint64_t>(run("clz", {vec<uint64_t>(DType::kUInt64, {1})})) == std::vector<uint64_t>{63});
}

TEST_CASE("sign keeps NaN and the sign of zero") {
  const std::vector<double> out =
      values<double>(run("sign", {vec(DType::kFloat64, std::vector{-0.0, 0.0, kNaN, -2.5, 7.0})}));
  CHECK(same_bits(out[0], -0.0));
  CHECK(same_bits(out[1], 0.0));
  CHECK(std::isnan(out[2]));
  CHECK(out[3] == -1.0);
  CHECK(out[4] == 1.0);
  CHECK(values<float>(run("abs", {vec(DType::kFloat32, std::vector{-0.0F})}))[0] == 0.0F);
}

TEST_CASE("round follows rounding_method: 0 away from zero, 1 to even") {
  const std::vector<float> halves = {0.5F, 1.5F, 2.5F, -0.5F, -2.5F, 2.4F};
  CHECK(values<float>(run("round", {vec(DType::kFloat32, halves)}, {{"rounding_method", 0}})) ==
        std::vector<float>{1, 2, 3, -1, -3, 2});
  CHECK(values<float>(run("round", {vec(DType::kFloat32, halves)}, {{"rounding_method", 1}})) ==
        std::vector<float>{0, 2, 2, -0.0F, -2, 2});
  CHECK(values<float>(run("round", {vec(DType::kFloat32, halves)}, {{"rounding_method", "TO_NEAREST_EVEN"}}))[2] ==
        2.0F);
  CHECK(values<float>(run("round", {vec(DType::kFloat32, halves)}))[2] == 3.0F);
  CHECK(doubles(run("round", {bf16({2.5F})}, {{"rounding_method", 1}})) == std::vector<double>{2.0});
  CHECK_THROWS_AS(run("round", {vec(DType::kFloat32, halves)}, {{"rounding_method", 7}}), Error);
}

TEST_CASE("is_finite is false for inf and NaN only") {
  const BufferPtr out = run("is_finite", {vec(DType::kFloat64, std::vector{1.0, kInf, -kInf, kNaN, -0.0})});
  CHECK(out->dtype() == DType::kBool);
  CHECK(values<uint8_t>(out) == std::vector<uint8_t>{1, 0, 0, 0, 1});
  CHECK(values<uint8_t>(run("is_finite", {bf16({1e38F, std::numeric_limits<float>::infinity()})})) ==
        std::vector<uint8_t>{1, 0});
}

TEST_CASE("special functions: erf_inv inverts erf, digamma, lgamma, logistic") {
  const std::vector<double> inverse = values<double>(
      run("erf_inv", {vec(DType::kFloat64, std::vector{std::erf(0.5), std::erf(-1.75), 1.0, -1.0, 0.0})}));
  CHECK(inverse[0] == doctest::Approx(0.5).epsilon(1e-14));
  CHECK(inverse[1] == doctest::Approx(-1.75).epsilon(1e-13));
  CHECK(inverse[2] == kInf);
  CHECK(inverse[3] == -kInf);
  CHECK(inverse[4] == 0.0);
  CHECK(values<float>(run("erf_inv", {vec(DType::kFloat32, std::vector{std::erf(0.25F)})}))[0] ==
        doctest::Approx(0.25).epsilon(1e-6));

  const double euler = std::numbers::egamma;
  const std::vector<double> psi =
      values<double>(run("digamma", {vec(DType::kFloat64, std::vector{1.0, 0.5, -1.5, 10.0, 0.0, -3.0})}));
  CHECK(psi[0] == doctest::Approx(-euler).epsilon(1e-14));
  CHECK(psi[1] == doctest::Approx(-euler - 2 * std::numbers::ln2).epsilon(1e-14));
  CHECK(psi[2] == doctest::Approx(0.7031566406452432).epsilon(1e-13));
  CHECK(psi[3] == doctest::Approx(2.251752589066721).epsilon(1e-14));
  CHECK(std::isnan(psi[4]));
  CHECK(std::isnan(psi[5]));
  CHECK(values<float>(run("digamma", {vec(DType::kFloat32, std::vector{2.0F})}))[0] ==
        doctest::Approx(1 - euler).epsilon(1e-6));

  CHECK(values<double>(run("lgamma", {vec(DType::kFloat64, std::vector{0.5})}))[0] ==
        doctest::Approx(std::log(std::sqrt(std::numbers::pi))).epsilon(1e-14));
  CHECK(values<float>(run("logistic", {vec(DType::kFloat32, std::vector{0.0F})}))[0] == 0.5F);
  CHECK(values<float>(run("rsqrt", {vec(DType::kFloat32, std::vector{4.0F})}))[0] == 0.5F);
  CHECK(values<float>(run("cbrt", {vec(DType::kFloat32, std::vector{-27.0F})}))[0] == -3.0F);
  CHECK(values<double>(run("exp2", {vec(DType::kFloat64, std::vector{3.0})}))[0] == 8.0);
}

TEST_CASE("kernels reject dtypes their rules reject") {
  CHECK_THROWS_AS(run("sin", {vec<int32_t>(DType::kInt32, {1})}), Error);
  CHECK_THROWS_AS(run("abs", {vec<uint8_t>(DType::kUInt8, {1})}), Error);
  CHECK_THROWS_AS(run("not", {vec(DType::kFloat32, std::vector{1.0F})}), Error);
}

TEST_CASE("accuracy prints only when set, and not at all before JAX 0.6.0") {
  const Primitive& sin = prim("sin");
  REQUIRE(static_cast<bool>(sin.printed_params));
  Eqn eqn{&sin, {{"accuracy", ParamValue::None{}}}, {}, {}, nullptr};
  CHECK(sin.printed_params(eqn, JaxProfile()).empty());
  eqn.params = {{"accuracy", ParamValue::Verbatim{"AccuracyMode.HIGHEST"}}};
  const Params shown = sin.printed_params(eqn, JaxProfile());
  REQUIRE(shown.size() == 1);
  CHECK(shown[0].first == "accuracy");
  CHECK(sin.printed_params(eqn, JaxProfile(JaxVersion{0, 6, 0})).size() == 1);
  CHECK(sin.printed_params(eqn, JaxProfile(JaxVersion{0, 5, 3})).empty());
  // Ops without the param keep JAX's default printing (every param, sorted).
  CHECK_FALSE(static_cast<bool>(prim("asin").printed_params));
  CHECK_FALSE(static_cast<bool>(prim("round").printed_params));
  CHECK(static_cast<bool>(prim("cbrt").printed_params));
}

TEST_CASE("a jaxpr of sin with accuracy=None prints as JAX's does") {
  JaxprBuilder builder;
  const Var x = builder.arg(aval(DType::kFloat32, {8}));
  const Atom y = builder.bind1("sin", {x}, {{"accuracy", ParamValue::None{}}});
  const Atom z = builder.bind1("round", {y}, {{"rounding_method", 1}});
  const std::string text = print_jaxpr(*builder.build({z}), JaxProfile());
  CHECK(text.find("b:f32[8] = sin a") != std::string::npos);
  CHECK(text.find("c:f32[8] = round[rounding_method=1] b") != std::string::npos);
}

TEST_CASE("tanh is XLA's rational approximation, not the correctly rounded value") {
  // tanh(-1.0480671f) rounds correctly to -0.7810537f; XLA's fraction (and so JAX on CPU and GPU) gives -0.7810538f.
  const std::vector<float> out = values<float>(
      run("tanh", {vec(DType::kFloat32, std::vector<float>{-1.0480671F, 2.0F, 1e-5F, -25.0F, 7.999F, 100.0F})}));
  CHECK(out[0] == -0.7810538F);
  CHECK(out[1] == 0.9640276F);
  CHECK(out[2] == 1e-5F);  // below 4e-4, tanh(x) = x
  CHECK(out[3] == -1.0F);  // from |x| = 20 on, +-1
  CHECK(out[4] <= 1.0F);   // the clamp keeps the fraction at or below 1
  CHECK(out[5] == 1.0F);
  const std::vector<float> nan = values<float>(run("tanh", {vec(DType::kFloat32, std::vector<float>{NAN})}));
  CHECK(std::isnan(nan[0]));
}
