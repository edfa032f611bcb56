// Factor rules of the control-flow primitives, from what their bodies do.
#include "propagation/control_flow_factor_rule.h"

#include <map>
#include <set>

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

// Dims of the equation's tensors (its operands and results, and every value of its bodies) grouped into
// classes that must share a sharding: Shardy treats a loop's operand, block arguments, yielded values and
// result as one value, and each body equation's factors tie the dims they name. A union that would put two
// dims of one tensor in one class is skipped (the body reshards there instead, as XLA does for a branch that
// transposes). A class with a dim some body equation needs whole is replicated.
class DimClasses {
 public:
  int node(int64_t tensor, std::size_t dim) {
    const auto [it, added] = ids_.try_emplace({tensor, dim}, static_cast<int>(parent_.size()));
    if (added) {
      parent_.push_back(it->second);
      tensors_.push_back({tensor});
      replicated_.push_back(false);
    }
    return it->second;
  }

  int find(int n) {
    while (parent_[static_cast<std::size_t>(n)] != n) n = parent_[static_cast<std::size_t>(n)];
    return n;
  }

  bool unite(int a, int b) {
    a = find(a);
    b = find(b);
    if (a == b) return true;
    auto& ta = tensors_[static_cast<std::size_t>(a)];
    auto& tb = tensors_[static_cast<std::size_t>(b)];
    for (const int64_t t : tb) {
      if (ta.count(t) != 0) return false;
    }
    ta.insert(tb.begin(), tb.end());
    tb.clear();
    parent_[static_cast<std::size_t>(b)] = a;
    replicated_[static_cast<std::size_t>(a)] =
        replicated_[static_cast<std::size_t>(a)] || replicated_[static_cast<std::size_t>(b)];
    return true;
  }

  void replicate(int n) { replicated_[static_cast<std::size_t>(find(n))] = true; }
  bool replicated(int n) { return replicated_[static_cast<std::size_t>(find(n))]; }

 private:
  std::map<std::pair<int64_t, std::size_t>, int> ids_;
  std::vector<int> parent_;
  std::vector<std::set<int64_t>> tensors_;
  std::vector<bool> replicated_;
};

// The equation's own operands and results get keys below every variable id.
int64_t operand_key(std::size_t i) { return -1 - static_cast<int64_t>(i); }
int64_t result_key(const Eqn& eqn, std::size_t r) { return -1 - static_cast<int64_t>(eqn.inputs.size() + r); }

class BodyAnalysis {
 public:
  explicit BodyAnalysis(const Eqn& eqn) : eqn_(eqn) {
    const std::string& name = eqn.primitive->name;
    if (name == "scan") {
      const ScanLayout layout = scan_layout(eqn.params);
      const Jaxpr& body = *nested_jaxpr(eqn.params, "jaxpr");
      const std::size_t xs_begin = layout.num_consts + layout.num_carry;
      // As Shardy's data-flow edges do, a carry takes the layout the body gives the value it yields: the body's
      // equations and its yields are tied first, and the block arguments join them only where that agrees (a
      // use that wants another layout reshards inside the body).
      equations(body);
      for (std::size_t j = 0; j < body.outvars.size(); ++j) {
        const bool carry = j < layout.num_carry;
        tie_atom(body.outvars[j], result_key(eqn, j), carry ? 0 : 1, false);
        if (carry) tie_atom(body.outvars[j], operand_key(layout.num_consts + j), 0, true);
      }
      for (std::size_t k = 0; k < body.invars.size(); ++k) {
        tie_var(body.invars[k], operand_key(k), k >= xs_begin ? 1 : 0, false);
      }
    } else if (name == "while") {
      const WhileLayout layout = while_layout(eqn.params);
      const Jaxpr& cond = *nested_jaxpr(eqn.params, "cond_jaxpr");
      const Jaxpr& body = *nested_jaxpr(eqn.params, "body_jaxpr");
      const std::size_t carry_begin = layout.cond_nconsts + layout.body_nconsts;
      equations(body);  // the body's yields first, as for scan
      for (std::size_t j = 0; j < body.outvars.size(); ++j) {
        tie_atom(body.outvars[j], result_key(eqn, j), 0, false);
        tie_atom(body.outvars[j], operand_key(carry_begin + j), 0, true);
      }
      for (std::size_t k = 0; k < body.invars.size(); ++k) {
        const bool carry = k >= layout.body_nconsts;
        tie_var(body.invars[k], operand_key(carry ? carry_begin + k - layout.body_nconsts : layout.cond_nconsts + k), 0,
                false);
      }
      for (std::size_t k = 0; k < cond.invars.size(); ++k) {
        const bool carry = k >= layout.cond_nconsts;
        tie_var(cond.invars[k], operand_key(carry ? carry_begin + k - layout.cond_nconsts : k), 0, false);
      }
      equations(cond);
    } else if (name == "cond") {
      for (const JaxprPtr& branch : cond_branches(eqn.params)) {
        for (std::size_t k = 0; k < branch->invars.size(); ++k)
          tie_var(branch->invars[k], operand_key(k + 1), 0, false);
        for (std::size_t j = 0; j < branch->outvars.size(); ++j)
          tie_atom(branch->outvars[j], result_key(eqn, j), 0, false);
        equations(*branch);
      }
    }
  }

  // The rule over the equation's own tensors: one factor per class they touch; the stacked dim 0 of scan's xs
  // and ys needs replication (each iteration reads or writes one index of it).
  FactorRule rule() {
    FactorRule rule;
    std::map<int, int> factor_of_class;
    const auto dims_of = [&](int64_t key, const Aval& aval, bool stacked) {
      std::vector<std::vector<int>> dims;
      for (std::size_t d = 0; d < aval.rank(); ++d) {
        if (stacked && d == 0) {
          dims.push_back({rule.add_factor(aval.shape[d], FactorKind::kNeedReplication)});
          continue;
        }
        const int n = classes_.node(key, d);
        const int root = classes_.find(n);
        auto it = factor_of_class.find(root);
        if (it == factor_of_class.end()) {
          const FactorKind kind = classes_.replicated(n) ? FactorKind::kNeedReplication : FactorKind::kPassThrough;
          it = factor_of_class.emplace(root, rule.add_factor(aval.shape[d], kind)).first;
        }
        dims.push_back({it->second});
      }
      return dims;
    };
    const bool is_scan = eqn_.primitive->name == "scan";
    const ScanLayout layout = is_scan ? scan_layout(eqn_.params) : ScanLayout{};
    for (std::size_t i = 0; i < eqn_.inputs.size(); ++i) {
      rule.operands.push_back(
          dims_of(operand_key(i), atom_aval(eqn_.inputs[i]), is_scan && i >= layout.num_consts + layout.num_carry));
    }
    for (std::size_t o = 0; o < eqn_.outputs.size(); ++o) {
      rule.results.push_back(dims_of(result_key(eqn_, o), eqn_.outputs[o].aval, is_scan && o >= layout.num_carry));
    }
    return rule;
  }

 private:
  // Ties a body value's dims to dims `offset`.. of the equation's tensor `key`; a carry whose layout cannot stay
  // the same around the loop is replicated.
  void tie_var(const Var& var, int64_t key, std::size_t offset, bool carry) {
    for (std::size_t d = 0; d < var.aval.rank(); ++d) {
      const int a = classes_.node(var.id, d);
      const int b = classes_.node(key, d + offset);
      if (!classes_.unite(a, b) && carry) {
        classes_.replicate(a);
        classes_.replicate(b);
      }
    }
  }

  void tie_atom(const Atom& atom, int64_t key, std::size_t offset, bool carry) {
    if (const auto* var = std::get_if<Var>(&atom)) tie_var(*var, key, offset, carry);
  }

  void equations(const Jaxpr& body) {
    for (const Eqn& eqn : body.eqns) equation(eqn);
  }

  void equation(const Eqn& eqn) {
    const FactorRule rule = factor_rule_for(eqn);
    std::vector<std::vector<int>> members(rule.factor_sizes.size());
    const auto visit = [&](const Var& var, const std::vector<std::vector<int>>& dims) {
      for (std::size_t d = 0; d < var.aval.rank() && d < dims.size(); ++d) {
        const int n = classes_.node(var.id, d);
        if (dims[d].size() == 1) {
          members[static_cast<std::size_t>(dims[d][0])].push_back(n);
        } else if (dims[d].size() > 1) {
          classes_.replicate(n);  // a dim split over factors (reshape): kept whole rather than tracked in part
        }
      }
    };
    for (std::size_t i = 0; i < eqn.inputs.size() && i < rule.operands.size(); ++i) {
      if (const auto* var = std::get_if<Var>(&eqn.inputs[i])) visit(*var, rule.operands[i]);
    }
    for (std::size_t r = 0; r < eqn.outputs.size() && r < rule.results.size(); ++r) {
      visit(eqn.outputs[r], rule.results[r]);
    }
    for (std::size_t f = 0; f < members.size(); ++f) {
      if (rule.kinds[f] == FactorKind::kNeedReplication) {
        for (const int n : members[f]) classes_.replicate(n);
        continue;
      }
      for (std::size_t k = 1; k < members[f].size(); ++k) (void)classes_.unite(members[f][0], members[f][k]);
    }
  }

  const Eqn& eqn_;
  DimClasses classes_;
};

void pin(LayoutMap& known, const Var& var, Layout layout) {
  if (layout.size() != var.aval.rank() || known.contains(var.id)) return;
  known[var.id] = {std::move(layout), true, "control-flow boundary", {}};
}

void pin_atom(LayoutMap& known, const Atom& atom, Layout layout) {
  if (const auto* var = std::get_if<Var>(&atom)) pin(known, *var, std::move(layout));
}

Layout unstacked(const Layout& layout) { return layout.empty() ? layout : Layout(layout.begin() + 1, layout.end()); }

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

FactorRule control_flow_factor_rule(const Eqn& eqn) { return BodyAnalysis(eqn).rule(); }

bool is_control_flow(const Eqn& eqn) {
  const std::string& name = eqn.primitive->name;
  return name == "scan" || name == "while" || name == "cond";
}

std::vector<BodyLayouts> control_flow_body_layouts(const Eqn& eqn, const std::vector<Layout>& operands,
                                                   const std::vector<Layout>& results, const Mesh& mesh) {
  std::vector<BodyLayouts> out;
  const std::string& name = eqn.primitive->name;
  const auto finish = [&](const JaxprPtr& body, LayoutMap known) {
    out.push_back({body, propagate_layouts(*body, mesh, std::move(known))});
  };
  if (name == "scan") {
    const ScanLayout layout = scan_layout(eqn.params);
    const JaxprPtr& body = nested_jaxpr(eqn.params, "jaxpr");
    LayoutMap known;
    const std::size_t xs_begin = layout.num_consts + layout.num_carry;
    for (std::size_t k = 0; k < body->invars.size() && k < operands.size(); ++k) {
      pin(known, body->invars[k], k >= xs_begin ? unstacked(operands[k]) : operands[k]);
    }
    for (std::size_t j = 0; j < body->outvars.size() && j < results.size(); ++j) {
      pin_atom(known, body->outvars[j], j >= layout.num_carry ? unstacked(results[j]) : results[j]);
    }
    finish(body, std::move(known));
  } else if (name == "while") {
    const WhileLayout layout = while_layout(eqn.params);
    const std::size_t carry_begin = layout.cond_nconsts + layout.body_nconsts;
    const JaxprPtr& body = nested_jaxpr(eqn.params, "body_jaxpr");
    const JaxprPtr& cond = nested_jaxpr(eqn.params, "cond_jaxpr");
    LayoutMap body_known;
    for (std::size_t k = 0; k < body->invars.size(); ++k) {
      const std::size_t operand =
          k >= layout.body_nconsts ? carry_begin + k - layout.body_nconsts : layout.cond_nconsts + k;
      if (operand < operands.size()) pin(body_known, body->invars[k], operands[operand]);
    }
    for (std::size_t j = 0; j < body->outvars.size() && j < results.size(); ++j) {
      pin_atom(body_known, body->outvars[j], results[j]);
    }
    finish(body, std::move(body_known));
    LayoutMap cond_known;
    for (std::size_t k = 0; k < cond->invars.size(); ++k) {
      const std::size_t operand = k >= layout.cond_nconsts ? carry_begin + k - layout.cond_nconsts : k;
      if (operand < operands.size()) pin(cond_known, cond->invars[k], operands[operand]);
    }
    finish(cond, std::move(cond_known));
  } else if (name == "cond") {
    for (const JaxprPtr& branch : cond_branches(eqn.params)) {
      LayoutMap known;
      for (std::size_t k = 0; k < branch->invars.size() && k + 1 < operands.size(); ++k) {
        pin(known, branch->invars[k], operands[k + 1]);
      }
      for (std::size_t j = 0; j < branch->outvars.size() && j < results.size(); ++j) {
        pin_atom(known, branch->outvars[j], results[j]);
      }
      finish(branch, std::move(known));
    }
  }
  return out;
}

}  // namespace shardscope
