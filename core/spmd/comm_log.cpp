// Communication log records and their one-line summaries.
#include "spmd/comm_log.h"

#include <algorithm>
#include <numeric>
#include <set>

#include "base/python_format.h"

namespace shardscope {

std::string collective_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllGather: return "all-gather";
    case CollectiveKind::kAllReduce: return "all-reduce";
    case CollectiveKind::kReduceScatter: return "reduce-scatter";
    case CollectiveKind::kAllToAll: return "all-to-all";
    case CollectiveKind::kCollectivePermute: return "collective-permute";
  }
  return "collective";
}

int64_t CollectiveRecord::total_bytes_sent() const {
  return std::accumulate(bytes_sent.begin(), bytes_sent.end(), int64_t{0});
}

std::string CollectiveRecord::summary() const {
  std::vector<std::string> axis_reprs;
  for (const std::string& axis : axes) axis_reprs.push_back(python_string_repr(axis));
  std::vector<std::string> group_texts;
  for (const auto& group : groups) {
    std::vector<std::string> ids;
    for (const int64_t id : group) ids.push_back(std::to_string(id));
    group_texts.push_back("{" + join(ids, ",") + "}");
  }
  const int64_t most = bytes_sent.empty() ? 0 : *std::max_element(bytes_sent.begin(), bytes_sent.end());
  return collective_name(kind) + " over " + python_tuple(axis_reprs) + " groups " + join(group_texts, ",") + ": " +
         std::to_string(most) + " B sent per device" + (origin.empty() ? "" : " (" + origin + ")") +
         (combined < 0 ? "" : ", combined as all-reduce #" + std::to_string(combined));
}

int64_t CommLog::total_bytes_sent() const {
  int64_t total = 0;
  for (const CollectiveRecord& r : records_) total += r.total_bytes_sent();
  return total;
}

std::size_t CommLog::count(CollectiveKind kind) const {
  // Records of one combined all-reduce are one collective.
  std::set<int64_t> combined;
  std::size_t count = 0;
  for (const CollectiveRecord& r : records_) {
    if (r.kind == kind && (r.combined < 0 || combined.insert(r.combined).second)) ++count;
  }
  return count;
}

}  // namespace shardscope
