// Tracing and the transformations over user functions: eager dispatch, staging, closures, nesting.
#include "api/trace.h"

#include <doctest/doctest.h>

#include <cmath>

#include "api/session.h"
#include "api/transforms.h"
#include "base/error.h"
#include "device/presets.h"

using namespace shardscope;
using namespace shardscope::api;

namespace {

Value f32_array(const Shape& shape, const std::vector<float>& values, const Sharding& sharding) {
  return Value::concrete(Array::from_host(make_buffer(DType::kFloat32, shape, values), sharding, session().profile));
}

std::vector<float> iota_f32(std::size_t n) {
  std::vector<float> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<float>(i);
  return values;
}

Sharding on_device_0() { return make_single_device_sharding(default_device(), session().profile); }

Mesh mesh_2x4() {
  return make_mesh({2, 4}, {"x", "y"}, session().devices, session().profile,
                   std::vector<AxisType>{AxisType::kAuto, AxisType::kAuto});
}

std::vector<double> values_of(const Value& value) {
  const BufferPtr global = value.array().gather();
  std::vector<double> out;
  for (int64_t i = 0; i < global->size(); ++i) out.push_back(global->element_as_double(i));
  return out;
}

Value scalar_f32(double v) { return Value::scalar(scalar_literal(v, DType::kFloat32, true)); }

// 2 * sin(x) + 1, with the weakly typed scalars JAX's jnp gives literals of x's dtype.
std::vector<Value> sin_affine(const std::vector<Value>& args) {
  const Value s = bind1("sin", {args[0]}, {{"accuracy", ParamValue::None{}}});
  const Value twice = bind1("mul", {scalar_f32(2.0), s});
  return {bind1("add", {twice, scalar_f32(1.0)})};
}

}  // namespace

TEST_CASE("eager binds run at once and keep a sharded input's sharding") {
  const NamedSharding sharding =
      make_named_sharding(mesh_2x4(), parse_partition_spec("P('x', 'y')"), session().profile);
  const Value x = f32_array({4, 8}, iota_f32(32), sharding);
  CHECK(current_trace() == nullptr);
  const Value y = sin_affine({x})[0];
  REQUIRE(y.is_concrete());
  CHECK(y.array().sharding() == Sharding(sharding));
  const std::vector<double> got = values_of(y);
  for (std::size_t i = 0; i < got.size(); ++i)
    CHECK(got[i] == doctest::Approx(2 * std::sin(double(i)) + 1).epsilon(1e-6));
}

TEST_CASE("eager programs are reused only for the same literal bits, params and operand types") {
  const NamedSharding sharding =
      make_named_sharding(mesh_2x4(), parse_partition_spec("P('x', 'y')"), session().profile);
  const Value x = f32_array({4, 8}, iota_f32(32), sharding);
  // 0.0 and -0.0 compare equal, but x * -0.0 has the opposite sign bits from x * 0.0.
  const Value plus = bind1("mul", {x, scalar_f32(0.0)});
  const Value minus = bind1("mul", {x, scalar_f32(-0.0)});
  const BufferPtr plus_values = plus.array().gather();
  const BufferPtr minus_values = minus.array().gather();
  for (int64_t i = 1; i < 32; ++i) {
    CHECK_FALSE(std::signbit(plus_values->element_as_double(i)));
    CHECK(std::signbit(minus_values->element_as_double(i)));
  }
  // The same primitive with another param value, and the same call on another sharding.
  const Value summed_rows =
      bind1("reduce_sum", {x}, {{"axes", ParamValue::int_tuple({0})}, {"out_sharding", ParamValue::None{}}});
  const Value summed_cols =
      bind1("reduce_sum", {x}, {{"axes", ParamValue::int_tuple({1})}, {"out_sharding", ParamValue::None{}}});
  CHECK(summed_rows.aval().shape == Shape{8});
  CHECK(summed_cols.aval().shape == Shape{4});
  CHECK(values_of(summed_cols) == std::vector<double>{28, 92, 156, 220});
  const Value replicated = f32_array({4, 8}, iota_f32(32), on_device_0());
  const Value moved = bind1("mul", {replicated, scalar_f32(0.0)});
  CHECK(moved.array().sharding() == on_device_0());
}

TEST_CASE("make_jaxpr of 2 * sin(x) + 1 prints JAX's newest text with typed literals") {
  const Value x = f32_array({4, 8}, iota_f32(32), on_device_0());
  CHECK(make_jaxpr_text(sin_affine, {x}, "f") ==
        "{ lambda ; a:f32[4,8]. let\n"
        "    b:f32[4,8] = sin a\n"
        "    c:f32[4,8] = mul 2.0:f32[] b\n"
        "    d:f32[4,8] = add c 1.0:f32[]\n"
        "  in (d,) }");
}

TEST_CASE("a jit inside a traced function becomes a jit equation, a closed-over array becomes a constvar") {
  const Value x = f32_array({4}, iota_f32(4), on_device_0());
  const Value offset = f32_array({4}, {10, 20, 30, 40}, on_device_0());
  const Function outer = [&](const std::vector<Value>& args) {
    const Function inner = [&](const std::vector<Value>& inner_args) {
      return std::vector<Value>{bind1("add", {inner_args[0], offset})};
    };
    return call_jit(inner, args, JitSpec{"g", {}, {}, {}});
  };
  const std::string text = make_jaxpr_text(outer, {x}, "f");
  CAPTURE(text);
  CHECK(text.find("jit[") != std::string::npos);
  CHECK(text.find("name=g") != std::string::npos);
  CHECK(text.rfind("{ lambda a:f32[4]; b:f32[4]. let", 0) == 0);
  // Run for real: the jit's closure comes along as an argument.
  const std::vector<Value> out = call_jit(outer, {x}, JitSpec{"f", {}, {}, {}});
  CHECK(values_of(out.at(0)) == std::vector<double>{10, 21, 32, 43});
}

TEST_CASE("jit runs partitioned and honours out_shardings") {
  const Mesh mesh = mesh_2x4();
  const NamedSharding row = make_named_sharding(mesh, parse_partition_spec("P('x')"), session().profile);
  const Value x = f32_array({4, 8}, iota_f32(32), on_device_0());
  const std::vector<Value> out = call_jit(sin_affine, {x}, JitSpec{"f", {}, {Sharding(row)}, {}});
  CHECK(out.at(0).array().sharding() == Sharding(row));
  CHECK(values_of(out[0])[5] == doctest::Approx(2 * std::sin(5.0) + 1).epsilon(1e-6));
}

TEST_CASE("vmap of a row dot gives per-row dots, grad of sum(sin(x)) is cos(x), jvp of sin is cos * t") {
  const Value v = f32_array({3, 2}, {1, 2, 3, 4, 5, 6}, on_device_0());
  const Function dot = [](const std::vector<Value>& args) {
    const Params numbers = {
        {"dimension_numbers",
         ParamValue::tuple({ParamValue::tuple({ParamValue::int_tuple({0}), ParamValue::int_tuple({0})}),
                            ParamValue::tuple({ParamValue::int_tuple({}), ParamValue::int_tuple({})})})},
        {"precision", ParamValue::None{}},
        {"preferred_element_type", DType::kFloat32}};
    return std::vector<Value>{bind1("dot_general", {args[0], args[1]}, numbers)};
  };
  const std::vector<Value> dots = call_vmap(dot, {v, v}, {0, 0}, {0}, std::nullopt, "dot");
  CHECK(values_of(dots.at(0)) == std::vector<double>{5, 25, 61});

  const Value x = f32_array({3}, {0.5F, 1.0F, 2.0F}, on_device_0());
  const Function loss = [](const std::vector<Value>& args) {
    const Value s = bind1("sin", {args[0]}, {{"accuracy", ParamValue::None{}}});
    return std::vector<Value>{
        bind1("reduce_sum", {s}, {{"axes", ParamValue::int_tuple({0})}, {"out_sharding", ParamValue::None{}}})};
  };
  const std::vector<Value> grads = call_grad(loss, {x}, {0}, false, false, "loss");
  const std::vector<double> g = values_of(grads.at(0));
  CHECK(g[0] == doctest::Approx(std::cos(0.5)).epsilon(1e-6));
  CHECK(g[2] == doctest::Approx(std::cos(2.0)).epsilon(1e-6));
  const std::vector<Value> with_value = call_grad(loss, {x}, {0}, false, true, "loss");
  CHECK(values_of(with_value.at(0))[0] == doctest::Approx(std::sin(0.5) + std::sin(1.0) + std::sin(2.0)).epsilon(1e-6));

  const Value t = f32_array({3}, {1, 1, 2}, on_device_0());
  const Function sine = [](const std::vector<Value>& args) {
    return std::vector<Value>{bind1("sin", {args[0]}, {{"accuracy", ParamValue::None{}}})};
  };
  const std::vector<Value> jvp = call_jvp(sine, {x}, {t}, "sin");
  CHECK(values_of(jvp.at(1))[2] == doctest::Approx(2 * std::cos(2.0)).epsilon(1e-6));
}

TEST_CASE("grad inside jit stages the gradient program into the jit") {
  const Value x = f32_array({3}, {0.5F, 1.0F, 2.0F}, on_device_0());
  const Function loss = [](const std::vector<Value>& args) {
    const Value s = bind1("sin", {args[0]}, {{"accuracy", ParamValue::None{}}});
    return std::vector<Value>{
        bind1("reduce_sum", {s}, {{"axes", ParamValue::int_tuple({0})}, {"out_sharding", ParamValue::None{}}})};
  };
  const Function grad_of_loss = [&](const std::vector<Value>& args) {
    return call_grad(loss, args, {0}, false, false, "loss");
  };
  const std::string text = make_jaxpr_text(grad_of_loss, {x}, "g");
  CAPTURE(text);
  CHECK(text.find("cos") != std::string::npos);
  const std::vector<Value> out = call_jit(grad_of_loss, {x}, JitSpec{"g", {}, {}, {}});
  CHECK(values_of(out.at(0))[1] == doctest::Approx(std::cos(1.0)).epsilon(1e-6));
}

TEST_CASE("seed 000: shard_map of sum(x, keepdims=True) over P('x') gives per-device sums") {
  const Mesh mesh = make_mesh({8}, {"x"}, session().devices, session().profile, std::vector<AxisType>{AxisType::kAuto});
  std::vector<int32_t> arange(32);
  for (std::size_t i = 0; i < 32; ++i) arange[i] = static_cast<int32_t>(i);
  const Value x =
      Value::concrete(Array::from_host(make_buffer(DType::kInt32, {32}, arange), on_device_0(), session().profile));
  ShardMapSpec spec;
  spec.mesh = mesh;
  spec.in_specs = {parse_partition_spec("P('x')")};
  spec.out_specs = {parse_partition_spec("P('x')")};
  const Function body = [](const std::vector<Value>& args) {
    CHECK(args[0].aval().shape == Shape{4});
    const Value total =
        bind1("reduce_sum", {args[0]}, {{"axes", ParamValue::int_tuple({0})}, {"out_sharding", ParamValue::None{}}});
    return std::vector<Value>{bind1("broadcast_in_dim", {total},
                                    {{"shape", ParamValue::int_tuple({1})},
                                     {"broadcast_dimensions", ParamValue::int_tuple({})},
                                     {"sharding", ParamValue::None{}}})};
  };
  const std::vector<Value> out = call_shard_map(body, {x}, spec);
  CHECK(values_of(out.at(0)) == std::vector<double>{6, 22, 38, 54, 70, 86, 102, 118});
  // Inside a trace the same call is one shard_map equation.
  const Function staged = [&](const std::vector<Value>& args) { return call_shard_map(body, args, spec); };
  CHECK(make_jaxpr_text(staged, {x}, "f").find("shard_map[") != std::string::npos);
}

TEST_CASE("shard_map's out_specs given after the trace: one per output, a wrong count is a ValueError") {
  const Mesh mesh = make_mesh({8}, {"x"}, session().devices, session().profile, std::vector<AxisType>{AxisType::kAuto});
  const Value x = f32_array({8}, {0, 1, 2, 3, 4, 5, 6, 7}, on_device_0());
  ShardMapSpec spec;
  spec.mesh = mesh;
  spec.in_specs = {parse_partition_spec("P('x')")};
  spec.check_vma = false;
  // Two outputs: the block itself (out_spec P('x')) and the block again, taken from device 0 (out_spec P()).
  const Function body = [](const std::vector<Value>& args) { return std::vector<Value>{args[0], args[0]}; };
  int asked = 0;
  const SpecsAfterTrace two_specs = [&asked] {
    ++asked;
    return std::vector<PartitionSpec>{parse_partition_spec("P('x')"), parse_partition_spec("P()")};
  };
  const std::vector<Value> out = call_shard_map(body, {x}, spec, two_specs);
  CHECK(asked == 1);
  CHECK(values_of(out.at(0)) == std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(values_of(out.at(1)) == std::vector<double>{0});
  const SpecsAfterTrace three_specs = [] { return std::vector<PartitionSpec>(3, parse_partition_spec("P()")); };
  CHECK_THROWS_WITH_AS((void)call_shard_map(body, {x}, spec, three_specs),
                       "shard_map out_specs gave 3 entries for 2 outputs", Error);
}

TEST_CASE("pmap with a named axis: x / psum(x, 'i')") {
  const Value x = f32_array({4}, {0, 1, 2, 3}, on_device_0());
  PmapSpec spec;
  spec.axis_name = "i";
  spec.in_axes = {0};
  spec.out_axes = {0};
  const Function normalise = [](const std::vector<Value>& args) {
    const Value total =
        bind1("psum", {args[0]}, {{"axes", ParamValue::name_tuple({"i"})}, {"axis_index_groups", ParamValue::None{}}});
    return std::vector<Value>{bind1("div", {args[0], total})};
  };
  const std::vector<Value> out = call_pmap(normalise, {x}, spec);
  const std::vector<double> got = values_of(out.at(0));
  CHECK(got[3] == doctest::Approx(0.5));
  CHECK(out[0].array().shards().size() == 4);
}
