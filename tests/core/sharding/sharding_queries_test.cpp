// The Sharding API's queries: device counts, addressability on multi-host presets, equivalence of shardings
// that place the same blocks on the same devices.
#include <doctest/doctest.h>

#include "device/presets.h"
#include "sharding/sharding.h"
#include "sharding/sharding_recipe.h"

using namespace shardscope;

namespace {
NamedSharding on_mesh(const std::string& spec, const std::string& preset = "cpu:8") {
  const JaxProfile profile;
  const Mesh mesh = make_mesh({4, 2}, {"x", "y"}, make_device_preset(preset).devices, profile,
                              std::vector<AxisType>{AxisType::kExplicit, AxisType::kExplicit});
  return make_named_sharding(mesh, parse_partition_spec(spec), profile);
}
}  // namespace

TEST_CASE("equivalent shardings place the same block on every device") {
  const JaxProfile profile;
  CHECK(is_equivalent_to(on_mesh("P('x')"), on_mesh("P('x', None)"), 2, profile));
  CHECK_FALSE(is_equivalent_to(on_mesh("P('x')"), on_mesh("P('y')"), 2, profile));
  CHECK_FALSE(is_equivalent_to(on_mesh("P('x', 'y')"), on_mesh("P('y', 'x')"), 2, profile));
  // Fully replicated over the same devices: equivalent whatever the spec says about rank.
  CHECK(is_equivalent_to(on_mesh("P()"), on_mesh("P(None, None)"), 2, profile));
  // One device: a SingleDeviceSharding and a one-device mesh agree.
  const Device d1 = make_device_preset("cpu:8").devices[1];
  const Mesh one = make_mesh({1}, {"a"}, {d1}, profile, std::vector<AxisType>{AxisType::kExplicit});
  CHECK(is_equivalent_to(make_single_device_sharding(d1, profile),
                         make_named_sharding(one, parse_partition_spec("P()"), profile), 1, profile));
  CHECK_FALSE(is_equivalent_to(make_single_device_sharding(d1, profile), on_mesh("P()"), 1, profile));
}

TEST_CASE("counts and addressable devices follow the device assignment, other hosts are not addressable") {
  const JaxProfile profile;
  const NamedSharding local = on_mesh("P('x')");
  CHECK(num_devices(local) == 8);
  CHECK(is_fully_addressable(local));
  CHECK(addressable_devices(local) == sharding_devices(local));
  CHECK(addressable_devices_indices_map(local, {8, 4}, profile).size() == 8);
  // A two-host TPU slice: process 0 addresses its own half only.
  const auto devices = make_device_preset("tpu-v5e-16").devices;
  REQUIRE(devices.size() == 16);
  const Mesh mesh = make_mesh({16}, {"d"}, devices, profile, std::vector<AxisType>{AxisType::kExplicit});
  const NamedSharding wide = make_named_sharding(mesh, parse_partition_spec("P('d')"), profile);
  CHECK(num_devices(wide) == 16);
  CHECK_FALSE(is_fully_addressable(wide));
  const auto mine = addressable_devices(wide);
  CHECK(mine.size() < 16);
  for (const Device& d : mine) CHECK(d.process_index == 0);
  CHECK(addressable_devices_indices_map(wide, {32}, profile).size() == mine.size());
}
