// One process-wide flag: the engine runs one user request at a time, and an interrupt is meant for whatever runs.
#include "exec/cancellation.h"

#include <atomic>

#include "base/error.h"

namespace shardscope {
namespace {

std::atomic<bool> cancellation_requested{false};

}  // namespace

void request_cancellation() { cancellation_requested.store(true, std::memory_order_relaxed); }

void clear_cancellation() { cancellation_requested.store(false, std::memory_order_relaxed); }

void throw_if_cancelled() {
  if (!cancellation_requested.load(std::memory_order_relaxed)) return;
  if (cancellation_requested.exchange(false)) throw Error("KeyboardInterrupt", "");
}

}  // namespace shardscope
