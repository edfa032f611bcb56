// shard_map as an equation in traced programs: binding, its type rule, its kernel and its printed params.
#include <algorithm>

#include "base/error.h"
#include "base/python_format.h"
#include "exec/shard_map.h"
#include "explicit/mesh_context.h"
#include "ir/axis_env.h"
#include "ir/primitive.h"
#include "mesh/mesh.h"
#include "spmd/reshard.h"

namespace shardscope {
namespace {

const Jaxpr& body_of_params(const Params& params) {
  const auto* ref = param(params, "jaxpr").get_if<ParamValue::JaxprRef>();
  if (ref == nullptr || !*ref) throw type_error("shard_map equation without a jaxpr");
  return **ref;
}

const Mesh& mesh_of(const Params& params) {
  const auto* mesh = param(params, "mesh").get_if<Mesh>();
  if (mesh == nullptr) throw type_error("shard_map equation without a mesh");
  return *mesh;
}

ParamValue spec_tuple(const std::vector<PartitionSpec>& specs) {
  std::vector<ParamValue> items(specs.begin(), specs.end());
  return ParamValue::tuple(std::move(items));
}

// The pre-0.6.1 form of a spec: a dict from array dim to the tuple of mesh axes, `{0: ('x',)}`.
std::string names_dict(const PartitionSpec& spec) {
  std::vector<std::string> entries;
  for (std::size_t d = 0; d < spec.size(); ++d) {
    const std::vector<std::string>& axes = spec.entries()[d].axes;
    if (axes.empty()) continue;
    std::vector<std::string> quoted;
    for (const std::string& axis : axes) quoted.push_back(python_string_repr(axis));
    entries.push_back(std::to_string(d) + ": " + python_tuple(quoted));
  }
  std::string text = "{";
  for (std::size_t i = 0; i < entries.size(); ++i) text += (i > 0 ? ", " : "") + entries[i];
  return text + "}";
}

ParamValue names_tuple(const std::vector<PartitionSpec>& specs) {
  std::vector<std::string> dicts;
  for (const PartitionSpec& spec : specs) dicts.push_back(names_dict(spec));
  return ParamValue::Verbatim{python_tuple(dicts)};
}

ShardMapSpec spec_from_params_impl(const Params& params) {
  ShardMapSpec spec;
  spec.mesh = mesh_of(params);
  spec.in_specs = shard_map_specs(params, "in_specs");
  spec.out_specs = shard_map_specs(params, "out_specs");
  spec.check_vma = param(params, "check_vma").as_bool("check_vma");
  return spec;
}

Params printed_params(const Eqn& eqn, const JaxProfile& profile) {
  const Params& params = eqn.params;
  Params printed;
  if (profile.has(JaxFeature::kShardMapVmaParams)) {
    const ParamValue* from_context = find_param(params, "mesh_from_context");
    for (const auto& [key, value] : params) {
      if (key == "mesh_from_context") continue;
      if (key == "mesh" && from_context != nullptr) {
        // A mesh taken from jax.set_mesh is the abstract one in JAX's equation.
        const Mesh* mesh = value.get_if<Mesh>();
        if (mesh != nullptr) {
          printed.emplace_back(key, ParamValue::Verbatim{abstract_mesh_repr(AbstractMesh::from_mesh(*mesh), profile)});
          continue;
        }
      }
      if (key == "manual_axes" && profile.has(JaxFeature::kShardMapNewlyManualAxes)) {
        printed.emplace_back("newly_manual_axes", value);
      } else {
        printed.emplace_back(key, value);
      }
    }
  } else {
    printed = {{"auto", ParamValue::FrozenSet{}},
               {"check_rep", param(params, "check_vma")},
               {"in_names", names_tuple(shard_map_specs(params, "in_specs"))},
               {"jaxpr", param(params, "jaxpr")},
               {"mesh", param(params, "mesh")},
               {"out_names", names_tuple(shard_map_specs(params, "out_specs"))},
               {"rewrite", true}};
  }
  std::sort(printed.begin(), printed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return printed;
}

}  // namespace

ShardMapSpec shard_map_spec_of(const Params& params) { return spec_from_params_impl(params); }

const Jaxpr& shard_map_body(const Params& params) { return body_of_params(params); }

std::vector<std::vector<std::string>> manual_boundary_layout(const PartitionSpec& spec, const Mesh& spec_mesh,
                                                             const Mesh& run_mesh, std::size_t rank) {
  return dim_axes_on(NamedSharding{spec_mesh, spec, std::nullopt}, run_mesh, rank);
}

std::vector<PartitionSpec> shard_map_specs(const Params& params, const std::string& key) {
  std::vector<PartitionSpec> specs;
  for (const ParamValue& item : param(params, key).as_items(key)) {
    const auto* spec = item.get_if<PartitionSpec>();
    if (spec == nullptr) throw type_error("shard_map " + key + " must hold PartitionSpecs");
    specs.push_back(*spec);
  }
  return specs;
}

std::vector<Atom> bind_shard_map(JaxprBuilder& builder, const JaxprPtr& body, std::span<const Atom> args,
                                 const ShardMapSpec& spec) {
  std::vector<Aval> globals;
  for (const Atom& arg : args) globals.push_back(atom_aval(arg));
  check_shard_map_args(spec, globals);
  std::vector<Aval> body_outs;
  for (const Atom& out : body->outvars) body_outs.push_back(atom_aval(out));
  check_shard_map_outputs(spec, body_outs);
  std::vector<std::string> manual = spec.mesh.axis_names();
  std::sort(manual.begin(), manual.end());
  Params params = {{"check_vma", spec.check_vma},
                   {"in_specs", spec_tuple(spec.in_specs)},
                   {"jaxpr", ParamValue::JaxprRef(body)},
                   {"manual_axes", ParamValue::FrozenSet{manual}},
                   {"mesh", spec.mesh},
                   {"out_specs", spec_tuple(spec.out_specs)}};
  if (spec.mesh_from_context) params.emplace_back("mesh_from_context", true);
  return builder.bind("shard_map", std::vector<Atom>(args.begin(), args.end()), std::move(params));
}

void register_shard_map_primitive() {
  Primitive p;
  p.name = "shard_map";
  p.multiple_results = true;
  p.abstract_eval = [](std::span<const Aval>, const Params& params) {
    const Jaxpr& body = body_of_params(params);
    const Mesh& mesh = mesh_of(params);
    const std::vector<PartitionSpec> out_specs = shard_map_specs(params, "out_specs");
    std::vector<Aval> outs;
    for (std::size_t i = 0; i < body.outvars.size(); ++i) {
      Aval out = shard_map_global_aval(atom_aval(body.outvars[i]), out_specs.at(i), mesh);
      // On a mesh whose axes are Explicit the result's type says how out_specs shards it (f32[6@i]), as JAX
      // types shard_map's outputs on the mesh.
      const auto& types = mesh.axis_types();
      if (!types.empty() &&
          std::all_of(types.begin(), types.end(), [](AxisType t) { return t == AxisType::kExplicit; })) {
        out.dim_axes.assign(out.rank(), {});
        const auto& entries = out_specs.at(i).entries();
        for (std::size_t d = 0; d < entries.size() && d < out.rank(); ++d) out.dim_axes[d] = entries[d].axes;
      }
      outs.push_back(std::move(out));
    }
    return outs;
  };
  // On one device: lay the global values out over the mesh, run every device's body, gather the results.
  p.impl = [](std::span<const BufferPtr> in, std::span<const Aval> avals, const Params& params) {
    const ShardMapSpec spec = spec_from_params_impl(params);
    const JaxProfile profile;
    std::vector<Array> args;
    for (std::size_t i = 0; i < in.size(); ++i) {
      args.push_back(Array::from_host(in[i], make_named_sharding(spec.mesh, spec.in_specs.at(i), profile), profile,
                                      avals[i].weak_type));
    }
    std::vector<std::pair<std::string, int64_t>> axes;
    for (const std::string& name : spec.mesh.axis_names()) axes.emplace_back(name, spec.mesh.axis_size(name));
    const AxisEnvScope scope(axes);
    std::vector<BufferPtr> outs;
    for (const Array& out : run_shard_map(body_of_params(params), spec, args, profile, nullptr))
      outs.push_back(out.gather());
    return outs;
  };
  p.printed_params = printed_params;
  register_primitive(std::move(p));
}

}  // namespace shardscope
