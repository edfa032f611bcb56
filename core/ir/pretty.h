// A Wadler/Lindig "strictly pretty" document engine with JAX's layout rules (groups measure only themselves).
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace shardscope::pp {

struct DocNode;
using Doc = std::shared_ptr<const DocNode>;

struct DocNode {
  enum class Kind { kNil, kText, kConcat, kBreak, kNest, kGroup };
  Kind kind = Kind::kNil;
  std::string text;  // kText, and what kBreak prints when flat
  int indent = 0;    // kNest
  std::vector<Doc> children;
};

[[nodiscard]] Doc nil();
[[nodiscard]] Doc text(std::string s);
[[nodiscard]] Doc concat(std::vector<Doc> docs);
// A line break in break mode, `flat_text` in flat mode.
[[nodiscard]] Doc brk(std::string flat_text = " ");
[[nodiscard]] Doc nest(int indent, Doc child);
[[nodiscard]] Doc group(Doc child);
[[nodiscard]] Doc join(const Doc& separator, const std::vector<Doc>& docs);
[[nodiscard]] Doc operator+(Doc a, Doc b);

// Lays the document out in `width` columns: a group is flat when its own flat width fits in the
// rest of the line (only the group is measured, not what follows it).
[[nodiscard]] std::string format(const Doc& doc, int width = 80);

}  // namespace shardscope::pp
