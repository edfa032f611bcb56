// Binary elementwise primitives: broadcasting and dtype rules with JAX's messages, XLA's integer and NaN semantics.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "core/ops/elementwise_test_support.h"

using namespace shardscope;
using namespace shardscope::elementwise_test;

namespace {
constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();
constexpr int32_t kIntMin = std::numeric_limits<int32_t>::min();
}  // namespace

TEST_CASE("binary shape rules: scalars and size-1 dimensions broadcast, weak only if all inputs are") {
  const Aval sum = eval("add", {aval(DType::kFloat32, {3}), aval(DType::kFloat32, {}, true)});
  CHECK(sum.shape == Shape{3});
  CHECK(sum.dtype == DType::kFloat32);
  CHECK_FALSE(sum.weak_type);
  CHECK(eval("mul", {aval(DType::kInt32, {}, true), aval(DType::kInt32, {}, true)}).weak_type);
  CHECK(eval("sub", {aval(DType::kFloat16, {2, 1}), aval(DType::kFloat16, {1, 3})}).shape == Shape{2, 3});
  CHECK(eval("max", {aval(DType::kBool, {0}), aval(DType::kBool, {1})}).shape == Shape{0});

  const Aval less = eval("lt", {aval(DType::kBFloat16, {4}, true), aval(DType::kBFloat16, {}, true)});
  CHECK(less.dtype == DType::kBool);
  CHECK(less.shape == Shape{4});
  CHECK(less.weak_type);
  CHECK(eval("eq", {aval(DType::kBool, {2}), aval(DType::kBool, {2})}).dtype == DType::kBool);
  CHECK(eval("ge", {aval(DType::kUInt8), aval(DType::kUInt8)}).dtype == DType::kBool);
}

TEST_CASE("binary results carry the operands' sharding annotations") {
  Aval sharded = aval(DType::kFloat32, {8, 4});
  sharded.dim_axes = {{"x"}, {}};
  sharded.varying = {"i"};
  Aval other = aval(DType::kFloat32, {1, 4});
  other.dim_axes = {{}, {"y"}};
  const Aval out = eval("add", {sharded, other});
  CHECK(out.dim_axes == std::vector<std::vector<std::string>>{{"x"}, {"y"}});
  CHECK(out.varying == std::vector<std::string>{"i"});
  CHECK(eval("mul", {aval(DType::kFloat32, {}), sharded}).dim_axes == sharded.dim_axes);
}

TEST_CASE("binary shape and dtype errors are JAX's") {
  CHECK(eval_error("add", {aval(DType::kFloat32, {3}), aval(DType::kFloat32, {4})}) ==
        "TypeError: add got incompatible shapes for broadcasting: (3,), (4,).");
  CHECK(eval_error("mul", {
                              aval(DType::kFloat32, {2, 3}),
                              aval(DType::kFloat32, {3}),
                          }) == "TypeError: mul: arrays must have the same number of dimensions, got {1, 2}");
  CHECK(eval_error("add", {aval(DType::kFloat32, {3}), aval(DType::kInt32, {3})}) ==
        "TypeError: lax.add requires arguments to have the same dtypes, got float32, int32. (Tip: jnp.add is a "
        "similar function that does automatic type promotion on inputs).");
  CHECK(eval_error("eq", {aval(DType::kInt8), aval(DType::kUInt8)}) ==
        "TypeError: lax.eq requires arguments to have the same dtypes, got int8, uint8. (Tip: jnp.equal is a similar "
        "function that does automatic type promotion on inputs).");
  // Only lax names listed in JAX's table get a tip: rem, lt and and have none.
  CHECK(eval_error("rem", {aval(DType::kFloat32), aval(DType::kFloat16)}) ==
        "TypeError: lax.rem requires arguments to have the same dtypes, got float32, float16.");
  CHECK(eval_error("lt", {aval(DType::kFloat32), aval(DType::kFloat64)}) ==
        "TypeError: lax.lt requires arguments to have the same dtypes, got float32, float64.");
  CHECK(eval_error("add", {aval(DType::kBool), aval(DType::kBool)}) ==
        "TypeError: add does not accept dtype bool at position 0. Accepted dtypes at position 0 are subtypes of "
        "integer, floating, complexfloating.");
  CHECK(eval_error("shift_left", {aval(DType::kInt32), aval(DType::kFloat32)}) ==
        "TypeError: shift_left does not accept dtype float32 at position 1. Accepted dtypes at position 1 are "
        "subtypes of integer.");
  CHECK(eval_error("lt", {aval(DType::kBool), aval(DType::kInt8)}) ==
        "TypeError: lax.lt requires arguments to have the same dtypes, got bool, int8.");
  CHECK(eval_error("and", {aval(DType::kFloat32), aval(DType::kFloat32)}) ==
        "TypeError: and does not accept dtype float32 at position 0. Accepted dtypes at position 0 are subtypes of "
        "integer, bool.");
  // The shape rule runs before the dtype rule.
  CHECK(eval_error("sub", {aval(DType::kFloat32, {3}), aval(DType::kInt32, {4})}) ==
        "TypeError: sub got incompatible shapes for broadcasting: (3,), (4,).");
}

TEST_CASE("add, sub and mul wrap integers and round bfloat16 to nearest even") {
  CHECK(values<int8_t>(run("add", {vec<int8_t>(DType::kInt8, {127, -128}), vec<int8_t>(DType::kInt8, {1, -1})})) ==
        std::vector<int8_t>{-128, 127});
  CHECK(values<uint8_t>(run("sub", {vec<uint8_t>(DType::kUInt8, {0}), vec<uint8_t>(DType::kUInt8, {1})})) ==
        std::vector<uint8_t>{255});
  CHECK(values<int32_t>(run("mul", {vec<int32_t>(DType::kInt32, {65536}), vec<int32_t>(DType::kInt32, {65536})})) ==
        std::vector<int32_t>{0});
  CHECK(values<uint16_t>(run("mul", {vec<uint16_t>(DType::kUInt16, {65535}),
                                     vec<uint16_t>(DType::kUInt16, {65535})})) == std::vector<uint16_t>{1});
  // 1 + 2^-8 is halfway between bfloat16 neighbours 1 and 1 + 2^-7: ties go to the even one.
  CHECK(doubles(run("add", {bf16({1.0F, 1.0F}), bf16({0.00390625F, 0.01171875F})})) ==
        std::vector<double>{1.0, 1.015625});
  CHECK(values<double>(run("sub", {vec(DType::kFloat64, std::vector{0.5}), vec(DType::kFloat64, std::vector{2.0})})) ==
        std::vector<double>{-1.5});
}

TEST_CASE("kernels broadcast scalars and size-1 dimensions") {
  const BufferPtr x = buffer(DType::kFloat32, {2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6});
  CHECK(values<float>(run("mul", {x, scalar(DType::kFloat32, 2.0F)})) == std::vector<float>{2, 4, 6, 8, 10, 12});
  CHECK(values<float>(run("sub", {scalar(DType::kFloat32, 10.0F), x})) == std::vector<float>{9, 8, 7, 6, 5, 4});
  const BufferPtr column = buffer(DType::kFloat32, {2, 1}, std::vector<float>{10, 20});
  const BufferPtr row = buffer(DType::kFloat32, {1, 3}, std::vector<float>{1, 2, 3});
  const BufferPtr sum = run("add", {column, row});
  CHECK(sum->shape() == Shape{2, 3});
  CHECK(values<float>(sum) == std::vector<float>{11, 12, 13, 21, 22, 23});
  CHECK(values<float>(run("add", {x, row})) == std::vector<float>{2, 4, 6, 5, 7, 9});
  CHECK(values<uint8_t>(run("gt", {x, scalar(DType::kFloat32, 3.5F)})) == std::vector<uint8_t>{0, 0, 0, 1, 1, 1});
  CHECK_THROWS_AS(run("add", {vec(DType::kFloat32, std::vector<float>{1, 2}), x}), Error);
}

TEST_CASE("integer div truncates and defines XLA's overflow cases") {
  const BufferPtr n = vec<int32_t>(DType::kInt32, {7, -7, 7, -7, 7, kIntMin, kIntMin});
  const BufferPtr d = vec<int32_t>(DType::kInt32, {2, 2, -2, -2, 0, -1, 1});
  CHECK(values<int32_t>(run("div", {n, d})) == std::vector<int32_t>{3, -3, -3, 3, -1, kIntMin, kIntMin});
  CHECK(values<uint32_t>(run("div", {vec<uint32_t>(DType::kUInt32, {5, 9}), vec<uint32_t>(DType::kUInt32, {0, 2})})) ==
        std::vector<uint32_t>{0xFFFFFFFFU, 4});
  CHECK(values<int8_t>(run("div", {vec<int8_t>(DType::kInt8, {-128}), vec<int8_t>(DType::kInt8, {-1})})) ==
        std::vector<int8_t>{-128});
  const std::vector<float> q = values<float>(run("div", {vec(DType::kFloat32, std::vector{1.0F, -1.0F, 0.0F}),
                                                         vec(DType::kFloat32, std::vector{0.0F, 0.0F, 0.0F})}));
  CHECK(q[0] == std::numeric_limits<float>::infinity());
  CHECK(q[1] == -std::numeric_limits<float>::infinity());
  CHECK(std::isnan(q[2]));
}

TEST_CASE("rem takes the dividend's sign, x % 0 == x and INT_MIN % -1 == 0") {
  const BufferPtr n = vec<int32_t>(DType::kInt32, {-7, 7, 5, kIntMin, 9});
  const BufferPtr d = vec<int32_t>(DType::kInt32, {2, -2, 0, -1, 4});
  CHECK(values<int32_t>(run("rem", {n, d})) == std::vector<int32_t>{-1, 1, 5, 0, 1});
  CHECK(values<uint8_t>(run("rem", {vec<uint8_t>(DType::kUInt8, {200, 7}), vec<uint8_t>(DType::kUInt8, {0, 3})})) ==
        std::vector<uint8_t>{200, 1});
  CHECK(values<double>(run("rem", {vec(DType::kFloat64, std::vector{-7.5, 7.5}),
                                   vec(DType::kFloat64, std::vector{2.0, -2.0})})) == std::vector<double>{-1.5, 1.5});
  CHECK(doubles(run("rem", {f16({5.5F}), f16({2.0F})})) == std::vector<double>{1.5});
}

TEST_CASE("max and min propagate NaN from either side") {
  const BufferPtr a = vec(DType::kFloat32, std::vector{kNaNf, 1.0F, 3.0F, -2.0F});
  const BufferPtr b = vec(DType::kFloat32, std::vector{1.0F, kNaNf, 2.0F, -1.0F});
  const std::vector<float> hi = values<float>(run("max", {a, b}));
  CHECK(std::isnan(hi[0]));
  CHECK(std::isnan(hi[1]));
  CHECK(hi[2] == 3.0F);
  CHECK(hi[3] == -1.0F);
  const std::vector<float> lo = values<float>(run("min", {a, b}));
  CHECK(std::isnan(lo[0]));
  CHECK(std::isnan(lo[1]));
  CHECK(lo[2] == 2.0F);
  CHECK(lo[3] == -2.0F);
  CHECK(values<int64_t>(run("max", {vec<int64_t>(DType::kInt64, {-5, 4}), vec<int64_t>(DType::kInt64, {3, -9})})) ==
        std::vector<int64_t>{3, 4});
  CHECK(values<uint8_t>(run("min", {vec<uint8_t>(DType::kBool, {1, 1, 0}), vec<uint8_t>(DType::kBool, {1, 0, 0})})) ==
        std::vector<uint8_t>{1, 0, 0});
  CHECK(values<uint8_t>(run("max", {vec<uint8_t>(DType::kBool, {1, 0, 0}), vec<uint8_t>(DType::kBool, {0, 1, 0})})) ==
        std::vector<uint8_t>{1, 1, 0});
}

TEST_CASE("pow: float base, float or integer exponent") {
  CHECK(eval("pow", {aval(DType::kFloat32, {3}), aval(DType::kInt32, {3})}).dtype == DType::kFloat32);
  CHECK(eval("pow", {aval(DType::kBFloat16, {}, true), aval(DType::kBFloat16, {}, true)}).weak_type);
  CHECK(eval_error("pow", {aval(DType::kFloat32), aval(DType::kFloat16)}) ==
        "TypeError: the first argument to pow must have an inexact dtype (float or complex), and the second argument "
        "must have an inexact or integer dtype, and two inexact dtypes must match, but got float32 and float16 "
        "respectively.");
  CHECK(eval_error("pow", {aval(DType::kInt32), aval(DType::kInt32)}) ==
        "TypeError: pow does not accept dtype int32 at position 0. Accepted dtypes at position 0 are subtypes of "
        "floating, complexfloating.");
  CHECK(eval_error("pow", {aval(DType::kFloat32), aval(DType::kBool)}) ==
        "TypeError: pow does not accept dtype bool at position 1. Accepted dtypes at position 1 are subtypes of "
        "integer, floating, complexfloating.");
  CHECK(values<float>(run("pow", {vec(DType::kFloat32, std::vector{2.0F, 9.0F, -2.0F}),
                                  vec(DType::kFloat32, std::vector{10.0F, 0.5F, 3.0F})})) ==
        std::vector<float>{1024.0F, 3.0F, -8.0F});
  CHECK(values<double>(
            run("pow", {vec(DType::kFloat64, std::vector{2.0, 0.0}), vec<int32_t>(DType::kInt32, {-2, -1})})) ==
        std::vector<double>{0.25, std::numeric_limits<double>::infinity()});
  CHECK(values<float>(run("pow", {vec(DType::kFloat32, std::vector{kNaNf}),
                                  vec(DType::kFloat32, std::vector{0.0F})})) == std::vector<float>{1.0F});
}

TEST_CASE("atan2 and nextafter") {
  CHECK(values<double>(
            run("atan2", {vec(DType::kFloat64, std::vector{1.0}), vec(DType::kFloat64, std::vector{-1.0})}))[0] ==
        doctest::Approx(3 * std::atan(1.0)));
  CHECK(values<float>(
            run("nextafter", {vec(DType::kFloat32, std::vector{1.0F}), vec(DType::kFloat32, std::vector{2.0F})})) ==
        std::vector<float>{1.0F + 0x1p-23F});
  // Steps are the dtype's own: bfloat16 has 7 mantissa bits, float16 10.
  CHECK(doubles(run("nextafter", {bf16({1.0F, 1.0F, -1.0F}), bf16({2.0F, 0.0F, -2.0F})})) ==
        std::vector<double>{1.0 + 0x1p-7, 1.0 - 0x1p-8, -1.0 - 0x1p-7});
  CHECK(doubles(run("nextafter", {f16({1.0F, 0.0F, 3.0F}), f16({0.0F, -1.0F, 3.0F})})) ==
        std::vector<double>{1.0 - 0x1p-11, -0x1p-24, 3.0});
  CHECK(values<uint16_t>(run("nextafter", {bf16({0.0F}), bf16({1.0F})})) == std::vector<uint16_t>{1});
  CHECK(std::isnan(doubles(run("nextafter", {bf16({kNaNf}), bf16({1.0F})}))[0]));
}

TEST_CASE("bitwise and logical ops on bool and integers") {
  const BufferPtr p = vec<uint8_t>(DType::kBool, {0, 0, 1, 1});
  const BufferPtr q = vec<uint8_t>(DType::kBool, {0, 1, 0, 1});
  CHECK(values<uint8_t>(run("and", {p, q})) == std::vector<uint8_t>{0, 0, 0, 1});
  CHECK(values<uint8_t>(run("or", {p, q})) == std::vector<uint8_t>{0, 1, 1, 1});
  CHECK(values<uint8_t>(run("xor", {p, q})) == std::vector<uint8_t>{0, 1, 1, 0});
  const BufferPtr a = vec<int16_t>(DType::kInt16, {0x0F0F, -1});
  const BufferPtr b = vec<int16_t>(DType::kInt16, {0x00FF, 0x1234});
  CHECK(values<int16_t>(run("and", {a, b})) == std::vector<int16_t>{0x000F, 0x1234});
  CHECK(values<int16_t>(run("or", {a, b})) == std::vector<int16_t>{0x0FFF, -1});
  CHECK(values<int16_t>(run("xor", {a, b})) == std::vector<int16_t>{0x0FF0, static_cast<int16_t>(~0x1234)});
}

TEST_CASE("shifts saturate for amounts outside 0..bits-1 as XLA's do") {
  const BufferPtr ones = vec<int32_t>(DType::kInt32, {1, 1, 1, 1, 3});
  const BufferPtr amounts = vec<int32_t>(DType::kInt32, {0, 31, 32, -1, 2});
  CHECK(values<int32_t>(run("shift_left", {ones, amounts})) == std::vector<int32_t>{1, kIntMin, 0, 0, 12});
  const BufferPtr negative = vec<int32_t>(DType::kInt32, {-8, -8, -8, 8, -1});
  const BufferPtr by = vec<int32_t>(DType::kInt32, {1, 40, -3, 40, 28});
  CHECK(values<int32_t>(run("shift_right_arithmetic", {negative, by})) == std::vector<int32_t>{-4, -1, -1, 0, -1});
  CHECK(values<int32_t>(run("shift_right_logical", {negative, by})) == std::vector<int32_t>{0x7FFFFFFC, 0, 0, 0, 15});
  // Unsigned arithmetic shifts fill with the pattern's top bit.
  CHECK(values<uint8_t>(run("shift_right_arithmetic", {vec<uint8_t>(DType::kUInt8, {0x80, 0x80, 0x40}),
                                                       vec<uint8_t>(DType::kUInt8, {1, 9, 9})})) ==
        std::vector<uint8_t>{0xC0, 0xFF, 0x00});
  CHECK(values<uint8_t>(run("shift_right_logical", {vec<uint8_t>(DType::kUInt8, {0x80}),
                                                    vec<uint8_t>(DType::kUInt8, {7})})) == std::vector<uint8_t>{1});
  CHECK(values<int8_t>(run("shift_left", {vec<int8_t>(DType::kInt8, {1, 3}), vec<int8_t>(DType::kInt8, {7, 8})})) ==
        std::vector<int8_t>{-128, 0});
  CHECK(
      values<uint64_t>(run("shift_left", {vec<uint64_t>(DType::kUInt64, {1}), vec<uint64_t>(DType::kUInt64, {63})})) ==
      std::vector<uint64_t>{uint64_t{1} << 63});
}

TEST_CASE("comparisons give bool, NaN compares unequal and unordered") {
  const BufferPtr a = vec(DType::kFloat32, std::vector{kNaNf, 1.0F, 2.0F, -0.0F});
  const BufferPtr b = vec(DType::kFloat32, std::vector{kNaNf, 2.0F, 2.0F, 0.0F});
  const BufferPtr eq = run("eq", {a, b});
  CHECK(eq->dtype() == DType::kBool);
  CHECK(values<uint8_t>(eq) == std::vector<uint8_t>{0, 0, 1, 1});
  CHECK(values<uint8_t>(run("ne", {a, b})) == std::vector<uint8_t>{1, 1, 0, 0});
  CHECK(values<uint8_t>(run("lt", {a, b})) == std::vector<uint8_t>{0, 1, 0, 0});
  CHECK(values<uint8_t>(run("le", {a, b})) == std::vector<uint8_t>{0, 1, 1, 1});
  CHECK(values<uint8_t>(run("gt", {a, b})) == std::vector<uint8_t>{0, 0, 0, 0});
  CHECK(values<uint8_t>(run("ge", {a, b})) == std::vector<uint8_t>{0, 0, 1, 1});
  CHECK(values<uint8_t>(run("lt", {vec<uint32_t>(DType::kUInt32, {0xFFFFFFFFU}),
                                   vec<uint32_t>(DType::kUInt32, {1})})) == std::vector<uint8_t>{0});
  CHECK(values<uint8_t>(run("lt", {vec<int8_t>(DType::kInt8, {-1}), vec<int8_t>(DType::kInt8, {1})})) ==
        std::vector<uint8_t>{1});
  CHECK(values<uint8_t>(run("gt", {bf16({1.0F}), bf16({0.5F})})) == std::vector<uint8_t>{1});
  CHECK(values<uint8_t>(run("lt", {vec<uint8_t>(DType::kBool, {0, 1}), vec<uint8_t>(DType::kBool, {1, 1})})) ==
        std::vector<uint8_t>{1, 0});
}

TEST_CASE("mul's out_dtype converts the operands first and prints only when set (JAX >= 0.10)") {
  const Params to_f32 = {{"out_dtype", DType::kFloat32}};
  CHECK(eval("mul", {aval(DType::kInt8, {2}), aval(DType::kInt8, {2})}, to_f32).dtype == DType::kFloat32);
  CHECK(eval("mul", {aval(DType::kInt8, {2}), aval(DType::kBFloat16, {2})}, to_f32).dtype == DType::kFloat32);
  CHECK(eval("mul", {aval(DType::kInt8, {2}), aval(DType::kInt8, {2})}, {{"out_dtype", ParamValue::None{}}}).dtype ==
        DType::kInt8);
  CHECK(eval_error("mul", {aval(DType::kInt8), aval(DType::kInt16)}, {{"out_dtype", ParamValue::None{}}}) ==
        "TypeError: lax.mul requires arguments to have the same dtypes, got int8, int16. (Tip: jnp.multiply is a "
        "similar function that does automatic type promotion on inputs).");
  const BufferPtr product = run("mul", {vec<int8_t>(DType::kInt8, {100}), vec<int8_t>(DType::kInt8, {100})}, to_f32);
  CHECK(product->dtype() == DType::kFloat32);
  CHECK(values<float>(product) == std::vector<float>{10000.0F});

  const Primitive& mul = prim("mul");
  Eqn eqn{&mul, {{"out_dtype", ParamValue::None{}}}, {}, {}, nullptr};
  CHECK(mul.printed_params(eqn, JaxProfile()).empty());
  eqn.params = to_f32;
  CHECK(mul.printed_params(eqn, JaxProfile()).size() == 1);
  CHECK(mul.printed_params(eqn, JaxProfile(JaxVersion{0, 9, 2})).empty());
}
