// jit, make_jaxpr, vmap, grad, jvp, shard_map and pmap applied to user functions over values.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "api/trace.h"
#include "exec/jit.h"
#include "exec/lowering.h"
#include "exec/pmap.h"
#include "exec/shard_map.h"

namespace shardscope::api {

// A user function on flattened values (the Python layer flattens pytrees around it).
using Function = std::function<std::vector<Value>(const std::vector<Value>&)>;

struct Traced {
  JaxprPtr jaxpr;               // constvars: the values the function closed over
  std::vector<Value> captured;  // one per constvar
};
// Traces `f` on arguments of the given types.
// `vmap_axis_size`: the trace is a vmap body mapping that many elements.
[[nodiscard]] Traced trace_function(const Function& f, const std::vector<Aval>& avals, const std::string& name,
                                    std::optional<int64_t> vmap_axis_size = std::nullopt);

// jax.make_jaxpr(f)(*args) text for the session's profile.
[[nodiscard]] std::string make_jaxpr_text(const Function& f, const std::vector<Value>& args, const std::string& name);
// The same program as a jaxpr with the values it closed over (jax.make_jaxpr's object: equations, variables,
// params, consts).
[[nodiscard]] Traced make_jaxpr(const Function& f, const std::vector<Value>& args, const std::string& name);

struct JitSpec {
  std::string name = "f";
  std::vector<std::optional<Sharding>> in_shardings;   // per argument
  std::vector<std::optional<Sharding>> out_shardings;  // per output
  std::vector<std::string> arg_names;                  // per argument leaf, for device-mismatch errors
};
// jax.jit(f)(*args): a jit equation inside an enclosing trace, else a partitioned run.
std::vector<Value> call_jit(const Function& f, const std::vector<Value>& args, const JitSpec& spec);

// A jitted function traced once for one signature of arguments, to be run on many arguments of that
// signature without calling the user function again (jax.jit's cache entry).
struct JitProgram {
  JaxprPtr program;             // the traced function with its captured values as leading arguments
  std::vector<Value> captured;  // the values of those leading arguments
  JitOptions options;           // shardings for captured values and arguments, as run_jit takes them
  std::size_t num_outputs = 0;
  std::vector<Array> captured_arrays;  // `captured` as arrays when none is a tracer (for run_jit_program_on_arrays)
};
// The last jit program that ran on arrays (outside any trace): what the window's program view shows.
struct ProgramRunRecord {
  std::string name;
  JaxprPtr program;
  CommLog log;                               // every collective the run executed
  std::vector<Sharding> out_shardings;       // what each result came back with
  std::shared_ptr<const LayoutMap> layouts;  // jit: the layout of every value of `program` on `mesh`
  std::optional<Mesh> mesh;                  // jit: absent when the program ran on one device
  std::optional<ShardMapSpec> shard_map;     // set when `program` is a shard_map body (per-device values)
  // jit: the arguments' types and placements and the call's shardings, so the program can be lowered again and
  // explained (the window's Explain view prices exactly what `shardscope explain` prices).
  std::vector<ShapeDtypeStruct> args;
  LoweringOptions lowering;
};
[[nodiscard]] std::shared_ptr<const ProgramRunRecord> last_program_run();

// Traces `f` on the types of `args`.
[[nodiscard]] JitProgram trace_jit(const Function& f, const std::vector<Value>& args, const JitSpec& spec);
// Runs (or, inside a trace, stages) a traced program on arguments of the types it was traced for.
std::vector<Value> run_jit_program(const JitProgram& program, const std::vector<Value>& args);
// The same outside any trace, on arrays (a cached call's fast path: no copies of the arguments). The program
// must have captured no tracers.
std::vector<Value> run_jit_program_on_arrays(const JitProgram& program, std::vector<Array> args);
// A concrete value or Python scalar as the array a compiled program receives (scalars: weakly typed, on the
// default device).
[[nodiscard]] Array argument_array(const Value& value);

// jax.vmap(f, in_axes, out_axes, axis_name)(*args).
std::vector<Value> call_vmap(const Function& f, const std::vector<Value>& args,
                             const std::vector<std::optional<int64_t>>& in_axes,
                             const std::vector<std::optional<int64_t>>& out_axes,
                             const std::optional<std::string>& axis_name, const std::string& name);
// The same with out_axes known only once `f` has run: a prefix of its output tree (out_axes=(None, -1) over
// two pytrees) gives one axis per output leaf after the trace. Called once, right after `f`.
using AxesAfterTrace = std::function<std::vector<std::optional<int64_t>>()>;
std::vector<Value> call_vmap_out_axes_after_trace(const Function& f, const std::vector<Value>& args,
                                                  const std::vector<std::optional<int64_t>>& in_axes,
                                                  const AxesAfterTrace& out_axes,
                                                  const std::optional<std::string>& axis_name, const std::string& name);

// jax.value_and_grad / jax.grad: (value, aux..., grads...) or (grads..., aux...).
std::vector<Value> call_grad(const Function& f, const std::vector<Value>& args, const std::vector<int64_t>& argnums,
                             bool has_aux, bool with_value, const std::string& name);

// jax.vjp(f, *primals): the forward pass runs now (with known primals, Python control flow takes its path once)
// and keeps its residuals; the pullback is the backward program fixed then, applied to those residuals.
struct VjpProgram {
  JaxprPtr backward;  // (residuals..., output cotangents...) -> one cotangent per primal
  // Per residual: the primal it is (an argument kept as given), or nullopt for a value the forward pass computed,
  // which is the next of the opaque residuals.
  std::vector<std::optional<std::size_t>> residual_primal;
  std::vector<Aval> output_types;  // the differentiated outputs
  std::vector<bool> output_zeros;  // outputs whose tangent is structurally zero (their cotangent is not read)
};
struct VjpResult {
  std::vector<Value> outputs;
  VjpProgram program;
  std::vector<Value> opaque_residuals;  // the computed residuals, in the order residual_primal lists them
};
// Only the first `differentiated_outputs()` outputs take cotangents (the rest are has_aux's values); it is asked
// once the function has been traced. Primals with `nonzero_tangents[i]` false are treated as constants (in_nzs).
[[nodiscard]] VjpResult call_vjp(const Function& f, const std::vector<Value>& primals, const std::string& name,
                                 const std::function<std::size_t()>& differentiated_outputs,
                                 const std::vector<bool>& nonzero_tangents = {});
// The pullback: `residuals` in the program's order (primals and opaque residuals interleaved as residual_primal
// says) and one cotangent per differentiated output.
[[nodiscard]] std::vector<Value> apply_vjp(const VjpProgram& program, const std::vector<Value>& residuals,
                                           const std::vector<Value>& cotangents);

// jax.jvp(f, primals, tangents): (primal outputs..., tangent outputs...).
std::vector<Value> call_jvp(const Function& f, const std::vector<Value>& primals, const std::vector<Value>& tangents,
                            const std::string& name);

// shard_map(f, mesh, in_specs, out_specs, check_vma)(*args): the body is traced on the local types. When
// `out_specs_after_trace` is given, it replaces spec.out_specs once the body has run (out_specs is a prefix of the
// output tree, which only the trace makes known); either way one spec stands for every output.
using SpecsAfterTrace = std::function<std::vector<PartitionSpec>()>;
std::vector<Value> call_shard_map(const Function& f, const std::vector<Value>& args, ShardMapSpec spec,
                                  const SpecsAfterTrace& out_specs_after_trace = {});

// jax.pmap(f, ...)(*args) over the session's devices; `out_axes_after_trace`, when given, replaces spec.out_axes
// once the body has run, as for shard_map's out_specs.
std::vector<Value> call_pmap(const Function& f, const std::vector<Value>& args, PmapSpec spec,
                             const AxesAfterTrace& out_axes_after_trace = {});

}  // namespace shardscope::api
