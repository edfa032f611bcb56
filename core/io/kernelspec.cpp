// Kernelspec contents and location, following jupyter_client's kernel.json and jupyter_core's paths.
#include "io/kernelspec.h"

#include <algorithm>
#include <cctype>

#include "base/error.h"
#include "compat/jax_version.h"
#include "device/presets.h"

namespace shardscope {

namespace {

void check_name(const std::string& name) {
  const bool valid = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '-';
  });
  // jupyter_client's rule: a kernel name is a folder name of letters, digits, '.', '_' and '-'.
  if (!valid) throw value_error("Invalid kernel name '" + name + "': use letters, digits, '.', '_' and '-'");
}

// "tpu-v3-8" -> "TPU v3-8", "cpu:8" -> "CPU x8", "gpu:4" -> "GPU x4".
std::string preset_label(const std::string& preset) {
  for (const char* platform : {"cpu", "gpu"}) {
    const std::string prefix = std::string(platform) + ":";
    if (preset.starts_with(prefix)) {
      std::string upper = platform;
      for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      return upper + " x" + preset.substr(prefix.size());
    }
  }
  if (preset.starts_with("tpu-")) return "TPU " + preset.substr(4);
  return preset;
}

std::string version_label(const std::optional<std::string>& text) {
  if (!text) return std::to_string(kNewestJax.major) + "." + std::to_string(kNewestJax.minor);
  JaxVersion::parse(*text);  // validates
  return *text;
}

}  // namespace

std::string kernel_display_name(const KernelSpecRequest& request) {
  const DevicePreset preset = make_device_preset(request.devices.value_or("tpu-v3-8"));
  return "shardscope (" + preset_label(preset.name) + ", JAX " + version_label(request.jax_version) + ")";
}

nlohmann::json kernel_spec_json(const KernelSpecRequest& request, const std::filesystem::path& binary) {
  check_name(request.name);
  nlohmann::json argv = {binary.string(), "kernel", "-f", "{connection_file}"};
  if (request.devices) argv.insert(argv.end(), {"--devices", make_device_preset(*request.devices).name});
  if (request.jax_version) argv.insert(argv.end(), {"--jax-version", *request.jax_version});
  return {{"argv", argv},
          {"display_name", kernel_display_name(request)},
          {"language", "python"},
          {"interrupt_mode", "signal"},
          {"metadata", {{"debugger", false}}}};
}

std::filesystem::path kernelspec_directory(const std::string& name, const std::optional<std::filesystem::path>& prefix,
                                           const EnvironmentLookup& environment) {
  check_name(name);
  if (prefix) return *prefix / "share" / "jupyter" / "kernels" / name;
  const auto set = [&](const char* variable) {
    std::optional<std::string> value = environment(variable);
    return value && !value->empty() ? value : std::nullopt;
  };
  std::filesystem::path data;
  if (const auto jupyter = set("JUPYTER_DATA_DIR")) {
    data = *jupyter;
  } else if (const auto xdg = set("XDG_DATA_HOME")) {
    data = std::filesystem::path(*xdg) / "jupyter";
  } else if (const auto home = set("HOME")) {
    data = std::filesystem::path(*home) / ".local" / "share" / "jupyter";
  } else {
    throw value_error("Cannot find the Jupyter data folder: set HOME or JUPYTER_DATA_DIR, or pass --prefix");
  }
  return data / "kernels" / name;
}

}  // namespace shardscope
