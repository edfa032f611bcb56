// Every batching rule against the per-example definition of vmap, under several in_axes mixes.
#include <doctest/doctest.h>

#include "core/transforms/batching_test_util.h"
#include "device/presets.h"
#include "explicit/mesh_context.h"
#include "ir/axis_env.h"
#include "ir/jaxpr_printer.h"
#include "ir/primitive.h"
#include "ops/ops.h"
#include "ops/structural.h"

using namespace shardscope;
using namespace shardscope::batching_test;

namespace {

Aval f32(Shape shape) { return Aval::of(std::move(shape), DType::kFloat32); }
Aval i32(Shape shape) { return Aval::of(std::move(shape), DType::kInt32); }
Aval boolean(Shape shape) { return Aval::of(std::move(shape), DType::kBool); }

Program single(const std::string& name, Params params) {
  return [name, params](JaxprBuilder& b, const std::vector<Atom>& args) { return b.bind(name, args, params); };
}

// Params an elementwise primitive needs to bind at all.
Params elementwise_params(const std::string& name) {
  if (name == "integer_pow") return {{"y", int64_t{3}}};
  if (name == "convert_element_type") {
    return {{"new_dtype", DType::kInt32}, {"weak_type", false}, {"sharding", ParamValue::None{}}};
  }
  if (name == "round") return {{"rounding_method", int64_t{0}}};
  return {};
}

// The first (arity, dtype) an elementwise primitive's shape rule accepts.
std::optional<std::vector<Aval>> elementwise_signature(const Primitive& primitive) {
  for (const DType dtype : {DType::kFloat32, DType::kInt32, DType::kBool, DType::kUInt32}) {
    for (std::size_t arity = 1; arity <= 4; ++arity) {
      if (primitive.name == "select_n" && arity < 3) continue;  // a predicate alone is no select
      std::vector<Aval> avals(arity, Aval::of({2, 4}, dtype));
      if (primitive.name == "select_n") avals[0] = boolean({2, 4});
      try {
        (void)primitive.abstract_eval(avals, elementwise_params(primitive.name));
        return avals;
      } catch (const std::exception&) {
      }
    }
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("every elementwise primitive batches like the per-example map") {
  ensure_batch_rules();
  int checked = 0;
  for (const Primitive* primitive : all_primitives()) {
    // Key primitives are left to the random helpers' tests (vmap here is random-free).
    if (!primitive->elementwise || primitive->name.rfind("random_", 0) == 0) continue;
    CAPTURE(primitive->name);
    const auto avals = elementwise_signature(*primitive);
    REQUIRE(avals.has_value());
    check_all_mixes(single(primitive->name, elementwise_params(primitive->name)), *avals);
    ++checked;
  }
  CHECK(checked > 60);
}

TEST_CASE("broadcasting batcher: scalars, literals and rank-1 operands against higher ranks") {
  // A mapped scalar operand meets a rank-2 one: the scalar gets trailing size-1 dims.
  check_all_mixes(single("add", {}), {f32({}), f32({2, 4})});
  check_all_mixes(single("mul", {}), {f32({2, 4}), f32({})});
  check_vmap(
      [](JaxprBuilder& b, const std::vector<Atom>& a) {
        return std::vector<Atom>{b.bind1("sub", {a[0], scalar_literal(2.0, DType::kFloat32)})};
      },
      {f32({4})}, {int64_t{0}});
  check_all_mixes(single("select_n", {}), {boolean({}), f32({2, 4}), f32({2, 4})});
  check_all_mixes(single("select_n", {}), {boolean({}), f32({}), f32({})});
  check_all_mixes(single("clamp", {}), {f32({}), f32({2, 4}), f32({})});
  check_all_mixes(single("clamp", {}), {f32({2, 4}), f32({2, 4}), f32({2, 4})});
  check_all_mixes(single("add_any", {}), {f32({2, 4}), f32({2, 4})});
}

TEST_CASE("layout primitives batch like the per-example map") {
  const Params none_sharding = {{"sharding", ParamValue::None{}}};
  check_all_mixes(single("broadcast_in_dim", {{"shape", ParamValue::int_tuple({2, 4})},
                                              {"broadcast_dimensions", ParamValue::int_tuple({1})},
                                              {"sharding", ParamValue::None{}}}),
                  {f32({4})});
  check_all_mixes(single("reshape", {{"new_sizes", ParamValue::int_tuple({3, 4})},
                                     {"dimensions", ParamValue::None{}},
                                     {"sharding", ParamValue::None{}}}),
                  {f32({2, 6})});
  check_all_mixes(single("reshape", {{"new_sizes", ParamValue::int_tuple({12})},
                                     {"dimensions", ParamValue::int_tuple({1, 0})},
                                     {"sharding", ParamValue::None{}}}),
                  {f32({2, 6})});
  check_all_mixes(single("transpose", {{"permutation", ParamValue::int_tuple({2, 0, 1})}}), {f32({2, 3, 4})});
  check_all_mixes(single("squeeze", {{"dimensions", ParamValue::int_tuple({1})}}), {f32({2, 1, 4})});
  check_all_mixes(single("concatenate", {{"dimension", int64_t{1}}}), {f32({2, 3}), f32({2, 5})});
  check_all_mixes(single("split", {{"sizes", ParamValue::int_tuple({2, 4})}, {"axis", int64_t{1}}}), {f32({2, 6})});
  const ParamValue config = ParamValue::tuple({ParamValue::int_tuple({1, 2, 0}), ParamValue::int_tuple({0, 1, 1})});
  check_all_mixes(single("pad", {{"padding_config", config}}), {f32({3, 4}), f32({})});
  check_all_mixes(single("rev", {{"dimensions", ParamValue::int_tuple({0})}}), {f32({3, 4})});
  check_all_mixes(single("slice", {{"start_indices", ParamValue::int_tuple({1, 0})},
                                   {"limit_indices", ParamValue::int_tuple({4, 6})},
                                   {"strides", ParamValue::int_tuple({2, 1})}}),
                  {f32({5, 6})});
  check_all_mixes(single("slice", {{"start_indices", ParamValue::int_tuple({1, 2})},
                                   {"limit_indices", ParamValue::int_tuple({4, 6})},
                                   {"strides", ParamValue::None{}}}),
                  {f32({5, 6})});
  check_vmap(
      [](JaxprBuilder& b, const std::vector<Atom>& a) {
        const Atom iota = b.bind1("iota", {},
                                  {{"dtype", DType::kFloat32},
                                   {"shape", ParamValue::int_tuple({4})},
                                   {"dimension", int64_t{0}},
                                   {"sharding", ParamValue::None{}}});
        return std::vector<Atom>{b.bind1("add", {a[0], iota})};
      },
      {f32({4})}, {int64_t{0}});
}

TEST_CASE("stack and unstack batch like the per-example map, keeping a shared batch dim in place") {
  for (const int64_t axis : {0, 1, 2}) {
    CAPTURE(axis);
    check_all_mixes(single("stack", {{"axis", axis}}), {f32({2, 4}), f32({2, 4}), f32({2, 4})});
    check_all_mixes(single("unstack", {{"axis", axis}}), {f32({2, 3, 4})});
  }
  // Different batch dims: each moves to the front and the stack goes one axis further in.
  check_vmap(single("stack", {{"axis", int64_t{1}}}), {f32({2, 4}), f32({2, 4})}, {int64_t{0}, int64_t{2}});
  // One shared batch dim: a single stack, its axis placed around the batch dim, and no transposes.
  const JaxprPtr program = batching_test::trace(single("stack", {{"axis", int64_t{0}}}), {f32({2, 4}), f32({2, 4})});
  const JaxprPtr vmapped =
      vmap_jaxpr(*program, {f32({2, 3, 4}), f32({2, 3, 4})}, {int64_t{1}, int64_t{1}}, {int64_t{2}});
  const std::string text = print_jaxpr(*vmapped, JaxProfile());
  CHECK(text.find("f32[2,2,3,4] = stack[axis=0] a b") != std::string::npos);
  CHECK(text.find("transpose") == std::string::npos);
  const JaxprPtr pieces = batching_test::trace(single("unstack", {{"axis", int64_t{1}}}), {f32({2, 4})});
  const JaxprPtr unstacked =
      vmap_jaxpr(*pieces, {f32({2, 4, 3})}, {int64_t{2}}, std::vector<std::optional<int64_t>>(4, int64_t{1}));
  const std::string unstacked_text = print_jaxpr(*unstacked, JaxProfile());
  CHECK(unstacked_text.find("= unstack[axis=1] a") != std::string::npos);
  CHECK(unstacked_text.find("transpose") == std::string::npos);
}

TEST_CASE("indexing primitives batch like the per-example map") {
  check_all_mixes(single("dynamic_slice", {{"slice_sizes", ParamValue::int_tuple({2, 3})}}),
                  {f32({5, 6}), i32({}), i32({})});
  check_all_mixes(single("dynamic_update_slice", {}), {f32({5, 6}), f32({2, 3}), i32({}), i32({})});
  const Params gather = {
      {"dimension_numbers", gather_dimension_numbers_param({{1}, {0}, {0}, {}, {}})},
      {"slice_sizes", ParamValue::int_tuple({1, 3})},
      {"indices_are_sorted", false},
      {"unique_indices", false},
      {"mode", gather_mode_param(GatherMode::kClip)},
      {"fill_value", ParamValue::None{}},
  };
  check_all_mixes(single("gather", gather), {f32({5, 3}), i32({4, 1})});
  const Params scatter = {
      {"dimension_numbers",
       ParamValue::tuple({ParamValue::int_tuple({1}), ParamValue::int_tuple({0}), ParamValue::int_tuple({0}),
                          ParamValue::int_tuple({}), ParamValue::int_tuple({})})},
      {"indices_are_sorted", false},
      {"unique_indices", false},
      {"mode", gather_mode_param(GatherMode::kClip)},
      {"update_jaxpr", ParamValue::None{}},
      {"update_consts", ParamValue::tuple({})},
  };
  check_all_mixes(single("scatter-add", scatter), {f32({5, 3}), i32({4, 1}), f32({4, 3})});
}

TEST_CASE("reductions and cumulative reductions batch like the per-example map") {
  for (const char* name : {"reduce_sum", "reduce_prod", "reduce_max", "reduce_min"}) {
    CAPTURE(name);
    check_all_mixes(single(name, {{"axes", ParamValue::int_tuple({1})}, {"out_sharding", ParamValue::None{}}}),
                    {f32({3, 4})});
    check_all_mixes(single(name, {{"axes", ParamValue::int_tuple({0, 2})}, {"out_sharding", ParamValue::None{}}}),
                    {f32({2, 3, 4})});
  }
  for (const char* name : {"reduce_and", "reduce_or", "reduce_xor"}) {
    CAPTURE(name);
    check_all_mixes(single(name, {{"axes", ParamValue::int_tuple({1})}}), {boolean({3, 4})});
  }
  for (const char* name : {"argmax", "argmin"}) {
    CAPTURE(name);
    check_all_mixes(single(name, {{"axes", ParamValue::int_tuple({1})}, {"index_dtype", DType::kInt32}}),
                    {f32({3, 4})});
  }
  for (const char* name : {"cumsum", "cumprod", "cummax", "cummin"}) {
    CAPTURE(name);
    check_all_mixes(single(name, {{"axis", int64_t{1}}, {"reverse", false}}), {f32({3, 4})});
    check_all_mixes(single(name, {{"axis", int64_t{0}}, {"reverse", true}}), {f32({3, 4})});
  }
}

TEST_CASE("dot_general batches like the per-example map") {
  const auto dot = [](std::vector<int64_t> lc, std::vector<int64_t> rc, std::vector<int64_t> lb,
                      std::vector<int64_t> rb) {
    return single("dot_general", {{"dimension_numbers", dot_dimension_numbers_param(lc, rc, lb, rb)},
                                  {"precision", ParamValue::None{}},
                                  {"preferred_element_type", ParamValue::None{}}});
  };
  check_all_mixes(dot({1}, {0}, {}, {}), {f32({3, 4}), f32({4, 5})});
  check_all_mixes(dot({2}, {1}, {0}, {0}), {f32({2, 3, 4}), f32({2, 4, 5})});
  check_all_mixes(dot({0}, {0}, {}, {}), {f32({3}), f32({3})});
  check_all_mixes(dot({0}, {1}, {}, {}), {f32({4, 3}), f32({2, 4})});
}

TEST_CASE("jit batches its inner program and relayout primitives keep the batch dim") {
  const JaxprPtr inner = trace(
      [](JaxprBuilder& b, const std::vector<Atom>& a) {
        return std::vector<Atom>{b.bind1("mul", {b.bind1("sin", {a[0]}), a[1]}), a[1]};
      },
      {f32({2, 4}), f32({2, 4})});
  check_all_mixes(single("jit", {{"jaxpr", ParamValue::JaxprRef(inner)}, {"name", "f"}}), {f32({2, 4}), f32({2, 4})});
  check_all_mixes(single("sharding_constraint", {{"sharding", ParamValue::None{}}}), {f32({2, 4})});
  check_all_mixes(single("pvary", {{"axes", ParamValue::name_tuple({})}}), {f32({2, 4})});
  check_all_mixes(single("reshard", {}), {f32({2, 4})});
  check_all_mixes(single("mesh_cast", {}), {f32({2, 4})});
}

TEST_CASE("sharding_constraint and reshard under vmap leave the batch dim unsharded in their sharding") {
  ensure_batch_rules();
  // A PartitionSpec names the axes of the context mesh.
  set_mesh(make_mesh({2, 4}, {"data", "model"}, make_device_preset("cpu:8").devices, JaxProfile{},
                     std::vector<AxisType>(2, AxisType::kExplicit)));
  const PartitionSpec spec({SpecEntry{SpecEntry::Kind::kAxes, {"model"}}, SpecEntry::none()});
  for (const auto& [name, key] : {std::pair<std::string, std::string>{"reshard", "dst_sharding"},
                                  std::pair<std::string, std::string>{"sharding_constraint", "sharding"}}) {
    CAPTURE(name);
    const JaxprPtr inner = trace(single(name, {{key, spec}}), {f32({8, 8})});
    for (const int64_t axis : {int64_t{0}, int64_t{2}}) {
      CAPTURE(axis);
      const Shape batched = axis == 0 ? Shape{2, 8, 8} : Shape{8, 8, 2};
      const JaxprPtr outer = vmap_jaxpr(*inner, {f32(batched)}, {axis}, {axis});
      const ParamValue* param = find_param(outer->eqns.at(0).params, key);
      REQUIRE(param != nullptr);
      const auto* widened = param->get_if<PartitionSpec>();
      REQUIRE(widened != nullptr);
      REQUIRE(widened->size() == 3);
      const std::size_t batch = static_cast<std::size_t>(axis);
      CHECK(widened->entries()[batch].kind == SpecEntry::Kind::kNone);
      CHECK(widened->entries()[batch == 0 ? 1 : 0].axes == std::vector<std::string>{"model"});
    }
  }
  set_mesh(std::nullopt);
}
