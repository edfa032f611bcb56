// Per-primitive cost rules (flops, transcendentals, bytes) in XLA HloCostAnalysis's conventions.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "ir/jaxpr.h"

namespace shardscope {

// What one equation costs on one device, counted the way XLA's HloCostAnalysis counts an HLO op:
// flops exclude transcendentals, and bytes are what the op reads plus what it writes.
struct OpCost {
  double flops = 0;
  double transcendentals = 0;
  std::vector<double> operand_bytes;  // bytes read from each operand
  double output_bytes = 0;            // bytes written, all results together

  [[nodiscard]] double bytes_accessed() const;
  OpCost& operator+=(const OpCost& other);  // operand lists are summed position by position
};

// Operand and result types of an equation as the device sees them (global or per-shard shapes).
struct CostInputs {
  std::span<const Aval> operands;
  std::span<const Aval> results;
  const Params& params;
};

using CostRule = std::function<OpCost(const CostInputs&)>;

// The rule table, keyed by primitive name (re-registering replaces the rule).
void register_cost_rule(const std::string& primitive, CostRule rule);
[[nodiscard]] const CostRule* find_cost_rule(const std::string& primitive);
// Registers the rules of every core primitive once (idempotent, thread-safe); also registers the
// primitives themselves.
void ensure_cost_rules();

// The default every rule starts from: each operand read once, each result written once.
[[nodiscard]] OpCost memory_traffic(const CostInputs& in);

// Cost of one equation with the given operand/result types; NotImplementedError naming the primitive
// when it has no rule.
[[nodiscard]] OpCost equation_cost(const Eqn& eqn, std::span<const Aval> operands, std::span<const Aval> results);
// Cost of one equation with its own (global) types.
[[nodiscard]] OpCost equation_cost(const Eqn& eqn);
// Sum over a whole program with its own types (what XLA reports for an unpartitioned module).
[[nodiscard]] OpCost jaxpr_cost(const Jaxpr& jaxpr);

}  // namespace shardscope
