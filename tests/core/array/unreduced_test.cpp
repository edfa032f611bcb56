// Unreduced shardings: each device of a group holds a partial value, placed from a whole one and summed back.
#include "array/unreduced.h"

#include <doctest/doctest.h>

#include <numeric>

#include "array/array.h"
#include "device/presets.h"

using namespace shardscope;

namespace {
BufferPtr iota_f32(Shape shape) {
  std::vector<float> values(static_cast<std::size_t>(product(shape)));
  std::iota(values.begin(), values.end(), 0.0F);
  return make_buffer(DType::kFloat32, std::move(shape), values);
}
NamedSharding sharding_2x4(const std::string& spec, std::vector<std::string> unreduced) {
  const Mesh mesh = make_mesh({2, 4}, {"x", "y"}, make_device_preset("cpu:8").devices, JaxProfile());
  PartitionSpec parsed = parse_partition_spec(spec);
  parsed.set_unreduced(std::move(unreduced));
  return make_named_sharding(mesh, parsed, JaxProfile());
}
std::vector<float> values_of(const Buffer& b) {
  const auto span = b.as<float>();
  return {span.begin(), span.end()};
}
}  // namespace

TEST_CASE("a device's place in its unreduced group, and whether it is its block's first holder") {
  const Sharding over_y = sharding_2x4("P()", {"y"});
  const auto& devices = std::get<NamedSharding>(over_y).mesh.devices();
  const auto place = unreduced_place(over_y, devices[6]);  // coordinates (1, 2)
  REQUIRE(place);
  CHECK(place->position == 2);
  CHECK(place->group_size == 4);
  CHECK_FALSE(place->first_replica);  // replicated over 'x', where it sits at 1
  CHECK(unreduced_place(over_y, devices[2])->first_replica);
  CHECK_FALSE(unreduced_place(sharding_2x4("P('x')", {}), devices[0]));
}

TEST_CASE("a replicated block splits along its first unsharded divisible dim, or stays whole on the first device") {
  const BufferPtr block = iota_f32({2, 4});
  const PartitionSpec unsharded;
  CHECK(values_of(*replicated_to_unreduced(block, unsharded, {1, 2, true})) ==
        std::vector<float>{0, 0, 0, 0, 4, 5, 6, 7});
  // Dim 0 is sharded in the spec: the split moves to dim 1.
  CHECK(values_of(*replicated_to_unreduced(block, parse_partition_spec("P('x')"), {1, 2, true})) ==
        std::vector<float>{0, 0, 2, 3, 0, 0, 6, 7});
  // Three devices divide neither dim: the first keeps everything.
  CHECK(values_of(*replicated_to_unreduced(block, unsharded, {0, 3, true})) == values_of(*block));
  CHECK(values_of(*replicated_to_unreduced(block, unsharded, {2, 3, true})) == std::vector<float>(8, 0.0F));
}

TEST_CASE("device_put into an unreduced sharding and gather back give the value again") {
  const BufferPtr host = iota_f32({4, 8});
  const Array array = Array::from_host(host, sharding_2x4("P('x')", {"y"}), JaxProfile());
  REQUIRE(array.shards().size() == 8);
  // Device (0, 1) keeps columns 2-3 of rows 0-1.
  CHECK(values_of(*array.shards()[1].data) == std::vector<float>{0, 0, 2, 3, 0, 0, 0, 0, 0, 0, 10, 11, 0, 0, 0, 0});
  CHECK(values_of(*array.gather()) == values_of(*host));
  Buffer target(DType::kFloat32, {2, 2});
  add_block(target, {DimSlice{}, DimSlice{}}, *iota_f32({2, 2}));
  add_block(target, {DimSlice{}, DimSlice{}}, *iota_f32({2, 2}));
  CHECK(values_of(target) == std::vector<float>{0, 2, 4, 6});
}

TEST_CASE("only partial sums can be placed: an unreduced max or min sharding is refused") {
  const Mesh mesh = make_mesh({2, 4}, {"x", "y"}, make_device_preset("cpu:8").devices, JaxProfile());
  PartitionSpec spec;
  spec.set_unreduced({"y"}, UnreducedKind::kMax);
  CHECK_THROWS_WITH(Array::from_host(iota_f32({4}), make_named_sharding(mesh, spec, JaxProfile()), JaxProfile()),
                    doctest::Contains("unreduced_kind is not sum"));
}
