// Sharding rules in factor form (as Shardy states them): which operand and result dims share an index.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/jaxpr.h"
#include "ir/primitive.h"

namespace shardscope {

enum class FactorKind {
  kPassThrough,      // sharding it needs no communication if every tensor agrees
  kReduction,        // operands only (dot contraction, reduced dims): partial results are all-reduced
  kNeedReplication,  // must be unsharded for the local kernel (cumulative axis, the reduced dim of argmax)
  kPermutation,      // elements change place along it (sliced, padded, reversed, concatenated dims): the kernel
                     // needs it whole, but the result may be sharded along it like the operand
};

// Whether the local kernel needs the factor's dims whole (need-replication and permutation factors).
[[nodiscard]] bool needs_whole_dims(FactorKind kind);

struct FactorRule {
  std::vector<int64_t> factor_sizes;
  std::vector<FactorKind> kinds;
  // [tensor][dim] -> factors of that dim, major to minor (a dim may hold several after a reshape).
  std::vector<std::vector<std::vector<int>>> operands;
  std::vector<std::vector<std::vector<int>>> results;
  bool elementwise = false;  // conflicts prefer the more sharded factor only for elementwise ops

  int add_factor(int64_t size, FactorKind kind);
};

// The rule of an equation's primitive; primitives without a rule get need-replication factors on every
// dim (correct values, no sharding through them), and has_factor_rule says they lack one.
[[nodiscard]] FactorRule factor_rule_for(const Eqn& eqn);

// Whether the partitioner knows how to shard the primitive: a factor rule, elementwise, a collective, or handled
// by the plan itself (constraints, shard_map, inlined calls). A registry test requires it of every primitive.
[[nodiscard]] bool has_factor_rule(const Primitive& primitive);

}  // namespace shardscope
