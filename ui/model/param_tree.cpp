// Groups a pytree's key paths into nested rows and totals each group's bytes per device.
#include "ui/model/param_tree.h"

#include <algorithm>

namespace shardscope::ui {
namespace {

// Adds `bytes` into `total` device by device. Arrays on different device counts cannot be lined up by device,
// so the total then becomes one number per device: the sum of each array's largest shard (an upper bound).
void accumulate(std::vector<int64_t>& total, const std::vector<int64_t>& bytes, bool& first) {
  if (first) {
    total = bytes;
    first = false;
    return;
  }
  if (total.size() == bytes.size()) {
    for (std::size_t d = 0; d < total.size(); ++d) total[d] += bytes[d];
    return;
  }
  const auto largest = [](const std::vector<int64_t>& v) {
    return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
  };
  total = {largest(total) + largest(bytes)};
}

}  // namespace

std::string key_entry_label(const std::string& entry) {
  if (entry.size() > 4 && entry.front() == '[' && entry.back() == ']') {  // an empty key stays visible as ['']
    const char quote = entry[1];
    if ((quote == '\'' || quote == '"') && entry[entry.size() - 2] == quote) return entry.substr(2, entry.size() - 4);
  }
  if (entry.size() > 1 && entry.front() == '.') return entry.substr(1);
  return entry;
}

std::vector<TreeRow> tree_rows(const TreeInfo& tree) {
  std::vector<TreeRow> rows;
  std::vector<std::size_t> open;  // the group rows on the current path, outermost first
  const std::vector<std::string>* previous = nullptr;
  for (std::size_t i = 0; i < tree.leaves.size(); ++i) {
    const std::vector<std::string>& path = tree.leaves[i].tree_path;
    // Groups are shared while the path agrees with the previous leaf's (flattening keeps a group's leaves together).
    std::size_t shared = 0;
    if (previous != nullptr) {
      while (shared < open.size() && shared + 1 < path.size() && shared < previous->size() &&
             (*previous)[shared] == path[shared]) {
        ++shared;
      }
    }
    for (std::size_t k = shared; k < open.size(); ++k) rows[open[k]].end = rows.size();
    open.resize(shared);
    std::string id;
    for (std::size_t k = 0; k < shared; ++k) id += path[k];
    for (std::size_t k = shared; k + 1 < path.size(); ++k) {
      id += path[k];
      open.push_back(rows.size());
      rows.push_back({static_cast<int>(k), key_entry_label(path[k]), id, false, 0, 0, 0, {}});
    }
    TreeRow leaf;
    leaf.depth = static_cast<int>(path.empty() ? 0 : path.size() - 1);
    leaf.label = path.empty() ? tree.name : key_entry_label(path.back());
    leaf.id = id + (path.empty() ? "" : path.back());
    leaf.is_leaf = true;
    leaf.leaf = i;
    leaf.leaf_count = 1;
    leaf.end = rows.size() + 1;
    leaf.bytes_per_device = tree.leaves[i].bytes_per_device;
    rows.push_back(std::move(leaf));
    previous = &path;
  }
  for (const std::size_t group : open) rows[group].end = rows.size();
  // Totals: each group sums the leaves in its [row, end) span.
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (rows[r].is_leaf) continue;
    bool first = true;
    for (std::size_t k = r + 1; k < rows[r].end; ++k) {
      if (!rows[k].is_leaf) continue;
      ++rows[r].leaf_count;
      accumulate(rows[r].bytes_per_device, rows[k].bytes_per_device, first);
    }
  }
  return rows;
}

std::vector<int64_t> tree_bytes_per_device(const TreeInfo& tree) {
  std::vector<int64_t> total;
  bool first = true;
  for (const VariableInfo& leaf : tree.leaves) accumulate(total, leaf.bytes_per_device, first);
  return total;
}

}  // namespace shardscope::ui
