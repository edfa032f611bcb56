// Abstract evaluation: shape rules only, so programs over arrays of any size are described instantly.
#include "exec/eval_shape.h"

#include <map>

#include "base/error.h"
#include "exec/lowering.h"
#include "ir/primitive.h"

namespace shardscope {

std::string ShapeDtypeStruct::repr(const JaxProfile& profile) const {
  std::string out = "ShapeDtypeStruct(shape=" + python_int_tuple(shape) + ", dtype=" + std::string(dtype_name(dtype));
  if (sharding) out += ", sharding=" + sharding_repr(*sharding, profile);
  if (weak_type) out += ", weak_type=True";
  return out + ")";
}

std::vector<Aval> abstract_eval_jaxpr(const Jaxpr& jaxpr, const std::vector<Aval>& args, const std::string& name) {
  if (args.size() != jaxpr.invars.size()) {
    throw type_error(name + "() takes " + std::to_string(jaxpr.invars.size()) + " positional arguments but " +
                     std::to_string(args.size()) + " were given");
  }
  std::map<int64_t, Aval> env;
  for (std::size_t i = 0; i < args.size(); ++i) env[jaxpr.invars[i].id] = args[i];
  for (const Var& c : jaxpr.constvars) env.emplace(c.id, c.aval);
  const auto read = [&](const Atom& atom) -> Aval {
    if (const auto* var = std::get_if<Var>(&atom)) {
      const auto it = env.find(var->id);
      return it == env.end() ? var->aval : it->second;
    }
    return atom_aval(atom);
  };
  for (const Eqn& eqn : jaxpr.eqns) {
    std::vector<Aval> inputs;
    for (const Atom& input : eqn.inputs) inputs.push_back(read(input));
    const std::vector<Aval> outputs = eqn.primitive->abstract_eval(inputs, eqn.params);
    for (std::size_t r = 0; r < eqn.outputs.size() && r < outputs.size(); ++r) env[eqn.outputs[r].id] = outputs[r];
  }
  std::vector<Aval> results;
  for (const Atom& out : jaxpr.outvars) results.push_back(read(out));
  return results;
}

std::vector<ShapeDtypeStruct> eval_shape(const Jaxpr& jaxpr, const std::vector<ShapeDtypeStruct>& args,
                                         const JaxProfile& profile, const EvalShapeOptions& options) {
  std::vector<Aval> arg_avals;
  for (const ShapeDtypeStruct& a : args) arg_avals.push_back(a.aval());
  const std::vector<Aval> out_avals = abstract_eval_jaxpr(jaxpr, arg_avals, options.name);

  LoweringOptions lowering;
  lowering.name = options.name;
  lowering.out_shardings = options.out_shardings;
  const PartitionPlan plan = plan_partitioning(jaxpr, args, lowering, profile);

  std::vector<ShapeDtypeStruct> results;
  for (std::size_t o = 0; o < out_avals.size(); ++o) {
    const Aval& aval = out_avals[o];
    ShapeDtypeStruct out{aval.shape, aval.dtype, std::nullopt, false, std::nullopt};
    if (o < options.out_shardings.size() && options.out_shardings[o]) {
      out.sharding = options.out_shardings[o];
    } else if (!aval.dim_axes.empty() && plan.mesh) {
      // Sharding in types (Explicit mode): the type's spec, one entry per dimension.
      out.sharding = sharding_of_layout(*plan.mesh, aval.dim_axes, default_memory_kind(plan.mesh->platform(), profile));
    }
    if (plan.mesh) out.propagated_sharding = plan.output_shardings.at(o);
    results.push_back(std::move(out));
  }
  return results;
}

}  // namespace shardscope
