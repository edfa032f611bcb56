// `shardscope kernel`: a Jupyter kernel running the simulated jax, and `kernel install` writing its kernelspec.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "base/error.h"
#include "cli/arguments.h"
#include "cli/commands.h"
#include "io/kernelspec.h"
#include "python/host.h"

namespace shardscope::cli {

namespace {

// The path a kernelspec must name: Jupyter starts kernels from any folder.
std::filesystem::path this_binary() {
  std::error_code error;
  std::filesystem::path path = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) throw runtime_error("Cannot find the shardscope binary's path: " + error.message());
  return path;
}

int install(const std::vector<std::string>& args, std::ostream& out) {
  const Arguments arguments(args, {"--name", "--devices", "--jax-version", "--prefix"}, {"--user"});
  if (arguments.flag("--user") && arguments.value("--prefix")) throw UsageError{"give --user or --prefix, not both"};
  (void)profile_from(arguments);  // validates --jax-version as the kernel will
  KernelSpecRequest request;
  if (const auto name = arguments.value("--name")) request.name = *name;
  request.devices = arguments.value("--devices");
  request.jax_version = arguments.value("--jax-version");
  const nlohmann::json spec = kernel_spec_json(request, this_binary());
  std::optional<std::filesystem::path> prefix;
  if (const auto value = arguments.value("--prefix")) prefix = std::filesystem::absolute(*value);
  const std::filesystem::path folder =
      kernelspec_directory(request.name, prefix, [](const std::string& variable) -> std::optional<std::string> {
        const char* value = std::getenv(variable.c_str());
        return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
      });
  std::filesystem::create_directories(folder);
  std::ofstream file(folder / "kernel.json");
  file << spec.dump(1) << "\n";
  if (!file) throw runtime_error("Could not write " + (folder / "kernel.json").string());
  out << "Installed kernelspec " << request.name << " (" << spec.at("display_name").get<std::string>() << ") in "
      << folder.string() << "\n";
  return 0;
}

int serve(const std::vector<std::string>& args) {
  // Jupyter's launchers write `-f FILE`, as for ipykernel.
  std::vector<std::string> options;
  for (const std::string& arg : args) options.push_back(arg == "-f" ? "--connection-file" : arg);
  const Arguments arguments(options, {"--connection-file", "--devices", "--jax-version"}, {});
  const auto connection_file = arguments.value("--connection-file");
  if (!connection_file) throw UsageError{"kernel needs -f CONNECTION_FILE (Jupyter passes it), or: kernel install"};
  apply_python_session_options(arguments);
  const python::InterpreterScope interpreter;
  return python::run_kernel(*connection_file);
}

}  // namespace

int run_kernel(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return guarded(err, [&] {
    if (!args.empty() && args.front() == "install") return install({args.begin() + 1, args.end()}, out);
    return serve(args);
  });
}

}  // namespace shardscope::cli
