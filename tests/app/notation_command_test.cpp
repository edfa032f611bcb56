// A sharding's notations from the command line (viz --notation) and from Python (shardscope.notation): marked as
// beyond JAX, with the Shardy and HloSharding texts real JAX 0.11.2 printed for the same layout.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "support/cell_replay.h"

using shardscope::testing::run_shardscope;

TEST_CASE("viz --notation adds the book's, Shardy's and XLA's notations after the grid") {
  const auto run = run_shardscope({"viz", "--shape", "8,8", "--devices", "cpu:8", "--mesh", "data=4,model=2", "--spec",
                                   "P('data', 'model')", "--notation"},
                                  {});
  INFO(run.output);
  REQUIRE(run.status == 0);
  const std::size_t grid_end = run.output.find("┘\n");
  const std::size_t block = run.output.find("# shardscope notations (beyond JAX)\n");
  REQUIRE(grid_end != std::string::npos);
  CHECK(block > grid_end);
  CHECK(run.output.find("scaling book:  A[I_{data}, J_{model}]\n") != std::string::npos);
  CHECK(run.output.find("Shardy:        #sdy.sharding<@mesh, [{\"data\"}, {\"model\"}]>\n") != std::string::npos);
  CHECK(run.output.find("sdy.mesh @mesh = <[\"data\"=4, \"model\"=2]>\n") != std::string::npos);
  CHECK(run.output.find("HloSharding:   {devices=[4,2]<=[8]}\n") != std::string::npos);
  // An old profile prints XLA's explicit device list.
  const auto old = run_shardscope({"viz", "--shape", "8,8", "--devices", "cpu:8", "--mesh", "data=4,model=2", "--spec",
                                   "P('model', 'data')", "--notation", "--jax-version", "0.4.6"},
                                  {});
  CHECK(old.output.find("HloSharding:   {devices=[2,4]0,2,4,6,1,3,5,7}\n") != std::string::npos);
  const auto single = run_shardscope({"viz", "--shape", "8", "--single-device", "0", "--notation"}, {});
  CHECK(single.status == 2);
  CHECK(single.output.find("--notation needs a mesh sharding") != std::string::npos);
}

TEST_CASE("shardscope.notation(x) gives each notation and jax.typeof") {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("shardscope_notation_" + std::to_string(::getpid()) + ".py");
  std::ofstream(path) << "import jax, jax.numpy as jnp, shardscope\n"
                         "from jax.sharding import NamedSharding, PartitionSpec as P\n"
                         "mesh = jax.make_mesh((4, 2), ('data', 'model'))\n"
                         "x = jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P('data', 'model')))\n"
                         "n = shardscope.notation(x)\n"
                         "print(n.typeof, n.hlo, n.book)\n"
                         "print(shardscope.notation(NamedSharding(mesh, P('model')), shape=(16,)).hlo)\n"
                         "try:\n    shardscope.notation(3)\nexcept TypeError as e:\n    print('TypeError:', e)\n";
  const auto run = run_shardscope({"run", path.string(), "--devices", "cpu:8", "--jax-version", "0.11.2"}, {});
  INFO(run.output);
  CHECK(run.status == 0);
  CHECK(run.output.find("float32[8@data,8@model] {devices=[4,2]<=[8]} A[I_{data}, J_{model}]\n") != std::string::npos);
  CHECK(run.output.find("{devices=[2,4]<=[4,2]T(1,0) last_tile_dim_replicate}\n") != std::string::npos);
  CHECK(run.output.find("TypeError: notation needs an array on a mesh (a NamedSharding), got int") !=
        std::string::npos);
}
