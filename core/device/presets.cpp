// Device presets: CPU and GPU hosts and TPU slices numbered the way JAX numbers real ones.
#include "device/presets.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "base/error.h"
#include "base/python_format.h"

namespace shardscope {
namespace {

struct TpuGeneration {
  std::string_view name;         // as written in preset names: "v3", "v5e", ...
  std::string_view device_kind;  // JAX's device_kind string
  bool name_counts_tensorcores;  // "v4-8" counts TensorCores (2 per chip), "v5e-8" counts chips
  int devices_per_chip;          // JAX devices exposed per chip (2 on v2/v3, 1 in megacore mode)
  std::optional<int> num_cores;  // TensorCores behind one JAX device
  bool three_dimensional;        // torus in x, y and z
  int single_host_max_chips;     // slices up to this many chips are driven by one host
  int64_t max_chips;
};

// Pod sizes: v2 16x16, v3 32x32, v4 and v5p up to 8960 chips in 3D, v5e and v6e 16x16.
constexpr TpuGeneration kGenerations[] = {
    {"v2", "TPU v2", true, 2, 1, false, 4, 256},        {"v3", "TPU v3", true, 2, 1, false, 4, 1024},
    {"v4", "TPU v4", true, 1, 2, true, 4, 4096},        {"v5p", "TPU v5", true, 1, 2, true, 4, 8960},
    {"v5e", "TPU v5 lite", false, 1, 1, false, 8, 256}, {"v6e", "TPU v6 lite", false, 1, 1, false, 8, 256},
};

bool is_power_of_two(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// 2-D slices are as square as possible, wider in x; 3-D slices follow the shapes TPU v4/v5p
// slices are sold in.
std::array<int, 3> chip_bounds_for(int64_t chips, bool three_dimensional) {
  std::array<int, 3> bounds{1, 1, 1};
  const int doublings = static_cast<int>(std::lround(std::log2(static_cast<double>(chips))));
  if (!three_dimensional) {
    for (int i = 0; i < doublings; ++i) bounds[static_cast<std::size_t>(i % 2)] *= 2;
    return bounds;
  }
  if (chips <= 4) {
    for (int i = 0; i < doublings; ++i) bounds[static_cast<std::size_t>(i % 2)] *= 2;
    return bounds;
  }
  // From 2x2x1: z doubles, then z, y, x take turns (2x2x2, 2x2x4, 2x4x4, 4x4x4, 4x4x8, ...).
  bounds = {2, 2, 2};
  const std::size_t order[3] = {2, 1, 0};
  for (int i = 3; i < doublings; ++i) bounds[order[static_cast<std::size_t>(i - 3) % 3]] *= 2;
  return bounds;
}

Error unknown_preset(std::string_view text, const std::string& why) {
  return value_error("Unknown device preset '" + std::string(text) + "': " + why +
                     ". Use cpu:N, gpu:N or tpu-<generation>-<size> (generations v2, v3, v4, v5p, v5e, v6e; "
                     "e.g. tpu-v3-8, tpu-v5e-16, tpu-v4-4096)");
}

std::optional<int64_t> parse_count(std::string_view text) {
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value <= 0) return std::nullopt;
  return value;
}

DevicePreset host_preset(Platform platform, int64_t count, std::string_view text) {
  constexpr int64_t kMaxHostDevices = 65536;
  if (count > kMaxHostDevices) {
    throw unknown_preset(
        text, "at most " + std::to_string(kMaxHostDevices) + " devices are simulated, got " + std::to_string(count));
  }
  DevicePreset preset;
  const bool cpu = platform == Platform::kCpu;
  preset.name = std::string(cpu ? "cpu:" : "gpu:") + std::to_string(count);
  preset.description = cpu ? std::to_string(count) + " CPU devices on one host"
                           : std::to_string(count) + " NVIDIA H100 80GB HBM3 GPUs on one host";
  for (int64_t i = 0; i < count; ++i) {
    Device d;
    d.id = i;
    d.platform = platform;
    d.device_kind = cpu ? "cpu" : "NVIDIA H100 80GB HBM3";
    preset.devices.push_back(d);
  }
  return preset;
}

DevicePreset tpu_preset(const TpuGeneration& generation, int64_t size, std::string_view text) {
  const int64_t chips = generation.name_counts_tensorcores ? size / 2 : size;
  if (!is_power_of_two(chips) || (generation.name_counts_tensorcores && size % 2 != 0)) {
    throw unknown_preset(text, "TPU " + std::string(generation.name) + " slices have a power-of-two number of " +
                                   (generation.name_counts_tensorcores ? "TensorCores (2 per chip)" : "chips") +
                                   ", got " + std::to_string(size));
  }
  if (chips > generation.max_chips) {
    throw unknown_preset(text, "the largest TPU " + std::string(generation.name) + " slice has " +
                                   std::to_string(generation.max_chips) + " chips, got " + std::to_string(chips));
  }
  DevicePreset preset;
  preset.name = "tpu-" + std::string(generation.name) + "-" + std::to_string(size);
  preset.chip_bounds = chip_bounds_for(chips, generation.three_dimensional);
  const auto [cx, cy, cz] = preset.chip_bounds;
  // One host drives a whole small slice; larger slices give every host a 2x2 block of chips.
  const bool one_host = chips <= generation.single_host_max_chips;
  const int host_x = one_host ? cx : std::min(cx, 2);
  const int host_y = one_host ? cy : std::min(cy, 2);
  const int host_z = one_host ? cz : 1;
  const int hosts_x = cx / host_x;
  const int hosts_y = cy / host_y;
  const int hosts_z = cz / host_z;
  const int cores = generation.devices_per_chip;
  preset.process_count = hosts_x * hosts_y * hosts_z;
  for (int hz = 0; hz < hosts_z; ++hz) {
    for (int hy = 0; hy < hosts_y; ++hy) {
      for (int hx = 0; hx < hosts_x; ++hx) {
        const int process = hx + hosts_x * (hy + hosts_y * hz);
        for (int z = hz * host_z; z < (hz + 1) * host_z; ++z) {
          for (int y = hy * host_y; y < (hy + 1) * host_y; ++y) {
            for (int x = hx * host_x; x < (hx + 1) * host_x; ++x) {
              for (int core = 0; core < cores; ++core) {
                Device d;
                d.platform = Platform::kTpu;
                d.device_kind = std::string(generation.device_kind);
                d.id = core + static_cast<int64_t>(cores) * (x + int64_t{cx} * (y + int64_t{cy} * z));
                d.process_index = process;
                d.coords = {x, y, z};
                d.core_on_chip = core;
                d.num_cores = generation.num_cores;
                preset.devices.push_back(d);
              }
            }
          }
        }
      }
    }
  }
  preset.description = "TPU " + std::string(generation.name) + ", " + std::to_string(cx) + "x" + std::to_string(cy) +
                       (generation.three_dimensional ? "x" + std::to_string(cz) : "") + " chips, " +
                       std::to_string(preset.devices.size()) + " devices, " + std::to_string(preset.process_count) +
                       (preset.process_count == 1 ? " host" : " hosts");
  return preset;
}

}  // namespace

DevicePreset make_device_preset(std::string_view name) {
  for (const auto& [prefix, platform] :
       {std::pair{std::string_view("cpu"), Platform::kCpu}, std::pair{std::string_view("gpu"), Platform::kGpu}}) {
    if (name.starts_with(prefix) && name.size() > prefix.size() &&
        (name[prefix.size()] == ':' || name[prefix.size()] == '-')) {
      const auto count = parse_count(name.substr(prefix.size() + 1));
      if (!count) throw unknown_preset(name, "the device count must be a positive integer");
      return host_preset(platform, *count, name);
    }
  }
  if (name.starts_with("tpu-")) {
    const std::string_view rest = name.substr(4);
    const std::size_t dash = rest.find('-');
    if (dash == std::string_view::npos) throw unknown_preset(name, "missing the slice size");
    const std::string_view generation_name = rest.substr(0, dash);
    const auto size = parse_count(rest.substr(dash + 1));
    if (!size) throw unknown_preset(name, "the slice size must be a positive integer");
    for (const TpuGeneration& generation : kGenerations) {
      if (generation.name == generation_name) return tpu_preset(generation, *size, name);
    }
    throw unknown_preset(name, "unknown TPU generation '" + std::string(generation_name) + "'");
  }
  throw unknown_preset(name, "unrecognised form");
}

std::vector<std::string> example_preset_names() {
  return {"cpu:8",     "gpu:8",     "tpu-v2-8",  "tpu-v3-8",    "tpu-v4-8",    "tpu-v5e-8",  "tpu-v5e-16",
          "tpu-v5p-8", "tpu-v6e-8", "tpu-v3-32", "tpu-v4-4096", "tpu-v5e-256", "tpu-v6e-256"};
}

std::string devices_listing(const std::vector<Device>& devices) {
  std::vector<std::string> reprs;
  reprs.reserve(devices.size());
  for (const Device& d : devices) reprs.push_back(device_repr(d));
  return ipython_pretty_list(reprs);
}

}  // namespace shardscope
