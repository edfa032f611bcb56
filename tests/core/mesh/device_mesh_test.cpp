// TPU device-mesh orderings (to be completed by the TPU ordering work).
#include <doctest/doctest.h>

#include "device/presets.h"
#include "mesh/mesh.h"

using namespace shardscope;

TEST_CASE("TPU v3-8 ring order") {
  const auto mesh = create_device_mesh({8}, make_device_preset("tpu-v3-8").devices);
  std::vector<int64_t> ids;
  for (const Device& d : mesh) ids.push_back(d.id);
  CHECK(ids == std::vector<int64_t>{0, 1, 2, 3, 6, 7, 4, 5});
}
