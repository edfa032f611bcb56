// convert_element_type, integer_pow, select_n, clamp and copy: rules, JAX's messages and print rules, kernels.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "core/ops/elementwise_test_support.h"

using namespace shardscope;
using namespace shardscope::elementwise_test;

namespace {
constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();

Params convert_params(DType dtype, bool weak, ParamValue sharding = ParamValue::None{}) {
  return {{"new_dtype", dtype}, {"weak_type", weak}, {"sharding", std::move(sharding)}};
}
}  // namespace

TEST_CASE("convert_element_type takes dtype and weak type from its params") {
  Aval in = aval(DType::kInt32, {4, 2});
  in.dim_axes = {{"x"}, {}};
  const Aval out = eval("convert_element_type", {in}, convert_params(DType::kFloat32, true));
  CHECK(out.dtype == DType::kFloat32);
  CHECK(out.weak_type);
  CHECK(out.shape == Shape{4, 2});
  CHECK(out.dim_axes == in.dim_axes);
  CHECK_FALSE(eval("convert_element_type", {aval(DType::kFloat32, {}, true)}, convert_params(DType::kBFloat16, false))
                  .weak_type);
  CHECK(eval("convert_element_type", {aval(DType::kFloat32)}, {{"new_dtype", "int8"}, {"weak_type", false}}).dtype ==
        DType::kInt8);
}

TEST_CASE("float to integer conversion truncates and saturates, NaN becomes 0") {
  const BufferPtr x = vec(DType::kFloat32, std::vector{1.9F, -1.9F, kNaNf, 1e10F, -1e10F, 2147483520.0F});
  const int32_t max = std::numeric_limits<int32_t>::max();
  const int32_t min = std::numeric_limits<int32_t>::min();
  CHECK(values<int32_t>(run("convert_element_type", {x}, convert_params(DType::kInt32, false))) ==
        std::vector<int32_t>{1, -1, 0, max, min, 2147483520});
  CHECK(values<uint8_t>(run("convert_element_type", {vec(DType::kFloat64, std::vector{-1.5, 300.0, 2.7, -0.5})},
                            convert_params(DType::kUInt8, false))) == std::vector<uint8_t>{0, 255, 2, 0});
  CHECK(values<int64_t>(run("convert_element_type", {bf16({-3.75F, 1e30F})}, convert_params(DType::kInt64, false))) ==
        std::vector<int64_t>{-3, std::numeric_limits<int64_t>::max()});
}

TEST_CASE("integer conversions wrap, bool conversions test against zero") {
  CHECK(values<int8_t>(run("convert_element_type", {vec<int32_t>(DType::kInt32, {300, -129, 127})},
                           convert_params(DType::kInt8, false))) == std::vector<int8_t>{44, 127, 127});
  CHECK(values<uint32_t>(run("convert_element_type", {vec<int64_t>(DType::kInt64, {-1, int64_t{1} << 32})},
                             convert_params(DType::kUInt32, false))) == std::vector<uint32_t>{0xFFFFFFFFU, 0});
  CHECK(values<uint8_t>(run("convert_element_type", {vec(DType::kFloat32, std::vector{0.0F, -0.0F, kNaNf, 0.25F})},
                            convert_params(DType::kBool, false))) == std::vector<uint8_t>{0, 0, 1, 1});
  CHECK(values<uint8_t>(run("convert_element_type", {vec<int16_t>(DType::kInt16, {0, 256})},
                            convert_params(DType::kBool, false))) == std::vector<uint8_t>{0, 1});
  CHECK(values<float>(run("convert_element_type", {vec<uint8_t>(DType::kBool, {1, 0})},
                          convert_params(DType::kFloat32, false))) == std::vector<float>{1.0F, 0.0F});
  CHECK(values<int32_t>(run("convert_element_type", {vec<uint8_t>(DType::kBool, {1})},
                            convert_params(DType::kInt32, false))) == std::vector<int32_t>{1});
}

TEST_CASE("conversions to narrow floats round once, to nearest even") {
  // Just above the halfway point between bfloat16's 1 and 1 + 2^-7: direct rounding goes up, while
  // rounding to float first would land exactly on the halfway point and go down to 1.
  const double above_half = 1.0 + 0x1p-8 + 0x1p-30;
  CHECK(doubles(run("convert_element_type", {vec(DType::kFloat64, std::vector{above_half})},
                    convert_params(DType::kBFloat16, false))) == std::vector<double>{1.0078125});
  CHECK(doubles(run("convert_element_type", {vec(DType::kFloat32, std::vector{1.00390625F, 65520.0F, 1e-8F})},
                    convert_params(DType::kFloat16, false))) == std::vector<double>{1.00390625, INFINITY, 0.0});
  CHECK(doubles(run("convert_element_type", {vec<int32_t>(DType::kInt32, {257, 16777217})},
                    convert_params(DType::kBFloat16, false))) == std::vector<double>{256.0, 16777216.0});
  CHECK(values<float>(run("convert_element_type", {vec<int64_t>(DType::kInt64, {(int64_t{1} << 40) + 1})},
                          convert_params(DType::kFloat32, false))) == std::vector<float>{0x1p40F});
  CHECK(values<double>(run("convert_element_type", {bf16({3.140625F})}, convert_params(DType::kFloat64, false))) ==
        std::vector<double>{3.140625});
  const BufferPtr same = vec(DType::kFloat32, std::vector{1.0F});
  CHECK(run("convert_element_type", {same}, convert_params(DType::kFloat32, true)) == same);
}

TEST_CASE("convert_element_type prints params as each JAX version did") {
  const Primitive& convert = prim("convert_element_type");
  Eqn eqn{&convert, convert_params(DType::kFloat32, false), {}, {}, nullptr};
  Params shown = convert.printed_params(eqn, JaxProfile());
  REQUIRE(shown.size() == 2);
  CHECK(shown[0].first == "new_dtype");
  CHECK(shown[1].first == "weak_type");

  eqn.params = convert_params(DType::kFloat32, false, "P('x',)");
  CHECK(convert.printed_params(eqn, JaxProfile()).size() == 2);  // newest JAX never shows sharding
  shown = convert.printed_params(eqn, JaxProfile(JaxVersion{0, 9, 2}));
  REQUIRE(shown.size() == 3);
  CHECK(shown[0].first == "new_dtype");
  CHECK(shown[1].first == "sharding");
  CHECK(shown[2].first == "weak_type");
  eqn.params = convert_params(DType::kFloat32, false);
  CHECK(convert.printed_params(eqn, JaxProfile(JaxVersion{0, 4, 31})).size() == 2);

  // Before 0.4.31 the output binder carried the dtype and weak_type showed only when true.
  CHECK(convert.printed_params(eqn, JaxProfile(JaxVersion{0, 4, 30})).empty());
  eqn.params = {{"new_dtype", DType::kFloat32}, {"weak_type", true}};
  shown = convert.printed_params(eqn, JaxProfile(JaxVersion{0, 4, 26}));
  REQUIRE(shown.size() == 1);
  CHECK(shown[0].first == "weak_type");
}

TEST_CASE("integer_pow: JAX's rules and the square-and-multiply chain") {
  CHECK(eval("integer_pow", {aval(DType::kFloat32, {3}, true)}, {{"y", 3}}).weak_type);
  CHECK(eval("integer_pow", {aval(DType::kFloat32, {3})}, {{"y", -2}}).dtype == DType::kFloat32);
  CHECK(eval_error("integer_pow", {aval(DType::kInt32, {3})}, {{"y", -2}}) ==
        "TypeError: Integers cannot be raised to negative powers, got integer_pow(int32[3], -2)");
  CHECK(eval_error("integer_pow", {aval(DType::kInt8, {}, true)}, {{"y", -1}}) ==
        "TypeError: Integers cannot be raised to negative powers, got integer_pow(~int8[], -1)");
  CHECK(eval_error("integer_pow", {aval(DType::kBool)}, {{"y", 2}}) ==
        "TypeError: integer_pow does not accept dtype bool. Accepted dtypes are subtypes of integer, floating, "
        "complexfloating.");

  CHECK(values<int32_t>(run("integer_pow", {vec<int32_t>(DType::kInt32, {3, -2, 0})}, {{"y", 4}})) ==
        std::vector<int32_t>{81, 16, 0});
  CHECK(values<int8_t>(run("integer_pow", {vec<int8_t>(DType::kInt8, {2, 3})}, {{"y", 7}})) ==
        std::vector<int8_t>{-128, static_cast<int8_t>(2187 % 256)});
  CHECK(values<float>(run("integer_pow", {vec(DType::kFloat32, std::vector{2.0F, -3.0F})}, {{"y", -2}})) ==
        std::vector<float>{0.25F, 1.0F / 9.0F});
  CHECK(values<float>(run("integer_pow", {vec(DType::kFloat32, std::vector{kNaNf})}, {{"y", 0}})) ==
        std::vector<float>{1.0F});
  const float x = 1.1F;
  CHECK(values<float>(run("integer_pow", {vec(DType::kFloat32, std::vector{x})}, {{"y", 5}})) ==
        std::vector<float>{((x * x) * (x * x)) * x});
  CHECK(values<uint64_t>(run("integer_pow", {vec<uint64_t>(DType::kUInt64, {2})}, {{"y", 64}})) ==
        std::vector<uint64_t>{0});
}

TEST_CASE("select_n rules and messages") {
  const Aval f3 = aval(DType::kFloat32, {3});
  const Aval out = eval("select_n", {aval(DType::kBool, {3}), f3, aval(DType::kFloat32, {3}, true)});
  CHECK(out.dtype == DType::kFloat32);
  CHECK(out.shape == Shape{3});
  CHECK_FALSE(out.weak_type);
  CHECK(
      eval("select_n", {aval(DType::kInt32), aval(DType::kInt8, {2}, true), aval(DType::kInt8, {2}, true)}).weak_type);
  CHECK(eval_error("select_n", {aval(DType::kBool)}) == "TypeError: select must have at least one case");
  CHECK(eval_error("select_n", {aval(DType::kBool), f3, aval(DType::kFloat32, {4})}) ==
        "TypeError: select cases must have the same shapes, got [(3,), (4,)].");
  CHECK(eval_error("select_n", {aval(DType::kBool, {4}), f3, f3}) ==
        "TypeError: select `which` must be scalar or have the same shape as cases, got `which` shape (4,) but case "
        "shape (3,).");
  CHECK(eval_error("select_n", {aval(DType::kBool), f3, aval(DType::kInt32, {3})}) ==
        "TypeError: lax.select requires arguments to have the same dtypes, got float32, int32. (Tip: jnp.where is a "
        "similar function that does automatic type promotion on inputs).");
  CHECK(eval_error("select_n", {aval(DType::kFloat32), f3, f3}) ==
        "TypeError: select `which` must be boolean or integer type, got float32.");
  CHECK(eval_error("select_n", {aval(DType::kBool), f3, f3, f3}) ==
        "TypeError: select with boolean `which` cannot have > 2 cases.");
}

TEST_CASE("select_n picks cases, out-of-range selectors clamp to the first or last case") {
  const BufferPtr zero = vec<int32_t>(DType::kInt32, {10, 11, 12, 13});
  const BufferPtr one = vec<int32_t>(DType::kInt32, {20, 21, 22, 23});
  const BufferPtr two = vec<int32_t>(DType::kInt32, {30, 31, 32, 33});
  CHECK(values<int32_t>(run("select_n", {vec<uint8_t>(DType::kBool, {0, 1, 1, 0}), zero, one})) ==
        std::vector<int32_t>{10, 21, 22, 13});
  CHECK(values<int32_t>(run("select_n", {vec<int32_t>(DType::kInt32, {2, -1, 1, 7}), zero, one, two})) ==
        std::vector<int32_t>{30, 11, 22, 33});
  CHECK(values<int32_t>(run("select_n", {vec<uint8_t>(DType::kUInt8, {0, 200, 1, 2}), zero, one, two})) ==
        std::vector<int32_t>{10, 31, 22, 33});
  CHECK(values<int32_t>(run("select_n", {scalar<uint8_t>(DType::kBool, 1), zero, one})) ==
        std::vector<int32_t>{20, 21, 22, 23});
  CHECK(doubles(run("select_n", {vec<uint8_t>(DType::kBool, {1, 0}), bf16({1.0F, 2.0F}), bf16({3.0F, 4.0F})})) ==
        std::vector<double>{3.0, 2.0});
  CHECK(values<int32_t>(run("select_n", {scalar<int8_t>(DType::kInt8, 0), zero})) == values<int32_t>(zero));
}

TEST_CASE("clamp rules and messages") {
  const Aval x = aval(DType::kFloat32, {3});
  CHECK(eval("clamp", {aval(DType::kFloat32), x, aval(DType::kFloat32)}).shape == Shape{3});
  CHECK(eval("clamp", {aval(DType::kInt8, {}, true), aval(DType::kInt8, {}, true), aval(DType::kInt8, {}, true)})
            .weak_type);
  CHECK_FALSE(eval("clamp", {aval(DType::kFloat32, {}, true), x, aval(DType::kFloat32, {}, true)}).weak_type);
  CHECK(eval_error("clamp", {aval(DType::kFloat32, {4}), x, aval(DType::kFloat32)}) ==
        "TypeError: clamp requires min.shape == operand.shape or min.shape == (), got min.shape=(4,), "
        "operand.shape=(3,).");
  CHECK(eval_error("clamp", {aval(DType::kFloat32), x, aval(DType::kFloat32, {2, 2})}) ==
        "TypeError: clamp requires max.shape == operand.shape or max.shape == (), got max.shape=(2, 2), "
        "operand.shape=(3,).");
  CHECK(eval_error("clamp", {aval(DType::kFloat32), x, aval(DType::kInt32)}) ==
        "TypeError: lax.clamp requires arguments to have the same dtypes, got float32, float32, int32.");
}

TEST_CASE("clamp kernel: scalar or full bounds, NaN operands stay NaN") {
  const BufferPtr x = vec(DType::kFloat32, std::vector{-5.0F, 0.5F, 9.0F, kNaNf});
  const std::vector<float> out =
      values<float>(run("clamp", {scalar(DType::kFloat32, 0.0F), x, scalar(DType::kFloat32, 1.0F)}));
  CHECK(out[0] == 0.0F);
  CHECK(out[1] == 0.5F);
  CHECK(out[2] == 1.0F);
  CHECK(std::isnan(out[3]));
  CHECK(values<int32_t>(run("clamp", {vec<int32_t>(DType::kInt32, {0, 5, -10}), vec<int32_t>(DType::kInt32, {3, 3, 3}),
                                      scalar<int32_t>(DType::kInt32, 4)})) == std::vector<int32_t>{3, 4, 3});
  CHECK(doubles(run("clamp", {bf16({1.0F}), bf16({2.5F}), bf16({2.0F})})) == std::vector<double>{2.0});
}

TEST_CASE("copy passes the value through unchanged") {
  const Aval in = aval(DType::kUInt16, {2}, true);
  CHECK(eval("copy", {in}) == in);
  const BufferPtr x = vec<uint16_t>(DType::kUInt16, {7, 9});
  CHECK(values<uint16_t>(run("copy", {x})) == std::vector<uint16_t>{7, 9});
}
