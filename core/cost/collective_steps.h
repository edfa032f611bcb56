// Which device sends which chunk to which neighbour at each step of a collective, on the physical ring the cost
// model prices (collective_time): a bidirectional ring when the torus closes, a line without the wraparound link.
// The window animates these steps; nothing here draws.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cost/collective_time.h"
#include "device/device.h"
#include "spmd/comm_log.h"

namespace shardscope {

struct ChunkTransfer {
  int64_t from = 0;         // device id
  int64_t to = 0;           // device id
  int64_t chunk = 0;        // the ring position whose shard (or partial sum) it carries
  bool wraparound = false;  // over the link that closes the ring (last member to first, or back)
  bool neighbours = true;   // one ICI hop; false for all-to-all's direct sends and switched links
};

struct CollectiveStep {
  std::string phase;  // "reduce-scatter", "all-gather", "all-to-all" or "collective-permute"
  std::vector<ChunkTransfer> transfers;
};

struct CollectiveAnimation {
  CollectiveKind kind = CollectiveKind::kAllGather;
  std::vector<int64_t> ring;  // the group's device ids in ring order along the physical links
  bool wraparound = false;    // the ring closes: chunks travel both ways (half a chunk each way)
  std::vector<CollectiveStep> steps;
  std::string algorithm;  // in words
};

// The group's devices in ring order: by torus coordinates (x fastest, in a snake over several axes so that
// consecutive members are neighbours), by id for switched and on-chip groups.
[[nodiscard]] std::vector<const Device*> ring_order(const std::vector<const Device*>& group);

// The steps of `kind` over `group` on `topology` (from collective_topology, as the cost model prices it).
// All-gather and reduce-scatter: n-1 steps; on a closed ring each member sends to both neighbours, otherwise
// chunks flow both ways along the line and the ends send one way. All-reduce: a reduce-scatter, then an
// all-gather. All-to-all: n-1 steps, step k sends every member's chunk for the member k places on. A collective
// permute: one step to the next member (the log keeps no permutation).
[[nodiscard]] CollectiveAnimation collective_animation(CollectiveKind kind, const std::vector<const Device*>& group,
                                                       const CollectiveTopology& topology);

}  // namespace shardscope
