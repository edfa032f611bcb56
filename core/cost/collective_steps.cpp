// The step-by-step data movement of ring collectives on the physical device order.
#include "cost/collective_steps.h"

#include <algorithm>
#include <tuple>

namespace shardscope {
namespace {

int64_t wrap(int64_t i, int64_t n) { return ((i % n) + n) % n; }

int64_t member(const CollectiveAnimation& a, int64_t position) { return a.ring[static_cast<std::size_t>(position)]; }

// One ring pass (all-gather or reduce-scatter): n-1 steps. Closed ring: position i sends chunk i-k clockwise and
// chunk i+k counter-clockwise at step k. Line: the same chunks, only where both ends of the hop exist and the
// chunk has reached position i from its side.
void ring_pass(CollectiveAnimation& out, const std::string& phase, bool reduce) {
  const auto n = static_cast<int64_t>(out.ring.size());
  for (int64_t k = 0; k < n - 1; ++k) {
    CollectiveStep step;
    step.phase = phase;
    // A reduce-scatter sends the partial sum of the chunk that ends at the receiver's far side: one ahead.
    const int64_t shift = reduce ? k + 1 : k;
    for (int64_t i = 0; i < n; ++i) {
      if (out.wraparound) {
        const int64_t next = wrap(i + 1, n);
        const int64_t prev = wrap(i - 1, n);
        step.transfers.push_back({member(out, i), member(out, next), wrap(i - shift, n), i == n - 1});
        step.transfers.push_back({member(out, i), member(out, prev), wrap(i + shift, n), i == 0});
      } else {
        if (i + 1 < n && i - k >= 0) step.transfers.push_back({member(out, i), member(out, i + 1), i - k, false});
        if (i - 1 >= 0 && i + k < n) step.transfers.push_back({member(out, i), member(out, i - 1), i + k, false});
      }
    }
    out.steps.push_back(std::move(step));
  }
}

}  // namespace

std::vector<const Device*> ring_order(const std::vector<const Device*>& group) {
  std::vector<const Device*> ordered = group;
  const bool on_torus =
      std::all_of(group.begin(), group.end(), [](const Device* d) { return d->platform == Platform::kTpu; });
  if (!on_torus) {
    std::sort(ordered.begin(), ordered.end(), [](const Device* a, const Device* b) { return a->id < b->id; });
    return ordered;
  }
  // Snake order: z outermost, then y, then x; x runs backwards on odd rows so that neighbours follow each other.
  const auto key = [](const Device* d) {
    const int row = d->coords[1] + 1000 * d->coords[2];
    const int x = (row % 2 == 0) ? d->coords[0] : -d->coords[0];
    return std::make_tuple(d->coords[2], d->coords[1], x, d->core_on_chip, d->id);
  };
  std::sort(ordered.begin(), ordered.end(), [&](const Device* a, const Device* b) { return key(a) < key(b); });
  return ordered;
}

CollectiveAnimation collective_animation(CollectiveKind kind, const std::vector<const Device*>& group,
                                         const CollectiveTopology& topology) {
  CollectiveAnimation out;
  out.kind = kind;
  for (const Device* d : ring_order(group)) out.ring.push_back(d->id);
  const auto n = static_cast<int64_t>(out.ring.size());
  // Switched and on-chip groups reach every member directly; the cost model prices them as a closed ring too.
  out.wraparound = topology.wraparound || topology.switched || topology.on_chip;
  if (n <= 1) {
    out.algorithm = "nothing to move: one device per group";
    return out;
  }
  const std::string shape = out.wraparound ? "bidirectional ring" : "line (no wraparound link)";
  switch (kind) {
    case CollectiveKind::kAllGather:
      ring_pass(out, "all-gather", false);
      out.algorithm = shape + ": " + std::to_string(n - 1) + " steps, each member forwards the chunk it received";
      break;
    case CollectiveKind::kReduceScatter:
      ring_pass(out, "reduce-scatter", true);
      out.algorithm = shape + ": " + std::to_string(n - 1) + " steps, each member adds its part and forwards";
      break;
    case CollectiveKind::kAllReduce:
      ring_pass(out, "reduce-scatter", true);
      ring_pass(out, "all-gather", false);
      out.algorithm = shape + ": a reduce-scatter then an all-gather, " + std::to_string(2 * (n - 1)) + " steps";
      break;
    case CollectiveKind::kAllToAll:
      for (int64_t k = 1; k < n; ++k) {
        CollectiveStep step;
        step.phase = "all-to-all";
        for (int64_t i = 0; i < n; ++i) {
          const int64_t to = wrap(i + k, n);
          const bool hop = k == 1 || (out.wraparound && k == n - 1);
          step.transfers.push_back({member(out, i), member(out, to), to, out.wraparound && i + k >= n, hop});
        }
        out.steps.push_back(std::move(step));
      }
      out.algorithm = shape + ": " + std::to_string(n - 1) + " steps, step k sends each member's chunk k places on";
      break;
    case CollectiveKind::kCollectivePermute: {
      CollectiveStep step;
      step.phase = "collective-permute";
      for (int64_t i = 0; i < n; ++i) {
        if (!out.wraparound && i == n - 1) continue;
        step.transfers.push_back({member(out, i), member(out, wrap(i + 1, n)), i, i == n - 1});
      }
      out.steps.push_back(std::move(step));
      out.algorithm = "one step: each member sends its shard to the next";
      break;
    }
  }
  if (topology.switched || topology.on_chip) {
    for (CollectiveStep& step : out.steps) {
      for (ChunkTransfer& t : step.transfers) t.neighbours = false;
    }
  }
  return out;
}

}  // namespace shardscope
