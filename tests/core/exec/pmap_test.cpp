// pmap: seed 001's programs traced per JAX version, run over devices with collectives, and JAX's errors.
#include "exec/pmap.h"

#include <doctest/doctest.h>

#include <cmath>
#include <numeric>
#include <regex>

#include "base/error.h"
#include "device/presets.h"
#include "exec/interpreter.h"
#include "ir/axis_env.h"
#include "ir/jaxpr_printer.h"
#include "ops/ops.h"

using namespace shardscope;

namespace {

const std::vector<Device>& tpu_devices() {
  static const std::vector<Device> devices = make_device_preset("tpu-v3-8").devices;
  return devices;
}

// dot(v, u) = jnp.vdot(v, u) as old JAX traced it on one instance: ravel both, contract.
JaxprPtr vdot_body(const Shape& instance_shape) {
  JaxprBuilder b;
  const Var v = b.arg(Aval::of(instance_shape, DType::kFloat32));
  const Var u = b.arg(Aval::of(instance_shape, DType::kFloat32));
  Atom lhs = v;
  Atom rhs = u;
  if (instance_shape.size() > 1) {
    const Params ravel = {{"dimensions", ParamValue::None{}},
                          {"new_sizes", ParamValue::int_tuple({product(instance_shape)})}};
    lhs = b.bind1("reshape", {v}, ravel);
    rhs = b.bind1("reshape", {u}, ravel);
  }
  const Params numbers = {
      {"dimension_numbers",
       ParamValue::tuple({ParamValue::tuple({ParamValue::int_tuple({0}), ParamValue::int_tuple({0})}),
                          ParamValue::tuple({ParamValue::int_tuple({}), ParamValue::int_tuple({})})})},
      {"precision", ParamValue::None{}},
      {"preferred_element_type", ParamValue::None{}}};
  return b.build({b.bind1("dot_general", {lhs, rhs}, numbers)});
}

PmapSpec two_mapped(std::string name) {
  PmapSpec spec;
  spec.function_name = std::move(name);
  spec.in_axes = {0, 0};
  spec.out_axes = {0};
  return spec;
}

std::string masked(const std::string& text) {
  return std::regex_replace(text, std::regex("<axis 0x[0-9a-f]+>"), "<axis 0x...>");
}

Array ramp_array(const Shape& shape, float scale) {
  std::vector<float> values(static_cast<std::size_t>(product(shape)));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 7) * scale;
  const Sharding one = make_single_device_sharding(tpu_devices().front(), JaxProfile());
  return Array::from_host(make_buffer(DType::kFloat32, shape, values), one, JaxProfile());
}

std::vector<double> values_of(const Array& array) {
  const BufferPtr global = array.gather();
  std::vector<double> out;
  for (int64_t i = 0; i < global->size(); ++i) out.push_back(global->element_as_double(i));
  return out;
}

}  // namespace

TEST_CASE("seed 001: make_jaxpr(pmap(dot)) in the xla_pmap era prints the seed's text") {
  ensure_core_primitives();
  const JaxProfile profile(JaxVersion{0, 3, 4});
  JaxprBuilder outer;
  const Var a = outer.arg(Aval::of({8, 1250000, 3}, DType::kFloat32));
  const Var b = outer.arg(Aval::of({8, 1250000, 3}, DType::kFloat32));
  const std::vector<Atom> args = {a, b};
  const std::vector<Atom> out =
      bind_pmap(outer, vdot_body({1250000, 3}), args, two_mapped("dot"), tpu_devices(), profile);
  CHECK(masked(print_jaxpr(*outer.build(out), profile)) ==
        "{ lambda ; a:f32[8,1250000,3] b:f32[8,1250000,3]. let\n"
        "    c:f32[8] = xla_pmap[\n"
        "      axis_name=<axis 0x...>\n"
        "      axis_size=8\n"
        "      backend=None\n"
        "      call_jaxpr={ lambda ; d:f32[1250000,3] e:f32[1250000,3]. let\n"
        "          f:f32[3750000] = reshape[dimensions=None new_sizes=(3750000,)] d\n"
        "          g:f32[3750000] = reshape[dimensions=None new_sizes=(3750000,)] e\n"
        "          h:f32[] = dot_general[\n"
        "            dimension_numbers=(((0,), (0,)), ((), ()))\n"
        "            precision=None\n"
        "            preferred_element_type=None\n"
        "          ] f g\n"
        "        in (h,) }\n"
        "      devices=None\n"
        "      donated_invars=(False, False)\n"
        "      global_arg_shapes=(None, None)\n"
        "      global_axis_size=None\n"
        "      in_axes=(0, 0)\n"
        "      name=dot\n"
        "      out_axes=(0,)\n"
        "    ] a b\n"
        "  in (c,) }");
}

TEST_CASE("xla_pmap params follow the JAX version: global_arg_shapes goes, is_explicit_global_axis_size comes") {
  ensure_core_primitives();
  for (const auto& [version, has_shapes, has_explicit] : std::vector<std::tuple<JaxVersion, bool, bool>>{
           {{0, 2, 20}, false, false}, {{0, 4, 3}, true, true}, {{0, 4, 20}, false, true}}) {
    const JaxProfile profile(version);
    JaxprBuilder outer;
    const std::vector<Atom> args = {outer.arg(Aval::of({8, 3}, DType::kFloat32)),
                                    outer.arg(Aval::of({8, 3}, DType::kFloat32))};
    const std::vector<Atom> out = bind_pmap(outer, vdot_body({3}), args, two_mapped("dot"), tpu_devices(), profile);
    const std::string text = print_jaxpr(*outer.build(out), profile);
    CAPTURE(text);
    CHECK((text.find("global_arg_shapes=") != std::string::npos) == has_shapes);
    CHECK((text.find("is_explicit_global_axis_size=False") != std::string::npos) == has_explicit);
  }
}

TEST_CASE("the new pmap traces to jit(shard_map) with squeeze and expand_dims around the body") {
  ensure_core_primitives();
  const JaxProfile profile;
  JaxprBuilder outer;
  const std::vector<Atom> args = {outer.arg(Aval::of({8, 3}, DType::kFloat32)),
                                  outer.arg(Aval::of({8, 3}, DType::kFloat32))};
  const std::vector<Atom> out = bind_pmap(outer, vdot_body({3}), args, two_mapped("dot"), tpu_devices(), profile);
  const JaxprPtr program = outer.build(out);
  const std::string text = print_jaxpr(*program, profile);
  CAPTURE(text);
  CHECK(atom_aval(program->outvars.at(0)).shape == Shape{8});
  CHECK(text.find("= jit[") != std::string::npos);
  CHECK(text.find("name=_fun") != std::string::npos);
  CHECK(text.find("shard_map[") != std::string::npos);
  CHECK(text.find("check_vma=False") != std::string::npos);
  CHECK(text.find("in_specs=(P('_internal_pmap_axis_name',), P('_internal_pmap_axis_name',))") != std::string::npos);
  CHECK(text.find("mesh=Mesh('_internal_pmap_axis_name': 8, axis_types=(Auto,))") != std::string::npos);
  CHECK(text.find("newly_manual_axes=frozenset({'_internal_pmap_axis_name'})") != std::string::npos);
  CHECK(text.find("squeeze[dimensions=(0,)]") != std::string::npos);
  CHECK(text.find("f32[1,3]") != std::string::npos);
  CHECK(text.find("xla_pmap") == std::string::npos);
  // The program runs on one device and gives the per-row dot products.
  std::vector<float> ones(24, 1.0F);
  const std::vector<BufferPtr> result = evaluate_jaxpr(
      *program, {make_buffer(DType::kFloat32, {8, 3}, ones), make_buffer(DType::kFloat32, {8, 3}, ones)});
  for (int64_t i = 0; i < 8; ++i) CHECK(result.at(0)->element_as_double(i) == 3.0);
}

TEST_CASE("pmap(vmap(dot)) values: each device dots its own rows, and the result is sharded one block per device") {
  ensure_core_primitives();
  const Array v = ramp_array({8, 5, 3}, 0.5F);
  const Array u = ramp_array({8, 5, 3}, 0.25F);
  // The body is a row-wise dot of a (5, 3) block: dot_general with batch dim 0, contracting dim 1.
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({5, 3}, DType::kFloat32));
  const Var y = b.arg(Aval::of({5, 3}, DType::kFloat32));
  const Params numbers = {
      {"dimension_numbers",
       ParamValue::tuple({ParamValue::tuple({ParamValue::int_tuple({1}), ParamValue::int_tuple({1})}),
                          ParamValue::tuple({ParamValue::int_tuple({0}), ParamValue::int_tuple({0})})})},
      {"precision", ParamValue::None{}},
      {"preferred_element_type", ParamValue::None{}}};
  const JaxprPtr body = b.build({b.bind1("dot_general", {x, y}, numbers)});
  for (const JaxVersion& version : {JaxVersion{0, 3, 4}, JaxVersion{0, 11, 0}}) {
    const PmapRun run = run_pmap(*body, {v, u}, two_mapped("dot"), tpu_devices(), JaxProfile(version));
    REQUIRE(run.outputs.size() == 1);
    const Array& out = run.outputs[0];
    CHECK(out.shape() == Shape{8, 5});
    CHECK(out.shards().size() == 8);
    const std::vector<double> got = values_of(out);
    const std::vector<double> vs = values_of(v);
    const std::vector<double> us = values_of(u);
    for (std::size_t row = 0; row < 40; ++row) {
      double expected = 0;
      for (std::size_t k = 0; k < 3; ++k) expected += vs[row * 3 + k] * us[row * 3 + k];
      CHECK(got[row] == doctest::Approx(expected));
    }
    for (std::size_t d = 0; d < 8; ++d) CHECK(out.shards()[d].device == tpu_devices()[d]);
  }
}

TEST_CASE("collectives over the pmap axis: x / psum(x, 'i') normalises, in_axes=None broadcasts, out_axes=None") {
  ensure_core_primitives();
  const AxisEnvScope axes({{"i", 4}});
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({}, DType::kFloat32));
  const Var scale = b.arg(Aval::of({}, DType::kFloat32));
  const Atom total =
      b.bind1("psum", {x}, {{"axes", ParamValue::name_tuple({"i"})}, {"axis_index_groups", ParamValue::None{}}});
  const Atom normalised = b.bind1("div", {x, total});
  const JaxprPtr body = b.build({b.bind1("mul", {normalised, scale}), total});
  PmapSpec spec;
  spec.axis_name = "i";
  spec.in_axes = {0, std::nullopt};
  spec.out_axes = {0, std::nullopt};
  const std::vector<float> arange = {0, 1, 2, 3};
  const Sharding one = make_single_device_sharding(tpu_devices().front(), JaxProfile());
  const Array xs = Array::from_host(make_buffer(DType::kFloat32, {4}, arange), one, JaxProfile());
  const Array two = Array::from_host(make_buffer(DType::kFloat32, {}, std::vector<float>{2}), one, JaxProfile());
  const PmapRun run = run_pmap(*body, {xs, two}, spec, tpu_devices(), JaxProfile());
  const std::vector<double> got = values_of(run.outputs.at(0));
  REQUIRE(got.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) CHECK(got[i] == doctest::Approx(2.0 * static_cast<double>(i) / 6.0));
  CHECK(run.outputs.at(1).shape().empty());
  CHECK(values_of(run.outputs.at(1)) == std::vector<double>{6.0});
  CHECK(run.log.records().size() == 1);
}

TEST_CASE("seed 001: too many instances for the devices raise the error of each pmap era") {
  ensure_core_primitives();
  const std::vector<Aval> big = {Aval::of({10000000, 3}, DType::kFloat32), Aval::of({10000000, 3}, DType::kFloat32)};
  const PmapSpec spec = two_mapped("dot");
  const int64_t n = pmap_axis_size(spec, big);
  CHECK(n == 10000000);
  const auto message = [&](const JaxVersion& version) {
    try {
      (void)pmap_devices(spec, n, tpu_devices(), JaxProfile(version));
    } catch (const Error& e) {
      CHECK(e.python_type() == "ValueError");
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message({0, 3, 4}) ==
        "compiling computation that requires 10000000 logical devices, but only 8 XLA devices are available "
        "(num_replicas=10000000, num_partitions=1)");
  CHECK(message({0, 4, 20}) ==
        "compiling computation that requires 10000000 logical devices, but only 8 XLA devices are available "
        "(num_replicas=10000000)");
  // The new pmap spreads the rows over every device, and the body's squeeze of the mapped axis fails.
  const Array v = Array::abstract(ShapedArray{{10000000, 3}, DType::kFloat32, false},
                                  make_single_device_sharding(tpu_devices().front(), JaxProfile()), JaxProfile());
  CHECK_THROWS_WITH((void)run_pmap(*vdot_body({3}), {v, v}, spec, tpu_devices(), JaxProfile()),
                    "cannot select an axis to squeeze out which has size not equal to one, got shape=(1250000, 3) and "
                    "dimensions=(0,)");
}

TEST_CASE("pmap's other argument errors") {
  PmapSpec spec;
  spec.in_axes = {std::nullopt};
  const std::vector<Aval> one = {Aval::of({4}, DType::kFloat32)};
  CHECK_THROWS_WITH((void)pmap_axis_size(spec, one), "pmap requires at least one argument with a mapped axis.");
  spec.in_axes = {0};
  spec.axis_size = 3;
  CHECK_THROWS_WITH((void)pmap_axis_size(spec, one), "Specified axis_size 3 doesn't match received axis_size 4.");
  spec.axis_size.reset();
  spec.devices = {tpu_devices()[0]};
  CHECK_THROWS_WITH((void)pmap_devices(spec, 8, tpu_devices(), JaxProfile()),
                    "Leading axis size of input to pmapped function must equal the number of local devices passed to "
                    "pmap. Got axis_size=8, num_local_devices=1.");
}
