// shard_map (Manual mode): JAX's argument checks, per-device local types, lockstep execution, output assembly.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "array/array.h"
#include "ir/jaxpr.h"
#include "spmd/comm_log.h"
#include "trace/builder.h"

namespace shardscope {

// How the Python layer names one flattened argument or output in messages.
struct ValuePath {
  std::string keypath;                      // "" for a lone value, "[0]", "[1]['w']", ...
  std::string binding_note;                 // e.g. ", where args[0] is bound to f's parameter 'x',"; may be empty
  std::optional<std::string> spec_keypath;  // where its spec sits in in_specs ("" for one spec); else keypath
};

struct ShardMapSpec {
  Mesh mesh;
  std::vector<PartitionSpec> in_specs;   // one per flattened argument
  std::vector<PartitionSpec> out_specs;  // one per flattened output
  bool check_vma = true;
  bool mesh_from_context = false;  // taken from jax.set_mesh (JAX's equation then names the abstract mesh)
  std::string function_name = "f";
  std::vector<ValuePath> arg_paths;  // defaults: "[i]" keypaths, no binding note
  std::vector<ValuePath> out_paths;  // defaults: "" for one output, "[i]" otherwise
};

// Raises JAX's ValueErrors for in_specs longer than an argument's rank and for sizes the mesh axes
// do not divide.
void check_shard_map_args(const ShardMapSpec& spec, const std::vector<Aval>& global_avals);

// The type the body sees for an argument: dims divided by their mesh axes; with check_vma, varying over
// the spec's axes (mesh order).
[[nodiscard]] Aval shard_map_local_aval(const Aval& global, const PartitionSpec& spec, const Mesh& mesh,
                                        bool check_vma);

// An out_specs entry longer than its output's rank: JAX's ValueError naming the function and each output.
void check_shard_map_out_ranks(const ShardMapSpec& spec, const std::vector<Aval>& body_out_avals);
// With check_vma: ValueError (JAX's text) when an output varies over an axis its out_spec leaves out.
void check_shard_map_outputs(const ShardMapSpec& spec, const std::vector<Aval>& body_out_avals);

// The global type of an output assembled from per-device values under `out_spec`.
[[nodiscard]] Aval shard_map_global_aval(const Aval& local, const PartitionSpec& spec, const Mesh& mesh);

// Runs the body on every device: arguments are resharded to NamedSharding(mesh, in_spec) (logging the
// collectives that takes), the body runs in lockstep, and outputs become arrays sharded by out_specs.
[[nodiscard]] std::vector<Array> run_shard_map(const Jaxpr& body, const ShardMapSpec& spec,
                                               const std::vector<Array>& args, const JaxProfile& profile, CommLog* log);

// Traces shard_map into `builder`: JAX's argument and replication checks, then one `shard_map`
// equation (params printed per JAX version) whose body is `body`, traced on the local types.
std::vector<Atom> bind_shard_map(JaxprBuilder& builder, const JaxprPtr& body, std::span<const Atom> args,
                                 const ShardMapSpec& spec);

// A shard_map equation's in_specs or out_specs param (TypeError if it holds anything else).
[[nodiscard]] std::vector<PartitionSpec> shard_map_specs(const Params& params, const std::string& key);

// A shard_map equation's spec (mesh, in_specs, out_specs, check_vma) and body.
[[nodiscard]] ShardMapSpec shard_map_spec_of(const Params& params);
[[nodiscard]] const Jaxpr& shard_map_body(const Params& params);

// The layout, in `run_mesh`'s axes, that a shard_map spec gives a value of rank `rank` at the manual boundary
// (ValueError when the shard_map's mesh orders the devices differently).
[[nodiscard]] std::vector<std::vector<std::string>> manual_boundary_layout(const PartitionSpec& spec,
                                                                           const Mesh& spec_mesh, const Mesh& run_mesh,
                                                                           std::size_t rank);

// The `shard_map` primitive: shape rule from out_specs, a single-device kernel that runs the body on
// every device of the mesh, params printed as each JAX version names them.
void register_shard_map_primitive();

}  // namespace shardscope
