// Mesh reprs per version, construction errors, make_mesh on CPU/GPU.
#include "mesh/mesh.h"

#include <doctest/doctest.h>

#include "base/error.h"
#include "device/presets.h"

using namespace shardscope;

TEST_CASE("str and repr of a mesh follow the profile") {
  const auto devices = make_device_preset("cpu:8").devices;
  const Mesh mesh = make_mesh({2, 4}, {"x", "y"}, devices, JaxProfile());
  CHECK(mesh.str(JaxProfile()) == "Mesh('x': 2, 'y': 4, axis_types=(Explicit, Explicit))");
  CHECK(mesh.repr(JaxProfile()) == "Mesh(axis_sizes=(2, 4), axis_names=('x', 'y'), axis_types=(Explicit, Explicit))");
  const JaxProfile seed002(JaxVersion{0, 6, 0});
  const Mesh auto_mesh = make_mesh({2, 4}, {"x", "y"}, devices, seed002);
  CHECK(auto_mesh.str(seed002) == "Mesh('x': 2, 'y': 4, axis_types=(Auto, Auto))");
  CHECK(auto_mesh.str(JaxProfile(JaxVersion{0, 4, 30})) == "Mesh('x': 2, 'y': 4)");
  CHECK(auto_mesh.repr(JaxProfile(JaxVersion{0, 4, 30})) ==
        "Mesh(device_ids=array([[0, 1, 2, 3],\n       [4, 5, 6, 7]]), axis_names=('x', 'y'))");
  CHECK(Mesh({devices[0]}, {1}, {"a"}, {AxisType::kExplicit}).str(JaxProfile()) ==
        "Mesh('a': 1, axis_types=(Explicit,))");
}

TEST_CASE("make_mesh takes the first devices and rejects too many") {
  const auto devices = make_device_preset("cpu:12").devices;
  const Mesh mesh = make_mesh({2, 4}, {"x", "y"}, devices, JaxProfile());
  CHECK(mesh.devices().back().id == 7);
  CHECK(mesh.position_of(6) == std::vector<int64_t>{1, 2});
  CHECK_THROWS_WITH_AS((void)make_mesh({4, 4}, {"x", "y"}, make_device_preset("cpu:8").devices, JaxProfile()),
                       "Number of devices 8 must be >= the product of mesh_shape (4, 4)", Error);
  CHECK_THROWS_WITH_AS((void)create_device_mesh({4}, devices),
                       "Number of devices 12 must equal the product of mesh_shape (4,)", Error);
}

TEST_CASE("mesh construction checks names against the device array") {
  const auto devices = make_device_preset("cpu:4").devices;
  CHECK_THROWS_WITH_AS((void)Mesh(devices, {2, 2}, {"x"}, {AxisType::kAuto}),
                       doctest::Contains("devices.ndim == 2 and len(axis_names) == 1"), Error);
  CHECK_THROWS_WITH_AS((void)Mesh(devices, {4}, {"x"}, {AxisType::kAuto, AxisType::kAuto}),
                       doctest::Contains("Number of axis names should match the number of axis_types"), Error);
  CHECK_THROWS_AS((void)Mesh(devices, {2, 2}, {"x", "x"}, {AxisType::kAuto, AxisType::kAuto}), Error);
}

TEST_CASE("GPU meshes are sorted by id") {
  auto devices = make_device_preset("gpu:4").devices;
  std::swap(devices[0], devices[3]);
  const auto ordered = create_device_mesh({2, 2}, devices);
  CHECK(ordered[0].id == 0);
  CHECK(ordered[3].id == 3);
}

TEST_CASE("abstract meshes print their device description when derived from a mesh") {
  const Mesh mesh = make_mesh({2, 4}, {"X", "Y"}, make_device_preset("cpu:8").devices, JaxProfile());
  CHECK(AbstractMesh::from_mesh(mesh).repr() ==
        "AbstractMesh('X': 2, 'Y': 4, axis_types=(Explicit, Explicit), device_kind=cpu, num_cores=None, platform=cpu)");
  CHECK(AbstractMesh{{2}, {"x"}, {AxisType::kExplicit}, {}, {}, {}}.repr() ==
        "AbstractMesh('x': 2, axis_types=(Explicit,))");
}
