// PartitionSpec canonical form and reprs.
#include "sharding/partition_spec.h"

#include "base/python_format.h"

namespace shardscope {

std::string SpecEntry::repr() const {
  switch (kind) {
    case Kind::kNone: return "None";
    case Kind::kUnconstrained: return "UNCONSTRAINED";
    case Kind::kAxes: {
      if (axes.size() == 1) return python_string_repr(axes[0]);
      std::vector<std::string> items;
      items.reserve(axes.size());
      for (const std::string& a : axes) items.push_back(python_string_repr(a));
      return python_tuple(items);
    }
  }
  return "None";
}

void PartitionSpec::set_unreduced(std::vector<std::string> axes, UnreducedKind kind) {
  unreduced_ = std::move(axes);
  unreduced_kind_ = kind;
}

std::vector<std::string> PartitionSpec::mentioned_axes() const {
  std::vector<std::string> names;
  for (const SpecEntry& entry : entries_) names.insert(names.end(), entry.axes.begin(), entry.axes.end());
  return names;
}

std::string PartitionSpec::tuple_repr() const {
  std::vector<std::string> items;
  items.reserve(entries_.size());
  for (const SpecEntry& entry : entries_) items.push_back(entry.repr());
  return python_tuple(items);
}

namespace {
std::string python_set_repr(const std::vector<std::string>& names) {
  std::vector<std::string> items;
  items.reserve(names.size());
  for (const std::string& n : names) items.push_back(python_string_repr(n));
  return "{" + join(items, ", ") + "}";
}
const char* unreduced_kind_name(UnreducedKind kind) {
  switch (kind) {
    case UnreducedKind::kSum: return "sum";
    case UnreducedKind::kMax: return "max";
    case UnreducedKind::kMin: return "min";
  }
  return "sum";
}
}  // namespace

std::string PartitionSpec::repr(const JaxProfile& profile) const {
  std::vector<std::string> parts;
  parts.reserve(entries_.size() + 3);
  for (const SpecEntry& entry : entries_) parts.push_back(entry.repr());
  // A single positional entry keeps Python's one-element-tuple comma: P('x',).
  std::string inner = join(parts, ", ");
  if (parts.size() == 1) inner += ",";
  std::vector<std::string> keywords;
  if (!unreduced_.empty()) keywords.push_back("unreduced=" + python_set_repr(unreduced_));
  if (!reduced_.empty()) keywords.push_back("reduced=" + python_set_repr(reduced_));
  if (!unreduced_.empty()) keywords.push_back(std::string("unreduced_kind=") + unreduced_kind_name(unreduced_kind_));
  if (!keywords.empty()) {
    const char* separator = parts.empty() ? "" : (parts.size() == 1 ? " " : ", ");
    inner += separator + join(keywords, ", ");
  }
  const char* name = profile.has(JaxFeature::kShortPartitionSpecRepr) ? "P" : "PartitionSpec";
  return std::string(name) + "(" + inner + ")";
}

}  // namespace shardscope
