// Layout and slicing primitives: shape rules, JAX's error messages, kernels and print rules per JAX version.
#include "ops/structural.h"

#include "structural_test_util.h"

using namespace shardscope;
using namespace structural_test;

namespace {
const JaxProfile kNewest;
const JaxProfile kJax0430(JaxVersion{0, 4, 30});  // NOLINT(cert-err58-cpp): a constexpr-like value, cannot throw
}  // namespace

TEST_CASE("every structural primitive is registered") {
  for (const char* name : {"broadcast_in_dim",
                           "reshape",
                           "transpose",
                           "squeeze",
                           "concatenate",
                           "split",
                           "stack",
                           "unstack",
                           "pad",
                           "rev",
                           "iota",
                           "slice",
                           "dynamic_slice",
                           "dynamic_update_slice",
                           "gather",
                           "reduce_sum",
                           "reduce_max",
                           "reduce_min",
                           "reduce_prod",
                           "reduce_and",
                           "reduce_or",
                           "reduce_xor",
                           "argmax",
                           "argmin",
                           "cumsum",
                           "cumprod",
                           "cummax",
                           "cummin",
                           "dot_general"}) {
    ensure_core_primitives();
    CHECK_MESSAGE(find_primitive(name) != nullptr, name);
  }
  // lax.expand_dims is broadcast_in_dim in JAX, not a primitive.
  CHECK(find_primitive("expand_dims") == nullptr);
}

TEST_CASE("broadcast_in_dim: shape, broadcasting kernel and JAX's errors") {
  const Params params = {
      {"shape", ints({2, 3})}, {"broadcast_dimensions", ints({0})}, {"sharding", ParamValue::None{}}};
  const Aval out = eval("broadcast_in_dim", {Aval::of({2}, DType::kInt32, true)}, params);
  CHECK(out.shape == Shape{2, 3});
  CHECK(out.dtype == DType::kInt32);
  CHECK(out.weak_type);
  CHECK(values(run("broadcast_in_dim", {i32({2}, {7, 8})}, params)) == std::vector<double>{7, 7, 7, 8, 8, 8});
  // A size-1 operand dim stretches to the target size.
  const Params stretch = {{"shape", ints({2, 3})}, {"broadcast_dimensions", ints({0, 1})}};
  CHECK(values(run("broadcast_in_dim", {f32({1, 3}, {1, 2, 3})}, stretch)) == std::vector<double>{1, 2, 3, 1, 2, 3});
  CHECK(eval_error("broadcast_in_dim", {f32_aval({2, 2})}, params) ==
        std::pair<std::string, std::string>{"TypeError",
                                            "broadcast_in_dim broadcast_dimensions must have length equal to operand "
                                            "ndim; got broadcast_dimensions (0,) for operand ndim 2."});
  CHECK(eval_error("broadcast_in_dim", {f32_aval({4})}, params).second ==
        "broadcast_in_dim operand dimension sizes must either be 1, or be equal to their corresponding dimensions in "
        "the target broadcast shape; got operand of shape (4,), target broadcast shape (2, 3), broadcast_dimensions "
        "(0,) ");
  const Params duplicate = {{"shape", ints({3, 3})}, {"broadcast_dimensions", ints({1, 1})}};
  CHECK(eval_error("broadcast_in_dim", {f32_aval({3, 3})}, duplicate).second ==
        "broadcast_in_dim broadcast_dimensions must not contain duplicates, got broadcast_dimensions (1, 1)");
}

TEST_CASE("broadcast_in_dim prints only non-empty broadcast_dimensions from 0.9.1") {
  const Params scalar_to_vector = {
      {"shape", ints({3})}, {"broadcast_dimensions", ints({})}, {"sharding", ParamValue::None{}}};
  CHECK(params_text("broadcast_in_dim", scalar_to_vector, kNewest) == "");
  const Params vector = {
      {"shape", ints({2, 3})}, {"broadcast_dimensions", ints({1})}, {"sharding", ParamValue::None{}}};
  CHECK(params_text("broadcast_in_dim", vector, kNewest) == "broadcast_dimensions=(1,)");
  CHECK(params_text("broadcast_in_dim", vector, JaxProfile(JaxVersion{0, 9, 0})) ==
        "broadcast_dimensions=(1,) shape=(2, 3) sharding=None");
  CHECK(params_text("broadcast_in_dim", vector, kJax0430) == "broadcast_dimensions=(1,) shape=(2, 3)");
  // The whole equation, as make_jaxpr lays it out.
  CHECK(print_eqn("broadcast_in_dim", {f32_aval({})}, f32_aval({3}), scalar_to_vector, kNewest) ==
        "{ lambda ; a:f32[]. let b:f32[3] = broadcast_in_dim a in (b,) }");
}

TEST_CASE("reshape: dimensions permute first, total size must be unchanged") {
  const Params plain = {
      {"new_sizes", ints({3, 2})}, {"dimensions", ParamValue::None{}}, {"sharding", ParamValue::None{}}};
  CHECK(eval("reshape", {f32_aval({2, 3}, true)}, plain).shape == Shape{3, 2});
  CHECK(eval("reshape", {f32_aval({2, 3}, true)}, plain).weak_type);
  CHECK(values(run("reshape", {f32({2, 3}, counting(6))}, plain)) == counting(6));
  const Params permuted = {{"new_sizes", ints({6})}, {"dimensions", ints({1, 0})}};
  CHECK(values(run("reshape", {i32({2, 3}, counting(6))}, permuted)) == std::vector<double>{0, 3, 1, 4, 2, 5});
  CHECK(eval_error("reshape", {f32_aval({2, 3})}, {{"new_sizes", ints({4})}, {"dimensions", ParamValue::None{}}}) ==
        std::pair<std::string, std::string>{"TypeError",
                                            "reshape total size must be unchanged, got new_sizes (4,) (of total size "
                                            "4) for shape (2, 3) (of total size 6)."});
  CHECK(eval_error("reshape", {f32_aval({2, 3})}, {{"new_sizes", ints({6})}, {"dimensions", ints({0, 0})}}).second ==
        "reshape dimensions must be a permutation of operand dimensions, got dimensions (0, 0) for shape (2, 3).");
  CHECK(params_text("reshape", plain, kNewest) == "dimensions=None new_sizes=(3, 2) sharding=None");
  CHECK(params_text("reshape", plain, kJax0430) == "dimensions=None new_sizes=(3, 2)");
}

TEST_CASE("transpose: permutation, large tiled copies and the permutation check") {
  const Params swap = {{"permutation", ints({2, 0, 1})}};
  Aval sharded = f32_aval({2, 3, 4});
  sharded.dim_axes = {{"x"}, {}, {"y"}};
  const Aval out = eval("transpose", {sharded}, swap);
  CHECK(out.shape == Shape{4, 2, 3});
  CHECK(out.dim_axes == std::vector<std::vector<std::string>>{{"y"}, {"x"}, {}});
  const BufferPtr result = run("transpose", {buffer(DType::kBFloat16, {2, 3, 4}, counting(24))}, swap);
  CHECK(result->dtype() == DType::kBFloat16);
  CHECK(result->element_as_double(0) == 0);
  CHECK(result->element_as_double(1) == 4);    // [0, 0, 1] <- [0, 1, 0]
  CHECK(result->element_as_double(3) == 12);   // [0, 1, 0] <- [1, 0, 0]
  CHECK(result->element_as_double(23) == 23);  // [3, 1, 2] <- [1, 2, 3]
  // Big enough to take the tiled path, with ragged tiles.
  const int64_t rows = 70;
  const int64_t cols = 45;
  const BufferPtr big = run("transpose", {i32({rows, cols}, counting(rows * cols))}, {{"permutation", ints({1, 0})}});
  bool all_match = true;
  for (int64_t c = 0; c < cols; ++c) {
    for (int64_t r = 0; r < rows; ++r)
      all_match &= big->element_as_double(c * rows + r) == static_cast<double>(r * cols + c);
  }
  CHECK(all_match);
  CHECK(eval_error("transpose", {f32_aval({2, 3})}, {{"permutation", ints({1, 0, 2})}}) ==
        std::pair<std::string, std::string>{"TypeError",
                                            "transpose permutation isn't a permutation of operand dimensions, got "
                                            "permutation (1, 0, 2) for operand shape (2, 3)."});
  CHECK(params_text("transpose", swap, kNewest) == "permutation=(2, 0, 1)");
}

TEST_CASE("squeeze removes size-1 dims and raises ValueErrors") {
  const Params params = {{"dimensions", ints({0, 2})}};
  CHECK(eval("squeeze", {f32_aval({1, 3, 1})}, params).shape == Shape{3});
  CHECK(values(run("squeeze", {f32({1, 3, 1}, {4, 5, 6})}, params)) == std::vector<double>{4, 5, 6});
  CHECK(eval_error("squeeze", {f32_aval({2, 3})}, {{"dimensions", ints({0})}}) ==
        std::pair<std::string, std::string>{"ValueError",
                                            "cannot select an axis to squeeze out which has size not equal to one, "
                                            "got shape=(2, 3) and dimensions=(0,)"});
  CHECK(eval_error("squeeze", {f32_aval({1})}, {{"dimensions", ints({1})}}).second ==
        "dimensions outside range [0, ndim): (1,)");
  CHECK(eval_error("squeeze", {f32_aval({1})}, {{"dimensions", ints({0, 0})}}).second ==
        "dimensions are not unique: (0, 0)");
  CHECK(params_text("squeeze", {{"dimensions", ints({0})}}, kNewest) == "dimensions=(0,)");
}

TEST_CASE("concatenate joins along a dimension, shapes, ranks and dtypes must agree") {
  const Params params = {{"dimension", 1}};
  const Aval out = eval("concatenate", {Aval::of({2, 1}, DType::kInt8), Aval::of({2, 2}, DType::kInt8)}, params);
  CHECK(out.shape == Shape{2, 3});
  const BufferPtr joined =
      run("concatenate", {buffer(DType::kInt8, {2, 1}, {1, 2}), buffer(DType::kInt8, {2, 2}, {3, 4, 5, 6})}, params);
  CHECK(values(joined) == std::vector<double>{1, 3, 4, 2, 5, 6});
  CHECK(eval_error("concatenate", {f32_aval({2, 3}), f32_aval({3})}, params).second ==
        "Cannot concatenate arrays with different numbers of dimensions: got (2, 3), (3,).");
  CHECK(eval_error("concatenate", {f32_aval({2, 3}), f32_aval({3, 3})}, params).second ==
        "Cannot concatenate arrays with shapes that differ in dimensions other than the one being concatenated: "
        "concatenating along dimension 1 for shapes (2, 3), (3, 3).");
  CHECK(eval_error("concatenate", {f32_aval({2, 3})}, {{"dimension", 2}}).second ==
        "concatenate dimension out of bounds: dimension 2 for shapes (2, 3).");
  CHECK(eval_error("concatenate", {f32_aval({2}), Aval::of({2}, DType::kInt32)}, {{"dimension", 0}}).second ==
        "lax.concatenate requires arguments to have the same dtypes, got float32, int32. (Tip: jnp.concatenate is a "
        "similar function that does automatic type promotion on inputs).");
}

TEST_CASE("split returns one array per size") {
  const Params params = {{"sizes", ints({1, 2})}, {"axis", 1}};
  const std::vector<BufferPtr> pieces = run_all("split", {i32({2, 3}, counting(6))}, params);
  REQUIRE(pieces.size() == 2);
  CHECK(pieces[0]->shape() == Shape{2, 1});
  CHECK(values(pieces[0]) == std::vector<double>{0, 3});
  CHECK(values(pieces[1]) == std::vector<double>{1, 2, 4, 5});
  CHECK(error_of([&] {
          (void)prim("split").abstract_eval(std::vector<Aval>{f32_aval({2, 4})}, params);
        }).second == "Sum of sizes 3 must be equal to dimension 1 of the operand shape [2, 4]");
}

TEST_CASE("stack joins same-shape operands along a new axis, with JAX 0.10.1's shape and dtype errors") {
  const Aval out =
      eval("stack", {Aval::of({2, 3}, DType::kInt8, true), Aval::of({2, 3}, DType::kInt8, true)}, {{"axis", 1}});
  CHECK(out.shape == Shape{2, 2, 3});
  CHECK(out.dtype == DType::kInt8);
  CHECK(out.weak_type);
  CHECK_FALSE(eval("stack", {Aval::of({3}, DType::kInt8, true), Aval::of({3}, DType::kInt8)}, {{"axis", 0}}).weak_type);
  const BufferPtr a = i32({2, 3}, counting(6));
  const BufferPtr b = i32({2, 3}, counting(6, 10));
  CHECK(values(run("stack", {a, b}, {{"axis", 0}})) == std::vector<double>{0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15});
  CHECK(values(run("stack", {a, b}, {{"axis", 1}})) == std::vector<double>{0, 1, 2, 10, 11, 12, 3, 4, 5, 13, 14, 15});
  const BufferPtr last = run("stack", {a, b, a}, {{"axis", 2}});
  CHECK(last->shape() == Shape{2, 3, 3});
  CHECK(values(last) == std::vector<double>{0, 10, 0, 1, 11, 1, 2, 12, 2, 3, 13, 3, 4, 14, 4, 5, 15, 5});
  CHECK(eval_error("stack", {}, {{"axis", 0}}) ==
        std::pair<std::string, std::string>{"ValueError", "stack expects at least one operand, got 0."});
  CHECK(eval_error("stack", {f32_aval({2, 3}), f32_aval({3})}, {{"axis", 0}}) ==
        std::pair<std::string, std::string>{
            "ValueError", "Cannot stack arrays with different numbers of dimensions: got (2, 3), (3,)."});
  CHECK(
      eval_error("stack", {f32_aval({2}), f32_aval({3})}, {{"axis", 0}}) ==
      std::pair<std::string, std::string>{"ValueError", "All input arrays must have the same shape. Got (2,), (3,)."});
  CHECK(eval_error("stack", {f32_aval({2}), Aval::of({2}, DType::kInt32)}, {{"axis", 0}}) ==
        std::pair<std::string, std::string>{
            "TypeError", "lax.stack requires arguments to have the same dtypes, got float32, int32."});
  CHECK(print_eqn("stack", {f32_aval({3}), f32_aval({3})}, f32_aval({2, 3}), {{"axis", 0}}, kNewest) ==
        "{ lambda ; a:f32[3] b:f32[3]. let c:f32[2,3] = stack[axis=0] a b in (c,) }");
}

TEST_CASE("unstack returns one result per index along the axis, that dim removed") {
  const std::vector<Aval> outs =
      prim("unstack").abstract_eval(std::vector<Aval>{f32_aval({2, 3}, true)}, {{"axis", 1}});
  REQUIRE(outs.size() == 3);
  CHECK(outs[2].shape == Shape{2});
  CHECK(outs[2].weak_type);
  const std::vector<BufferPtr> rows = run_all("unstack", {i32({2, 3}, counting(6))}, {{"axis", 0}});
  REQUIRE(rows.size() == 2);
  CHECK(values(rows[1]) == std::vector<double>{3, 4, 5});
  const std::vector<BufferPtr> columns = run_all("unstack", {i32({2, 3}, counting(6))}, {{"axis", 1}});
  REQUIRE(columns.size() == 3);
  CHECK(columns[1]->shape() == Shape{2});
  CHECK(values(columns[1]) == std::vector<double>{1, 4});
  CHECK(values(columns[2]) == std::vector<double>{2, 5});
  CHECK(run_all("unstack", {i32({0, 2}, {})}, {{"axis", 0}}).empty());
  CHECK(eval_error("unstack", {f32_aval({})}, {{"axis", 0}}) ==
        std::pair<std::string, std::string>{
            "ValueError", "unstack requires arrays with rank > 0, however a scalar array of shape () was passed."});
  CHECK(params_text("unstack", {{"axis", 1}}, kNewest) == "axis=1");
}

TEST_CASE("pad: low/high (negative crops) and interior padding") {
  const ParamValue config = ParamValue::tuple({ints({1, 2, 1})});
  const Aval out = eval("pad", {f32_aval({3}, true), f32_aval({}, true)}, {{"padding_config", config}});
  CHECK(out.shape == Shape{8});  // 1 + 2 + (3 + 2 interior)
  CHECK(out.weak_type);
  CHECK(values(run("pad", {f32({3}, {1, 2, 3}), scalar(DType::kFloat32, -1)}, {{"padding_config", config}})) ==
        std::vector<double>{-1, 1, -1, 2, -1, 3, -1, -1});
  // Negative low padding drops leading elements, even ones that interior padding put there.
  const ParamValue crop = ParamValue::tuple({ints({-2, -1, 1}), ints({0, 1, 0})});
  const BufferPtr cropped =
      run("pad", {i32({2, 3}, counting(6, 1)), scalar(DType::kInt32, 0)}, {{"padding_config", crop}});
  CHECK(cropped->shape() == Shape{0, 4});
  const ParamValue crop_rows = ParamValue::tuple({ints({-1, 0, 1}), ints({0, 0, 0})});
  CHECK(values(run("pad", {i32({2, 2}, {1, 2, 3, 4}), scalar(DType::kInt32, 9)}, {{"padding_config", crop_rows}})) ==
        std::vector<double>{9, 9, 3, 4});
  CHECK(eval_error("pad", {f32_aval({3}), Aval::of({}, DType::kInt32)}, {{"padding_config", config}}) ==
        std::pair<std::string, std::string>{
            "TypeError", "pad operand and padding_value must be same dtype: got float32 and int32."});
  CHECK(eval_error("pad", {f32_aval({3}), f32_aval({})}, {{"padding_config", ParamValue::tuple({ints({-3, -1, 0})})}})
            .second ==
        "Dimension size after padding is not at least 0, got result shape (-1,), for padding_config "
        "((-3, -1, 0),) and operand shape (3,)");
  CHECK(eval_error("pad", {f32_aval({3}), f32_aval({2})}, {{"padding_config", config}}).second ==
        "padding_value must be a scalar; got np.shape(padding_value)=(2,)");
  CHECK(params_text("pad", {{"padding_config", config}}, kNewest) == "padding_config=((1, 2, 1),)");
}

TEST_CASE("rev reverses the given dimensions") {
  const Params params = {{"dimensions", ints({1})}};
  CHECK(values(run("rev", {i32({2, 3}, counting(6))}, params)) == std::vector<double>{2, 1, 0, 5, 4, 3});
  CHECK(values(run("rev", {i32({2, 3}, counting(6))}, {{"dimensions", ints({0, 1})}})) ==
        std::vector<double>{5, 4, 3, 2, 1, 0});
  CHECK(eval_error("rev", {f32_aval({2})}, {{"dimensions", ints({1})}}).second ==
        "rev dimensions must all be less than operand ndim, got dimensions (1,) for operand ndim 1.");
}

TEST_CASE("iota counts along one dimension in any numeric dtype") {
  const Params params = {
      {"dtype", DType::kInt32}, {"shape", ints({2, 3})}, {"dimension", 1}, {"sharding", ParamValue::None{}}};
  const Aval out = eval("iota", {}, params);
  CHECK(out.shape == Shape{2, 3});
  CHECK(out.dtype == DType::kInt32);
  CHECK(!out.weak_type);
  CHECK(values(run("iota", {}, params)) == std::vector<double>{0, 1, 2, 0, 1, 2});
  Params rows = params;
  rows[0].second = DType::kBFloat16;
  rows[2].second = 0;
  CHECK(values(run("iota", {}, rows)) == std::vector<double>{0, 0, 0, 1, 1, 1});
  Params bad = params;
  bad[0].second = DType::kBool;
  CHECK(eval_error("iota", {}, bad).second ==
        "iota does not accept dtype bool. Accepted dtypes are subtypes of integer, floating, complexfloating.");
  bad = params;
  bad[2].second = 2;
  CHECK(eval_error("iota", {}, bad) ==
        std::pair<std::string, std::string>{"ValueError",
                                            "iota dimension must be between 0 and len(shape), got dimension=2 for "
                                            "shape=(2, 3)"});
  CHECK(params_text("iota", params, kNewest) == "dimension=1 dtype=int32 shape=(2, 3) sharding=None");
  CHECK(params_text("iota", params, kJax0430) == "dimension=1 dtype=int32 shape=(2, 3)");
}

TEST_CASE("slice with strides, and its bounds checks") {
  const Params params = {{"start_indices", ints({0, 1})}, {"limit_indices", ints({3, 4})}, {"strides", ints({2, 2})}};
  CHECK(eval("slice", {f32_aval({3, 4})}, params).shape == Shape{2, 2});
  CHECK(values(run("slice", {i32({3, 4}, counting(12))}, params)) == std::vector<double>{1, 3, 9, 11});
  const Params unit = {{"start_indices", ints({1})}, {"limit_indices", ints({3})}, {"strides", ParamValue::None{}}};
  CHECK(values(run("slice", {i32({4}, counting(4))}, unit)) == std::vector<double>{1, 2});
  CHECK(eval_error("slice", {f32_aval({4})}, {{"start_indices", ints({0})}, {"limit_indices", ints({5})}}).second ==
        "slice limit_indices must be less than or equal to operand shape, got limit_indices (5,) for operand shape "
        "(4,).");
  CHECK(eval_error("slice", {f32_aval({4})}, {{"start_indices", ints({3})}, {"limit_indices", ints({2})}}).second ==
        "slice limit_indices must be greater than or equal to start_indices, got start_indices (3,) and limit_indices "
        "(2,).");
  CHECK(params_text("slice", unit, kNewest) == "limit_indices=(3,) start_indices=(1,) strides=None");
}

TEST_CASE("dynamic_slice clamps its start indices like XLA") {
  const Params params = {{"slice_sizes", ints({2, 2})}};
  const BufferPtr operand = i32({3, 4}, counting(12));
  CHECK(values(run("dynamic_slice", {operand, scalar(DType::kInt32, 1), scalar(DType::kInt32, 1)}, params)) ==
        std::vector<double>{5, 6, 9, 10});
  // Start (5, -3) clamps to (1, 0).
  CHECK(values(run("dynamic_slice", {operand, scalar(DType::kInt32, 5), scalar(DType::kInt32, -3)}, params)) ==
        std::vector<double>{4, 5, 8, 9});
  const Aval index = Aval::of({}, DType::kInt32);
  const Aval out = eval("dynamic_slice", {f32_aval({3, 4}, true), index, index}, params);
  CHECK(out.shape == Shape{2, 2});
  CHECK(out.weak_type);
  CHECK(eval_error("dynamic_slice", {f32_aval({3, 4}), index}, params) ==
        std::pair<std::string, std::string>{"ValueError",
                                            "Length of slice indices must match number of operand dimensions (1 vs "
                                            "(3, 4))"});
  CHECK(eval_error("dynamic_slice", {f32_aval({3, 4}), index, Aval::of({}, DType::kInt8)}, params).second ==
        "index arguments to dynamic_slice must be integers of the same type, got: int32, int8");
  CHECK(eval_error("dynamic_slice", {f32_aval({3, 4}), index, index}, {{"slice_sizes", ints({4, 1})}}).second ==
        "slice slice_sizes must be less than or equal to operand shape, got slice_sizes (4, 1) for operand shape (3, "
        "4).");
}

TEST_CASE("dynamic_update_slice writes the update at clamped indices") {
  const BufferPtr operand = i32({2, 3}, std::vector<double>(6, 0));
  const BufferPtr update = i32({1, 2}, {7, 8});
  CHECK(values(run("dynamic_update_slice", {operand, update, scalar(DType::kInt32, 1), scalar(DType::kInt32, 9)},
                   {})) == std::vector<double>{0, 0, 0, 0, 7, 8});
  const Aval index = Aval::of({}, DType::kInt32);
  CHECK(eval_error("dynamic_update_slice", {f32_aval({2, 3}), Aval::of({1, 2}, DType::kInt32), index, index}, {})
            .second == "lax.dynamic_update_slice requires arguments to have the same dtypes, got float32, int32.");
  CHECK(eval_error("dynamic_update_slice", {f32_aval({2, 3}), f32_aval({3, 2}), index, index}, {}).second ==
        "dynamic_update_slice update shape must be smaller than operand shape, got update shape (3, 2) for operand "
        "shape (2, 3).");
}

namespace {

Params gather_params(const GatherDimensionNumbers& numbers, const std::vector<int64_t>& slice_sizes, GatherMode mode) {
  return {{"dimension_numbers", gather_dimension_numbers_param(numbers)},
          {"slice_sizes", ParamValue::int_tuple(slice_sizes)},
          {"indices_are_sorted", false},
          {"unique_indices", false},
          {"mode", gather_mode_param(mode)},
          {"fill_value", ParamValue::None{}}};
}

}  // namespace

TEST_CASE("gather: x(idx) on rows, x(:, j), and out-of-bounds modes") {
  const BufferPtr x = i32({3, 4}, counting(12));
  // x[jnp.array([2, 0])]: whole rows.
  const Params rows = gather_params({{1}, {0}, {0}, {}, {}}, {1, 4}, GatherMode::kPromiseInBounds);
  const Aval out = eval("gather", {Aval::of({3, 4}, DType::kInt32), Aval::of({2, 1}, DType::kInt32)}, rows);
  CHECK(out.shape == Shape{2, 4});
  CHECK(values(run("gather", {x, i32({2, 1}, {2, 0})}, rows)) == std::vector<double>{8, 9, 10, 11, 0, 1, 2, 3});
  // x[:, idx] with idx = [3, 1]: columns, batch dim after the offset dim.
  const Params cols = gather_params({{0}, {1}, {1}, {}, {}}, {3, 1}, GatherMode::kPromiseInBounds);
  CHECK(eval("gather", {Aval::of({3, 4}, DType::kInt32), Aval::of({2, 1}, DType::kInt32)}, cols).shape == Shape{3, 2});
  CHECK(values(run("gather", {x, i32({2, 1}, {3, 1})}, cols)) == std::vector<double>{3, 1, 7, 5, 11, 9});
  // Scalar elements of a 1-D array; out-of-bounds indices clamp unless the mode fills.
  const BufferPtr v = f32({4}, {10, 11, 12, 13});
  const Params clip = gather_params({{}, {0}, {0}, {}, {}}, {1}, GatherMode::kClip);
  CHECK(values(run("gather", {v, i32({3, 1}, {1, 7, -2})}, clip)) == std::vector<double>{11, 13, 10});
  const Params fill = gather_params({{}, {0}, {0}, {}, {}}, {1}, GatherMode::kFillOrDrop);
  const std::vector<double> filled = values(run("gather", {v, i32({3, 1}, {1, 7, -2})}, fill));
  CHECK(filled[0] == 11);
  CHECK(std::isnan(filled[1]));
  CHECK(std::isnan(filled[2]));
  CHECK(eval_error("gather", {f32_aval({4}), f32_aval({3, 1})}, clip) ==
        std::pair<std::string, std::string>{"ValueError", "indices must have an integer type"});
  CHECK(eval_error("gather", {f32_aval({4}), Aval::of({3, 2}, DType::kInt32)}, clip).second ==
        "Gather op has 1 elements in start_index_map and the bound of dimension index_vector_dim=1 of indices is 2. "
        "These two numbers must be equal.");
  CHECK(eval_error("gather", {f32_aval({4}), Aval::of({3, 1}, DType::kInt32)},
                   gather_params({{}, {0}, {0}, {}, {}}, {2}, GatherMode::kClip))
            .second ==
        "Gather op can only collapse slice dims with bound 1, but bound is 2 for index 0 at position 0.");
}

TEST_CASE("gather prints GatherDimensionNumbers and GatherScatterMode as JAX does") {
  const Params params = gather_params({{}, {0}, {0}, {}, {}}, {1}, GatherMode::kPromiseInBounds);
  CHECK(params_text("gather", params, kNewest) ==
        "dimension_numbers=GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,), "
        "operand_batching_dims=(), start_indices_batching_dims=()) fill_value=None indices_are_sorted=False "
        "mode=GatherScatterMode.PROMISE_IN_BOUNDS slice_sizes=(1,) unique_indices=False");
  CHECK(params_text("gather", params, kJax0430) ==
        "dimension_numbers=GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,)) "
        "fill_value=None indices_are_sorted=False mode=GatherScatterMode.PROMISE_IN_BOUNDS slice_sizes=(1,) "
        "unique_indices=False");
  CHECK(parse_gather_mode(ParamValue("clip")) == GatherMode::kClip);
  CHECK(parse_gather_mode(ParamValue::None{}) == GatherMode::kFillOrDrop);
}
