// PartitionSpec: per-dimension mesh-axis assignments, canonicalized and printed the way JAX does.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "compat/jax_version.h"

namespace shardscope {

// One dimension's entry: None, one or more mesh axes (major to minor), or P.UNCONSTRAINED.
struct SpecEntry {
  enum class Kind { kNone, kAxes, kUnconstrained };
  Kind kind = Kind::kNone;
  std::vector<std::string> axes;

  static SpecEntry none() { return {}; }
  static SpecEntry unconstrained() { return {Kind::kUnconstrained, {}}; }
  // JAX's canonicalization: an empty tuple is None, a one-element tuple is its element.
  static SpecEntry of_axes(std::vector<std::string> names) {
    if (names.empty()) return none();
    return {Kind::kAxes, std::move(names)};
  }
  [[nodiscard]] bool is_none() const { return kind == Kind::kNone; }
  // Python repr of the entry: None, 'x', ('x', 'y'), UNCONSTRAINED.
  [[nodiscard]] std::string repr() const;
  bool operator==(const SpecEntry&) const = default;
};

enum class UnreducedKind { kSum, kMax, kMin };

class PartitionSpec {
 public:
  PartitionSpec() = default;
  explicit PartitionSpec(std::vector<SpecEntry> entries) : entries_(std::move(entries)) {}

  [[nodiscard]] const std::vector<SpecEntry>& entries() const { return entries_; }
  [[nodiscard]] std::size_t size() const { return entries_.size(); }
  [[nodiscard]] const std::vector<std::string>& unreduced() const { return unreduced_; }
  [[nodiscard]] const std::vector<std::string>& reduced() const { return reduced_; }
  [[nodiscard]] UnreducedKind unreduced_kind() const { return unreduced_kind_; }
  void set_unreduced(std::vector<std::string> axes, UnreducedKind kind = UnreducedKind::kSum);
  void set_reduced(std::vector<std::string> axes) { reduced_ = std::move(axes); }

  // Every mesh axis named by the partitions, in order of appearance (duplicates kept).
  [[nodiscard]] std::vector<std::string> mentioned_axes() const;

  // repr(): P('x', None) (PartitionSpec('x', None) before JAX 0.9.1); str() is the same.
  [[nodiscard]] std::string repr(const JaxProfile& profile) const;
  // The partitions as a Python tuple, as some error messages print them: ('x',).
  [[nodiscard]] std::string tuple_repr() const;

  bool operator==(const PartitionSpec&) const = default;

 private:
  std::vector<SpecEntry> entries_;
  std::vector<std::string> unreduced_;
  std::vector<std::string> reduced_;
  UnreducedKind unreduced_kind_ = UnreducedKind::kSum;
};

// Reads a spec as a user would type it: "P('x', ('y', 'z'), None)", "PartitionSpec('x')",
// "jax.sharding.PartitionSpec()", or the bare entries "'x', None". Throws ValueError naming
// the text and what was wrong; nested tuples raise JAX's own message.
[[nodiscard]] PartitionSpec parse_partition_spec(std::string_view text);

}  // namespace shardscope
