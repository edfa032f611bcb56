// The cost-rule table and the equation/program cost walkers built on it.
#include "cost/cost_rules.h"

#include <map>
#include <mutex>
#include <numeric>

#include "base/error.h"
#include "ir/primitive.h"

namespace shardscope {
namespace {

std::map<std::string, CostRule>& cost_table() {
  static std::map<std::string, CostRule> table;
  return table;
}

}  // namespace

double OpCost::bytes_accessed() const {
  return std::accumulate(operand_bytes.begin(), operand_bytes.end(), output_bytes);
}

OpCost& OpCost::operator+=(const OpCost& other) {
  flops += other.flops;
  transcendentals += other.transcendentals;
  output_bytes += other.output_bytes;
  if (operand_bytes.size() < other.operand_bytes.size()) operand_bytes.resize(other.operand_bytes.size(), 0.0);
  for (std::size_t i = 0; i < other.operand_bytes.size(); ++i) operand_bytes[i] += other.operand_bytes[i];
  return *this;
}

OpCost memory_traffic(const CostInputs& in) {
  OpCost cost;
  for (const Aval& operand : in.operands) cost.operand_bytes.push_back(aval_bytes(operand));
  for (const Aval& result : in.results) cost.output_bytes += aval_bytes(result);
  return cost;
}

void register_cost_rule(const std::string& primitive, CostRule rule) { cost_table()[primitive] = std::move(rule); }

const CostRule* find_cost_rule(const std::string& primitive) {
  const auto& table = cost_table();
  const auto it = table.find(primitive);
  return it == table.end() ? nullptr : &it->second;
}

void register_core_cost_rules();  // primitive_costs.cpp

void ensure_cost_rules() {
  static std::once_flag once;
  std::call_once(once, [] { register_core_cost_rules(); });
}

OpCost equation_cost(const Eqn& eqn, std::span<const Aval> operands, std::span<const Aval> results) {
  ensure_cost_rules();
  const CostRule* rule = find_cost_rule(eqn.primitive->name);
  if (rule == nullptr) throw not_implemented_error("no cost rule for primitive '" + eqn.primitive->name + "'");
  return (*rule)(CostInputs{operands, results, eqn.params});
}

OpCost equation_cost(const Eqn& eqn) {
  std::vector<Aval> operands;
  for (const Atom& input : eqn.inputs) operands.push_back(atom_aval(input));
  std::vector<Aval> results;
  for (const Var& output : eqn.outputs) results.push_back(output.aval);
  return equation_cost(eqn, operands, results);
}

OpCost jaxpr_cost(const Jaxpr& jaxpr) {
  OpCost total;
  for (const Eqn& eqn : jaxpr.eqns) {
    OpCost cost = equation_cost(eqn);
    // Operand positions mean nothing across equations: fold them into one read total.
    total.flops += cost.flops;
    total.transcendentals += cost.transcendentals;
    total.output_bytes += cost.output_bytes;
    if (total.operand_bytes.empty()) total.operand_bytes.push_back(0.0);
    total.operand_bytes[0] += cost.bytes_accessed() - cost.output_bytes;
  }
  return total;
}

}  // namespace shardscope
