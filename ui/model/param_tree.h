// A pytree of arrays (a Flax model's parameters, a TrainState) as the rows of a collapsible table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ui/session.h"

namespace shardscope::ui {

// One line of the tree: a group (a dict key, an attribute) or an array.
struct TreeRow {
  int depth = 0;      // 0 for the children of the root
  std::string label;  // "Dense_0", "params", "[0]"
  std::string id;     // unique within the tree: the key path up to and including this row
  bool is_leaf = false;
  std::size_t leaf = 0;                   // index into TreeInfo::leaves (leaves only)
  std::size_t leaf_count = 0;             // arrays at or under this row
  std::size_t end = 0;                    // one past the last row under this one (skip there when the group is closed)
  std::vector<int64_t> bytes_per_device;  // summed over the arrays under this row, device by device
};

// The label a key-path entry gets in the tree: "['Dense_0']" -> "Dense_0", ".params" -> "params",
// "[0]" -> "[0]", anything else unchanged.
[[nodiscard]] std::string key_entry_label(const std::string& entry);

// Rows in display order, groups before their children; leaves sharing a path prefix share its group rows.
[[nodiscard]] std::vector<TreeRow> tree_rows(const TreeInfo& tree);

// What the whole tree holds on each device (the sum of its arrays' shards).
[[nodiscard]] std::vector<int64_t> tree_bytes_per_device(const TreeInfo& tree);

}  // namespace shardscope::ui
