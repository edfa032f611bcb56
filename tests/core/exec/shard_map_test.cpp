// shard_map end to end: seed 000's programs run per device with real collectives, and JAX's checks.
#include "exec/shard_map.h"

#include <doctest/doctest.h>

#include <numeric>
#include <set>

#include "base/error.h"
#include "device/presets.h"
#include "ir/axis_env.h"
#include "ir/jaxpr_printer.h"
#include "trace/builder.h"

using namespace shardscope;

namespace {

Mesh tpu_mesh_8() { return make_mesh({8}, {"x"}, make_device_preset("tpu-v3-8").devices, JaxProfile()); }

Array arange_i32(int64_t n, const Mesh& mesh) {
  std::vector<int32_t> values(static_cast<std::size_t>(n));
  std::iota(values.begin(), values.end(), 0);
  const Sharding on_first = make_single_device_sharding(mesh.devices().front(), JaxProfile());
  return Array::from_host(make_buffer(DType::kInt32, {n}, values), on_first, JaxProfile());
}

std::vector<double> values_of(const Array& array) {
  const BufferPtr global = array.gather();
  std::vector<double> out;
  for (int64_t i = 0; i < global->size(); ++i) out.push_back(global->element_as_double(i));
  return out;
}

ShardMapSpec spec_8(std::vector<PartitionSpec> in, std::vector<PartitionSpec> out) {
  ShardMapSpec spec;
  spec.mesh = tpu_mesh_8();
  spec.in_specs = std::move(in);
  spec.out_specs = std::move(out);
  return spec;
}

// The body of `f(x) = psum(x.sum(), 'x')` (or without the psum), traced on the local type.
JaxprPtr local_sum_body(const ShardMapSpec& spec, bool with_psum, bool keepdims) {
  const AxisEnvScope axes({{"x", 8}});
  JaxprBuilder b;
  const Var x = b.arg(shard_map_local_aval(Aval::of({32}, DType::kInt32), spec.in_specs[0], spec.mesh, true));
  Atom total = b.bind1("reduce_sum", {x}, {{"axes", ParamValue::int_tuple({0})}, {"out_sharding", ParamValue::None{}}});
  if (keepdims) {
    total = b.bind1("broadcast_in_dim", {total},
                    {{"shape", ParamValue::int_tuple({1})},
                     {"broadcast_dimensions", ParamValue::int_tuple({})},
                     {"sharding", ParamValue::None{}}});
  }
  if (with_psum) total = b.bind1("psum_invariant", {total}, {{"axes", ParamValue::name_tuple({"x"})}});
  return b.build({total});
}

}  // namespace

TEST_CASE("seed 000: psum of per-device sums gives 496 on every device") {
  const ShardMapSpec spec = spec_8({parse_partition_spec("P('x')")}, {PartitionSpec()});
  const JaxprPtr body = local_sum_body(spec, true, false);
  CommLog log;
  const std::vector<Array> out = run_shard_map(*body, spec, {arange_i32(32, spec.mesh)}, JaxProfile(), &log);
  REQUIRE(out.size() == 1);
  CHECK(out[0].shape() == Shape{});
  CHECK(values_of(out[0]) == std::vector<double>{496});
  CHECK(out[0].distinct_buffer_count() == 1);
  // Placing the uncommitted input moves it to the devices (no collective); the psum is one all-reduce.
  REQUIRE(log.records().size() == 1);
  CHECK(log.records()[0].kind == CollectiveKind::kAllReduce);
  CHECK(log.records()[0].groups == std::vector<std::vector<int64_t>>{{0, 1, 2, 3, 6, 7, 4, 5}});
}

TEST_CASE("seed 000: local sums with keepdims assemble into a sharded vector") {
  const ShardMapSpec spec = spec_8({parse_partition_spec("P('x')")}, {parse_partition_spec("P('x')")});
  const JaxprPtr body = local_sum_body(spec, false, true);
  const std::vector<Array> out = run_shard_map(*body, spec, {arange_i32(32, spec.mesh)}, JaxProfile(), nullptr);
  CHECK(out[0].shape() == Shape{8});
  CHECK(values_of(out[0]) == std::vector<double>{6, 22, 38, 54, 70, 86, 102, 118});
}

TEST_CASE("an output that varies over an axis its out_spec omits is rejected with JAX's message") {
  const ShardMapSpec spec = spec_8({parse_partition_spec("P('x')")}, {PartitionSpec()});
  const JaxprPtr body = local_sum_body(spec, false, false);
  // Run eagerly, JAX's check fails in the shard_map of `_rem_singleton` that matches outputs to out_specs.
  CHECK_THROWS_WITH_AS(
      (void)run_shard_map(*body, spec, {arange_i32(32, spec.mesh)}, JaxProfile(), nullptr),
      "shard_map applied to the function '_rem_singleton' was given out_specs which require replication which "
      "can't be statically inferred given the mesh:\n\nThe mesh given has shape (8,) with "
      "corresponding axis names ('x',).\n\nout_specs is P() which implies that the corresponding "
      "output value is replicated across mesh axis 'x', but could not infer replication over any "
      "axes\n\nCheck if these output values are meant to be replicated over those mesh axes. If not, "
      "consider revising the corresponding out_specs entries. If so, consider disabling the check "
      "by passing the check_vma=False argument to `jax.shard_map`.",
      Error);
  ShardMapSpec unchecked = spec;
  unchecked.check_vma = false;
  CHECK_NOTHROW((void)run_shard_map(*body, unchecked, {arange_i32(32, spec.mesh)}, JaxProfile(), nullptr));
}

TEST_CASE("the three-axis replication message names the axes") {
  ShardMapSpec spec;
  spec.mesh = make_mesh({2, 2, 2}, {"x", "y", "z"}, make_device_preset("cpu:8").devices, JaxProfile());
  spec.in_specs = {parse_partition_spec("P('x', 'y', 'z')")};
  spec.out_specs = {parse_partition_spec("P('x')")};
  Aval local = Aval::of({2, 2, 2}, DType::kFloat32);
  local.varying = {"x", "y", "z"};
  CHECK_THROWS_WITH_AS(check_shard_map_outputs(spec, {local}),
                       doctest::Contains("out_specs is P('x',) which implies that the corresponding output value is "
                                         "only varying across mesh axes {x} and not {y,z}, but it was inferred to be "
                                         "possibly varying over {x,y,z}"),
                       Error);
}

TEST_CASE("shard_map input checks: rank and divisibility") {
  const ShardMapSpec spec = spec_8({parse_partition_spec("P('x', None)")}, {PartitionSpec()});
  CHECK_THROWS_WITH_AS(check_shard_map_args(spec, {Aval::of({32}, DType::kFloat32)}),
                       doctest::Contains("in_specs[0] is P('x', None) which has length 2, but the passed args[0] has "
                                         "shape float32[32], which has rank 1 (and 1 < 2)"),
                       Error);
  const ShardMapSpec one = spec_8({parse_partition_spec("P('x')")}, {PartitionSpec()});
  CHECK_THROWS_WITH_AS(check_shard_map_args(one, {Aval::of({12}, DType::kFloat32)}),
                       doctest::Contains("the passed args[0] of shape float32[12] corresponds to in_specs[0] of value "
                                         "P('x',), which maps array axis 0 (of size 12) to mesh axis 'x' (of size 8), "
                                         "but 8 does not evenly divide 12"),
                       Error);
}

TEST_CASE("local types divide the sharded dims and vary over the spec's axes") {
  const Mesh mesh = make_mesh({2, 4}, {"x", "y"}, make_device_preset("cpu:8").devices, JaxProfile());
  const Aval local =
      shard_map_local_aval(Aval::of({8, 16}, DType::kFloat32), parse_partition_spec("P('y', 'x')"), mesh, true);
  CHECK(local.shape == Shape{2, 8});
  CHECK(local.str_short(true) == "f32[2,8]{V:(x,y)}");
}

TEST_CASE("the traced body prints like JAX's") {
  const ShardMapSpec spec = spec_8({parse_partition_spec("P('x')")}, {PartitionSpec()});
  const JaxprPtr body = local_sum_body(spec, true, false);
  CHECK(print_jaxpr(*body, JaxProfile()) ==
        "{ lambda ; a:i32[4]{V:x}. let\n"
        "    b:i32[]{V:x} = reduce_sum[axes=(0,) out_sharding=None] a\n"
        "    c:i32[] = psum_invariant[axes=('x',)] b\n"
        "  in (c,) }");
}

namespace {

// A body reducing `x` (int32[4] per device) with the given reductions; `chained` feeds the first result into the
// second reduction.
JaxprPtr reductions_body(const ShardMapSpec& spec, const std::vector<std::string>& reductions, bool chained,
                         bool tuple_psum) {
  const AxisEnvScope axes({{"x", 8}});
  JaxprBuilder b;
  const Var x = b.arg(shard_map_local_aval(Aval::of({32}, DType::kInt32), spec.in_specs[0], spec.mesh, true));
  const Params over_x = {{"axes", ParamValue::name_tuple({"x"})}};
  std::vector<Atom> results;
  if (tuple_psum) {
    const Atom doubled = b.bind1("mul", {x, scalar_literal(2, DType::kInt32)}, {});
    results = b.bind("psum_invariant", {x, doubled}, over_x);
    return b.build(results);
  }
  Atom input = x;
  for (const std::string& name : reductions) {
    const Atom reduced = b.bind1(name, {input}, over_x);
    results.push_back(reduced);
    if (chained) input = reduced;
  }
  return b.build(results);
}

std::set<int64_t> combined_ids(const CommLog& log) {
  std::set<int64_t> ids;
  for (const CollectiveRecord& r : log.records()) ids.insert(r.combined);
  return ids;
}

}  // namespace

TEST_CASE("a shard_map body's independent psums run as one combined all-reduce, as XLA's combiner joins them") {
  const ShardMapSpec spec = spec_8({parse_partition_spec("P('x')")}, {PartitionSpec(), PartitionSpec()});
  const Array x = arange_i32(32, spec.mesh);
  SUBCASE("two independent psums: one all-reduce of both") {
    CommLog log;
    (void)run_shard_map(*reductions_body(spec, {"psum_invariant", "psum_invariant"}, false, false), spec, {x},
                        JaxProfile(), &log);
    REQUIRE(log.records().size() == 2);
    CHECK(log.count(CollectiveKind::kAllReduce) == 1);
    CHECK(combined_ids(log).size() == 1);
    CHECK(*combined_ids(log).begin() >= 0);
  }
  SUBCASE("a psum of a value the first psum produced waits for it: two all-reduces") {
    CommLog log;
    (void)run_shard_map(*reductions_body(spec, {"psum_invariant", "psum_invariant"}, true, false), spec, {x},
                        JaxProfile(), &log);
    CHECK(log.count(CollectiveKind::kAllReduce) == 2);
    CHECK(combined_ids(log) == std::set<int64_t>{-1});
  }
  SUBCASE("a max and a sum reduce differently: two all-reduces") {
    CommLog log;
    (void)run_shard_map(*reductions_body(spec, {"pmax", "psum_invariant"}, false, false), spec, {x}, JaxProfile(),
                        &log);
    CHECK(log.count(CollectiveKind::kAllReduce) == 2);
  }
  SUBCASE("one psum of two values is one all-reduce of their tuple") {
    CommLog log;
    const std::vector<Array> out =
        run_shard_map(*reductions_body(spec, {}, false, true), spec, {x}, JaxProfile(), &log);
    REQUIRE(out.size() == 2);
    CHECK(log.records().size() == 2);
    CHECK(log.count(CollectiveKind::kAllReduce) == 1);
  }
  SUBCASE("a second program in the same log numbers its groups after the first's") {
    CommLog log;
    const JaxprPtr body = reductions_body(spec, {"psum_invariant", "psum_invariant"}, false, false);
    (void)run_shard_map(*body, spec, {x}, JaxProfile(), &log);
    (void)run_shard_map(*body, spec, {x}, JaxProfile(), &log);
    CHECK(log.count(CollectiveKind::kAllReduce) == 2);
    CHECK(combined_ids(log).size() == 2);
  }
}
