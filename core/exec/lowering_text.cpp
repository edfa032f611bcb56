// Program texts for lower().as_text() and compile().as_text(), in shardscope's own clearly marked
// format, with XLA's HloSharding strings for every value's layout.
#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "exec/lowering.h"
#include "ir/layout_constraint.h"
#include "ir/primitive.h"
#include "sharding/notation.h"
#include "spmd/collectives.h"

namespace shardscope {
namespace {

std::string element_type(DType dtype) {
  switch (dtype) {
    case DType::kBool: return "i1";
    case DType::kInt8: return "i8";
    case DType::kInt16: return "i16";
    case DType::kInt32: return "i32";
    case DType::kInt64: return "i64";
    case DType::kUInt8: return "ui8";
    case DType::kUInt16: return "ui16";
    case DType::kUInt32: return "ui32";
    case DType::kUInt64: return "ui64";
    case DType::kBFloat16: return "bf16";
    case DType::kFloat16: return "f16";
    case DType::kFloat32: return "f32";
    case DType::kFloat64: return "f64";
  }
  return "?";
}

// MLIR's tensor type: tensor<8x4xf32>, tensor<f32>.
std::string tensor_type(const Aval& aval) {
  std::string out = "tensor<";
  for (const int64_t d : aval.shape) out += std::to_string(d) + "x";
  return out + element_type(aval.dtype) + ">";
}

// HLO's shape text: f32[8,4], pred[2].
std::string hlo_shape(const Aval& aval) {
  std::string out = aval.dtype == DType::kBool ? "pred" : std::string(dtype_short_name(aval.dtype));
  out += "[";
  for (std::size_t d = 0; d < aval.shape.size(); ++d) out += (d == 0 ? "" : ",") + std::to_string(aval.shape[d]);
  return out + "]";
}

std::string literal_text(const Literal& literal) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool>) {
          return v ? "true" : "false";
        } else if constexpr (std::is_same_v<T, double>) {
          return python_float_repr(v);
        } else {
          return std::to_string(v);
        }
      },
      literal.value);
}

Layout layout_or_replicated(const PartitionPlan& plan, const Atom& atom) {
  const std::size_t rank = atom_aval(atom).rank();
  if (const auto* var = std::get_if<Var>(&atom)) {
    const auto it = plan.layouts.find(var->id);
    if (it != plan.layouts.end()) {
      Layout layout = it->second.layout;
      layout.resize(rank);
      return layout;
    }
  }
  return Layout(rank);
}

std::string sharding_attr(const PartitionPlan& plan, const Atom& atom) {
  if (!plan.mesh) return "";
  return "mhlo.sharding = \"" + hlo_sharding_text(*plan.mesh, layout_or_replicated(plan, atom)) + "\"";
}

std::string printed_params(const Eqn& eqn, const JaxProfile& profile) {
  std::vector<std::string> parts;
  for (const auto& [key, value] : eqn.params) {
    if (value.get_if<ParamValue::JaxprRef>() != nullptr) continue;
    parts.push_back(key + " = " + value.str(profile));
  }
  return parts.empty() ? "" : " {" + join(parts, ", ") + "}";
}

// Value names in program order: %arg0..., then %0, %1, ... (multi-result equations: %3#0, %3#1).
class Names {
 public:
  std::string of(const Atom& atom) const {
    if (const auto* literal = std::get_if<Literal>(&atom)) return literal_text(*literal);
    const auto it = names_.find(std::get<Var>(atom).id);
    return it == names_.end() ? "%?" : it->second;
  }
  std::string of_id(int64_t id) const {
    const auto it = names_.find(id);
    return it == names_.end() ? "%?" : it->second;
  }
  void set(const Var& var, std::string name) { names_[var.id] = std::move(name); }
  void set_id(int64_t id, std::string name) { names_[id] = std::move(name); }

 private:
  std::map<int64_t, std::string> names_;
};

std::string replica_groups(const Mesh& mesh, const std::vector<std::string>& axes) {
  std::vector<std::string> groups;
  for (const auto& group : axis_groups(mesh, axes)) {
    std::vector<std::string> members;
    for (const std::size_t m : group) members.push_back(std::to_string(m));
    groups.push_back("{" + join(members, ",") + "}");
  }
  return "{" + join(groups, ",") + "}";
}

}  // namespace

std::string hlo_sharding_text(const Mesh& mesh, const Layout& layout) {
  return hlo_sharding_notation(mesh, layout, false);
}

std::string lowered_text(const Jaxpr& jaxpr, const PartitionPlan& plan, const std::string& name,
                         const JaxProfile& profile) {
  std::ostringstream out;
  const int64_t partitions = plan.mesh ? plan.mesh->size() : 1;
  out << "# shardscope lowering: shardscope's StableHLO-like text with XLA HloSharding annotations, "
         "not JAX/XLA output\n";
  out << "module @jit_" << name << " attributes {mhlo.num_partitions = " << partitions
      << " : i32, mhlo.num_replicas = 1 : i32} {\n";
  Names names;
  std::vector<std::string> params;
  for (std::size_t i = 0; i < jaxpr.invars.size(); ++i) {
    const Var& v = jaxpr.invars[i];
    names.set(v, "%arg" + std::to_string(i));
    const std::string attr = sharding_attr(plan, Atom{v});
    params.push_back("%arg" + std::to_string(i) + ": " + tensor_type(v.aval) + (attr.empty() ? "" : " {" + attr + "}"));
  }
  std::vector<std::string> results;
  for (std::size_t o = 0; o < jaxpr.outvars.size(); ++o) {
    const std::string info = jaxpr.outvars.size() == 1 ? "result" : "result[" + std::to_string(o) + "]";
    const std::string attr = sharding_attr(plan, jaxpr.outvars[o]);
    results.push_back(tensor_type(atom_aval(jaxpr.outvars[o])) + " {jax.result_info = \"" + info + "\"" +
                      (attr.empty() ? "" : ", " + attr) + "}");
  }
  out << "  func.func public @main(" << join(params, ", ") << ") -> (" << join(results, ", ") << ") {\n";
  int counter = 0;
  for (const Eqn& eqn : jaxpr.eqns) {
    const std::string base = "%" + std::to_string(counter++);
    if (eqn.outputs.size() == 1) {
      names.set(eqn.outputs[0], base);
    } else {
      for (std::size_t r = 0; r < eqn.outputs.size(); ++r) names.set(eqn.outputs[r], base + "#" + std::to_string(r));
    }
    std::vector<std::string> operands;
    std::vector<std::string> operand_types;
    for (const Atom& input : eqn.inputs) {
      operands.push_back(names.of(input));
      operand_types.push_back(tensor_type(atom_aval(input)));
    }
    std::vector<std::string> result_types;
    std::vector<std::string> result_shardings;
    for (const Var& output : eqn.outputs) {
      result_types.push_back(tensor_type(output.aval));
      const std::string attr = sharding_attr(plan, Atom{output});
      if (!attr.empty()) result_shardings.push_back(attr);
    }
    const bool constraint = is_layout_constraint(eqn);
    out << "    " << base << (eqn.outputs.size() > 1 ? ":" + std::to_string(eqn.outputs.size()) : "") << " = "
        << (constraint ? "stablehlo.custom_call @Sharding" : "\"" + eqn.primitive->name + "\"") << "("
        << join(operands, ", ") << ")" << (constraint ? "" : printed_params(eqn, profile)) << " : ("
        << join(operand_types, ", ") << ") -> "
        << (result_types.size() == 1 ? result_types[0] : "(" + join(result_types, ", ") + ")");
    if (!result_shardings.empty()) out << " {" << join(result_shardings, ", ") << "}";
    out << "\n";
  }
  std::vector<std::string> returned;
  std::vector<std::string> returned_types;
  for (const Atom& o : jaxpr.outvars) {
    returned.push_back(names.of(o));
    returned_types.push_back(tensor_type(atom_aval(o)));
  }
  out << "    return " << join(returned, ", ") << " : " << join(returned_types, ", ") << "\n  }\n}\n";
  return out.str();
}

std::string compiled_text(const Jaxpr& jaxpr, const PartitionPlan& plan, const std::string& name,
                          const JaxProfile& profile) {
  std::ostringstream out;
  const int64_t partitions = plan.mesh ? plan.mesh->size() : 1;
  out << "# shardscope compiled program: per-device shapes and inserted collectives in shardscope's HLO-like "
         "text, not XLA output\n";
  out << "HloModule jit_" << name << ", num_partitions=" << partitions << "\n\nENTRY %main {\n";
  Names names;
  for (std::size_t i = 0; i < jaxpr.invars.size(); ++i) {
    const Var& v = jaxpr.invars[i];
    names.set(v, "%p" + std::to_string(i));
    out << "  %p" << i << " = " << hlo_shape(plan.local_aval(Atom{v})) << " parameter(" << i << ")";
    if (plan.mesh) out << ", sharding=" << hlo_sharding_text(*plan.mesh, layout_or_replicated(plan, Atom{v}));
    out << "\n";
  }
  int counter = 0;
  int channel = 1;
  // Prints the collective reading `operand` and returns its value's name.
  const auto print_collective = [&](const PlannedCollective& c, const std::string& operand) {
    const std::string result = "%" + collective_name(c.kind) + "." + std::to_string(counter++);
    out << "  " << result << " = " << hlo_shape(c.local_result) << " " << collective_name(c.kind) << "(" << operand
        << "), channel_id=" << channel++ << ", replica_groups=" << replica_groups(*plan.mesh, c.axes);
    if (c.kind == CollectiveKind::kAllGather || c.kind == CollectiveKind::kAllToAll) {
      out << ", dimensions={" << c.dimension << "}";
    }
    if (c.kind == CollectiveKind::kAllReduce) out << ", to_apply=%reduce";
    out << "  # " << c.origin << "\n";
    return result;
  };
  // Members of each combined all-reduce, and how many of them are still to be printed.
  std::map<int64_t, std::vector<const PlannedCollective*>> combined_members;
  for (const PlannedCollective& c : plan.collectives) {
    if (c.kind == CollectiveKind::kAllReduce && c.combined >= 0) combined_members[c.combined].push_back(&c);
  }
  std::map<int64_t, std::vector<std::string>> combined_operands;  // printed members' partial results
  // Values that wait for a combined all-reduce not printed yet: a member's result, and everything computed from it.
  // Equations reading them are printed once the combined all-reduce is (the combiner only joins all-reduces that do
  // not depend on each other, so nothing a later member needs waits).
  std::set<int64_t> waiting;
  std::vector<std::size_t> held;
  const auto print_equation = [&](std::size_t e) {
    const Eqn& eqn = jaxpr.eqns[e];
    // Operands moved for this equation only: later users still read the value in its own layout. Each operand's
    // moves chain on their own (t @ t gathers t one way for the left operand and another for the right).
    std::map<int64_t, std::string> moved;
    const auto key = [](const PlannedCollective& c) { return c.operand >= 0 ? c.operand : -2 - c.var_id; };
    for (const PlannedCollective& c : plan.collectives) {
      if (c.equation != e || c.kind == CollectiveKind::kAllReduce) continue;
      const auto it = moved.find(key(c));
      std::string operand = it != moved.end() ? it->second : names.of_id(c.var_id);
      if (operand == "%?") {
        // A value the partitioner makes for the kernel (argmax's index iota), in the layout it moves from.
        operand = "%iota." + std::to_string(counter++);
        out << "  " << operand << " = " << hlo_shape(c.local_operand) << " iota()  # " << c.origin << "\n";
      }
      moved[key(c)] = print_collective(c, operand);
    }
    const std::string base = "%" + eqn.primitive->name + "." + std::to_string(counter++);
    std::vector<std::string> operands;
    for (std::size_t i = 0; i < eqn.inputs.size(); ++i) {
      const Atom& input = eqn.inputs[i];
      const auto* var = std::get_if<Var>(&input);
      auto it = moved.find(static_cast<int64_t>(i));
      if (it == moved.end() && var != nullptr) it = moved.find(-2 - var->id);
      operands.push_back(it != moved.end() ? it->second : names.of(input));
    }
    std::vector<std::string> shapes;
    for (std::size_t r = 0; r < eqn.outputs.size(); ++r) {
      names.set(eqn.outputs[r], eqn.outputs.size() == 1 ? base : base + "#" + std::to_string(r));
      shapes.push_back(hlo_shape(plan.local_aval(Atom{eqn.outputs[r]})));
    }
    out << "  " << base << " = " << (shapes.size() == 1 ? shapes[0] : "(" + join(shapes, ", ") + ")") << " "
        << eqn.primitive->name << "(" << join(operands, ", ") << ")" << printed_params(eqn, profile) << "\n";
    bool completed = false;
    for (const PlannedCollective& c : plan.collectives) {
      if (c.equation != e || c.kind != CollectiveKind::kAllReduce) continue;
      if (c.combined < 0) {
        names.set_id(c.var_id, print_collective(c, names.of_id(c.var_id)));
        continue;
      }
      std::vector<std::string>& ready = combined_operands[c.combined];
      ready.push_back(names.of_id(c.var_id));
      const std::vector<const PlannedCollective*>& members = combined_members[c.combined];
      if (ready.size() < members.size()) {
        waiting.insert(c.var_id);
        continue;
      }
      // The last member: one all-reduce of the tuple of every member's partial results, then each member's value.
      const std::string result = "%all-reduce." + std::to_string(counter++);
      std::vector<std::string> tuple;
      std::vector<std::string> origins;
      for (const PlannedCollective* member : members) {
        tuple.push_back(hlo_shape(member->local_result));
        origins.push_back(member->origin);
      }
      out << "  " << result << " = (" << join(tuple, ", ") << ") all-reduce(" << join(ready, ", ")
          << "), channel_id=" << channel++ << ", replica_groups=" << replica_groups(*plan.mesh, c.axes)
          << ", to_apply=%reduce  # combined: " << join(origins, ", ") << "\n";
      for (std::size_t m = 0; m < members.size(); ++m) {
        const std::string element = "%get-tuple-element." + std::to_string(counter++);
        out << "  " << element << " = " << tuple[m] << " get-tuple-element(" << result << "), index=" << m << "\n";
        names.set_id(members[m]->var_id, element);
        waiting.erase(members[m]->var_id);
      }
      completed = true;
    }
    return completed;
  };
  const auto reads_waiting = [&](std::size_t e) {
    return std::any_of(jaxpr.eqns[e].inputs.begin(), jaxpr.eqns[e].inputs.end(), [&](const Atom& input) {
      const auto* var = std::get_if<Var>(&input);
      return var != nullptr && waiting.contains(var->id);
    });
  };
  // Prints held equations whose values are all available now, repeatedly: one may release the next.
  const auto release_held = [&] {
    for (bool progress = true; progress;) {
      progress = false;
      for (auto it = held.begin(); it != held.end(); ++it) {
        if (reads_waiting(*it)) continue;
        const std::size_t e = *it;
        held.erase(it);
        for (const Var& output : jaxpr.eqns[e].outputs) waiting.erase(output.id);
        print_equation(e);
        progress = true;
        break;
      }
    }
  };
  for (std::size_t e = 0; e < jaxpr.eqns.size(); ++e) {
    if (reads_waiting(e)) {
      held.push_back(e);
      for (const Var& output : jaxpr.eqns[e].outputs) waiting.insert(output.id);
      continue;
    }
    if (print_equation(e)) release_held();
  }
  // Every group completes at its last member, so nothing is left waiting; print anything that is, all the same.
  for (const std::size_t e : held) print_equation(e);
  std::vector<std::string> roots;
  std::vector<std::string> root_shapes;
  for (const Atom& o : jaxpr.outvars) {
    roots.push_back(names.of(o));
    root_shapes.push_back(hlo_shape(plan.local_aval(o)));
  }
  out << "  ROOT %tuple = (" << join(root_shapes, ", ") << ") tuple(" << join(roots, ", ") << ")\n}\n";
  return out.str();
}

}  // namespace shardscope
