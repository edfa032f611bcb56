// The Layout.AUTO rule (see layout_assignment.h): uses of each parameter, then the one-kept-dimension slice.
#include "exec/layout_assignment.h"

#include <map>
#include <numeric>
#include <optional>

#include "ir/primitive.h"

namespace shardscope {

namespace {

bool has_nested_jaxpr(const Eqn& eqn) {
  for (const auto& [key, value] : eqn.params) {
    if (value.get_if<ParamValue::JaxprRef>() != nullptr) return true;
  }
  return false;
}

// The dimension a slice result keeps whole while cutting every other dimension to length 1, if there is one.
std::optional<std::size_t> kept_dimension(const Shape& operand, const Shape& result) {
  if (operand.size() != result.size()) return std::nullopt;
  std::optional<std::size_t> kept;
  for (std::size_t d = 0; d < operand.size(); ++d) {
    if (result[d] == operand[d] && operand[d] > 1) {
      if (kept) return std::nullopt;
      kept = d;
    } else if (result[d] != 1) {
      return std::nullopt;
    }
  }
  return kept;
}

}  // namespace

std::vector<std::vector<int64_t>> auto_parameter_layouts(const Jaxpr& jaxpr) {
  std::vector<std::vector<int64_t>> layouts;
  for (const Var& param : jaxpr.invars) {
    std::vector<int64_t> order(param.aval.rank());
    std::iota(order.begin(), order.end(), int64_t{0});
    layouts.push_back(std::move(order));
  }
  for (const Eqn& eqn : jaxpr.eqns) {
    if (has_nested_jaxpr(eqn)) return layouts;
  }
  // Per parameter id: how often it is read, and the equation of its last use.
  std::map<int64_t, int> uses;
  std::map<int64_t, const Eqn*> user;
  for (const Eqn& eqn : jaxpr.eqns) {
    for (const Atom& input : eqn.inputs) {
      if (const auto* var = std::get_if<Var>(&input)) {
        ++uses[var->id];
        user[var->id] = &eqn;
      }
    }
  }
  for (const Atom& out : jaxpr.outvars) {
    if (const auto* var = std::get_if<Var>(&out)) uses[var->id] += 1;
  }
  for (std::size_t p = 0; p < jaxpr.invars.size(); ++p) {
    const Var& param = jaxpr.invars[p];
    if (uses[param.id] != 1 || !user.contains(param.id)) continue;
    const Eqn& eqn = *user[param.id];
    const std::string& name = eqn.primitive->name;
    if ((name != "slice" && name != "dynamic_slice") || eqn.outputs.size() != 1) continue;
    const auto* operand = std::get_if<Var>(&eqn.inputs.at(0));
    if (operand == nullptr || operand->id != param.id) continue;  // used as a start index, not sliced
    const auto kept = kept_dimension(param.aval.shape, eqn.outputs[0].aval.shape);
    if (!kept) continue;
    std::vector<int64_t> order;
    for (std::size_t d = 0; d < param.aval.rank(); ++d) {
      if (d != *kept) order.push_back(static_cast<int64_t>(d));
    }
    order.push_back(static_cast<int64_t>(*kept));
    layouts[p] = std::move(order);
  }
  return layouts;
}

}  // namespace shardscope
