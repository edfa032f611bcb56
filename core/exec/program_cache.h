// Caches of what a run derives from a program alone (propagated layouts, fusion groups), so a repeated
// call with the same program and input shardings only runs kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "exec/fusion.h"
#include "ir/inline_calls.h"
#include "ir/jaxpr.h"
#include "propagation/auto_propagation.h"

namespace shardscope {

// The same program: equal equations (primitive, params, operands, results) over the same variables,
// ids and avals included.
[[nodiscard]] bool same_program(const Jaxpr& a, const Jaxpr& b);

// A bounded, thread-safe map from (program, Key) to a Value computed once. Entries keep a copy of the
// program and compare it on every hit, so a jaxpr freed and another built at its address never reads a
// stale entry.
template <typename Key, typename Value>
class ProgramCache {
 public:
  explicit ProgramCache(std::size_t capacity) : capacity_(capacity) {}

  // `probe` is a Key or a cheaper view of one: it needs `key == probe` and Key's construction from it,
  // which happens only on a miss.
  template <typename Probe>
  std::shared_ptr<const Value> get(const Jaxpr& jaxpr, const Probe& probe, const std::function<Value()>& compute) {
    {
      const std::lock_guard lock(mutex_);
      for (Entry& entry : entries_) {
        if (entry.address == &jaxpr && entry.key == probe && same_program(*entry.program, jaxpr)) {
          entry.last_use = ++clock_;
          return entry.value;
        }
      }
    }
    // Computed outside the lock: two threads may both compute a missing entry, which is harmless.
    auto value = std::make_shared<const Value>(compute());
    const std::lock_guard lock(mutex_);
    if (entries_.size() >= capacity_) {
      std::size_t oldest = 0;
      for (std::size_t i = 1; i < entries_.size(); ++i) {
        if (entries_[i].last_use < entries_[oldest].last_use) oldest = i;
      }
      entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(oldest));
    }
    entries_.push_back({&jaxpr, std::make_shared<const Jaxpr>(jaxpr), Key(probe), value, ++clock_});
    return value;
  }

  void clear() {
    const std::lock_guard lock(mutex_);
    entries_.clear();
  }

  [[nodiscard]] std::size_t size() {
    const std::lock_guard lock(mutex_);
    return entries_.size();
  }

 private:
  struct Entry {
    const Jaxpr* address;
    std::shared_ptr<const Jaxpr> program;
    Key key;
    std::shared_ptr<const Value> value;
    uint64_t last_use;
  };
  std::size_t capacity_;
  std::mutex mutex_;
  std::vector<Entry> entries_;  // guarded by mutex_
  uint64_t clock_ = 0;          // guarded by mutex_
};

// propagate_layouts, remembered per (program, mesh, known layouts).
[[nodiscard]] std::shared_ptr<const LayoutMap> cached_layouts(const Jaxpr& jaxpr, const Mesh& mesh,
                                                              const LayoutMap& known);

// inline_calls, remembered per program (the inlined program keeps one address while cached, for the caches
// keyed by it).
[[nodiscard]] std::shared_ptr<const InlinedProgram> cached_inlined(const Jaxpr& jaxpr);

// plan_fusion, remembered per program.
[[nodiscard]] std::shared_ptr<const std::vector<FusionGroup>> cached_fusion_plan(const Jaxpr& jaxpr);

}  // namespace shardscope
