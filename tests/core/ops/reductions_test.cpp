// Reductions, argmax/argmin and cumulative reductions: shapes, weak types, kernels per dtype, errors, print rules.
#include <cmath>
#include <limits>

#include "structural_test_util.h"

using namespace shardscope;
using namespace structural_test;

namespace {

const JaxProfile kNewest;

Params axes(const std::vector<int64_t>& dims) { return {{"axes", ints(dims)}, {"out_sharding", ParamValue::None{}}}; }

}  // namespace

TEST_CASE("reduce_sum drops the reduced axes and keeps the weak type") {
  Aval operand = Aval::of({2, 3, 4}, DType::kFloat32, true);
  operand.dim_axes = {{"x"}, {}, {"y"}};
  const Aval out = eval("reduce_sum", {operand}, axes({1}));
  CHECK(out.shape == Shape{2, 4});
  CHECK(out.dtype == DType::kFloat32);
  CHECK(out.weak_type);
  CHECK(out.dim_axes == std::vector<std::vector<std::string>>{{"x"}, {"y"}});
  CHECK(eval("reduce_sum", {operand}, axes({0, 1, 2})).shape == Shape{});
}

TEST_CASE("reduce_sum over leading, trailing, middle and scattered axes") {
  const BufferPtr x = i32({2, 3, 2}, counting(12));  // [[[0,1],[2,3],[4,5]], [[6,7],[8,9],[10,11]]]
  CHECK(values(run("reduce_sum", {x}, axes({0}))) == std::vector<double>{6, 8, 10, 12, 14, 16});
  CHECK(values(run("reduce_sum", {x}, axes({2}))) == std::vector<double>{1, 5, 9, 13, 17, 21});
  CHECK(values(run("reduce_sum", {x}, axes({1}))) == std::vector<double>{6, 9, 24, 27});
  CHECK(values(run("reduce_sum", {x}, axes({0, 2}))) == std::vector<double>{14, 22, 30});
  CHECK(values(run("reduce_sum", {x}, axes({}))) == counting(12));
  CHECK(values(run("reduce_sum", {f32({2, 0}, {})}, axes({1}))) == std::vector<double>{0, 0});
}

TEST_CASE("reduce_sum: integers wrap, float32 sums stay accurate, half precision accumulates in float32") {
  CHECK(values(run("reduce_sum", {buffer(DType::kInt8, {3}, {100, 100, 100})}, axes({0}))) ==
        std::vector<double>{44});  // 300 mod 256
  CHECK(values(run("reduce_sum", {buffer(DType::kUInt8, {2}, {200, 100})}, axes({0}))) == std::vector<double>{44});
  // A million 0.1f: a single running float sum drifts by about 1%, pairwise summation does not.
  const int64_t count = 1000000;
  const BufferPtr tenths = f32({count}, std::vector<double>(static_cast<std::size_t>(count), 0.1));
  const double total = values(run("reduce_sum", {tenths}, axes({0})))[0];
  CHECK(std::abs(total - 100000.0) < 1.0);
  // In bfloat16 256 + 1 rounds back to 256; in float32 the four ones survive and 260 is representable.
  const BufferPtr halves = buffer(DType::kBFloat16, {5}, {256, 1, 1, 1, 1});
  const BufferPtr sum = run("reduce_sum", {halves}, axes({0}));
  CHECK(sum->dtype() == DType::kBFloat16);
  CHECK(values(sum) == std::vector<double>{260});
  CHECK(values(run("reduce_sum", {buffer(DType::kFloat16, {2, 2}, {0.5, 1.5, 2, 4})}, axes({1}))) ==
        std::vector<double>{2, 6});
}

TEST_CASE("reduce_max/min propagate NaN and work on bool and unsigned values") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> maxes = values(run("reduce_max", {f32({2, 3}, {1, nan, 3, -1, -5, -2})}, axes({1})));
  CHECK(std::isnan(maxes[0]));
  CHECK(maxes[1] == -1);
  CHECK(values(run("reduce_min", {f32({2, 3}, {1, 0, 3, -1, -5, -2})}, axes({1}))) == std::vector<double>{0, -5});
  CHECK(values(run("reduce_max", {buffer(DType::kBool, {2, 2}, {0, 0, 0, 1})}, axes({1}))) ==
        std::vector<double>{0, 1});
  CHECK(values(run("reduce_min", {buffer(DType::kBool, {2, 2}, {1, 1, 0, 1})}, axes({1}))) ==
        std::vector<double>{1, 0});
  CHECK(values(run("reduce_max", {buffer(DType::kUInt32, {3}, {4000000000.0, 5, 7})}, axes({0}))) ==
        std::vector<double>{4000000000.0});
  // An empty reduction gives the identity.
  CHECK(values(run("reduce_max", {f32({0}, {})}, axes({0}))) ==
        std::vector<double>{-std::numeric_limits<double>::infinity()});
  CHECK(values(run("reduce_min", {buffer(DType::kInt16, {0}, {})}, axes({0}))) == std::vector<double>{32767});
}

TEST_CASE("reduce_prod and the logical reductions") {
  CHECK(values(run("reduce_prod", {i32({2, 2}, {2, 3, 4, 5})}, axes({0}))) == std::vector<double>{8, 15});
  CHECK(values(run("reduce_prod", {buffer(DType::kUInt16, {2}, {300, 300})}, axes({0}))) ==
        std::vector<double>{24464});  // 90000 mod 65536
  const Params logical = {{"axes", ints({1})}};
  CHECK(values(run("reduce_and", {buffer(DType::kBool, {2, 2}, {1, 1, 1, 0})}, logical)) == std::vector<double>{1, 0});
  CHECK(values(run("reduce_or", {buffer(DType::kBool, {2, 2}, {0, 0, 1, 0})}, logical)) == std::vector<double>{0, 1});
  CHECK(values(run("reduce_and", {i32({1, 2}, {6, 3})}, logical)) == std::vector<double>{2});
  CHECK(values(run("reduce_or", {i32({1, 2}, {4, 3})}, logical)) == std::vector<double>{7});
  CHECK(values(run("reduce_xor", {i32({1, 3}, {5, 3, 1})}, logical)) == std::vector<double>{7});
  const Aval weak_bool = Aval::of({2, 2}, DType::kBool, true);
  CHECK(!eval("reduce_or", {weak_bool}, logical).weak_type);
}

TEST_CASE("reduction errors match JAX") {
  CHECK(eval_error("reduce_sum", {f32_aval({2, 3})}, axes({0, 0})) ==
        std::pair<std::string, std::string>{"ValueError", "duplicate value in 'axes' of reduction: (0, 0)"});
  CHECK(eval_error("reduce_max", {f32_aval({2, 3}, true)}, axes({2})) ==
        std::pair<std::string, std::string>{"ValueError",
                                            "reduction axes (2,) contains out-of-bounds indices for ~float32[2,3]."});
  CHECK(eval_error("reduce_sum", {Aval::of({2}, DType::kBool)}, axes({0})) ==
        std::pair<std::string, std::string>{
            "TypeError", "reduce_sum does not accept dtype bool. Accepted dtypes are subtypes of number."});
  CHECK(eval_error("reduce_prod", {Aval::of({2}, DType::kBool)}, {{"axes", ints({0})}}).second ==
        "reduce_prod does not accept dtype bool. Accepted dtypes are subtypes of number.");
  CHECK(eval_error("reduce_and", {f32_aval({2})}, {{"axes", ints({0})}}) ==
        std::pair<std::string, std::string>{"TypeError",
                                            "logical reduction requires operand dtype bool or int, got float32."});
}

TEST_CASE("argmax/argmin: first of ties, NaN wins, index dtype") {
  const Params max_rows = {{"axes", ints({1})}, {"index_dtype", DType::kInt32}};
  const Aval out = eval("argmax", {f32_aval({2, 3}, true)}, max_rows);
  CHECK(out.shape == Shape{2});
  CHECK(out.dtype == DType::kInt32);
  CHECK(!out.weak_type);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(values(run("argmax", {f32({2, 3}, {1, 5, 5, 2, nan, nan})}, max_rows)) == std::vector<double>{1, 1});
  const Params min_cols = {{"axes", ints({0})}, {"index_dtype", DType::kInt8}};
  const BufferPtr mins = run("argmin", {i32({3, 2}, {4, 1, 2, 1, 2, 0})}, min_cols);
  CHECK(mins->dtype() == DType::kInt8);
  CHECK(values(mins) == std::vector<double>{1, 2});
  CHECK(values(run("argmax", {buffer(DType::kBool, {3}, {0, 1, 1})},
                   {{"axes", ints({0})}, {"index_dtype", DType::kInt32}})) == std::vector<double>{1});
  CHECK(eval_error("argmax", {f32_aval({2, 0})}, max_rows) ==
        std::pair<std::string, std::string>{
            "ValueError", "argmin and argmax require non-empty reduced dimension. operand.shape=(2, 0) axis=1"});
  CHECK(eval_error("argmin", {f32_aval({2})}, max_rows).second == "Invalid axis 1 for operand shape (2,)");
  CHECK(eval_error("argmin", {f32_aval({2})}, {{"axes", ints({0})}, {"index_dtype", DType::kFloat32}}) ==
        std::pair<std::string, std::string>{"TypeError", "index_dtype must be an integer type, but got float32"});
}

TEST_CASE("cumulative reductions run forward or in reverse along one axis") {
  const Params forward = {{"axis", 1}, {"reverse", false}};
  const Params backward = {{"axis", 1}, {"reverse", true}};
  const BufferPtr x = i32({2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(values(run("cumsum", {x}, forward)) == std::vector<double>{1, 3, 6, 4, 9, 15});
  CHECK(values(run("cumsum", {x}, backward)) == std::vector<double>{6, 5, 3, 15, 11, 6});
  CHECK(values(run("cumprod", {x}, forward)) == std::vector<double>{1, 2, 6, 4, 20, 120});
  CHECK(values(run("cummax", {f32({1, 4}, {1, 3, 2, 5})}, forward)) == std::vector<double>{1, 3, 3, 5});
  CHECK(values(run("cummin", {f32({1, 4}, {4, 3, 5, 1})}, backward)) == std::vector<double>{1, 1, 1, 1});
  CHECK(values(run("cumsum", {f32({3, 1}, {1, 2, 3})}, {{"axis", 0}, {"reverse", false}})) ==
        std::vector<double>{1, 3, 6});
  CHECK(values(run("cumsum", {buffer(DType::kBFloat16, {3}, {256, 1, 1})}, {{"axis", 0}, {"reverse", false}})) ==
        std::vector<double>{256, 256, 258});  // 257 rounds to even; the float32 running sum keeps it
  const Aval weak = eval("cumsum", {f32_aval({2, 3}, true)}, forward);
  CHECK(weak.weak_type);
  CHECK(weak.shape == Shape{2, 3});
  CHECK(eval_error("cumsum", {Aval::of({2}, DType::kBool)}, {{"axis", 0}, {"reverse", false}}) ==
        std::pair<std::string, std::string>{
            "TypeError", "cumsum does not accept dtype bool. Accepted dtypes are subtypes of number."});
  Aval sharded = f32_aval({8, 2});
  sharded.dim_axes = {{"x"}, {}};
  CHECK(eval_error("cumsum", {sharded}, {{"axis", 0}, {"reverse", false}}) ==
        std::pair<std::string, std::string>{
            "ShardingTypeError",
            "Input should be unsharded over the axis being reduced. Got input type=float32[8@x,2] and axis=0"});
  CHECK(eval("cumsum", {sharded}, {{"axis", 1}, {"reverse", false}}).dim_axes == sharded.dim_axes);
  CHECK(eval_error("cummax", {f32_aval({2})}, {{"axis", -1}, {"reverse", false}}).second ==
        "XLA operations do not allow negative axes");
  CHECK(eval_error("cumprod", {f32_aval({2})}, {{"axis", 1}, {"reverse", false}}).second ==
        "axis 1 is out of bounds for array of shape (2,)");
}

TEST_CASE("reduction print rules follow the JAX version") {
  CHECK(params_text("reduce_sum", axes({0}), kNewest) == "axes=(0,) out_sharding=None");
  CHECK(params_text("reduce_sum", {{"axes", ints({0})}}, kNewest) == "axes=(0,) out_sharding=None");
  CHECK(params_text("reduce_sum", axes({0}), JaxProfile(JaxVersion{0, 7, 2})) == "axes=(0,)");
  CHECK(params_text("reduce_max", axes({1}), kNewest) == "axes=(1,)");
  CHECK(params_text("reduce_max", axes({1}), JaxProfile(JaxVersion{0, 11, 1})) == "axes=(1,) out_sharding=None");
  CHECK(params_text("argmax", {{"axes", ints({1})}, {"index_dtype", DType::kInt32}}, kNewest) ==
        "axes=(1,) index_dtype=int32");
  CHECK(params_text("cumsum", {{"axis", 0}, {"reverse", false}}, kNewest) == "axis=0 reverse=False");
  CHECK(params_text("cummax", {{"axis", 1}, {"reverse", true}}, JaxProfile(JaxVersion{0, 4, 30})) ==
        "axis=1 reverse=True");
  CHECK(params_text("reduce_min", {{"axes", ints({0, 1})}}, JaxProfile(JaxVersion{0, 4, 30})) == "axes=(0, 1)");
}
