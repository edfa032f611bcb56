// TPU device-mesh orderings: per-generation handlers, the physical torus, axis assignment and their errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "base/error.h"
#include "base/python_format.h"
#include "mesh/mesh.h"
#include "mesh/tpu_axis_assignment.h"
#include "mesh/tpu_mesh.h"

using namespace shardscope;

namespace {

using Ids = std::vector<int64_t>;
using Matrix = AxisAssignmentMatrix;

// The fake jax.devices() JAX's own tests use: hosts own up to 2x2 chips at one z, devices are listed
// host by host (slice, z, y, x of the host), then y, x within the host, core innermost.
std::vector<Device> mock_tpu_devices(int x, int y, int z, const std::string& device_kind, bool one_device_per_chip,
                                     int num_slices = 1, bool reorder = false) {
  const int cores_per_chip = one_device_per_chip ? 1 : 2;
  const int nxd = std::min(x, 2);
  const int nyd = std::min(y, 2);
  const int nxp = x / nxd;
  const int nyp = y / nyd;
  const int nzp = z;
  REQUIRE(nxp * nxd == x);
  REQUIRE(nyp * nyd == y);
  std::vector<Device> devices;
  for (int slice = 0; slice < num_slices; ++slice) {
    for (int zp = 0; zp < nzp; ++zp) {
      for (int yp = 0; yp < nyp; ++yp) {
        for (int xp = 0; xp < nxp; ++xp) {
          for (int yd = 0; yd < nyd; ++yd) {
            for (int xd = 0; xd < nxd; ++xd) {
              for (int core = 0; core < cores_per_chip; ++core) {
                Device d;
                d.platform = Platform::kTpu;
                d.device_kind = device_kind;
                d.process_index = xp + nxp * (yp + nyp * (zp + nzp * slice));
                d.coords = {xd + nxd * xp, yd + nyd * yp, zp};
                d.core_on_chip = core;
                d.id = core + cores_per_chip * (xd + nxd * (xp + nxp * (yd + nyd * (yp + nyp * (zp + nzp * slice)))));
                d.slice_index = slice;
                devices.push_back(d);
              }
            }
          }
        }
      }
    }
  }
  if (reorder) std::reverse(devices.begin(), devices.end());
  return devices;
}

Ids ids_of(const std::vector<Device>& devices) {
  Ids ids;
  for (const Device& d : devices) ids.push_back(d.id);
  return ids;
}

Ids mesh_ids(const std::vector<int64_t>& mesh_shape, const std::vector<Device>& devices,
             bool contiguous_submeshes = false, bool allow_split = false) {
  return ids_of(create_device_mesh(mesh_shape, devices, contiguous_submeshes, allow_split));
}

std::vector<Device> sorted_by_id(std::vector<Device> devices) {
  std::sort(devices.begin(), devices.end(), [](const Device& a, const Device& b) { return a.id < b.id; });
  return devices;
}

// JAX's tests write non-split assignments as the physical axes each logical axis takes whole.
Matrix matrix_from_axes(const std::vector<int64_t>& physical_shape, const std::vector<std::vector<std::size_t>>& axes) {
  Matrix matrix(physical_shape.size(), std::vector<int64_t>(axes.size(), 1));
  for (std::size_t logical = 0; logical < axes.size(); ++logical) {
    for (const std::size_t physical : axes[logical]) matrix[physical][logical] = physical_shape[physical];
  }
  return matrix;
}

std::vector<int64_t> shape_of(int x, int y, int z) { return {x, y, z}; }

template <typename F>
std::pair<std::string, std::string> error_of(F&& call) {
  try {
    call();
  } catch (const Error& e) {
    return {e.python_type(), e.what()};
  }
  return {"", ""};
}

}  // namespace

TEST_CASE("mock TPU numbering matches the devices JAX reports") {
  const auto v3_8 = mock_tpu_devices(2, 2, 1, "TPU v3", false);
  CHECK(ids_of(v3_8) == Ids{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(v3_8[2].coords == std::array<int, 3>{1, 0, 0});
  CHECK(v3_8[3].core_on_chip == 1);
  CHECK(v3_8[4].coords == std::array<int, 3>{0, 1, 0});
  CHECK(v3_8[6].coords == std::array<int, 3>{1, 1, 0});

  const auto v5e_16 = mock_tpu_devices(4, 4, 1, "TPU v5 lite", true);
  CHECK(ids_of(v5e_16) == Ids{0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15});
  for (const Device& d : v5e_16) CHECK(d.id == d.coords[0] + 4 * d.coords[1]);
  CHECK(v5e_16[4].process_index == 1);
  CHECK(v5e_16[8].process_index == 2);
}

TEST_CASE("TPU v3-8 walks the tray as a ring") {
  const auto devices = mock_tpu_devices(2, 2, 1, "TPU v3", false);
  CHECK(mesh_ids({8}, devices) == Ids{0, 1, 2, 3, 6, 7, 4, 5});
  CHECK(mesh_ids({4, 2}, devices) == Ids{0, 1, 2, 3, 6, 7, 4, 5});
  CHECK(mesh_ids({2, 4}, devices) == Ids{0, 1, 2, 3, 6, 7, 4, 5});
  // The ring indexes the list as given, whatever its order.
  auto reversed = devices;
  std::reverse(reversed.begin(), reversed.end());
  CHECK(mesh_ids({8}, reversed) == Ids{7, 6, 5, 4, 1, 0, 3, 2});
}

TEST_CASE("TPU v3 with 16 devices rings only a last axis of 8 (make_mesh docstring)") {
  // The docstring's device list is in id order.
  const auto devices = sorted_by_id(mock_tpu_devices(4, 2, 1, "TPU v3", false));
  CHECK(mesh_ids({2, 8}, devices) == Ids{0, 1, 2, 3, 6, 7, 4, 5, 8, 9, 10, 11, 14, 15, 12, 13});
  CHECK(mesh_ids({4, 4}, devices) == Ids{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
  const Mesh mesh = make_mesh({2, 8}, {"x", "y"}, devices, JaxProfile());
  CHECK(ids_of(mesh.devices()) == Ids{0, 1, 2, 3, 6, 7, 4, 5, 8, 9, 10, 11, 14, 15, 12, 13});
}

TEST_CASE("TPU v3 4x4 chips: one ring per tray along the last axis") {
  const auto devices = mock_tpu_devices(4, 4, 1, "TPU v3", false);
  CHECK(mesh_ids({4, 8}, devices) == Ids{0,  1,  2,  3,  10, 11, 8,  9,  4,  5,  6,  7,  14, 15, 12, 13,
                                         16, 17, 18, 19, 26, 27, 24, 25, 20, 21, 22, 23, 30, 31, 28, 29});
  // No last axis of 8: the list is only reshaped.
  CHECK(mesh_ids({2, 16}, devices) == ids_of(devices));
}

TEST_CASE("TPU v3 with an empty mesh shape fails like Python indexing") {
  const auto devices = mock_tpu_devices(1, 1, 1, "TPU v2", false);
  std::vector<Device> one{devices[0]};
  CHECK(error_of([&] { (void)create_device_mesh({}, one); }) ==
        std::pair<std::string, std::string>{"IndexError", "tuple index out of range"});
}

TEST_CASE("TPU v5e handlers order the coordinate-sorted devices") {
  CHECK(mesh_ids({8}, mock_tpu_devices(4, 2, 1, "TPU v5 lite", true)) == Ids{0, 1, 2, 3, 7, 6, 5, 4});
  CHECK(mesh_ids({8}, mock_tpu_devices(2, 2, 2, "TPU v5 lite", true)) == Ids{0, 4, 2, 6, 1, 5, 3, 7});
  CHECK(mesh_ids({8}, mock_tpu_devices(2, 2, 2, "TPU v6 lite", true, 1, true)) == Ids{0, 4, 2, 6, 1, 5, 3, 7});
  CHECK(mesh_ids({2, 2}, mock_tpu_devices(2, 2, 1, "TPU v5e", true, 1, true)) == Ids{0, 1, 3, 2});
}

TEST_CASE("TPU v5e-16 as in the multi-process docs") {
  const auto devices = mock_tpu_devices(4, 4, 1, "TPU v5 lite", true);
  const std::vector<Device> second_half(devices.begin() + 8, devices.end());
  CHECK(ids_of(make_mesh({8}, {"x"}, second_half, JaxProfile()).devices()) == Ids{8, 9, 10, 11, 15, 14, 13, 12});
  CHECK(ids_of(make_mesh({8, 2}, {"x", "y"}, devices, JaxProfile()).devices()) ==
        Ids{0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15});
  // Without splitting, the size-2 axis fits no whole physical axis.
  CHECK(error_of([&] {
          (void)create_device_mesh({8, 2}, devices);
        }).second.find("logical_axis_index 1 of size 2 with remaining assignable mesh [4, 4, 1].") !=
        std::string::npos);
}

TEST_CASE("TPU v5e 4x4 uses its 16-device ring only when one axis spans every device") {
  const auto devices = mock_tpu_devices(4, 4, 1, "TPU v5 lite", true);
  const Ids ring{0, 1, 2, 3, 7, 6, 5, 9, 10, 11, 15, 14, 13, 12, 8, 4};
  CHECK(mesh_ids({16}, devices) == ring);
  CHECK(mesh_ids({16, 1}, devices) == ring);
  // (4, 4) goes through the torus: axis 1 takes physical x and z, axis 0 takes y.
  CHECK(mesh_ids({4, 4}, devices) == Ids{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
  // Derived from the splitting rules: 8 = x(4) * half of y, 2 = the other half of y.
  CHECK(mesh_ids({2, 8}, devices, false, true) == Ids{0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15});
}

TEST_CASE("TPU v5e bounds come from the largest coords tuple, not per axis") {
  // Per-axis bounds would be 2x2x1 and take the 4-device ring; the largest tuple (1,0,0) gives
  // 2x1x1, so the torus path runs and finds the duplicated chip.
  std::vector<Device> devices = mock_tpu_devices(2, 2, 1, "TPU v5 lite", true);
  devices[3] = devices[1];
  devices[2].coords = {0, 1, 0};
  devices[3].id = 7;
  CHECK(error_of([&] { (void)create_device_mesh({4}, devices); }).second.find("contains a \"hole\"") !=
        std::string::npos);
}

TEST_CASE("TPU v5p 2x2x2 and v4 lite rings") {
  const auto v5p = mock_tpu_devices(2, 2, 2, "TPU v5p", true, 1, true);
  CHECK(mesh_ids({8}, v5p) == Ids{0, 1, 3, 2, 6, 7, 5, 4});
  CHECK(mesh_ids({2, 4}, mock_tpu_devices(2, 2, 2, "TPU v5", true)) == Ids{0, 1, 3, 2, 6, 7, 5, 4});
  // v4 lite applies its ring to the list as given (no coordinate sort).
  CHECK(mesh_ids({4}, mock_tpu_devices(2, 2, 1, "TPU v4 lite", true)) == Ids{0, 1, 3, 2});
  CHECK(mesh_ids({4}, mock_tpu_devices(2, 2, 1, "TPU v4 lite", true, 1, true)) == Ids{3, 2, 0, 1});
  CHECK(mesh_ids({2, 2}, mock_tpu_devices(1, 2, 1, "TPU8i", false)) == Ids{0, 1, 3, 2});
}

TEST_CASE("TPU7x rings groups of 8 on small slices") {
  struct Case {
    std::vector<int64_t> logical;
    std::array<int, 3> physical;
    Ids expected;
  };
  const Ids ring16{0, 1, 2, 3, 6, 7, 4, 5, 8, 9, 10, 11, 14, 15, 12, 13};
  const Ids ring32{0,  1,  2,  3,  6,  7,  4,  5,  8,  9,  10, 11, 14, 15, 12, 13,
                   16, 17, 18, 19, 22, 23, 20, 21, 24, 25, 26, 27, 30, 31, 28, 29};
  const std::vector<Case> cases{
      {{1, 1, 2}, {1, 1, 1}, {0, 1}},
      {{2, 1, 4}, {2, 2, 1}, {0, 1, 2, 3, 6, 7, 4, 5}},
      {{4, 1, 2}, {2, 2, 1}, {0, 1, 2, 3, 6, 7, 4, 5}},
      {{4, 2, 2}, {2, 2, 2}, ring16},
      {{2, 8}, {2, 2, 2}, ring16},
      {{4, 4, 2}, {2, 2, 4}, ring32},
      {{4, 2, 4}, {2, 2, 4}, ring32},
      {{8, 4}, {2, 2, 4}, ring32},
      {{4, 8}, {2, 2, 4}, ring32},
  };
  for (const std::string kind : {"TPU7x", "TPU7"}) {
    for (const Case& c : cases) {
      CAPTURE(kind);
      CAPTURE(c.expected.size());
      CHECK(mesh_ids(c.logical, mock_tpu_devices(c.physical[0], c.physical[1], c.physical[2], kind, false)) ==
            c.expected);
    }
  }
}

TEST_CASE("TPU7x falls back to the torus beyond a 2x2 plane") {
  for (const std::string kind : {"TPU7x", "TPU7"}) {
    const auto devices = mock_tpu_devices(2, 4, 4, kind, false);
    for (const std::size_t start : {std::size_t{0}, std::size_t{32}}) {
      const std::vector<Device> half(devices.begin() + static_cast<std::ptrdiff_t>(start),
                                     devices.begin() + static_cast<std::ptrdiff_t>(start + 32));
      const std::vector<Device> mesh = create_device_mesh({1, 32}, half);
      REQUIRE(mesh.size() == 32);
      // One logical axis over the whole (2, 4, 2, 2) torus: x major, then y, z, core.
      auto key = [](const Device& d) { return std::make_tuple(d.coords[0], d.coords[1], d.coords[2], d.core_on_chip); };
      CHECK(
          std::is_sorted(mesh.begin(), mesh.end(), [&](const Device& a, const Device& b) { return key(a) < key(b); }));
      const Ids ids = ids_of(mesh);
      const Ids given = ids_of(half);
      CHECK(std::set<int64_t>(ids.begin(), ids.end()) == std::set<int64_t>(given.begin(), given.end()));
    }
  }
}

TEST_CASE("physical TPU mesh is x major and relative to the smallest coords") {
  for (const auto& [shape, reorder] : std::vector<std::pair<std::array<int, 3>, bool>>{
           {{1, 2, 1}, true}, {{4, 4, 4}, true}, {{4, 4, 4}, false}, {{8, 8, 16}, true}, {{8, 8, 16}, false}}) {
    const PhysicalTpuMesh mesh =
        physical_tpu_mesh(mock_tpu_devices(shape[0], shape[1], shape[2], "TPU v4", true, 1, reorder));
    REQUIRE(mesh.shape == shape_of(shape[0], shape[1], shape[2]));
    std::size_t flat = 0;
    for (int i = 0; i < shape[0]; ++i) {
      for (int j = 0; j < shape[1]; ++j) {
        for (int k = 0; k < shape[2]; ++k) CHECK(mesh.devices[flat++].coords == std::array<int, 3>{i, j, k});
      }
    }
  }
  // v2/v3 chips carry a core axis instead of z; a lone core is a 1x1x1 mesh.
  const PhysicalTpuMesh v2 = physical_tpu_mesh(mock_tpu_devices(1, 1, 1, "TPU v2", false));
  CHECK(v2.shape == std::vector<int64_t>{1, 1, 2});
  CHECK(v2.devices[1].core_on_chip == 1);
  CHECK(physical_tpu_mesh({v2.devices[1]}).shape == std::vector<int64_t>{1, 1, 1});
  // Kinds with an explicit core axis.
  CHECK(physical_tpu_mesh(mock_tpu_devices(2, 2, 2, "TPU7x", false)).shape == std::vector<int64_t>{2, 2, 2, 2});
  CHECK(physical_tpu_mesh(mock_tpu_devices(2, 2, 1, "TPU v5p", false)).shape == std::vector<int64_t>{2, 2, 1, 2});
  CHECK(physical_tpu_mesh(mock_tpu_devices(2, 2, 1, "TPU v5p", true)).shape == std::vector<int64_t>{2, 2, 1});
}

TEST_CASE("physical TPU mesh of a v5e 4x4 sub-slice not at the origin") {
  const PhysicalTpuMesh full = physical_tpu_mesh(mock_tpu_devices(4, 4, 1, "TPU v5e", true));
  REQUIRE(full.shape == std::vector<int64_t>{4, 4, 1});
  for (const std::size_t start_y : {std::size_t{0}, std::size_t{2}}) {
    std::vector<Device> sub;
    for (std::size_t x = 0; x < 4; ++x) {
      for (std::size_t dy = 0; dy < 2; ++dy) sub.push_back(full.devices[x * 4 + start_y + dy]);
    }
    const PhysicalTpuMesh mesh = physical_tpu_mesh(sub);
    CHECK(mesh.shape == std::vector<int64_t>{4, 2, 1});
    CHECK(mesh.devices == sub);
  }
}

TEST_CASE("physical TPU mesh errors") {
  const auto devices = mock_tpu_devices(2, 2, 1, "TPU v4", true);
  const std::vector<Device> three(devices.begin(), devices.begin() + 3);
  CHECK(error_of([&] { (void)physical_tpu_mesh(three); }) ==
        std::pair<std::string, std::string>{
            "AssertionError",
            "jax_devices=[TpuDevice(id=0, process_index=0, coords=(0,0,0), core_on_chip=0), TpuDevice(id=1, "
            "process_index=0, coords=(1,0,0), core_on_chip=0), TpuDevice(id=2, process_index=0, coords=(0,1,0), "
            "core_on_chip=0)] dims=(2, 2, 1) cores_per_chip=1"});

  const std::vector<Device> duplicated{devices[0], devices[3], devices[3], devices[0]};
  CHECK(error_of([&] { (void)physical_tpu_mesh(duplicated); }) ==
        std::pair<std::string, std::string>{
            "AssertionError",
            "Constructed mesh contains a \"hole\"; probable cause: coordinates of jax_devices are not a contiguous "
            "cuboid: [TpuDevice(id=0, process_index=0, coords=(0,0,0), core_on_chip=0), TpuDevice(id=3, "
            "process_index=0, coords=(1,1,0), core_on_chip=0), TpuDevice(id=3, process_index=0, coords=(1,1,0), "
            "core_on_chip=0), TpuDevice(id=0, process_index=0, coords=(0,0,0), core_on_chip=0)]"});

  // Seven chips of a 4x2 block, then an eighth that repeats one of them.
  const PhysicalTpuMesh full = physical_tpu_mesh(mock_tpu_devices(4, 4, 1, "TPU v5e", true));
  std::vector<Device> sub;
  for (std::size_t x = 0; x < 4; ++x) {
    for (std::size_t dy = 0; dy < 2; ++dy) {
      if (x != 0 || dy != 0) sub.push_back(full.devices[x * 4 + 2 + dy]);
    }
  }
  CHECK(error_of([&] { (void)physical_tpu_mesh(sub); }).first == "AssertionError");
  sub.push_back(full.devices[2 * 4 + 2]);
  CHECK(error_of([&] { (void)physical_tpu_mesh(sub); }).second.find("not a contiguous cuboid") != std::string::npos);

  CHECK(error_of([&] { (void)create_device_mesh({8}, mock_tpu_devices(2, 2, 1, "TPU v4", false)); }) ==
        std::pair<std::string, std::string>{
            "AssertionError",
            "Creating meshes for TPU >v3 requires one device per chip (\"megacore\" mode). Got device id 1 for a "
            "device of kind TPU v4: TPU_1(process=0,(0,0,0,1))."});
}

TEST_CASE("logical axes take whole physical axes, most intensive first") {
  struct Case {
    std::vector<int64_t> physical;
    std::vector<int64_t> logical;
    std::vector<std::vector<std::size_t>> axes;
  };
  const std::vector<Case> cases{
      {{2, 2, 1}, {1, 1, 4}, {{}, {}, {0, 1, 2}}},  {{2, 2, 4}, {1, 4, 4}, {{}, {2}, {0, 1}}},
      {{4, 4, 4}, {1, 16, 4}, {{}, {1, 2}, {0}}},   {{4, 4, 8}, {1, 16, 8}, {{}, {0, 1}, {2}}},
      {{4, 4, 8}, {1, 8, 16}, {{}, {2}, {0, 1}}},   {{4, 4, 8}, {16, 8, 1}, {{0, 1}, {2}, {}}},
      {{4, 8, 8}, {1, 32, 8}, {{}, {0, 2}, {1}}},   {{8, 8, 8}, {1, 64, 8}, {{}, {1, 2}, {0}}},
      {{8, 8, 16}, {1, 64, 16}, {{}, {0, 1}, {2}}}, {{8, 8, 1}, {8, 8}, {{1}, {0, 2}}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.logical);
    const Matrix expected = matrix_from_axes(c.physical, c.axes);
    CHECK(assign_logical_axes_to_torus(c.physical, c.logical, false).matrix == expected);
    // Splitting reproduces every assignment that needs no split.
    CHECK(assign_logical_axes_to_torus(c.physical, c.logical, true).matrix == expected);
    CHECK(assign_logical_axes_splitting_physical(c.physical, c.logical).matrix == expected);
  }
  // The v3 8x8 physical mesh (one device per chip) via the real layout.
  const auto v3 = mock_tpu_devices(8, 8, 1, "TPU v3", true);
  CHECK(physical_tpu_mesh(v3).shape == std::vector<int64_t>{8, 8, 1});
}

TEST_CASE("whole-axis assignment transposes the physical mesh") {
  // 2x2x1 with (2, 2): axis 1 takes physical (0, 2), axis 0 takes physical 1, so position (i, j)
  // is physical (j, i, 0).
  const TorusAssignment a = assign_logical_axes_to_torus({2, 2, 1}, {2, 2}, false);
  CHECK(a.matrix == Matrix{{1, 2}, {2, 1}, {1, 1}});
  CHECK(a.physical_index == Ids{0, 2, 1, 3});
  // 4x4x4 with (16, 4): axis 1 takes x, axis 0 takes (y, z).
  const TorusAssignment b = assign_logical_axes_to_torus({4, 4, 4}, {16, 4}, false);
  for (int64_t row = 0; row < 16; ++row) {
    for (int64_t col = 0; col < 4; ++col)
      CHECK(b.physical_index[static_cast<std::size_t>(row * 4 + col)] == col * 16 + row);
  }
}

TEST_CASE("an unassignable logical axis raises JAX's NotImplementedError") {
  CHECK(error_of([] {
          (void)assign_logical_axes_to_torus({4, 4, 4}, {8, 8}, false);
        }) ==
        std::pair<std::string, std::string>{
            "NotImplementedError",
            "Failed to find assignment for logical_axis_index 1 of size 8 with remaining assignable mesh [4, 4, 4]. "
            "The size of each axis in your logical mesh must be equal to the product of some subset of the physical "
            "mesh axis sizes. E.g. logical mesh (4, 16) is compatible with physical mesh 4x4x4 since 4=4 and 16=4x4. "
            "If you want to split physical axes, set  allow_split_physical_axes to True."});
  CHECK(error_of([] {
          (void)assign_logical_axes_to_torus({4, 4, 4}, {2, 32}, false);
        }).second.find("logical_axis_index 1 of size 32 with remaining assignable mesh [4, 4, 4].") !=
        std::string::npos);
  CHECK(error_of([] {
          (void)assign_logical_axes_to_torus({4, 4, 4}, {32, 2}, false);
        }).second.find("logical_axis_index 1 of size 2 with remaining assignable mesh [4, 4, 4].") !=
        std::string::npos);
  CHECK(error_of([] {
          (void)assign_logical_axes_to_torus({4, 4, 4}, {2, 2, 16}, false);
        }).second.find("logical_axis_index 1 of size 2 with remaining assignable mesh [0, 0, 4].") !=
        std::string::npos);
}

TEST_CASE("splitting physical axes: JAX's expected assignment matrices") {
  struct Case {
    std::vector<int64_t> physical;
    std::vector<int64_t> logical;
    Matrix expected;
  };
  const std::vector<Case> cases{
      {{4, 4, 4}, {2, 1, 32}, {{1, 1, 4}, {1, 1, 4}, {2, 1, 2}}},
      {{4, 4, 4}, {8, 8, 1}, {{1, 4, 1}, {2, 2, 1}, {4, 1, 1}}},
      {{4, 4, 8}, {2, 2, 8, 4}, {{1, 1, 1, 4}, {2, 2, 1, 1}, {1, 1, 8, 1}}},
      {{4, 4, 8}, {2, 4, 1, 16}, {{1, 1, 1, 4}, {1, 1, 1, 4}, {2, 4, 1, 1}}},
      {{4, 8, 8}, {1, 128, 2}, {{1, 2, 2}, {1, 8, 1}, {1, 8, 1}}},
      {{8, 8, 1}, {2, 1, 32, 1}, {{1, 1, 8, 1}, {2, 1, 4, 1}, {1, 1, 1, 1}}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.logical);
    const TorusAssignment a = assign_logical_axes_to_torus(c.physical, c.logical, true);
    CHECK(a.matrix == c.expected);
    CHECK(a.physical_index.size() == static_cast<std::size_t>(product(c.physical)));
  }
}

TEST_CASE("splitting prefers the larger size on already-used axes, as JAX's code does") {
  // Physical (4, 6), logical (4, 2, 3): the 3 lands on axis 1, leaving 2 there. For the 2, JAX's
  // comment would pick the untouched axis 0 (which also sorts first), but its `>` picks axis 1.
  CHECK(assign_logical_axes_splitting_physical({4, 6}, {4, 2, 3}).matrix == Matrix{{4, 1, 1}, {1, 2, 3}});
  CHECK(prefer_first_logical_axis_assignment({1, 2}, {2, 1}, {4, 6}, {1, 3}));
  CHECK_FALSE(prefer_first_logical_axis_assignment({2, 1}, {1, 2}, {4, 6}, {1, 3}));
}

TEST_CASE("splitting preference rules from JAX's tests") {
  CHECK(prefer_first_logical_axis_assignment({1, 2, 1}, {1, 1, 2}, {2, 2, 4}, {1, 1, 1}));
  CHECK_FALSE(prefer_first_logical_axis_assignment({1, 1, 2}, {1, 2, 1}, {2, 2, 4}, {1, 1, 1}));
  CHECK(prefer_first_logical_axis_assignment({4, 4, 1}, {1, 1, 16}, {4, 4, 16}, {1, 1, 1}));
  CHECK_FALSE(prefer_first_logical_axis_assignment({1, 1, 16}, {4, 4, 1}, {4, 4, 16}, {1, 1, 1}));
  CHECK(prefer_first_logical_axis_assignment({2, 1}, {1, 2}, {2, 4}, {1, 2}));
  // Lexicographic order settles full ties.
  CHECK(prefer_first_logical_axis_assignment({2, 1, 1}, {1, 2, 1}, {4, 4, 4}, {1, 1, 1}));
  CHECK_FALSE(prefer_first_logical_axis_assignment({2, 1, 1}, {2, 1, 1}, {4, 4, 4}, {1, 1, 1}));
}

TEST_CASE("prime factors and feasible assignments") {
  CHECK(prime_factors(1).empty());
  CHECK(prime_factors(2) == Ids{2});
  CHECK(prime_factors(8) == Ids{2, 2, 2});
  CHECK(prime_factors(12) == Ids{2, 2, 3});
  CHECK(prime_factors(121) == Ids{11, 11});
  CHECK(prime_factors(43) == Ids{43});
  CHECK(prime_factors(26) == Ids{2, 13});
  CHECK(error_of([] { (void)prime_factors(0); }).first == "AssertionError");

  using Set = std::set<std::vector<int64_t>>;
  auto feasible = [](const std::vector<int64_t>& physical, const std::vector<int64_t>& assigned, int64_t size) {
    const auto candidates = feasible_logical_axis_assignments(physical, assigned, size);
    Set unique(candidates.begin(), candidates.end());
    CHECK(unique.size() == candidates.size());
    return unique;
  };
  CHECK(feasible({2, 2, 1}, {1, 2, 1}, 4).empty());
  CHECK(feasible({12, 4, 4}, {2, 2, 1}, 6) == Set{{6, 1, 1}, {3, 2, 1}, {3, 1, 2}});
  CHECK(feasible({4, 4, 8}, {2, 2, 2}, 4) == Set{{2, 2, 1}, {2, 1, 2}, {1, 2, 2}, {1, 1, 4}});
  CHECK(feasible({4, 4}, {1, 1}, 1) == Set{{1, 1}});
}

TEST_CASE("split logical mesh groups each physical axis's factors by logical axis") {
  // 4x4x4 into (2, 1, 32): y splits as (2 for axis 0, 2 for axis 2), axis 0 major.
  const std::vector<int64_t> physical{4, 4, 4};
  const Ids order = logical_mesh_from_assignment(physical, {2, 1, 32}, {{1, 1, 4}, {2, 1, 2}, {1, 1, 4}});
  REQUIRE(order.size() == 64);
  for (int64_t a = 0; a < 2; ++a) {
    for (int64_t x = 0; x < 4; ++x) {
      for (int64_t b = 0; b < 2; ++b) {
        for (int64_t z = 0; z < 4; ++z) {
          CHECK(order[static_cast<std::size_t>(a * 32 + x * 8 + b * 4 + z)] == x * 16 + (2 * a + b) * 4 + z);
        }
      }
    }
  }
  // Rows need not match the physical axes, only the total size (numpy reshape semantics).
  const Ids irregular = logical_mesh_from_assignment({12, 4, 8}, {2, 8, 24}, {{2, 2, 3}, {1, 2, 4}, {1, 2, 2}});
  REQUIRE(irregular.size() == 384);
  // Factor axes (row-major source): p0 = (a0:2, a1:2, a2:3), p1 = (b1:2, b2:4), p2 = (c1:2, c2:2).
  for (int64_t a0 = 0; a0 < 2; ++a0) {
    for (int64_t a1 = 0; a1 < 2; ++a1) {
      for (int64_t b1 = 0; b1 < 2; ++b1) {
        for (int64_t c1 = 0; c1 < 2; ++c1) {
          for (int64_t a2 = 0; a2 < 3; ++a2) {
            for (int64_t b2 = 0; b2 < 4; ++b2) {
              for (int64_t c2 = 0; c2 < 2; ++c2) {
                const int64_t source = ((((((a0 * 2 + a1) * 3 + a2) * 2 + b1) * 4 + b2) * 2 + c1) * 2) + c2;
                const int64_t l1 = (a1 * 2 + b1) * 2 + c1;
                const int64_t l2 = (a2 * 4 + b2) * 2 + c2;
                CHECK(irregular[static_cast<std::size_t>(a0 * 192 + l1 * 24 + l2)] == source);
              }
            }
          }
        }
      }
    }
  }
  CHECK(error_of([] {
          (void)assign_logical_axes_splitting_physical({4, 4}, {2, 4});
        }) ==
        std::pair<std::string, std::string>{"ValueError",
                                            "The number of devices in physical mesh (4, 4) does not match the number "
                                            "of devices in logical mesh (2, 4)."});
}

TEST_CASE("transposed_indices follows numpy's transpose") {
  CHECK(transposed_indices({2, 3}, {1, 0}) == Ids{0, 3, 1, 4, 2, 5});
  CHECK(transposed_indices({2, 1, 2}, {2, 0, 1}) == Ids{0, 2, 1, 3});
}

namespace {

// Every process's devices must fill one box of the logical mesh (what Mesh._local_mesh requires).
bool processes_are_contiguous(const std::vector<int64_t>& mesh_shape, const std::vector<Device>& mesh) {
  std::map<int, std::vector<std::vector<int64_t>>> positions;
  for (std::size_t flat = 0; flat < mesh.size(); ++flat) {
    std::vector<int64_t> position(mesh_shape.size());
    std::size_t rest = flat;
    for (std::size_t axis = mesh_shape.size(); axis-- > 0;) {
      const auto size = static_cast<std::size_t>(mesh_shape[axis]);
      position[axis] = static_cast<int64_t>(rest % size);
      rest /= size;
    }
    positions[mesh[flat].process_index].push_back(position);
  }
  for (const auto& [process, points] : positions) {
    int64_t box = 1;
    for (std::size_t axis = 0; axis < mesh_shape.size(); ++axis) {
      int64_t lo = points.front()[axis];
      int64_t hi = lo;
      for (const auto& p : points) {
        lo = std::min(lo, p[axis]);
        hi = std::max(hi, p[axis]);
      }
      box *= hi - lo + 1;
    }
    if (box != static_cast<int64_t>(points.size())) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("contiguous submeshes via the transpose trick") {
  const std::vector<std::pair<std::array<int, 3>, std::vector<std::vector<int64_t>>>> table{
      {{2, 2, 1}, {{2, 2}}},           {{2, 2, 4}, {{4, 4}}},  {{4, 4, 4}, {{16, 4}}},
      {{4, 8, 8}, {{64, 4}, {4, 64}}}, {{8, 8, 8}, {{64, 8}}}, {{8, 16, 16}, {{256, 8}, {8, 256}}},
  };
  for (const auto& [topology, shapes] : table) {
    const auto devices = mock_tpu_devices(topology[0], topology[1], topology[2], "TPU v4", true);
    for (const auto& shape : shapes) {
      CAPTURE(shape);
      CHECK(processes_are_contiguous(shape, create_device_mesh(shape, devices, true)));
      std::vector<int64_t> padded{1, 1};
      padded.insert(padded.end(), shape.begin(), shape.end());
      padded.insert(padded.end(), {1, 1});
      CHECK(processes_are_contiguous(padded, create_device_mesh(padded, devices, true)));
    }
  }
  // Without the trick, 4x4x4 as (16, 4) splits every process's rows apart.
  const auto cube = mock_tpu_devices(4, 4, 4, "TPU v4", true);
  CHECK_FALSE(processes_are_contiguous({16, 4}, create_device_mesh({16, 4}, cube)));
}

TEST_CASE("contiguous submesh errors") {
  CHECK(error_of([] {
          (void)create_device_mesh({1, 16, 8}, mock_tpu_devices(4, 4, 8, "TPU v4", true), true);
        }) == std::pair<std::string, std::string>{
                  "ValueError",
                  "create_device_mesh cannot create contiguous submeshes for physical mesh topology (4, 4, 8)"});
  CHECK(error_of([] {
          (void)create_device_mesh({1, 128, 2}, mock_tpu_devices(4, 8, 8, "TPU v4", true), true);
        }) == std::pair<std::string, std::string>{
                  "ValueError",
                  "create_device_mesh cannot create contiguous submeshes for mesh_shape (1, 128, 2) and physical mesh "
                  "topology (4, 8, 8). Available mesh_shapes: [(64, 4), (4, 64)]"});
  // Handlers run first and ignore the flag.
  CHECK(mesh_ids({8}, mock_tpu_devices(4, 2, 1, "TPU v5 lite", true), true) == Ids{0, 1, 2, 3, 7, 6, 5, 4});
}

TEST_CASE("tpu_device_mesh is the TPU branch of create_device_mesh") {
  const auto devices = mock_tpu_devices(4, 4, 4, "TPU v4", true);
  CHECK(ids_of(tpu_device_mesh({16, 4}, devices, false, false)) == mesh_ids({16, 4}, devices));
  CHECK(ids_of(tpu_device_mesh({1, 64}, devices, false, false)) == ids_of(physical_tpu_mesh(devices).devices));
}
