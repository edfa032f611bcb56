// Shared fixtures for the window's model tests: the seeds' TPU v3-8 and a 2x4 mesh over it.
#pragma once

#include "device/presets.h"
#include "mesh/mesh.h"
#include "sharding/partition_spec.h"
#include "sharding/sharding.h"

namespace shardscope::ui::testing {

inline Mesh mesh_2x4() { return make_mesh({2, 4}, {"x", "y"}, make_device_preset("tpu-v3-8").devices, JaxProfile()); }

inline NamedSharding named(const Mesh& mesh, const char* spec) {
  return make_named_sharding(mesh, parse_partition_spec(spec), JaxProfile());
}

}  // namespace shardscope::ui::testing
