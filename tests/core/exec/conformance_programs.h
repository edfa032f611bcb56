// One-equation sample programs for every registered primitive, for the sharded conformance test.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "array/array.h"
#include "mesh/mesh.h"
#include "trace/builder.h"

namespace shardscope::conformance {

// Builds the sample's equation(s) on `args`; `mesh` is the mesh of the run (for params naming its axes).
using SampleProgram = std::function<std::vector<Atom>(JaxprBuilder&, const std::vector<Atom>&, const Mesh&)>;

enum class Family { kElementwise, kLayout, kIndexing, kReduction, kContraction, kProgram, kRandom };

struct Sample {
  std::string primitive;  // the registered primitive the sample exercises
  std::string label;      // unique, for failure messages
  Family family;
  std::vector<Aval> inputs;
  SampleProgram program;
};

// Every sample, covering each registered primitive that can run outside shard_map.
[[nodiscard]] std::vector<Sample> conformance_samples();

// Primitives that only make sense inside shard_map/pmap (named axes) or that hold nested mapped programs.
[[nodiscard]] bool needs_named_axis_or_nested_map(const std::string& primitive);

[[nodiscard]] JaxprPtr trace_sample(const Sample& sample, const Mesh& mesh);

// Why some shard of `array` does not hold its block: its data is not the block's shape, or `same(data, local,
// global)` rejects one of its elements. Empty when every shard holds exactly its block.
[[nodiscard]] std::string misplaced_shard(const Array& array,
                                          const std::function<bool(const Buffer&, int64_t, int64_t)>& same);

}  // namespace shardscope::conformance
