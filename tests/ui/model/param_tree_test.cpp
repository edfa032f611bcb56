// The pytree table: key entries as labels, shared groups, spans for collapsing and bytes summed per device.
#include "ui/model/param_tree.h"

#include <doctest/doctest.h>

namespace shardscope::ui {
namespace {

VariableInfo leaf(std::vector<std::string> path, std::vector<int64_t> bytes) {
  VariableInfo info;
  info.tree_path = std::move(path);
  info.bytes_per_device = std::move(bytes);
  for (const std::string& entry : info.tree_path) info.name += entry;
  return info;
}

}  // namespace

TEST_CASE("key-path entries read as the key, the attribute or the index") {
  CHECK(key_entry_label("['Dense_0']") == "Dense_0");
  CHECK(key_entry_label("[\"kernel\"]") == "kernel");
  CHECK(key_entry_label(".opt_state") == "opt_state");
  CHECK(key_entry_label("[0]") == "[0]");
  CHECK(key_entry_label("[<flat index 2>]") == "[<flat index 2>]");
  CHECK(key_entry_label("['']") == "['']");
}

TEST_CASE("a Flax TrainState's leaves nest under shared groups with totals per device") {
  TreeInfo tree;
  tree.name = "state";
  tree.leaves = {leaf({".step"}, {4, 4}), leaf({".params", "['Dense_0']", "['bias']"}, {16, 16}),
                 leaf({".params", "['Dense_0']", "['kernel']"}, {64, 32}),
                 leaf({".params", "['Dense_1']", "['kernel']"}, {8, 8}),
                 leaf({".opt_state", "[0]", ".mu", "['Dense_0']", "['kernel']"}, {64, 32})};
  const std::vector<TreeRow> rows = tree_rows(tree);
  std::vector<std::string> shown;
  for (const TreeRow& row : rows)
    shown.push_back(std::string(static_cast<std::size_t>(row.depth) * 2, ' ') + row.label);
  const std::vector<std::string> expected = {"step",       "params",    "  Dense_0",     "    bias",
                                             "    kernel", "  Dense_1", "    kernel",    "opt_state",
                                             "  [0]",      "    mu",    "      Dense_0", "        kernel"};
  CHECK(shown == expected);
  CHECK(rows[0].is_leaf);
  CHECK(rows[0].leaf == 0);
  const TreeRow& params = rows[1];
  CHECK_FALSE(params.is_leaf);
  CHECK(params.leaf_count == 3);
  CHECK(params.end == 7);  // up to opt_state
  CHECK(params.bytes_per_device == std::vector<int64_t>{88, 56});
  CHECK(rows[2].end == 5);
  CHECK(rows[2].bytes_per_device == std::vector<int64_t>{80, 48});
  CHECK(rows[4].leaf == 2);
  CHECK(rows[4].id == ".params['Dense_0']['kernel']");
  CHECK(rows[6].id == ".params['Dense_1']['kernel']");
  CHECK(rows[7].end == rows.size());
  CHECK(tree_bytes_per_device(tree) == std::vector<int64_t>{156, 92});
}

TEST_CASE("arrays on different device counts total their largest shards") {
  TreeInfo tree;
  tree.leaves = {leaf({"['a']"}, {10, 30}), leaf({"['b']"}, {7})};
  CHECK(tree_bytes_per_device(tree) == std::vector<int64_t>{37});
}

TEST_CASE("groups with the same key under different parents stay apart") {
  TreeInfo tree;
  tree.leaves = {leaf({"['a']", "['x']", "['w']"}, {1}), leaf({"['b']", "['x']", "['w']"}, {2})};
  const std::vector<TreeRow> rows = tree_rows(tree);
  REQUIRE(rows.size() == 6);
  CHECK(rows[1].label == "x");
  CHECK(rows[4].label == "x");
  CHECK(rows[1].id != rows[4].id);
  CHECK(rows[0].end == 3);
  CHECK(rows[3].bytes_per_device == std::vector<int64_t>{2});
}

TEST_CASE("a tree that is one array is one row") {
  TreeInfo tree;
  tree.name = "x";
  tree.leaves = {leaf({}, {8})};
  const std::vector<TreeRow> rows = tree_rows(tree);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].label == "x");
  CHECK(rows[0].end == 1);
}

}  // namespace shardscope::ui
