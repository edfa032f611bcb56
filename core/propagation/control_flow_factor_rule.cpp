// Factor rules of the control-flow primitives, from what their bodies do.
#include "propagation/control_flow_factor_rule.h"

#include "ops/control_flow.h"

namespace shardscope {
namespace {

bool local_equation(const Eqn& eqn) {
  return eqn.primitive->elementwise || eqn.primitive->name == "convert_element_type";
}

// Adds `jaxpr`'s non-scalar shapes to `shape`; false when a shape differs or an equation is not elementwise.
bool collect_shape(const Jaxpr& jaxpr, std::optional<Shape>& shape) {
  const auto note = [&](const Aval& aval) {
    if (aval.rank() == 0) return true;
    if (!shape) shape = aval.shape;
    return *shape == aval.shape;
  };
  for (const Var& var : jaxpr.invars) {
    if (!note(var.aval)) return false;
  }
  for (const Eqn& eqn : jaxpr.eqns) {
    if (!local_equation(eqn)) return false;
    for (const Var& out : eqn.outputs) {
      if (!note(out.aval)) return false;
    }
  }
  for (const Atom& out : jaxpr.outvars) {
    if (!note(atom_aval(out))) return false;
  }
  return true;
}

std::vector<const Jaxpr*> bodies_of(const Eqn& eqn) {
  const std::string& name = eqn.primitive->name;
  if (name == "scan") return {nested_jaxpr(eqn.params, "jaxpr").get()};
  if (name == "while")
    return {nested_jaxpr(eqn.params, "cond_jaxpr").get(), nested_jaxpr(eqn.params, "body_jaxpr").get()};
  std::vector<const Jaxpr*> out;
  if (name == "cond") {
    for (const JaxprPtr& branch : cond_branches(eqn.params)) out.push_back(branch.get());
  }
  return out;
}

std::vector<std::vector<int>> need_replication(FactorRule& rule, const Shape& shape) {
  std::vector<std::vector<int>> dims;
  for (const int64_t size : shape) dims.push_back({rule.add_factor(size, FactorKind::kNeedReplication)});
  return dims;
}

}  // namespace

std::optional<Shape> control_flow_local_shape(const Eqn& eqn) {
  const std::vector<const Jaxpr*> bodies = bodies_of(eqn);
  if (bodies.empty()) return std::nullopt;
  std::optional<Shape> shape;
  for (const Jaxpr* body : bodies) {
    if (!collect_shape(*body, shape)) return std::nullopt;
  }
  return shape;
}

FactorRule control_flow_factor_rule(const Eqn& eqn) {
  FactorRule rule;
  const std::optional<Shape> shape = control_flow_local_shape(eqn);
  std::vector<int> shared;
  if (shape) {
    for (const int64_t size : *shape) shared.push_back(rule.add_factor(size, FactorKind::kPassThrough));
  }
  // A value of the shared shape takes the shared factors; scan's xs and ys have one more dim in front, which
  // needs replication (each iteration reads or writes one index of it).
  const auto dims_of = [&](const Aval& aval, bool stacked) {
    const std::size_t slice_rank = aval.rank() - (stacked ? 1 : 0);
    if (!shape || slice_rank == 0 || slice_rank != shape->size()) return need_replication(rule, aval.shape);
    std::vector<std::vector<int>> dims;
    if (stacked) dims.push_back({rule.add_factor(aval.shape[0], FactorKind::kNeedReplication)});
    for (const int factor : shared) dims.push_back({factor});
    return dims;
  };
  const bool is_scan = eqn.primitive->name == "scan";
  const ScanLayout layout = is_scan ? scan_layout(eqn.params) : ScanLayout{};
  for (std::size_t i = 0; i < eqn.inputs.size(); ++i) {
    rule.operands.push_back(dims_of(atom_aval(eqn.inputs[i]), is_scan && i >= layout.num_consts + layout.num_carry));
  }
  for (std::size_t o = 0; o < eqn.outputs.size(); ++o) {
    rule.results.push_back(dims_of(eqn.outputs[o].aval, is_scan && o >= layout.num_carry));
  }
  return rule;
}

}  // namespace shardscope
