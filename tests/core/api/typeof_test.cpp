// jax.typeof inside shard_map across JAX versions: the varying-axes annotation exists from 0.6.1 on.
#include "api/typeof.h"

#include <doctest/doctest.h>

#include "api/session.h"
#include "api/transforms.h"

using namespace shardscope;
using namespace shardscope::api;

namespace {

// str(jax.typeof(x)) of the body's argument in shard_map(f, P('x') -> P('x')) over an 8-device mesh.
std::string body_typeof(const JaxProfile& profile) {
  session().profile = profile;
  const Mesh mesh = make_mesh({8}, {"x"}, session().devices, profile, std::vector<AxisType>{AxisType::kAuto});
  std::vector<float> values(32, 1.0F);
  const Value x = Value::concrete(Array::from_host(make_buffer(DType::kFloat32, {32}, values),
                                                   make_single_device_sharding(default_device(), profile), profile));
  ShardMapSpec spec;
  spec.mesh = mesh;
  spec.in_specs = {parse_partition_spec("P('x')")};
  spec.out_specs = {parse_partition_spec("P('x')")};
  std::string seen;
  const Function body = [&](const std::vector<Value>& args) {
    seen = typeof_text(args[0], profile);
    return args;
  };
  (void)call_shard_map(body, {x}, spec);
  session().profile = JaxProfile();
  return seen;
}

}  // namespace

TEST_CASE("typeof in a shard_map body: no varying axes before JAX 0.6.1") {
  // Seed 002 (JAX 0.5.3-0.6.0) printed `x sharding: ShapedArray(float32[4])` for P('x') over 8 devices.
  CHECK(body_typeof(JaxProfile(JaxVersion{0, 6, 0})) == "ShapedArray(float32[4])");
}

TEST_CASE("typeof in a shard_map body: varying axes from JAX 0.6.1 on") {
  // JAX's shard_map docs print `f32[4]{V:x}`-style types once check_vma exists; str drops the wrapper.
  CHECK(body_typeof(JaxProfile(JaxVersion{0, 7, 0})) == "float32[4]{V:x}");
}

TEST_CASE("typeof of a concrete Explicit-sharded array shows the sharding in the type") {
  session().profile = JaxProfile(JaxVersion{0, 6, 0});
  const Mesh mesh = make_mesh({2, 4}, {"X", "Y"}, session().devices, session().profile,
                              std::vector<AxisType>{AxisType::kExplicit, AxisType::kExplicit});
  std::vector<int32_t> values(8, 0);
  const Value x = Value::concrete(Array::from_host(
      make_buffer(DType::kInt32, {4, 2}, values),
      make_named_sharding(mesh, parse_partition_spec("P('X', None)"), session().profile), session().profile));
  // Seed 002: `sharded_array type: ShapedArray(int32[4@X,2])`.
  CHECK(typeof_text(x, session().profile) == "ShapedArray(int32[4@X,2])");
  session().profile = JaxProfile();
}

TEST_CASE("repr of typeof keeps one ShapedArray wrapper in every profile") {
  std::vector<int32_t> values(8, 0);
  for (const JaxVersion version : {JaxVersion{0, 6, 0}, JaxVersion{0, 7, 0}}) {
    const JaxProfile profile(version);
    const Value x = Value::concrete(Array::from_host(make_buffer(DType::kInt32, {8}, values),
                                                     make_single_device_sharding(default_device(), profile), profile));
    // JAX: repr(jax.typeof(np.arange(8))) == 'ShapedArray(int32[8])' before and after str dropped the wrapper.
    CHECK(typeof_repr_text(x, profile) == "ShapedArray(int32[8])");
  }
}
