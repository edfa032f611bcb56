// The communication log: every collective the engine runs, with participants and bytes per device.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shardscope {

enum class CollectiveKind { kAllGather, kAllReduce, kReduceScatter, kAllToAll, kCollectivePermute };

// XLA's HLO names: "all-gather", "all-reduce", "reduce-scatter", "all-to-all", "collective-permute".
[[nodiscard]] std::string collective_name(CollectiveKind kind);

struct CollectiveRecord {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  std::vector<std::string> axes;             // mesh axes the collective runs over
  std::vector<std::vector<int64_t>> groups;  // device ids of each group, in axis-index order
  std::vector<int64_t> device_ids;           // every participant, mesh order
  std::vector<int64_t> bytes_sent;           // per participant, same order as device_ids
  std::vector<int64_t> bytes_received;
  std::string origin;  // what asked for it, e.g. "psum" or "reshard P('x',) -> P()"
  // All-reduces XLA's combiner runs as one all-reduce of a tuple share this id (-1: the collective runs alone).
  int64_t combined = -1;

  [[nodiscard]] int64_t total_bytes_sent() const;
  // One line for people: "all-reduce over ('x',) groups {0,1,2,3},{4,5,6,7}: 96 B sent per device (psum)".
  [[nodiscard]] std::string summary() const;
};

class CommLog {
 public:
  void add(CollectiveRecord record) { records_.push_back(std::move(record)); }
  [[nodiscard]] const std::vector<CollectiveRecord>& records() const { return records_; }
  [[nodiscard]] bool empty() const { return records_.empty(); }
  void clear() {
    records_.clear();
    next_combined_id_ = 0;
  }
  // Combined all-reduce ids are unique within one log: each program run that combines all-reduces reserves
  // `count` ids and numbers its groups from the returned first one (0 for the first program logged).
  // Marks the records from position `first` on as members of combined all-reduce `id`.
  void set_combined_from(std::size_t first, int64_t id) {
    for (std::size_t r = first; r < records_.size(); ++r) records_[r].combined = id;
  }
  [[nodiscard]] int64_t reserve_combined_ids(int64_t count) {
    const int64_t first = next_combined_id_;
    next_combined_id_ += count;
    return first;
  }
  [[nodiscard]] int64_t total_bytes_sent() const;
  // How many collectives of `kind` ran: the records of one combined all-reduce count once.
  [[nodiscard]] std::size_t count(CollectiveKind kind) const;

 private:
  std::vector<CollectiveRecord> records_;
  int64_t next_combined_id_ = 0;
};

}  // namespace shardscope
