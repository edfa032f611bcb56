// Explicit-mode dispatch: which rule runs for an equation, and the checks every result type must pass.
#include "explicit/sharding_rules.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "base/python_format.h"
#include "explicit/rules_internal.h"

namespace shardscope {
namespace explicit_rules {
namespace {

std::map<std::string, Rule>& rule_table() {
  static std::map<std::string, Rule> table;
  return table;
}

const Rule* find_rule(const std::string& name) {
  static std::once_flag once;
  std::call_once(once, [] {
    register_value_rules();
    register_structural_rules();
    register_indexing_rules();
  });
  const auto it = rule_table().find(name);
  return it == rule_table().end() ? nullptr : &it->second;
}

bool carries_sharding(const Aval& aval) {
  return !aval.unreduced.empty() || !aval.reduced.empty() ||
         std::any_of(aval.dim_axes.begin(), aval.dim_axes.end(), [](const DimSpec& d) { return !d.empty(); });
}

// Shape of a result as JAX's error prints it: str_short with short dtypes, the (illegal) spec as computed.
std::string result_short(const Aval& shape_only, const TypeSpec& spec) {
  Aval shown = Aval::of(shape_only.shape, shape_only.dtype);
  shown.dim_axes = spec.dims;
  shown.unreduced = spec.unreduced;
  shown.reduced = spec.reduced;
  return shown.str_short(true);
}

std::vector<std::string> duplicated_axes(const TypeSpec& spec) {
  std::vector<std::string> seen;
  std::vector<std::string> duplicated;
  for (const DimSpec& dim : spec.dims) {
    for (const std::string& axis : dim) {
      if (std::find(seen.begin(), seen.end(), axis) != seen.end()) {
        if (std::find(duplicated.begin(), duplicated.end(), axis) == duplicated.end()) duplicated.push_back(axis);
      } else {
        seen.push_back(axis);
      }
    }
  }
  return duplicated;
}

// core.get_sharding's divisibility check on a result type.
void check_divisible(const RuleContext& context, const Aval& out, const TypeSpec& spec) {
  for (std::size_t d = 0; d < spec.dims.size() && d < out.rank(); ++d) {
    if (spec.dims[d].empty() || !context.mesh) continue;
    const int64_t parts = context.axes_size(spec.dims[d]);
    if (out.shape[d] % parts == 0) continue;
    std::vector<std::string> quoted;
    for (const std::string& a : spec.dims[d]) quoted.push_back(python_string_repr(a));
    throw value_error("Sharding spec " + python_tuple(quoted) + " implies that array axis " + std::to_string(d) +
                      " is partitioned " + std::to_string(parts) +
                      " times, but does not evenly divide the dimension size " + std::to_string(out.shape[d]) +
                      ". Got shape: " + python_int_tuple(out.shape) + " and sharding " + sharding_text(context, spec));
  }
}

}  // namespace

void add_rule(const std::string& name, Rule rule) { rule_table()[name] = std::move(rule); }

int64_t RuleContext::axis_size(const std::string& axis) const {
  if (!mesh) {
    throw value_error("the explicit sharding rule of " + name +
                      " needs the sizes of the mesh axes: set a mesh with "
                      "jax.set_mesh before tracing");
  }
  return abstract_axis_size(*mesh, axis);
}

int64_t RuleContext::axes_size(const DimSpec& axes) const {
  int64_t size = 1;
  for (const std::string& axis : axes) size *= axis_size(axis);
  return size;
}

TypeSpec spec_of(const Aval& aval) {
  TypeSpec spec{aval.dim_axes, aval.unreduced, aval.reduced};
  spec.dims.resize(aval.rank());
  return spec;
}

bool all_none(const std::vector<DimSpec>& dims) {
  return std::all_of(dims.begin(), dims.end(), [](const DimSpec& d) { return d.empty(); });
}

std::string entry_repr(const DimSpec& entry) {
  if (entry.empty()) return "None";
  if (entry.size() == 1) return python_string_repr(entry[0]);
  std::vector<std::string> quoted;
  for (const std::string& a : entry) quoted.push_back(python_string_repr(a));
  return python_tuple(quoted);
}

std::string entries_tuple_repr(const std::vector<DimSpec>& entries) {
  std::vector<std::string> items;
  for (const DimSpec& e : entries) items.push_back(entry_repr(e));
  return python_tuple(items);
}

std::string entry_str(const DimSpec& entry) { return entry.size() == 1 ? entry[0] : entry_repr(entry); }

std::string frozenset_repr(const std::vector<std::string>& names) {
  if (names.empty()) return "frozenset()";
  std::vector<std::string> quoted;
  for (const std::string& n : names) quoted.push_back(python_string_repr(n));
  return "frozenset({" + join(quoted, ", ") + "})";
}

std::string aval_text(const Aval& aval, const JaxProfile& profile) { return typeof_str(aval, profile); }

std::string aval_short(const Aval& aval) { return aval.str_short(true); }

PartitionSpec partition_spec(const TypeSpec& spec) {
  std::vector<SpecEntry> entries;
  for (const DimSpec& d : spec.dims) entries.push_back(SpecEntry::of_axes(d));
  PartitionSpec out(std::move(entries));
  if (!spec.unreduced.empty()) out.set_unreduced(spec.unreduced);
  if (!spec.reduced.empty()) out.set_reduced(spec.reduced);
  return out;
}

std::string sharding_text(const RuleContext& context, const TypeSpec& spec) {
  const AbstractMesh mesh = context.mesh.value_or(AbstractMesh{});
  return "NamedSharding(mesh=" + abstract_mesh_repr(mesh, context.profile) +
         ", spec=" + partition_spec(spec).repr(context.profile) + ")";
}

TypeSpec explicit_spec_of(const NamedSharding& sharding, std::size_t rank, const JaxProfile& profile) {
  TypeSpec spec;
  const Mesh& mesh = sharding.mesh;
  auto is_explicit = [&](const std::string& axis) {
    const auto index = mesh.axis_index(axis);
    return !index || mesh.axis_types()[*index] == AxisType::kExplicit;
  };
  for (const SpecEntry& entry : sharding.spec.entries()) {
    DimSpec dim;
    for (const std::string& axis : entry.axes) {
      if (is_explicit(axis)) dim.push_back(axis);
    }
    spec.dims.push_back(dim);
  }
  for (const std::string& axis : sharding.spec.unreduced()) {
    if (is_explicit(axis)) spec.unreduced.push_back(axis);
  }
  for (const std::string& axis : sharding.spec.reduced()) {
    if (is_explicit(axis)) spec.reduced.push_back(axis);
  }
  if (spec.dims.size() > rank) {
    // Trailing Nones beyond the rank are tolerated only on meshes without Explicit axes.
    throw value_error("Length of sharding.spec (" + std::to_string(spec.dims.size()) +
                      ") must be equal to aval's ndim (" + std::to_string(rank) + "). Got sharding.spec " +
                      partition_spec(spec).repr(profile) + ", aval.ndim " + std::to_string(rank) + " and sharding " +
                      "NamedSharding(mesh=" + abstract_mesh_repr(AbstractMesh::from_mesh(mesh), profile) +
                      ", spec=" + partition_spec(spec).repr(profile) + ")");
  }
  spec.dims.resize(rank);
  return spec;
}

std::optional<TypeSpec> sharding_param(const RuleContext& context, const Params& params, const std::string& key,
                                       std::size_t rank) {
  const ParamValue* value = find_param(params, key);
  if (value == nullptr || value->is_none()) return std::nullopt;
  if (const auto* named = value->get_if<NamedSharding>()) return explicit_spec_of(*named, rank, context.profile);
  if (const auto* spec = value->get_if<PartitionSpec>()) {
    if (!context.mesh) {
      throw value_error(
          "Using PartitionSpec when you are not under a mesh context is not allowed. Please pass a NamedSharding "
          "instance or enter into a mesh context via `jax.set_mesh`. Got " +
          spec->repr(context.profile));
    }
    TypeSpec out;
    for (const SpecEntry& entry : spec->entries()) {
      DimSpec dim;
      for (const std::string& axis : entry.axes) {
        if (axis_type_of(*context.mesh, axis) == AxisType::kExplicit) dim.push_back(axis);
      }
      out.dims.push_back(dim);
    }
    for (const std::string& axis : spec->unreduced()) {
      if (axis_type_of(*context.mesh, axis) == AxisType::kExplicit) out.unreduced.push_back(axis);
    }
    for (const std::string& axis : spec->reduced()) {
      if (axis_type_of(*context.mesh, axis) == AxisType::kExplicit) out.reduced.push_back(axis);
    }
    if (out.dims.size() > rank) {
      throw value_error("Length of sharding.spec (" + std::to_string(out.dims.size()) +
                        ") must be equal to aval's ndim (" + std::to_string(rank) + "). Got sharding.spec " +
                        partition_spec(out).repr(context.profile) + ", aval.ndim " + std::to_string(rank) +
                        " and sharding " + sharding_text(context, out));
    }
    out.dims.resize(rank);
    return out;
  }
  return std::nullopt;
}

// JAX's reduced rules: a reshard (or mesh_cast) takes its target's reduced axes; dot_general's result is never
// reduced; every other op keeps the reduced axes its operands share (default_nary_reduced_rule), refusing operands
// reduced over different axes and operands sharded, varying or replicated over an axis another is reduced on.
std::vector<std::string> result_reduced(const std::string& name, std::span<const Aval> inputs, const TypeSpec& spec) {
  if (name == "reshard" || name == "mesh_cast" || !spec.reduced.empty()) return spec.reduced;
  if (name == "dot_general") return {};
  std::vector<std::string> reduced;
  std::vector<std::vector<std::string>> distinct;
  for (const Aval& a : inputs) {
    if (a.reduced.empty()) continue;
    std::vector<std::string> sorted = a.reduced;
    std::sort(sorted.begin(), sorted.end());
    if (std::find(distinct.begin(), distinct.end(), sorted) == distinct.end()) distinct.push_back(sorted);
    reduced = a.reduced;
  }
  if (distinct.size() > 1) {
    std::vector<std::string> shown;
    for (const auto& set : distinct) shown.push_back(frozenset_repr(set));
    throw sharding_type_error("All inputs should be reduced across the same mesh axes. Got specs: {" +
                              join(shown, ", ") + "}");
  }
  if (reduced.empty()) return {};
  for (const Aval& a : inputs) {
    if (a.rank() == 0 && a.reduced.empty()) continue;  // literals and scalars broadcast without communication
    bool sharded_on_reduced = false;
    for (const auto& dim : a.dim_axes) {
      for (const std::string& axis : dim) {
        sharded_on_reduced = sharded_on_reduced || std::find(reduced.begin(), reduced.end(), axis) != reduced.end();
      }
    }
    for (const std::string& axis : a.varying) {
      sharded_on_reduced = sharded_on_reduced || std::find(reduced.begin(), reduced.end(), axis) != reduced.end();
    }
    if (sharded_on_reduced) {
      throw sharding_type_error(
          "Inputs cannot be sharded/varying on the same axes that another input is reduced on. Reshard the input "
          "which is reduced to be sharded on the mesh axes it is reduced on via `jax.sharding.reshard(inp, "
          "jax.P(...))`. Got input type: " +
          a.str_short(false) + " and reduced spec: " + frozenset_repr(reduced));
    }
    // Axes the input neither shards, varies over, nor holds reduced or unreduced: it is replicated there.
    const bool replicated_on_reduced = std::any_of(reduced.begin(), reduced.end(), [&](const std::string& axis) {
      const auto in = [&](const std::vector<std::string>& axes) {
        return std::find(axes.begin(), axes.end(), axis) != axes.end();
      };
      return !in(a.reduced) && !in(a.unreduced);
    });
    if (replicated_on_reduced) {
      throw sharding_type_error(
          "Inputs cannot be replicated on the same axes that another input is reduced on. Got "
          "input type: " +
          a.str_short(false) + " and reduced spec: " + frozenset_repr(reduced));
    }
  }
  // A result unreduced over the axes (mul's partial sum scaled by a reduced value) is not also reduced there.
  return spec.unreduced.empty() ? reduced : std::vector<std::string>{};
}

void refuse_unreduced_unary(const std::string& name, std::span<const Aval> inputs) {
  for (const Aval& a : inputs) {
    if (!a.unreduced.empty()) {
      throw not_implemented_error("unreduced rule for " + name +
                                  " is not implemented. Please file an issue at https://github.com/jax-ml/jax/issues");
    }
  }
}

void refuse_unreduced_generic(const std::string& name, std::span<const Aval> inputs) {
  for (const Aval& a : inputs) {
    if (!a.unreduced.empty()) {
      throw not_implemented_error("unreduced/reduced rule for " + name +
                                  " is not implemented. Please file an issue at https://github.com/jax-ml/jax/issues");
    }
  }
}

}  // namespace explicit_rules

using namespace explicit_rules;

void apply_explicit_sharding(const Primitive& primitive, std::span<const Aval> inputs, const Params& params,
                             std::vector<Aval>& outputs) {
  // Nested programs and manual collectives type their results themselves.
  if (primitive.collective_impl || is_manual_type_cast(primitive.name) || find_param(params, "jaxpr") != nullptr ||
      find_param(params, "call_jaxpr") != nullptr || primitive.name == "custom_lin" ||
      primitive.host_call == HostCall::kPureCallback || primitive.host_call == HostCall::kIoCallback) {
    return;
  }
  const MeshContext& state = mesh_context();
  RuleContext context{primitive.name, state.abstract_mesh, state.profile};
  if (context.mesh && is_empty(*context.mesh)) context.mesh.reset();
  const bool explicit_context = context.mesh && has_axis_type(*context.mesh, AxisType::kExplicit);
  const bool typed_inputs = std::any_of(inputs.begin(), inputs.end(), carries_sharding);
  const bool typed_params = primitive.name == "reshard";
  if (!explicit_context && !typed_inputs && !typed_params) {
    if (context.mesh) {
      for (Aval& out : outputs) {
        out.dim_axes.assign(out.rank(), {});
        out.unreduced.clear();
        out.reduced.clear();
      }
    }
    return;
  }
  const Rule* rule = find_rule(primitive.name);
  std::vector<TypeSpec> specs;
  if (rule != nullptr) {
    specs = (*rule)(context, inputs, params, outputs);
  } else if (const Rule* fallback =
                 primitive.elementwise ? find_rule(inputs.size() == 1 ? "%unary" : "%nary") : nullptr) {
    specs = (*fallback)(context, inputs, params, outputs);
  } else {
    throw sharding_type_error("sharding rule for " + primitive.name +
                              " is not implemented. Please file an issue at https://github.com/jax-ml/jax/issues. "
                              "You can work around this error by dropping that operation into full auto sharding "
                              "mode via: `jax.sharding.auto_axes(fun, out_shardings=...)`");
  }
  for (std::size_t r = 0; r < outputs.size() && r < specs.size(); ++r) {
    TypeSpec& spec = specs[r];
    spec.dims.resize(outputs[r].rank());
    const std::vector<std::string> duplicated = duplicated_axes(spec);
    if (!duplicated.empty()) {
      if (outputs.size() == 1) {
        std::vector<std::string> shown;
        for (const Aval& in : inputs) shown.push_back(in.str_short(true));
        throw sharding_type_error(primitive.name + " operation with inputs: " + join(shown, ", ") +
                                  " produces an illegally sharded result: " + result_short(outputs[r], spec));
      }
      throw Error(context.profile.has(JaxFeature::kDuplicateSpecErrorIsException) ? "DuplicateSpecError" : "ValueError",
                  "A single NamedSharding spec specification can map every mesh axis to at most one positional "
                  "dimension, but " +
                      partition_spec(spec).repr(context.profile) + " has duplicate entries for " +
                      join(duplicated, ", "));
    }
    check_divisible(context, outputs[r], spec);
    outputs[r].dim_axes = spec.dims;
    outputs[r].unreduced = spec.unreduced;
    outputs[r].reduced = result_reduced(primitive.name, inputs, spec);
  }
}

PartitionSpec type_partition_spec(const Aval& aval) { return partition_spec(spec_of(aval)); }

bool is_manual_type_cast(const std::string& primitive) {
  return primitive == "pvary" || primitive == "vary_unreduced_cast_p" || primitive == "reduced_vary_cast_p";
}

std::string typeof_str(const Aval& aval, const JaxProfile& profile) {
  if (!profile.has(JaxFeature::kShapedArrayStrDropsWrapper)) return typeof_repr(aval);
  return (aval.weak_type ? "~" : "") + aval.str_short(false);
}

std::string typeof_repr(const Aval& aval) {
  return "ShapedArray(" + aval.str_short(false) + (aval.weak_type ? ", weak_type=True" : "") + ")";
}

Aval placed_array_aval(const Aval& aval, const NamedSharding& sharding, const JaxProfile& profile) {
  Aval out = aval;
  TypeSpec spec = explicit_spec_of(sharding, aval.rank(), profile);
  out.dim_axes = std::move(spec.dims);
  out.unreduced = std::move(spec.unreduced);
  out.reduced = std::move(spec.reduced);
  return out;
}

Aval typed_aval(const Aval& aval, const NamedSharding& sharding, const JaxProfile& profile) {
  Aval out = aval;
  const TypeSpec spec = explicit_spec_of(sharding, aval.rank(), profile);
  RuleContext context{"device_put", AbstractMesh::from_mesh(sharding.mesh), profile};
  check_divisible(context, aval, spec);
  out.dim_axes = spec.dims;
  out.unreduced = spec.unreduced;
  out.reduced = spec.reduced;
  return out;
}

}  // namespace shardscope
