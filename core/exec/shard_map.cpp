// shard_map checks and execution.
#include "exec/shard_map.h"

#include <algorithm>

#include "base/error.h"
#include "exec/interpreter.h"
#include "spmd/reshard.h"

namespace shardscope {
namespace {

std::string mesh_shape_text(const Mesh& mesh) { return python_int_tuple(mesh.axis_sizes()); }

std::string mesh_names_text(const Mesh& mesh) {
  std::vector<std::string> names;
  for (const std::string& n : mesh.axis_names()) names.push_back(python_string_repr(n));
  return python_tuple(names);
}

std::vector<std::string> in_mesh_order(const Mesh& mesh, const std::vector<std::string>& axes) {
  std::vector<std::string> ordered;
  for (const std::string& name : mesh.axis_names()) {
    if (std::find(axes.begin(), axes.end(), name) != axes.end()) ordered.push_back(name);
  }
  return ordered;
}

// The path of operand i of `count`: arg_paths name the caller's arguments, which follow the values the body
// captured (those come first, with P() specs that never fail a check).
ValuePath arg_path(const ShardMapSpec& spec, std::size_t i, std::size_t count) {
  const std::size_t captured = count > spec.arg_paths.size() ? count - spec.arg_paths.size() : 0;
  if (i >= captured && i - captured < spec.arg_paths.size()) return spec.arg_paths[i - captured];
  return {"[" + std::to_string(i) + "]", "", std::nullopt};
}

ValuePath out_path(const ShardMapSpec& spec, std::size_t i) {
  if (i < spec.out_paths.size()) return spec.out_paths[i];
  return {spec.out_specs.size() == 1 ? "" : "[" + std::to_string(i) + "]", "", std::nullopt};
}

std::string joined_messages(std::vector<std::string> messages) {
  if (messages.size() == 1) messages[0] = messages[0].substr(2);  // a lone message has no bullet
  return join(messages, "\n\n");
}

}  // namespace

void check_shard_map_args(const ShardMapSpec& spec, const std::vector<Aval>& global_avals) {
  const JaxProfile profile;
  const std::string& f = spec.function_name;
  std::vector<std::string> rank_messages;
  bool any_scalar = false;
  for (std::size_t i = 0; i < global_avals.size() && i < spec.in_specs.size(); ++i) {
    const PartitionSpec& s = spec.in_specs[i];
    const Aval& aval = global_avals[i];
    if (s.size() <= aval.rank()) continue;
    const ValuePath path = arg_path(spec, i, global_avals.size());
    any_scalar = any_scalar || aval.rank() == 0;
    rank_messages.push_back("* in_specs" + path.spec_keypath.value_or(path.keypath) + " is " + s.repr(profile) +
                            " which has length " + std::to_string(s.size()) + ", but the passed args" + path.keypath +
                            path.binding_note + " has shape " + aval.str_short(false) + ", which has rank " +
                            std::to_string(aval.rank()) + " (and " + std::to_string(aval.rank()) + " < " +
                            std::to_string(s.size()) + ")");
  }
  if (!rank_messages.empty()) {
    std::string message = "shard_map applied to the function '" + f +
                          "' was given an in_specs entry which is too long to be compatible with the corresponding "
                          "input value from the function:\n\n" +
                          joined_messages(rank_messages) +
                          "\n\nEntries in in_specs must be of length no greater than the number of axes in the "
                          "corresponding input value.\n\nEither revise the spec to be shorter, or modify '" +
                          f + "' so that its inputs have sufficient rank.";
    if (any_scalar) {
      message +=
          "\n\nFor scalar values (rank 0), consider using an in_specs entry of `P()`, where `P = "
          "jax.sharding.PartitionSpec`.";
    }
    throw value_error(message);
  }
  std::vector<std::string> divisibility_messages;
  for (std::size_t i = 0; i < global_avals.size() && i < spec.in_specs.size(); ++i) {
    const PartitionSpec& s = spec.in_specs[i];
    const Aval& aval = global_avals[i];
    const ValuePath path = arg_path(spec, i, global_avals.size());
    for (std::size_t d = 0; d < s.size(); ++d) {
      const std::vector<std::string>& names = s.entries()[d].axes;
      if (names.empty()) continue;
      const int64_t size = spec.mesh.axes_size(names);
      if (aval.shape[d] % size == 0) continue;
      std::vector<std::string> quoted;
      for (const std::string& n : names) quoted.push_back(python_string_repr(n));
      const std::string axis = names.size() > 1 ? "axes " + python_tuple(quoted) : "axis " + quoted[0];
      divisibility_messages.push_back(
          "* the passed args" + path.keypath + " of shape " + aval.str_short(false) + path.binding_note +
          " corresponds to in_specs" + path.spec_keypath.value_or(path.keypath) + " of value " + s.repr(profile) +
          ", which maps array axis " + std::to_string(d) + " (of size " + std::to_string(aval.shape[d]) + ") to mesh " +
          axis + " (of " + (names.size() > 1 ? "total " : "") + "size " + std::to_string(size) + "), but " +
          std::to_string(size) + " does not evenly divide " + std::to_string(aval.shape[d]));
    }
  }
  if (!divisibility_messages.empty()) {
    throw value_error("shard_map applied to the function '" + f +
                      "' was given argument arrays with axis sizes that are not evenly divisible by the corresponding "
                      "mesh axis sizes:\n\nThe mesh given has shape " +
                      mesh_shape_text(spec.mesh) + " with corresponding axis names " + mesh_names_text(spec.mesh) +
                      ".\n\n" + joined_messages(divisibility_messages) +
                      "\n\nArray arguments' axis sizes must be evenly divisible by the mesh axis or axes indicated by "
                      "the corresponding elements of the argument's in_specs entry. Consider checking that in_specs "
                      "are correct, and if so consider changing the mesh axis sizes or else padding the input and "
                      "adapting '" +
                      f + "' appropriately.");
  }
}

Aval shard_map_local_aval(const Aval& global, const PartitionSpec& spec, const Mesh& mesh, bool check_vma) {
  Aval local = global;
  local.dim_axes.clear();
  std::vector<std::string> used;
  for (std::size_t d = 0; d < spec.size() && d < local.rank(); ++d) {
    const std::vector<std::string>& names = spec.entries()[d].axes;
    local.shape[d] /= mesh.axes_size(names);
    used.insert(used.end(), names.begin(), names.end());
  }
  if (check_vma) local.varying = in_mesh_order(mesh, used);
  // Inside the body the unreduced and reduced axes of the spec are manual ones: a device holds its partial
  // value ({U:i}) or the value every device of the axis holds alike ({R:i}).
  local.unreduced = in_mesh_order(mesh, spec.unreduced());
  local.reduced = in_mesh_order(mesh, spec.reduced());
  return local;
}

Aval shard_map_global_aval(const Aval& local, const PartitionSpec& spec, const Mesh& mesh) {
  Aval global = local;
  global.varying.clear();
  global.unreduced = in_mesh_order(mesh, spec.unreduced());
  global.reduced = in_mesh_order(mesh, spec.reduced());
  for (std::size_t d = 0; d < spec.size() && d < global.rank(); ++d) {
    global.shape[d] *= mesh.axes_size(spec.entries()[d].axes);
  }
  return global;
}

void check_shard_map_out_ranks(const ShardMapSpec& spec, const std::vector<Aval>& body_out_avals) {
  const JaxProfile profile;
  const std::string& f = spec.function_name;
  std::vector<std::string> messages;
  bool any_scalar = false;
  for (std::size_t i = 0; i < body_out_avals.size() && i < spec.out_specs.size(); ++i) {
    const PartitionSpec& s = spec.out_specs[i];
    Aval aval = body_out_avals[i];
    if (s.size() <= aval.rank()) continue;
    aval.varying.clear();  // the message shows the output's shape and dtype only
    any_scalar = any_scalar || aval.rank() == 0;
    const std::string key = out_path(spec, i).keypath;
    messages.push_back("* out_specs" + key + " is " + s.repr(profile) + " which has length " +
                       std::to_string(s.size()) + ", but " + f + "(*args)" + key + " has shape " +
                       aval.str_short(false) + ", which has rank " + std::to_string(aval.rank()) + " (and " +
                       std::to_string(aval.rank()) + " < " + std::to_string(s.size()) + ")");
  }
  if (messages.empty()) return;
  std::string message = "shard_map applied to the function '" + f +
                        "' was given an out_specs entry which is too long to be compatible with the corresponding "
                        "output value from the function:\n\n" +
                        joined_messages(messages) +
                        "\n\nEntries in out_specs must be of length no greater than the number of axes in the "
                        "corresponding output value.\n\nEither revise the spec to be shorter, or modify '" +
                        f + "' so that its outputs have sufficient rank.";
  if (any_scalar) {
    message +=
        "\n\nFor scalar values (rank 0), consider using an out_specs entry of `P()`, where `P = "
        "jax.sharding.PartitionSpec`.";
  }
  throw value_error(message);
}

void check_shard_map_outputs(const ShardMapSpec& spec, const std::vector<Aval>& body_out_avals) {
  check_shard_map_out_ranks(spec, body_out_avals);
  if (!spec.check_vma) return;
  const JaxProfile profile;
  std::vector<std::string> messages;
  for (std::size_t i = 0; i < body_out_avals.size() && i < spec.out_specs.size(); ++i) {
    const PartitionSpec& s = spec.out_specs[i];
    const std::vector<std::string> mentioned = in_mesh_order(spec.mesh, s.mentioned_axes());
    const std::vector<std::string>& varying = body_out_avals[i].varying;
    const bool fails = std::any_of(varying.begin(), varying.end(), [&](const std::string& axis) {
      return std::find(mentioned.begin(), mentioned.end(), axis) == mentioned.end();
    });
    if (!fails) continue;
    std::vector<std::string> unmentioned;
    for (const std::string& name : spec.mesh.axis_names()) {
      if (std::find(mentioned.begin(), mentioned.end(), name) == mentioned.end()) unmentioned.push_back(name);
    }
    const std::string key = out_path(spec, i).keypath;
    if (unmentioned.size() > 1) {
      std::vector<std::string> differing;
      for (const std::string& n : unmentioned) {
        if (std::find(varying.begin(), varying.end(), n) != varying.end()) differing.push_back(n);
      }
      messages.push_back("* out_specs" + key + " is " + s.repr(profile) +
                         " which implies that the corresponding output value is only varying across mesh axes {" +
                         join(mentioned, ",") + "} and not {" + join(differing, ",") +
                         "}, but it was inferred to be possibly varying over {" +
                         join(in_mesh_order(spec.mesh, varying), ",") + "}");
    } else {
      messages.push_back("* out_specs" + key + " is " + s.repr(profile) +
                         " which implies that the corresponding output value is replicated across mesh axis '" +
                         unmentioned.at(0) + "', but could not infer replication over any axes");
    }
  }
  if (messages.empty()) return;
  throw value_error("shard_map applied to the function '" + spec.function_name +
                    "' was given out_specs which require replication which can't be statically inferred given the "
                    "mesh:\n\nThe mesh given has shape " +
                    mesh_shape_text(spec.mesh) + " with corresponding axis names " + mesh_names_text(spec.mesh) +
                    ".\n\n" + joined_messages(messages) +
                    "\n\nCheck if these output values are meant to be replicated over those mesh axes. If not, "
                    "consider revising the corresponding out_specs entries. If so, consider disabling the check by "
                    "passing the check_vma=False argument to `jax.shard_map`.");
}

std::vector<Array> run_shard_map(const Jaxpr& body, const ShardMapSpec& spec, const std::vector<Array>& args,
                                 const JaxProfile& profile, CommLog* log) {
  if (args.size() != spec.in_specs.size() || body.invars.size() != args.size()) {
    throw type_error("shard_map got " + std::to_string(args.size()) + " arguments for " +
                     std::to_string(spec.in_specs.size()) + " in_specs and a body of " +
                     std::to_string(body.invars.size()) + " parameters");
  }
  std::vector<Aval> global_avals;
  for (const Array& a : args) global_avals.push_back(Aval::of(a.shape(), a.dtype(), a.aval().weak_type));
  check_shard_map_args(spec, global_avals);
  std::vector<Aval> body_outs;
  for (const Atom& out : body.outvars) body_outs.push_back(atom_aval(out));
  check_shard_map_out_ranks(spec, body_outs);
  // Eagerly, JAX matches each output to its out_spec with a nested shard_map of its `_rem_singleton` helper,
  // and it is that shard_map's check which fails: the error names the helper.
  ShardMapSpec matching = spec;
  matching.function_name = "_rem_singleton";
  check_shard_map_outputs(matching, body_outs);

  std::vector<DeviceBuffers> locals;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const NamedSharding target = make_named_sharding(spec.mesh, spec.in_specs[i], profile);
    const Array placed = reshard(args[i], target, profile, log, "shard_map in_specs");
    DeviceBuffers buffers;
    for (const Array::Shard& shard : placed.shards()) buffers.push_back(shard.data);
    locals.push_back(std::move(buffers));
  }
  const SpmdContext context{&spec.mesh, log};
  const std::vector<DeviceBuffers> outputs = evaluate_jaxpr_per_device(body, context, locals);
  std::vector<Array> results;
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    const NamedSharding sharding = make_named_sharding(spec.mesh, spec.out_specs[o], profile);
    const Aval global = shard_map_global_aval(body_outs[o], spec.out_specs[o], spec.mesh);
    std::vector<Array::Shard> shards;
    const std::vector<DeviceIndex> index = devices_indices_map(sharding, global.shape, profile);
    for (std::size_t d = 0; d < index.size(); ++d) {
      shards.push_back({index[d].device, index[d].index, index[d].replica_id, outputs[o][d]});
    }
    results.push_back(Array::from_shards(global.shaped(), sharding, std::move(shards)));
  }
  return results;
}

}  // namespace shardscope
