// Elementwise fusion: which equations group together, and chunked, threaded runs that equal values
// computed directly (exactly for integers, to a few ulp for sin).
#include "exec/fusion.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "base/thread_pool.h"
#include "device/presets.h"
#include "exec/interpreter.h"
#include "exec/jit.h"
#include "ops/ops.h"
#include "trace/builder.h"

using namespace shardscope;

namespace {

const JaxProfile kProfile;

std::vector<float> ramp(int64_t n) {
  std::vector<float> values(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 1000) * 0.01F - 5.0F;
  return values;
}

// 2 * sin(x) + 1 as three equations.
JaxprPtr sin_affine(int64_t n) {
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({n}, DType::kFloat32));
  const Atom s = b.bind1("sin", {x});
  const Atom twice = b.bind1("mul", {scalar_literal(2.0, DType::kFloat32), s});
  return b.build({b.bind1("add", {twice, scalar_literal(1.0, DType::kFloat32)})});
}

void check_sin_affine(const BufferPtr& result, const std::vector<float>& x) {
  REQUIRE(result->size() == static_cast<int64_t>(x.size()));
  const auto values = result->as<float>();
  int wrong = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double expected = 2.0 * std::sin(static_cast<double>(x[i])) + 1.0;
    if (std::fabs(values[i] - expected) > 4e-7 * 3) ++wrong;
  }
  CHECK(wrong == 0);
}

Params reduce_axes(std::vector<int64_t> axes) {
  return {{"axes", ParamValue::int_tuple(axes)}, {"out_sharding", ParamValue::None{}}};
}

}  // namespace

TEST_CASE("plan_fusion groups elementwise runs and writes only values read after the group") {
  ensure_core_primitives();
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({16}, DType::kFloat32));
  const Atom s = b.bind1("sin", {x});                                            // 0
  const Atom twice = b.bind1("mul", {scalar_literal(2.0, DType::kFloat32), s});  // 1
  const Atom sum = b.bind1("add", {twice, x});                                   // 2
  const Atom total = b.bind1("reduce_sum", {sum}, reduce_axes({0}));             // 3: not elementwise
  const Atom e = b.bind1("exp", {s});                                            // 4: reads s from group 0
  const Atom scaled = b.bind1("mul", {e, total});                                // 5: scalar operand
  const JaxprPtr jaxpr = b.build({scaled, twice});
  const std::vector<FusionGroup> groups = plan_fusion(*jaxpr);
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].begin == 0);
  CHECK(groups[0].end == 3);
  CHECK(groups[0].shape == Shape{16});
  REQUIRE(groups[0].inputs.size() == 1);
  CHECK(groups[0].inputs[0].id == x.id);
  // s is read by equation 4, `twice` is returned, `sum` by equation 3.
  REQUIRE(groups[0].outputs.size() == 3);
  CHECK(groups[0].outputs[0].id == std::get<Var>(s).id);
  CHECK(groups[0].outputs[1].id == std::get<Var>(twice).id);
  CHECK(groups[0].outputs[2].id == std::get<Var>(sum).id);
  CHECK(groups[1].begin == 4);
  CHECK(groups[1].end == 6);
  REQUIRE(groups[1].inputs.size() == 2);
  CHECK(groups[1].inputs[0].id == std::get<Var>(s).id);
  CHECK(groups[1].inputs[1].id == std::get<Var>(total).id);
  REQUIRE(groups[1].outputs.size() == 1);
  CHECK(group_starting_at(groups, 4) == &groups[1]);
  CHECK(group_starting_at(groups, 3) == nullptr);
}

TEST_CASE("operands broadcast along some dims and shape changes end a group") {
  ensure_core_primitives();
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({4, 8}, DType::kFloat32));
  const Var row = b.arg(Aval::of({1, 8}, DType::kFloat32));
  const Atom neg = b.bind1("neg", {x});
  const Atom plus_row = b.bind1("add", {neg, row});  // (1, 8) operand: not chunkable
  const JaxprPtr jaxpr = b.build({plus_row});
  const std::vector<FusionGroup> groups = plan_fusion(*jaxpr);
  REQUIRE(groups.size() == 1);
  CHECK(groups[0].end == 1);
}

TEST_CASE("a fused chunked run of 2*sin(x)+1 equals the directly computed values, on 1 and 2 threads") {
  ensure_core_primitives();
  const int64_t n = 5 * kFusionChunkElements + 123;  // several chunks and a ragged last one
  const JaxprPtr jaxpr = sin_affine(n);
  const std::vector<float> x = ramp(n);
  const BufferPtr input = make_buffer(DType::kFloat32, {n}, x);
  set_thread_count(1);
  const BufferPtr one = evaluate_jaxpr(*jaxpr, {input}).at(0);
  set_thread_count(2);
  const BufferPtr two = evaluate_jaxpr(*jaxpr, {input}).at(0);
  set_thread_count(0);
  check_sin_affine(one, x);
  REQUIRE(one->nbytes() == two->nbytes());
  CHECK(std::memcmp(one->bytes().data(), two->bytes().data(), one->nbytes()) == 0);
}

TEST_CASE("fused integer chains are exact and wrap like unfused kernels") {
  ensure_core_primitives();
  const int64_t n = 3 * kFusionChunkElements + 7;
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({n}, DType::kInt32));
  const Atom tripled = b.bind1("mul", {x, scalar_literal(3.0, DType::kInt32)});
  const Atom shifted = b.bind1("add", {tripled, scalar_literal(2000000000.0, DType::kInt32)});
  const Atom negated = b.bind1("neg", {shifted});
  const JaxprPtr jaxpr = b.build({negated, tripled});
  std::vector<int32_t> values(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int32_t>(i * 7919U % 1000003U) - 500000;
  const std::vector<BufferPtr> out = evaluate_jaxpr(*jaxpr, {make_buffer(DType::kInt32, {n}, values)});
  REQUIRE(out.size() == 2);
  const auto negated_values = out[0]->as<int32_t>();
  const auto tripled_values = out[1]->as<int32_t>();
  int wrong = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const uint32_t t = static_cast<uint32_t>(values[i]) * 3U;
    const uint32_t s = t + 2000000000U;
    if (tripled_values[i] != static_cast<int32_t>(t) || negated_values[i] != static_cast<int32_t>(0U - s)) ++wrong;
  }
  CHECK(wrong == 0);
}

TEST_CASE("run_fusion_group runs every device's block and keeps scalars unsplit") {
  ensure_core_primitives();
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({2 * kFusionChunkElements + 5}, DType::kFloat64));
  const Var scale = b.arg(Aval::of({}, DType::kFloat64));
  const Atom product_value = b.bind1("mul", {x, scale});
  const JaxprPtr jaxpr = b.build({b.bind1("sub", {product_value, x})});
  const std::vector<FusionGroup> groups = plan_fusion(*jaxpr);
  REQUIRE(groups.size() == 1);
  // Two "devices" with different block sizes: one chunked, one small.
  const int64_t big = 2 * kFusionChunkElements + 5;
  std::vector<double> a(static_cast<std::size_t>(big));
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i);
  const std::vector<double> small_values = {1.5, -2.0, 4.0};
  const DeviceBuffers xs = {make_buffer(DType::kFloat64, {big}, a), make_buffer(DType::kFloat64, {3}, small_values)};
  const DeviceBuffers scales = {make_buffer(DType::kFloat64, {}, std::vector<double>{3.0}),
                                make_buffer(DType::kFloat64, {}, std::vector<double>{-1.0})};
  const std::vector<DeviceBuffers> out = run_fusion_group(*jaxpr, groups[0], {xs, scales});
  REQUIRE(out.size() == 1);
  REQUIRE(out[0].size() == 2);
  CHECK(out[0][0]->shape() == Shape{big});
  for (int64_t i = 0; i < big; i += 997) CHECK(out[0][0]->element_as_double(i) == 2.0 * static_cast<double>(i));
  CHECK(out[0][0]->element_as_double(big - 1) == 2.0 * static_cast<double>(big - 1));
  CHECK(out[0][1]->element_as_double(0) == -3.0);
  CHECK(out[0][1]->element_as_double(1) == 4.0);
  CHECK(out[0][1]->element_as_double(2) == -8.0);
}

TEST_CASE("jit of 2*sin(x)+1 sharded 8 ways runs fused, moves nothing and matches direct values") {
  ensure_core_primitives();
  const Mesh mesh =
      make_mesh({8}, {"x"}, make_device_preset("cpu:8").devices, kProfile, std::vector<AxisType>{AxisType::kAuto});
  const int64_t n = 8 * (kFusionChunkElements + 1000);
  const JaxprPtr jaxpr = sin_affine(n);
  const std::vector<float> x = ramp(n);
  const Array arr = Array::from_host(make_buffer(DType::kFloat32, {n}, x),
                                     make_named_sharding(mesh, parse_partition_spec("P('x')"), kProfile), kProfile);
  const JitRun run = run_jit(*jaxpr, {arr}, {}, kProfile);
  CHECK(run.log.empty());
  CHECK(run.outputs.at(0).sharding() == arr.sharding());
  check_sin_affine(run.outputs[0].gather(), x);
}

TEST_CASE("fused chunked runs are bit-identical to each kernel run on whole buffers, outputs written in place") {
  ensure_core_primitives();
  // exp(sin(x) * y) - cos(x) / 3 with sin(x) * y also returned and read after the group: two outputs, one of
  // them an intermediate, over several chunks with a ragged end, on one device (ranges per thread) and on two.
  const int64_t n = 4 * kFusionChunkElements + 77;
  JaxprBuilder b;
  const Var x = b.arg(Aval::of({n}, DType::kFloat32));
  const Var y = b.arg(Aval::of({n}, DType::kFloat32));
  const Atom s = b.bind1("sin", {x});
  const Atom sy = b.bind1("mul", {s, y});
  const Atom e = b.bind1("exp", {sy});
  const Atom c = b.bind1("cos", {x});
  const Atom third = b.bind1("div", {c, scalar_literal(3.0, DType::kFloat32)});
  const Atom result = b.bind1("sub", {e, third});
  const JaxprPtr jaxpr = b.build({result, sy});
  const std::vector<FusionGroup> groups = plan_fusion(*jaxpr);
  REQUIRE(groups.size() == 1);
  // Group outputs come in program order: sin(x) * y, then the result.
  REQUIRE(groups[0].outputs.size() == 2);
  CHECK(groups[0].outputs[0].id == std::get<Var>(sy).id);

  std::vector<float> xs = ramp(n);
  std::vector<float> ys(xs.size());
  for (std::size_t i = 0; i < ys.size(); ++i) ys[i] = static_cast<float>(i % 77) * 0.013F - 0.5F;
  const BufferPtr xb = make_buffer(DType::kFloat32, {n}, xs);
  const BufferPtr yb = make_buffer(DType::kFloat32, {n}, ys);
  // The reference: every primitive's kernel once on whole buffers, in program order.
  const auto run_whole = [](const std::string& name, std::vector<BufferPtr> operands, std::vector<Aval> avals) {
    return find_primitive(name)->impl(operands, avals, {}).at(0);
  };
  const Aval whole = Aval::of({n}, DType::kFloat32);
  const Aval scalar = Aval::of({}, DType::kFloat32);
  const BufferPtr s_ref = run_whole("sin", {xb}, {whole});
  const BufferPtr sy_ref = run_whole("mul", {s_ref, yb}, {whole, whole});
  const BufferPtr e_ref = run_whole("exp", {sy_ref}, {whole});
  const BufferPtr c_ref = run_whole("cos", {xb}, {whole});
  const BufferPtr third_ref =
      run_whole("div", {c_ref, make_buffer(DType::kFloat32, {}, std::vector<float>{3.0F})}, {whole, scalar});
  const BufferPtr result_ref = run_whole("sub", {e_ref, third_ref}, {whole, whole});
  const auto same = [](const BufferPtr& a, const BufferPtr& b2) {
    return a->nbytes() == b2->nbytes() && std::memcmp(a->bytes().data(), b2->bytes().data(), a->nbytes()) == 0;
  };
  for (const std::size_t threads : {std::size_t{1}, std::size_t{2}}) {
    set_thread_count(threads);
    // One device holding everything, and two devices holding halves (as a sharded jit gives them).
    const std::vector<DeviceBuffers> one = run_fusion_group(*jaxpr, groups[0], {{xb}, {yb}});
    CHECK(same(one[0][0], sy_ref));
    CHECK(same(one[1][0], result_ref));
    const int64_t half = n / 2;
    const std::vector<float> x0(xs.begin(), xs.begin() + half);
    const std::vector<float> x1(xs.begin() + half, xs.end());
    const std::vector<float> y0(ys.begin(), ys.begin() + half);
    const std::vector<float> y1(ys.begin() + half, ys.end());
    const std::vector<DeviceBuffers> two =
        run_fusion_group(*jaxpr, groups[0],
                         {{make_buffer(DType::kFloat32, {half}, x0), make_buffer(DType::kFloat32, {n - half}, x1)},
                          {make_buffer(DType::kFloat32, {half}, y0), make_buffer(DType::kFloat32, {n - half}, y1)}});
    const auto& halves = two[1];
    CHECK(std::memcmp(halves[0]->bytes().data(), result_ref->bytes().data(), halves[0]->nbytes()) == 0);
    CHECK(std::memcmp(halves[1]->bytes().data(), result_ref->bytes().data() + halves[0]->nbytes(),
                      halves[1]->nbytes()) == 0);
  }
  set_thread_count(0);
  // The inputs were read in place, never written.
  CHECK(xb->as<float>()[5] == xs[5]);
}

TEST_CASE("a product feeding an add or sub in a compiled program is one fused multiply-add, rounded once") {
  ensure_core_primitives();
  // x * x = 1 + 2^-11 + 2^-24 exactly, which float32 rounds (a tie, to even) to 1 + 2^-11 = z.
  const float x = 1.0F + std::ldexp(1.0F, -12);
  const float z = 1.0F + std::ldexp(1.0F, -11);
  const auto run = [&](const std::string& op, bool product_first, bool compiled) {
    JaxprBuilder b;
    const Var xs = b.arg(Aval::of({4}, DType::kFloat32));
    const Var zs = b.arg(Aval::of({4}, DType::kFloat32));
    const Atom product = b.bind1("mul", {xs, xs});
    const Atom out = product_first ? b.bind1(op, {product, zs}) : b.bind1(op, {zs, product});
    const JaxprPtr jaxpr = b.build({out});
    const std::vector<BufferPtr> args = {make_buffer(DType::kFloat32, {4}, std::vector<float>(4, x)),
                                         make_buffer(DType::kFloat32, {4}, std::vector<float>(4, z))};
    if (!compiled) return evaluate_jaxpr(*jaxpr, args).at(0)->as<float>()[0];
    const CompiledProgramScope scope;
    return evaluate_jaxpr(*jaxpr, args).at(0)->as<float>()[0];
  };
  const float tiny = std::ldexp(1.0F, -24);
  // Op by op (eager JAX) the product is rounded first.
  CHECK(run("sub", true, false) == 0.0F);
  CHECK(run("sub", false, false) == 0.0F);
  // Compiled, LLVM contracts fsub(fmul x y, z) to fma(x, y, -z) and fsub(z, fmul x y) to fma(-x, y, z).
  CHECK(run("sub", true, true) == tiny);
  CHECK(run("sub", false, true) == -tiny);
  // A product the program also returns is still computed, rounded on its own.
  JaxprBuilder b;
  const Var xs = b.arg(Aval::of({4}, DType::kFloat32));
  const Var zs = b.arg(Aval::of({4}, DType::kFloat32));
  const Atom product = b.bind1("mul", {xs, xs});
  const JaxprPtr both = b.build({product, b.bind1("sub", {product, zs})});
  const CompiledProgramScope scope;
  const std::vector<BufferPtr> outs =
      evaluate_jaxpr(*both, {make_buffer(DType::kFloat32, {4}, std::vector<float>(4, x)),
                             make_buffer(DType::kFloat32, {4}, std::vector<float>(4, z))});
  CHECK(outs.at(0)->as<float>()[3] == z);
  CHECK(outs.at(1)->as<float>()[3] == tiny);
  // (An add of a larger addend loses the difference again: 2 + 2^-10 either way.)
  CHECK(run("add", true, true) == 2.0F * z);
  CHECK(run("add", false, true) == 2.0F * z);
}

TEST_CASE("a one-element operand of rank above 0 fuses as a scalar, so its product contracts") {
  ensure_core_primitives();
  const float x = 1.0F + std::ldexp(1.0F, -12);
  const float z = 1.0F + std::ldexp(1.0F, -11);
  // mul(xs, x1) then sub(z1): the [1] operands are lax's rank-preserving broadcasts of one value.
  JaxprBuilder b;
  const Var xs = b.arg(Aval::of({2, 4}, DType::kFloat32));
  const Var x1 = b.arg(Aval::of({1, 1}, DType::kFloat32));
  const Var z1 = b.arg(Aval::of({1, 1}, DType::kFloat32));
  const Atom product = b.bind1("mul", {xs, x1});
  const JaxprPtr jaxpr = b.build({b.bind1("sub", {product, z1})});
  const std::vector<FusionGroup> groups = plan_fusion(*jaxpr);
  REQUIRE(groups.size() == 1);
  CHECK(groups[0].end == 2);
  CHECK(reads_as_scalar(x1.aval, {2, 4}));
  CHECK_FALSE(reads_as_scalar(x1.aval, {1, 1}));  // a group of one-element values reads them whole
  CHECK_FALSE(reads_as_scalar(Aval::of({1, 4}, DType::kFloat32), {2, 4}));
  const std::vector<BufferPtr> args = {make_buffer(DType::kFloat32, {2, 4}, std::vector<float>(8, x)),
                                       make_buffer(DType::kFloat32, {1, 1}, std::vector<float>{x}),
                                       make_buffer(DType::kFloat32, {1, 1}, std::vector<float>{z})};
  const float tiny = std::ldexp(1.0F, -24);
  CHECK(evaluate_jaxpr(*jaxpr, args).at(0)->as<float>()[7] == 0.0F);  // eager: the product rounds first
  const CompiledProgramScope scope;
  const BufferPtr out = evaluate_jaxpr(*jaxpr, args).at(0);
  CHECK(out->shape() == Shape{2, 4});
  CHECK(out->as<float>()[0] == tiny);
  CHECK(out->as<float>()[7] == tiny);
}
