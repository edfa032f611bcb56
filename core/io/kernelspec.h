// Jupyter kernelspecs for `shardscope kernel install`: the kernel.json, its display name and where it goes.
#pragma once

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace shardscope {

struct KernelSpecRequest {
  std::string name = "shardscope";         // the kernel's name (Jupyter's kernel_name), [A-Za-z0-9._-]+
  std::optional<std::string> devices;      // a preset name, as --devices takes it
  std::optional<std::string> jax_version;  // as --jax-version takes it
};

// "shardscope (TPU v3-8, JAX 0.11)": the preset and version profile the kernel simulates (the defaults when
// the request names none). Throws ValueError for an unknown preset or version.
[[nodiscard]] std::string kernel_display_name(const KernelSpecRequest& request);

// kernel.json: argv starts the kernel through `binary` (an absolute path) with the request's settings;
// SIGINT interrupts, as for ipykernel. Throws ValueError for a malformed name.
[[nodiscard]] nlohmann::json kernel_spec_json(const KernelSpecRequest& request, const std::filesystem::path& binary);

// The kernelspec folder, as jupyter_core finds kernels: under `prefix`/share/jupyter/kernels when given,
// else the user's data folder ($JUPYTER_DATA_DIR, $XDG_DATA_HOME/jupyter or ~/.local/share/jupyter).
// `environment` reads a variable (std::getenv in the app, a map in tests).
using EnvironmentLookup = std::function<std::optional<std::string>(const std::string&)>;
[[nodiscard]] std::filesystem::path kernelspec_directory(const std::string& name,
                                                         const std::optional<std::filesystem::path>& prefix,
                                                         const EnvironmentLookup& environment);

}  // namespace shardscope
