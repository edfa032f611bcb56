// Device presets: JAX's numbering, attributes and reprs for each generation.
#include "device/presets.h"

#include <doctest/doctest.h>

#include <set>

#include "base/error.h"

using namespace shardscope;

namespace {
std::vector<int64_t> ids_of(const std::vector<Device>& devices) {
  std::vector<int64_t> ids;
  for (const Device& d : devices) ids.push_back(d.id);
  return ids;
}
}  // namespace

TEST_CASE("tpu-v3-8 lists the seeds' devices") {
  const DevicePreset preset = make_device_preset("tpu-v3-8");
  const std::string expected =
      "[TpuDevice(id=0, process_index=0, coords=(0,0,0), core_on_chip=0),\n"
      " TpuDevice(id=1, process_index=0, coords=(0,0,0), core_on_chip=1),\n"
      " TpuDevice(id=2, process_index=0, coords=(1,0,0), core_on_chip=0),\n"
      " TpuDevice(id=3, process_index=0, coords=(1,0,0), core_on_chip=1),\n"
      " TpuDevice(id=4, process_index=0, coords=(0,1,0), core_on_chip=0),\n"
      " TpuDevice(id=5, process_index=0, coords=(0,1,0), core_on_chip=1),\n"
      " TpuDevice(id=6, process_index=0, coords=(1,1,0), core_on_chip=0),\n"
      " TpuDevice(id=7, process_index=0, coords=(1,1,0), core_on_chip=1)]";
  CHECK(devices_listing(preset.devices) == expected);
  CHECK(preset.devices[3].device_kind == "TPU v3");
  CHECK(make_device_preset("tpu-v2-8").devices[0].device_kind == "TPU v2");
}

TEST_CASE("cpu:12 lists like seed 002") {
  const DevicePreset preset = make_device_preset("cpu:12");
  REQUIRE(preset.devices.size() == 12);
  const std::string listing = devices_listing(preset.devices);
  CHECK(listing.starts_with("[CpuDevice(id=0),\n CpuDevice(id=1),\n"));
  CHECK(listing.ends_with(" CpuDevice(id=11)]"));
  CHECK(devices_listing(make_device_preset("cpu:2").devices) == "[CpuDevice(id=0), CpuDevice(id=1)]");
}

TEST_CASE("tpu-v5e-16 is four hosts listed process by process") {
  const DevicePreset preset = make_device_preset("tpu-v5e-16");
  CHECK(preset.process_count == 4);
  CHECK(ids_of(preset.devices) == std::vector<int64_t>{0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15});
  CHECK(preset.devices[4].process_index == 1);
  CHECK(preset.devices[4].coords == std::array<int, 3>{2, 0, 0});
  CHECK(preset.devices[0].device_kind == "TPU v5 lite");
}

TEST_CASE("megacore generations expose one device per chip") {
  const DevicePreset v4 = make_device_preset("tpu-v4-8");
  CHECK(v4.devices.size() == 4);
  CHECK(v4.chip_bounds == std::array<int, 3>{2, 2, 1});
  const DevicePreset v4_pod = make_device_preset("tpu-v4-4096");
  CHECK(v4_pod.devices.size() == 2048);
  CHECK(v4_pod.chip_bounds == std::array<int, 3>{8, 16, 16});
  CHECK(v4_pod.process_count == 512);
  std::set<int64_t> ids;
  std::set<int> processes;
  for (const Device& d : v4_pod.devices) {
    ids.insert(d.id);
    processes.insert(d.process_index);
  }
  CHECK(ids.size() == 2048);
  CHECK(*ids.rbegin() == 2047);
  CHECK(processes.size() == 512);
  CHECK(make_device_preset("tpu-v4-32").chip_bounds == std::array<int, 3>{2, 2, 4});
  CHECK(make_device_preset("tpu-v5p-8").devices[0].device_kind == "TPU v5");
  CHECK(make_device_preset("tpu-v6e-8").devices.size() == 8);
  CHECK(make_device_preset("tpu-v6e-8").process_count == 1);
  CHECK(make_device_preset("tpu-v5e-256").process_count == 64);
}

TEST_CASE("gpu presets are CUDA devices") {
  const DevicePreset preset = make_device_preset("gpu:8");
  CHECK(device_repr(preset.devices[7]) == "CudaDevice(id=7)");
  CHECK(preset.devices[0].platform == Platform::kGpu);
}

TEST_CASE("device str follows the version profile") {
  const DevicePreset cpu = make_device_preset("cpu:4");
  CHECK(device_str(cpu.devices[3], JaxProfile()) == "cpu:3");
  CHECK(device_str(cpu.devices[3], JaxProfile(JaxVersion{0, 6, 0})) == "TFRT_CPU_3");
  const DevicePreset v5e = make_device_preset("tpu-v5e-16");
  CHECK(device_str(v5e.devices[12], JaxProfile()) == "TPU_10(process=3,(2,2,0,0))");
}

TEST_CASE("bad preset names say what was received") {
  CHECK_THROWS_WITH_AS((void)make_device_preset("tpu-v9-8"), doctest::Contains("unknown TPU generation 'v9'"), Error);
  CHECK_THROWS_WITH_AS((void)make_device_preset("tpu-v3-12"), doctest::Contains("'tpu-v3-12'"), Error);
  CHECK_THROWS_WITH_AS((void)make_device_preset("cpu:zero"), doctest::Contains("positive integer"), Error);
  CHECK_THROWS_WITH_AS((void)make_device_preset("abacus"), doctest::Contains("'abacus'"), Error);
  CHECK_THROWS_AS((void)make_device_preset("tpu-v5e-512"), Error);
}
