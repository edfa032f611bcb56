// JaxprBuilder: shape rules at bind time, equations in program order.
#include "trace/builder.h"

#include <algorithm>
#include <map>
#include <set>

#include "base/error.h"
#include "explicit/sharding_rules.h"
#include "ir/axis_env.h"
#include "ops/ops.h"

namespace shardscope {

Var JaxprBuilder::arg(Aval aval) {
  Var v = new_var(std::move(aval));
  jaxpr_.invars.push_back(v);
  return v;
}

Var JaxprBuilder::constant(Aval aval) {
  Var v = new_var(std::move(aval));
  jaxpr_.constvars.push_back(v);
  return v;
}

namespace {

// The ops whose lax functions call JAX's auto_insert_reshard (standard_insert_pvary before 0.10.2) on their
// operands, and add_any (ad_util.add_jaxvals).
bool matches_operand_vma(const std::string& name) {
  static const std::set<std::string> names = {"add",
                                              "sub",
                                              "mul",
                                              "div",
                                              "rem",
                                              "max",
                                              "min",
                                              "pow",
                                              "atan2",
                                              "nextafter",
                                              "complex",
                                              "and",
                                              "or",
                                              "xor",
                                              "shift_left",
                                              "shift_right_arithmetic",
                                              "shift_right_logical",
                                              "eq",
                                              "ne",
                                              "ge",
                                              "gt",
                                              "le",
                                              "lt",
                                              "clamp",
                                              "concatenate",
                                              "stack",
                                              "dot_general",
                                              "pad",
                                              "select_n",
                                              "add_any"};
  return names.contains(name);
}

std::vector<Atom> insert_operand_pvary(JaxprBuilder& builder, std::vector<Atom> inputs) {
  // Under a check_vma shard_map an operand varying over fewer manual axes than the others is first cast with
  // pvary over the missing ones (literals included), so every operand has the result's type.
  std::vector<std::string> all;
  for (const Atom& input : inputs) {
    const std::vector<std::string>& varying = atom_aval(input).varying;
    all.insert(all.end(), varying.begin(), varying.end());
  }
  if (all.empty()) return inputs;
  all = in_binding_order(all);
  for (Atom& input : inputs) {
    const std::vector<std::string>& varying = atom_aval(input).varying;
    std::vector<std::string> missing;
    for (const std::string& axis : all) {
      if (std::find(varying.begin(), varying.end(), axis) == varying.end()) missing.push_back(axis);
    }
    if (!missing.empty()) input = builder.bind1("pvary", {input}, {{"axes", ParamValue::name_tuple(missing)}});
  }
  return inputs;
}

}  // namespace

std::vector<Atom> JaxprBuilder::bind(const std::string& name, std::vector<Atom> inputs, Params params) {
  ensure_core_primitives();
  const Primitive* primitive = find_primitive(name);
  if (primitive == nullptr) throw not_implemented_error("primitive '" + name + "' is not implemented");
  if (inputs.size() > 1 && matches_operand_vma(name)) inputs = insert_operand_pvary(*this, std::move(inputs));
  std::vector<Aval> in_avals;
  for (const Atom& input : inputs) in_avals.push_back(atom_aval(input));
  std::vector<Aval> out_avals = primitive->abstract_eval(in_avals, params);
  // Explicit mode: the result types' shardings come from the primitive's sharding rule (or its error).
  apply_explicit_sharding(*primitive, in_avals, params, out_avals);
  if (!primitive->collective_impl && !is_manual_type_cast(primitive->name)) {
    // An ordinary op's result varies over every manual axis any input varies over.
    std::vector<std::string> varying;
    for (const Aval& aval : in_avals) varying.insert(varying.end(), aval.varying.begin(), aval.varying.end());
    varying = in_binding_order(varying);
    for (Aval& aval : out_avals) aval.varying = varying;
  }
  Eqn eqn{primitive, std::move(params), std::move(inputs), {}, current_source_info()};
  std::vector<Atom> outputs;
  for (Aval& aval : out_avals) {
    eqn.outputs.push_back(new_var(std::move(aval)));
    outputs.emplace_back(eqn.outputs.back());
  }
  jaxpr_.eqns.push_back(std::move(eqn));
  return outputs;
}

Atom JaxprBuilder::bind1(const std::string& name, std::vector<Atom> inputs, Params params) {
  std::vector<Atom> outputs = bind(name, std::move(inputs), std::move(params));
  if (outputs.size() != 1) throw value_error(name + " has " + std::to_string(outputs.size()) + " results, not one");
  return outputs[0];
}

JaxprPtr JaxprBuilder::build(std::vector<Atom> outputs) const {
  auto jaxpr = std::make_shared<Jaxpr>(jaxpr_);
  jaxpr->outvars = std::move(outputs);
  return jaxpr;
}

std::vector<Atom> inline_jaxpr(JaxprBuilder& builder, const Jaxpr& jaxpr, std::span<const Atom> args) {
  std::map<int64_t, Atom> env;
  std::size_t next = 0;
  const bool consts_given = args.size() == jaxpr.constvars.size() + jaxpr.invars.size();
  for (const Var& var : jaxpr.constvars) {
    env.insert_or_assign(var.id, consts_given ? args[next++] : Atom{builder.constant(var.aval)});
  }
  if (args.size() - next != jaxpr.invars.size()) {
    throw type_error("cannot inline a jaxpr of " + std::to_string(jaxpr.invars.size()) + " arguments on " +
                     std::to_string(args.size() - next) + " values");
  }
  for (const Var& var : jaxpr.invars) env.insert_or_assign(var.id, args[next++]);
  const auto read = [&](const Atom& atom) -> Atom {
    if (const auto* var = std::get_if<Var>(&atom)) return env.at(var->id);
    return atom;
  };
  for (const Eqn& eqn : jaxpr.eqns) {
    const SourceScope source(source_or_current(eqn.source));
    std::vector<Atom> inputs;
    for (const Atom& input : eqn.inputs) inputs.push_back(read(input));
    const std::vector<Atom> outputs = builder.bind(eqn.primitive->name, std::move(inputs), eqn.params);
    for (std::size_t i = 0; i < eqn.outputs.size(); ++i) env.insert_or_assign(eqn.outputs[i].id, outputs.at(i));
  }
  std::vector<Atom> results;
  for (const Atom& out : jaxpr.outvars) results.push_back(read(out));
  return results;
}

Literal scalar_literal(double value, DType dtype, bool weak_type) {
  Literal literal;
  if (dtype == DType::kBool) {
    literal.value = value != 0;
  } else if (is_floating(dtype)) {
    literal.value = value;
  } else {
    literal.value = static_cast<int64_t>(value);
  }
  literal.aval = Aval::of({}, dtype, weak_type);
  return literal;
}

}  // namespace shardscope
