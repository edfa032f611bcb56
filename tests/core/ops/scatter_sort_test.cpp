// The scatter family, sort, top_k and stop_gradient: shape rules with JAX's errors, kernels, print rules, and the
// factor rules that say which dims may stay sharded.
#include <doctest/doctest.h>

#include <cmath>

#include "ops/structural.h"
#include "propagation/factor_rule.h"
#include "structural_test_util.h"
#include "trace/builder.h"

using namespace shardscope;
using namespace structural_test;

namespace {

const JaxProfile kNewest;
const JaxProfile kJax0430(JaxVersion{0, 4, 30});  // NOLINT(cert-err58-cpp): cannot throw

Params scatter_params(std::vector<int64_t> window, std::vector<int64_t> inserted, std::vector<int64_t> to_operand,
                      GatherMode mode = GatherMode::kFillOrDrop) {
  return {
      {"dimension_numbers", ParamValue::tuple({ints(window), ints(inserted), ints(to_operand), ints({}), ints({})})},
      {"indices_are_sorted", false},
      {"mode", gather_mode_param(mode)},
      {"unique_indices", false},
      {"update_consts", ParamValue::tuple({})},
      {"update_jaxpr", ParamValue::None{}}};
}

Params sort_params(int64_t dimension, int64_t num_keys) {
  return {{"dimension", dimension}, {"is_stable", true}, {"num_keys", num_keys}};
}

}  // namespace

TEST_CASE("scatter family: x.at[idx] with set, add, sub, mul, min and max, out-of-bounds dropped or clipped") {
  const BufferPtr x = f32({5}, {0, 1, 2, 3, 4});
  const BufferPtr idx = i32({3, 1}, {1, 1, 7});
  const BufferPtr upd = f32({3}, {10, 20, 30});
  const Params p = scatter_params({}, {0}, {0});
  CHECK(eval("scatter-add", {f32_aval({5}), Aval::of({3, 1}, DType::kInt32), f32_aval({3})}, p).shape == Shape{5});
  // Repeated index 1: set keeps the last update, add sums both; index 7 is dropped.
  CHECK(values(run("scatter", {x, idx, upd}, p)) == std::vector<double>{0, 20, 2, 3, 4});
  CHECK(values(run("scatter-add", {x, idx, upd}, p)) == std::vector<double>{0, 31, 2, 3, 4});
  CHECK(values(run("scatter-sub", {x, idx, upd}, p)) == std::vector<double>{0, -29, 2, 3, 4});
  CHECK(values(run("scatter-mul", {x, idx, upd}, p)) == std::vector<double>{0, 200, 2, 3, 4});
  CHECK(values(run("scatter-min", {x, idx, upd}, p)) == std::vector<double>{0, 1, 2, 3, 4});
  CHECK(values(run("scatter-max", {x, idx, upd}, p)) == std::vector<double>{0, 20, 2, 3, 4});
  // CLIP moves the out-of-bounds window to the last row instead.
  CHECK(values(run("scatter", {x, idx, upd}, scatter_params({}, {0}, {0}, GatherMode::kClip))) ==
        std::vector<double>{0, 20, 2, 3, 30});
  // Whole rows of a matrix: x.at[idx].set(rows), the window is the row.
  const BufferPtr m = f32({3, 2}, {0, 1, 2, 3, 4, 5});
  CHECK(values(run("scatter", {m, i32({1, 1}, {2}), f32({1, 2}, {8, 9})}, scatter_params({1}, {0}, {0}))) ==
        std::vector<double>{0, 1, 2, 3, 8, 9});
}

TEST_CASE("scatter shape rule raises JAX's errors") {
  const Params p = scatter_params({}, {0}, {0});
  CHECK(eval_error("scatter", {f32_aval({5}), f32_aval({3, 1}), f32_aval({3})}, p) ==
        std::pair<std::string, std::string>{"ValueError", "indices must have an integer type"});
  CHECK(eval_error("scatter", {f32_aval({5}), Aval::of({3, 1}, DType::kInt32), Aval::of({3}, DType::kInt32)}, p) ==
        std::pair<std::string, std::string>{"TypeError",
                                            "scatter requires arguments to have the same dtypes, got float32, int32."});
  CHECK(eval_error("scatter", {f32_aval({5}), Aval::of({3, 1}, DType::kInt32), f32_aval({3, 2})}, p).second ==
        "Updates tensor must be of rank 1; got 2.");
  CHECK(eval_error("scatter", {f32_aval({5}), Aval::of({3, 1}, DType::kInt32), f32_aval({4})}, p).second ==
        "Bounds of the scatter dimensions of updates must be the same as the bounds of the corresponding dimensions "
        "of scatter indices. For scatter dimension 0, updates bound is 4, indices bound is 3.");
  CHECK(eval_error("scatter", {f32_aval({5}), Aval::of({3, 2}, DType::kInt32), f32_aval({3})}, p).second ==
        "Scatter op has 1 elements in scatter_dims_to_operand_dims and the bound of dimension index_vector_dim=1 of "
        "indices is 2. These two numbers must be equal");
  CHECK(eval_error("scatter", {f32_aval({3, 2}), Aval::of({1, 1}, DType::kInt32), f32_aval({1, 3})},
                   scatter_params({1}, {0}, {0}))
            .second ==
        "Bounds of the window dimensions of updates must not exceed the bounds of the corresponding dimensions of "
        "operand. For dimension 1, updates bound is 3, operand bound is 2.");
}

TEST_CASE("scatter prints ScatterDimensionNumbers and its combiner as JAX 0.11 does") {
  const Params p = scatter_params({}, {0}, {0});
  CHECK(params_text("scatter", p, kNewest) ==
        "dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), "
        "scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=()) "
        "indices_are_sorted=False mode=GatherScatterMode.FILL_OR_DROP unique_indices=False update_consts=() "
        "update_jaxpr=None");
  CHECK(params_text("scatter", p, kJax0430) ==
        "dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), "
        "scatter_dims_to_operand_dims=(0,)) indices_are_sorted=False mode=GatherScatterMode.FILL_OR_DROP "
        "unique_indices=False update_consts=() update_jaxpr=None");
}

TEST_CASE("sort: several operands ordered by the keys, NaN last, top_k: the largest, first index on ties") {
  const BufferPtr keys = f32({2, 3}, {3, NAN, 1, 0, -1, 0});
  const BufferPtr vals = i32({2, 3}, {0, 1, 2, 3, 4, 5});
  const std::vector<BufferPtr> sorted = run_all("sort", {keys, vals}, sort_params(1, 1));
  REQUIRE(sorted.size() == 2);
  const std::vector<double> k = values(sorted[0]);
  CHECK(k[0] == 1);
  CHECK(k[1] == 3);
  CHECK(std::isnan(k[2]));
  CHECK(values(sorted[1]) == std::vector<double>{2, 0, 1, 4, 3, 5});
  // Along dim 0 the columns sort independently; two keys compare lexicographically.
  CHECK(values(run_all("sort", {i32({2, 2}, {5, 1, 2, 7})}, sort_params(0, 1))[0]) == std::vector<double>{2, 1, 5, 7});
  CHECK(values(run_all("sort", {i32({4}, {1, 0, 1, 0}), i32({4}, {4, 3, 2, 1})}, sort_params(0, 2))[1]) ==
        std::vector<double>{1, 3, 2, 4});
  CHECK(eval_error("sort", {f32_aval({3}), f32_aval({4})}, sort_params(0, 1)) ==
        std::pair<std::string, std::string>{"TypeError", "Arguments to sort must have equal shapes, got: (3,) (4,)"});
  const Params top2 = {{"axis", int64_t{0}}, {"is_stable", true}, {"k", int64_t{2}}};
  const std::vector<BufferPtr> top = run_all("top_k", {f32({4}, {1, 5, 3, 5})}, top2);
  CHECK(values(top[0]) == std::vector<double>{5, 5});
  CHECK(values(top[1]) == std::vector<double>{1, 3});
  CHECK(top[1]->dtype() == DType::kInt32);
  const std::vector<Aval> wide = {f32_aval({3, 4})};
  const Params top2_of_4 = {{"axis", int64_t{1}}, {"is_stable", true}, {"k", int64_t{2}}};
  CHECK(prim("top_k").abstract_eval(wide, top2_of_4).at(1).shape == Shape{3, 2});
  const std::vector<Aval> short_axis = {f32_aval({1})};
  CHECK(error_of([&] { (void)prim("top_k").abstract_eval(short_axis, top2); }) ==
        std::pair<std::string, std::string>{
            "ValueError",
            "k argument to top_k must be no larger than size along axis; got k=2 with shape=(1,) and axis=0"});
  CHECK(params_text("sort", sort_params(0, 1), kNewest) == "dimension=0 is_stable=True num_keys=1");
  CHECK(values(run("stop_gradient", {f32({2}, {1, 2})}, {})) == std::vector<double>{1, 2});
}

TEST_CASE("factor rules: sorted and indexed dims need replication, batch and whole-window dims pass through") {
  ensure_core_primitives();
  // sort along dim 1 of an (8, 4) array: dim 0 passes through, dim 1 must be whole.
  JaxprBuilder b;
  const Var a = b.arg(f32_aval({8, 4}));
  const Atom s = b.bind("sort", {a}, sort_params(1, 1))[0];
  // table[ids]: gather rows of (64, 16) with (4, 4, 1) ids -> (4, 4, 16).
  const Var table = b.arg(f32_aval({64, 16}));
  const Var ids = b.arg(Aval::of({4, 4, 1}, DType::kInt32));
  const Atom g = b.bind1("gather", {table, ids},
                         {{"dimension_numbers", gather_dimension_numbers_param({{2}, {0}, {0}, {}, {}})},
                          {"slice_sizes", ints({1, 16})},
                          {"indices_are_sorted", false},
                          {"unique_indices", false},
                          {"mode", gather_mode_param(GatherMode::kPromiseInBounds)},
                          {"fill_value", ParamValue::None{}}});
  const JaxprPtr program = b.build({s, g});
  const FactorRule sort_rule = factor_rule_for(program->eqns.at(0));
  CHECK(sort_rule.kinds.at(static_cast<std::size_t>(sort_rule.operands[0][0][0])) == FactorKind::kPassThrough);
  CHECK(sort_rule.kinds.at(static_cast<std::size_t>(sort_rule.operands[0][1][0])) == FactorKind::kNeedReplication);
  const FactorRule gather_rule = factor_rule_for(program->eqns.at(1));
  // The ids' batch dims are the result's first two dims; the table's row dim needs replication, its columns are
  // the result's last dim.
  CHECK(gather_rule.results[0][0] == gather_rule.operands[1][0]);
  CHECK(gather_rule.results[0][1] == gather_rule.operands[1][1]);
  CHECK(gather_rule.results[0][2] == gather_rule.operands[0][1]);
  CHECK(gather_rule.kinds.at(static_cast<std::size_t>(gather_rule.operands[0][0][0])) == FactorKind::kNeedReplication);
  CHECK(gather_rule.kinds.at(static_cast<std::size_t>(gather_rule.operands[1][2][0])) == FactorKind::kNeedReplication);
}
