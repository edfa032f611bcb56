// Differential program fuzzer: random programs of the engine's ops on random meshes and shardings, run
// partitioned under jit and on one device, compared value for value and against the sharding rules.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shardscope::program_fuzz {

struct Report {
  int64_t programs = 0;
  int64_t shard_map_programs = 0;     // programs holding at least one shard_map with a collective
  int64_t sharding_checks = 0;        // outputs whose sharding the rules predicted and were compared
  std::vector<std::string> failures;  // one line per mismatch or crash, with the program's seed and text
};

// Runs `count` programs from seeds seed, seed + 1, ...; each program is reproducible from its seed alone.
[[nodiscard]] Report run_programs(uint64_t seed, int64_t count);

// One program's text (ops, mesh, input shardings), for a failure message or a regression test.
[[nodiscard]] std::string describe_program(uint64_t seed);

}  // namespace shardscope::program_fuzz
