// Kernelspecs: kernel.json's argv and display name, and the folders jupyter_core searches.
#include "io/kernelspec.h"

#include <doctest/doctest.h>

#include <map>

#include "base/error.h"

using namespace shardscope;

namespace {

EnvironmentLookup environment(std::map<std::string, std::string> values) {
  return [values](const std::string& name) -> std::optional<std::string> {
    const auto it = values.find(name);
    return it == values.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

}  // namespace

TEST_CASE("the display name says which devices and JAX version the kernel simulates") {
  CHECK(kernel_display_name({}) == "shardscope (TPU v3-8, JAX 0.11)");
  CHECK(kernel_display_name({.name = "k", .devices = "cpu:8", .jax_version = "0.4.31"}) ==
        "shardscope (CPU x8, JAX 0.4.31)");
  CHECK(kernel_display_name({.name = "k", .devices = "tpu-v5e-16", .jax_version = std::nullopt}) ==
        "shardscope (TPU v5e-16, JAX 0.11)");
  CHECK_THROWS_AS((void)kernel_display_name({.name = "k", .devices = "tpu-v9-8", .jax_version = std::nullopt}), Error);
}

TEST_CASE("kernel.json starts the binary's kernel command with the connection file and the settings") {
  const nlohmann::json spec =
      kernel_spec_json({.name = "shardscope-test", .devices = "cpu-8", .jax_version = "0.4.31"}, "/opt/bin/shardscope");
  CHECK(spec.at("argv") == nlohmann::json({"/opt/bin/shardscope", "kernel", "-f", "{connection_file}", "--devices",
                                           "cpu:8", "--jax-version", "0.4.31"}));
  CHECK(spec.at("display_name") == "shardscope (CPU x8, JAX 0.4.31)");
  CHECK(spec.at("language") == "python");
  CHECK(spec.at("interrupt_mode") == "signal");
  const nlohmann::json plain = kernel_spec_json({}, "/usr/bin/shardscope");
  CHECK(plain.at("argv") == nlohmann::json({"/usr/bin/shardscope", "kernel", "-f", "{connection_file}"}));
  CHECK_THROWS_AS((void)kernel_spec_json({.name = "bad name", .devices = {}, .jax_version = {}}, "/x"), Error);
  CHECK_THROWS_AS((void)kernel_spec_json({.name = "", .devices = {}, .jax_version = {}}, "/x"), Error);
}

TEST_CASE("kernelspecs go where jupyter_core looks: a prefix, or the user's data folder") {
  CHECK(kernelspec_directory("k", std::filesystem::path("/tmp/p"), environment({})) ==
        "/tmp/p/share/jupyter/kernels/k");
  CHECK(kernelspec_directory("k", std::nullopt, environment({{"HOME", "/home/u"}})) ==
        "/home/u/.local/share/jupyter/kernels/k");
  CHECK(kernelspec_directory("k", std::nullopt, environment({{"HOME", "/home/u"}, {"XDG_DATA_HOME", "/x"}})) ==
        "/x/jupyter/kernels/k");
  CHECK(kernelspec_directory("k", std::nullopt,
                             environment({{"HOME", "/home/u"}, {"XDG_DATA_HOME", "/x"}, {"JUPYTER_DATA_DIR", "/j"}})) ==
        "/j/kernels/k");
  CHECK_THROWS_AS((void)kernelspec_directory("k", std::nullopt, environment({})), Error);
  CHECK_THROWS_AS((void)kernelspec_directory("../k", std::nullopt, environment({{"HOME", "/h"}})), Error);
}
