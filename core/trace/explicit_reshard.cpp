// reshard / mesh_cast primitives and the auto_axes / explicit_axes wrappers that trace through them.
#include "trace/explicit_reshard.h"

#include <algorithm>

#include "base/error.h"
#include "explicit/mesh_context.h"
#include "explicit/rules_internal.h"
#include "explicit/sharding_rules.h"
#include "ir/primitive.h"

namespace shardscope {
namespace {

// One device holds the whole value: moving it between layouts changes nothing; jit moves the shards.
std::vector<BufferPtr> identity_kernel(std::span<const BufferPtr> in, std::span<const Aval>, const Params&) {
  return {in[0]};
}

std::vector<Aval> identity_shape(std::span<const Aval> in, const Params&) {
  if (in.size() != 1) throw type_error("reshard takes one operand");
  return {in[0]};
}

Primitive relayout_primitive(const std::string& name, JaxFeature hides_params) {
  Primitive p;
  p.name = name;
  p.abstract_eval = identity_shape;
  p.impl = identity_kernel;
  p.printed_params = [hides_params](const Eqn& eqn, const JaxProfile& profile) {
    Params shown;
    if (profile.has(hides_params)) return shown;
    if (const ParamValue* dst = find_param(eqn.params, "dst_sharding")) shown.emplace_back("dst_sharding", *dst);
    return shown;
  };
  return p;
}

// The concrete mesh of the context, with the axis types the abstract context mesh has now; without one, the
// error of JAX's canonicalize_sharding, which names the spec it was given.
Mesh context_mesh_with_current_types(const PartitionSpec& spec) {
  const MeshContext& context = mesh_context();
  if (!context.concrete || !context.abstract_mesh) {
    throw value_error(
        "Using PartitionSpec when you are not under a mesh context is not allowed. Please pass a NamedSharding "
        "instance or enter into a mesh context via `jax.set_mesh`. Got " +
        spec.repr(context.profile));
  }
  const Mesh& mesh = *context.concrete;
  const AbstractMesh& abstract = *context.abstract_mesh;
  if (abstract.axis_names != mesh.axis_names() || abstract.axis_sizes != mesh.axis_sizes()) {
    // use_abstract_mesh put another mesh of the same size in effect: its axes lay out the context's devices in
    // their order, as JAX's lowering concretizes an abstract mesh with the computation's devices.
    return Mesh(mesh.devices(), abstract.axis_sizes, abstract.axis_names, abstract.axis_types);
  }
  return Mesh(mesh.devices(), mesh.axis_sizes(), mesh.axis_names(), abstract.axis_types);
}

// The spec of a type with the axes that are not Explicit in `mesh` removed (core.modify_spec_for_auto_manual).
PartitionSpec explicit_only(const Aval& aval, const AbstractMesh& mesh) {
  std::vector<SpecEntry> entries;
  for (std::size_t d = 0; d < aval.rank(); ++d) {
    std::vector<std::string> kept;
    if (d < aval.dim_axes.size()) {
      for (const std::string& axis : aval.dim_axes[d]) {
        if (axis_type_of(mesh, axis) == AxisType::kExplicit) kept.push_back(axis);
      }
    }
    entries.push_back(SpecEntry::of_axes(kept));
  }
  return PartitionSpec(std::move(entries));
}

std::vector<std::string> all_axes_if_empty(const std::vector<std::string>& axes, const AbstractMesh& mesh) {
  return axes.empty() ? mesh.axis_names : axes;
}

Atom mesh_cast(JaxprBuilder& builder, const Atom& x, const NamedSharding& dst) {
  return builder.bind1("mesh_cast", {x}, {{"dst_sharding", dst}});
}

}  // namespace

void register_explicit_primitives() {
  register_primitive(relayout_primitive("reshard", JaxFeature::kReshardHidesParams));
  // mesh_cast only existed until auto_axes stopped needing it (0.7.2); it always printed its destination.
  register_primitive(relayout_primitive("mesh_cast", JaxFeature::kCount));
}

Atom reshard(JaxprBuilder& builder, const Atom& x, const PartitionSpec& spec) {
  return reshard(builder, x, NamedSharding{context_mesh_with_current_types(spec), spec, std::nullopt});
}

Atom reshard(JaxprBuilder& builder, const Atom& x, const NamedSharding& sharding) {
  if (sharding.mesh.axis_names().empty()) {
    throw value_error(
        "Reshard should only be used with out_shardings which are non-None and have a non-empty mesh. Got sharding " +
        sharding_repr(sharding, mesh_context().profile) + ".");
  }
  NamedSharding padded = sharding;
  std::vector<SpecEntry> entries = sharding.spec.entries();
  const std::size_t rank = atom_aval(x).rank();
  if (entries.size() < rank) entries.resize(rank);
  PartitionSpec spec(entries);
  if (!sharding.spec.unreduced().empty()) spec.set_unreduced(sharding.spec.unreduced(), sharding.spec.unreduced_kind());
  if (!sharding.spec.reduced().empty()) spec.set_reduced(sharding.spec.reduced());
  padded.spec = spec;
  padded.memory_kind.reset();
  return builder.bind1("reshard", {x}, {{"dst_sharding", padded}});
}

Atom with_sharding_constraint(JaxprBuilder& builder, const Atom& x, const NamedSharding& sharding) {
  if (explicit_rules::constraint_is_type_assertion(get_abstract_mesh(), atom_aval(x), sharding,
                                                   mesh_context().profile)) {
    return x;
  }
  return builder.bind1(
      "sharding_constraint", {x},
      {{"sharding", sharding}, {"layout", ParamValue::None{}}, {"unconstrained_dims", ParamValue::FrozenSet{}}});
}

std::vector<Atom> auto_axes(JaxprBuilder& builder, const TracedFunction& fun, const std::vector<Atom>& args,
                            const std::optional<std::vector<PartitionSpec>>& out_shardings,
                            const std::vector<std::string>& axes) {
  if (!out_shardings) throw type_error("Missing required keyword argument: 'out_sharding'");
  const AbstractMesh previous = get_abstract_mesh();
  if (is_empty(previous)) return fun(builder, args);
  const std::vector<std::string> chosen = all_axes_if_empty(axes, previous);
  for (const std::string& axis : chosen) {
    if (axis_type_of(previous, axis) == AxisType::kManual) {
      throw not_implemented_error(
          "Going from `Manual` AxisType to `Auto` or `Explicit` AxisType is not allowed. Please file a bug at "
          "https://github.com/jax-ml/jax/issues with your use case");
    }
  }
  if (std::all_of(chosen.begin(), chosen.end(),
                  [&](const std::string& a) { return axis_type_of(previous, a) == AxisType::kAuto; })) {
    return fun(builder, args);
  }
  const JaxProfile profile = mesh_context().profile;
  const AbstractMesh inner = with_axis_types(previous, chosen, AxisType::kAuto);
  std::vector<Atom> outs;
  {
    AbstractMeshScope scope(inner);
    std::vector<Atom> moved;
    for (const Atom& a : args) {
      const PartitionSpec spec = explicit_only(atom_aval(a), inner);
      if (profile.has(JaxFeature::kAutoAxesWithoutMeshCast)) {
        moved.push_back(reshard(builder, a, spec));
      } else {
        // Older JAX changed the mesh's axis types with an explicit cast that keeps the data where it is.
        moved.push_back(
            mesh_cast(builder, a, NamedSharding{context_mesh_with_current_types(spec), spec, std::nullopt}));
      }
    }
    outs = fun(builder, moved);
  }
  if (outs.size() != out_shardings->size()) {
    throw value_error("auto_axes: " + std::to_string(out_shardings->size()) + " out_sharding(s) for " +
                      std::to_string(outs.size()) + " result(s)");
  }
  std::vector<Atom> results;
  for (std::size_t i = 0; i < outs.size(); ++i) {
    if (profile.has(JaxFeature::kAutoAxesWithoutMeshCast)) {
      results.push_back(reshard(builder, outs[i], (*out_shardings)[i]));
    } else {
      const Mesh concrete = context_mesh_with_current_types((*out_shardings)[i]);
      results.push_back(mesh_cast(builder, outs[i], NamedSharding{concrete, (*out_shardings)[i], std::nullopt}));
    }
  }
  return results;
}

std::vector<Atom> explicit_axes(JaxprBuilder& builder, const TracedFunction& fun, const std::vector<Atom>& args,
                                const std::optional<std::vector<PartitionSpec>>& in_shardings,
                                const std::vector<std::string>& axes) {
  if (!in_shardings) throw type_error("Missing required keyword argument: 'in_sharding'");
  const AbstractMesh previous = get_abstract_mesh();
  if (is_empty(previous)) {
    throw value_error(
        "Context mesh cannot be empty. Please use `jax.set_mesh` API to enter into a mesh context when using "
        "`explicit_axes` API.");
  }
  const std::vector<std::string> chosen = all_axes_if_empty(axes, previous);
  for (const std::string& axis : chosen) {
    if (axis_type_of(previous, axis) == AxisType::kManual) {
      throw not_implemented_error(
          "Going from `Manual` AxisType to `Auto` or `Explicit` AxisType is not allowed. Please file a bug at "
          "https://github.com/jax-ml/jax/issues with your use case");
    }
  }
  if (in_shardings->size() != args.size()) {
    throw value_error("explicit_axes: " + std::to_string(in_shardings->size()) + " in_sharding(s) for " +
                      std::to_string(args.size()) + " argument(s)");
  }
  const AbstractMesh inner = with_axis_types(previous, chosen, AxisType::kExplicit);
  std::vector<Atom> outs;
  {
    AbstractMeshScope scope(inner);
    std::vector<Atom> moved;
    for (std::size_t i = 0; i < args.size(); ++i) moved.push_back(reshard(builder, args[i], (*in_shardings)[i]));
    outs = fun(builder, moved);
  }
  std::vector<Atom> results;
  for (const Atom& o : outs) results.push_back(reshard(builder, o, explicit_only(atom_aval(o), previous)));
  return results;
}

}  // namespace shardscope
