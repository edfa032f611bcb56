// vmap: rule completeness, JAX's printed jaxpr for seed 001, in_axes/out_axes errors, named-axis collectives.
#include <doctest/doctest.h>

#include "base/error.h"
#include "core/transforms/batching_test_util.h"
#include "ir/axis_env.h"
#include "ir/jaxpr_printer.h"
#include "ir/primitive.h"
#include "ops/ops.h"
#include "ops/structural.h"

using namespace shardscope;
using namespace shardscope::batching_test;

namespace {

Aval f32(Shape shape) { return Aval::of(std::move(shape), DType::kFloat32); }

Params vdot_params() {
  return {{"dimension_numbers", dot_dimension_numbers_param({0}, {0}, {}, {})},
          {"precision", ParamValue::None{}},
          {"preferred_element_type", ParamValue::None{}}};
}

std::string error_text(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.python_type() + ": " + e.what();
  }
  return "no error";
}

BufferPtr f32_buffer(Shape shape, std::vector<float> values) {
  return make_buffer<float>(DType::kFloat32, std::move(shape), values);
}

std::vector<float> values_of(const BufferPtr& buffer) {
  const auto span = buffer->as<float>();
  return {span.begin(), span.end()};
}

// vmap(f, axis_name='i') over the rows of x (f32[3,2]), out_axes 0.
std::vector<float> run_named(const Program& program, const Aval& element, const BufferPtr& x,
                             std::optional<int64_t> in_axis = int64_t{0}) {
  const AxisEnvScope scope({{"i", 3}});
  const JaxprPtr jaxpr = trace(program, {element});
  const JaxprPtr vmapped = vmap_jaxpr(*jaxpr, {Aval::of(x->shape(), x->dtype())}, {in_axis}, {int64_t{0}}, "i");
  return values_of(evaluate_jaxpr(*vmapped, {x})[0]);
}

}  // namespace

TEST_CASE("every registered primitive has a batching rule") {
  ensure_batch_rules();
  const std::vector<const Primitive*> primitives = all_primitives();
  CHECK(primitives.size() > 100);
  for (const Primitive* primitive : primitives) {
    CAPTURE(primitive->name);
    CHECK(find_batch_rule(primitive->name) != nullptr);
  }
}

TEST_CASE("seed 001: jit of vmap of vdot prints as JAX 0.3 printed it") {
  const JaxprPtr dot =
      trace([](JaxprBuilder& b, const std::vector<Atom>& a) { return b.bind("dot_general", a, vdot_params()); },
            {f32({3}), f32({3})});
  const JaxprPtr vmapped = vmap_jaxpr(*dot, {f32({8, 3}), f32({8, 3})}, {int64_t{0}, int64_t{0}}, {int64_t{0}});
  JaxprBuilder outer;
  const Var a = outer.arg(f32({8, 3}));
  const Var b = outer.arg(f32({8, 3}));
  const std::vector<Atom> out = outer.bind("jit", {a, b}, {{"jaxpr", ParamValue::JaxprRef(vmapped)}, {"name", "dot"}});
  const std::string expected =
      "{ lambda ; a:f32[8,3] b:f32[8,3]. let\n"
      "    c:f32[8] = xla_call[\n"
      "      call_jaxpr={ lambda ; d:f32[8,3] e:f32[8,3]. let\n"
      "          f:f32[8] = dot_general[\n"
      "            dimension_numbers=(((1,), (1,)), ((0,), (0,)))\n"
      "            precision=None\n"
      "            preferred_element_type=None\n"
      "          ] d e\n"
      "        in (f,) }\n"
      "      name=dot\n"
      "    ] a b\n"
      "  in (c,) }";
  CHECK(print_jaxpr(*outer.build(out), JaxProfile(JaxVersion{0, 3, 4})) == expected);
}

TEST_CASE("vmap of vdot with the operands mapped on different axes moves both to the front") {
  const JaxprPtr dot =
      trace([](JaxprBuilder& b, const std::vector<Atom>& a) { return b.bind("dot_general", a, vdot_params()); },
            {f32({3}), f32({3})});
  const JaxprPtr vmapped = vmap_jaxpr(*dot, {f32({8, 3}), f32({3, 8})}, {int64_t{0}, int64_t{1}}, {int64_t{0}});
  // lax._dot_general_batch_dim_nums: ((0+1,), (0,)) contracting, ((0,), (1,)) batch.
  REQUIRE(vmapped->eqns.size() == 1);
  CHECK(print_jaxpr(*vmapped, JaxProfile(JaxVersion{0, 3, 4})) ==
        "{ lambda ; a:f32[8,3] b:f32[3,8]. let\n"
        "    c:f32[8] = dot_general[\n"
        "      dimension_numbers=(((1,), (0,)), ((0,), (1,)))\n"
        "      precision=None\n"
        "      preferred_element_type=None\n"
        "    ] a b\n"
        "  in (c,) }");
}

TEST_CASE("vmap raises JAX's errors for bad in_axes and out_axes") {
  const JaxprPtr sin = trace([](JaxprBuilder& b, const std::vector<Atom>& a) { return b.bind("sin", a); }, {f32({3})});
  CHECK(error_text([&] { (void)vmap_jaxpr(*sin, {f32({3})}, {int64_t{1}}, {int64_t{0}}); }) ==
        "ValueError: vmap was requested to map its argument along axis 1, which implies that its rank should be at "
        "least 2, but is only 1 (its shape is (3,))");
  CHECK(error_text([&] { (void)vmap_jaxpr(*sin, {f32({3})}, {int64_t{-2}}, {int64_t{0}}); }) ==
        "ValueError: vmap was requested to map its argument along axis -2, which implies that its rank should be at "
        "least 2, but is only 1 (its shape is (3,))");
  CHECK(error_text([&] { (void)vmap_jaxpr(*sin, {f32({3})}, {std::nullopt}, {int64_t{0}}); }) ==
        "ValueError: vmap must have at least one non-None value in in_axes or axis_size must be specified");
  CHECK(error_text([&] {
          (void)vmap_jaxpr(*sin, {f32({4, 3})}, {int64_t{0}}, {std::nullopt});
        }) == "ValueError: at vmap out_axes, got axis spec None but output was batched on axis 0");
  CHECK(error_text([&] {
          (void)vmap_jaxpr(*sin, {f32({4, 3})}, {int64_t{0}}, {int64_t{2}});
        }) == "ValueError: axis 2 is out of bounds for array of dimension 2");
  const JaxprPtr add =
      trace([](JaxprBuilder& b, const std::vector<Atom>& a) { return b.bind("add", a); }, {f32({3}), f32({3})});
  CHECK(error_text([&] {
          (void)vmap_jaxpr(*add, {f32({4, 3}), f32({5, 3})}, {int64_t{0}, int64_t{0}}, {int64_t{0}});
        }) ==
        "ValueError: vmap got inconsistent sizes for array axes to be mapped:\n"
        "  * one axis had size 4: axis 0 of args[0] of type float32[4,3];\n"
        "  * one axis had size 5: axis 0 of args[1] of type float32[5,3]");
}

TEST_CASE("out_axes place the batch dim and broadcast unmapped outputs") {
  const JaxprPtr program = trace(
      [](JaxprBuilder& b, const std::vector<Atom>& a) {
        return std::vector<Atom>{b.bind1("neg", {a[0]}), a[1]};
      },
      {f32({2}), f32({2})});
  const JaxprPtr vmapped =
      vmap_jaxpr(*program, {f32({3, 2}), f32({2})}, {int64_t{0}, std::nullopt}, {int64_t{-1}, int64_t{1}});
  const auto outs = evaluate_jaxpr(*vmapped, {f32_buffer({3, 2}, {1, 2, 3, 4, 5, 6}), f32_buffer({2}, {7, 8})});
  CHECK(outs[0]->shape() == Shape{2, 3});
  CHECK(values_of(outs[0]) == std::vector<float>{-1, -3, -5, -2, -4, -6});
  CHECK(outs[1]->shape() == Shape{2, 3});
  CHECK(values_of(outs[1]) == std::vector<float>{7, 7, 7, 8, 8, 8});
}

TEST_CASE("collectives over the vmapped axis name") {
  const BufferPtr x = f32_buffer({3, 2}, {1, 2, 3, 4, 5, 6});
  const Aval row = f32({2});
  const auto collective = [](const std::string& name, Params params) {
    return [name, params](JaxprBuilder& b, const std::vector<Atom>& a) { return b.bind(name, a, params); };
  };
  const Params over_i = {{"axes", ParamValue::name_tuple({"i"})}, {"axis_index_groups", ParamValue::None{}}};
  // psum over 'i': every row becomes the column sums; pmax/pmin likewise.
  CHECK(run_named(collective("psum", over_i), row, x) == std::vector<float>{9, 12, 9, 12, 9, 12});
  CHECK(run_named(collective("pmax", over_i), row, x) == std::vector<float>{5, 6, 5, 6, 5, 6});
  CHECK(run_named(collective("pmin", over_i), row, x) == std::vector<float>{1, 2, 1, 2, 1, 2});
  // psum of an unmapped value multiplies by the axis size.
  const BufferPtr two = f32_buffer({2}, {1, 2});
  {
    const AxisEnvScope scope({{"i", 3}});
    const JaxprPtr jaxpr = trace(
        [&](JaxprBuilder& b, const std::vector<Atom>& a) {
          return std::vector<Atom>{b.bind1("add", {a[0], b.bind("psum", {a[1]}, over_i)[0]})};
        },
        {row, row});
    const JaxprPtr vmapped = vmap_jaxpr(*jaxpr, {f32({3, 2}), row}, {int64_t{0}, std::nullopt}, {int64_t{0}}, "i");
    CHECK(values_of(evaluate_jaxpr(*vmapped, {x, two})[0]) == std::vector<float>{4, 8, 6, 10, 8, 12});
  }
  // axis_index gives each batch element its position.
  const auto index_plus = [](JaxprBuilder& b, const std::vector<Atom>& a) {
    const Atom index = b.bind1("axis_index", {}, {{"axis_name", "i"}});
    const Atom as_float =
        b.bind1("convert_element_type", {index},
                {{"new_dtype", DType::kFloat32}, {"weak_type", false}, {"sharding", ParamValue::None{}}});
    return std::vector<Atom>{b.bind1("add", {a[0], as_float})};
  };
  CHECK(run_named(index_plus, row, x) == std::vector<float>{1, 2, 4, 5, 7, 8});
  // all_gather (untiled) stacks the rows on every element; tiled concatenates them.
  const auto gather = [](bool tiled) {
    return Params{{"all_gather_dimension", int64_t{0}},
                  {"axis_name", ParamValue::name_tuple({"i"})},
                  {"axis_index_groups", ParamValue::None{}},
                  {"axis_size", int64_t{3}},
                  {"tiled", tiled}};
  };
  const std::vector<float> stacked = {1, 2, 3, 4, 5, 6};
  std::vector<float> repeated;
  for (int i = 0; i < 3; ++i) repeated.insert(repeated.end(), stacked.begin(), stacked.end());
  CHECK(run_named(collective("all_gather", gather(false)), row, x) == repeated);
  CHECK(run_named(collective("all_gather", gather(true)), row, x) == repeated);
  // ppermute shifting by one: element j receives element j-1's row.
  const Params shift = {{"axis_name", ParamValue::name_tuple({"i"})},
                        {"perm", ParamValue::tuple({ParamValue::int_tuple({0, 1}), ParamValue::int_tuple({1, 2}),
                                                    ParamValue::int_tuple({2, 0})})}};
  CHECK(run_named(collective("ppermute", shift), row, x) == std::vector<float>{5, 6, 1, 2, 3, 4});
  // psum_scatter over 'i' of f32[3] rows: element j keeps the j-th column sum.
  const BufferPtr square = f32_buffer({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  const Params scatter = {{"scatter_dimension", int64_t{0}},
                          {"axis_name", ParamValue::name_tuple({"i"})},
                          {"axis_index_groups", ParamValue::None{}},
                          {"axis_size", int64_t{3}},
                          {"tiled", false}};
  CHECK(run_named(collective("reduce_scatter", scatter), f32({3}), square) == std::vector<float>{12, 15, 18});
  // all_to_all over 'i' with split = concat = 0 transposes the (batch, row) blocks.
  const Params a2a = {{"axis_name", ParamValue::name_tuple({"i"})},
                      {"split_axis", int64_t{0}},
                      {"concat_axis", int64_t{0}},
                      {"axis_index_groups", ParamValue::None{}},
                      {"tiled", true}};
  CHECK(run_named(collective("all_to_all", a2a), f32({3}), square) == std::vector<float>{1, 4, 7, 2, 5, 8, 3, 6, 9});
}
