// Transformations of user functions: trace once on abstract values, transform the program, then stage or run.
#include "api/transforms.h"

#include <algorithm>
#include <iterator>
#include <mutex>

#include "api/program_log.h"
#include "api/session.h"
#include "base/error.h"
#include "exec/interpreter.h"
#include "exec/jit.h"
#include "explicit/mesh_context.h"
#include "explicit/sharding_rules.h"
#include "ir/axis_env.h"
#include "ir/jaxpr_printer.h"
#include "spmd/reshard.h"
#include "transforms/autodiff.h"
#include "transforms/batching.h"
#include "transforms/vjp_split.h"

namespace shardscope::api {
namespace {

std::vector<Value> concat(const std::vector<Value>& a, const std::vector<Value>& b) {
  std::vector<Value> all = a;
  all.insert(all.end(), b.begin(), b.end());
  return all;
}

// The trace a transformed call is staged into: the innermost among its inputs, else the current one.
Trace* staging_trace(const std::vector<Value>& inputs) {
  Trace* target = nullptr;
  for (const Value& input : inputs) {
    if (input.is_traced() && (target == nullptr || input.trace()->level() > target->level())) target = input.trace();
  }
  return target != nullptr ? target : current_trace();
}

std::vector<Value> staged(Trace& trace, const std::vector<Value>& inputs,
                          const std::function<std::vector<Atom>(JaxprBuilder&, const std::vector<Atom>&)>& emit) {
  std::vector<Atom> atoms;
  for (const Value& input : inputs) atoms.push_back(trace.lift(input));
  std::vector<Value> outputs;
  for (Atom& atom : emit(trace.builder(), atoms)) outputs.push_back(Value::traced(std::move(atom), &trace));
  return outputs;
}

// Python scalars handed to a compiled program become weakly typed arrays on the default device.
Array as_array(const Value& value) {
  if (!value.is_scalar_literal()) return value.array();
  const auto& literal = std::get<Literal>(value.atom());
  const JaxProfile& profile = session().profile;
  return Array::from_host(literal_buffer(literal), make_single_device_sharding(default_device(), profile), profile,
                          literal.aval.weak_type);
}

std::vector<Array> as_arrays(const std::vector<Value>& values) {
  std::vector<Array> arrays;
  for (const Value& value : values) arrays.push_back(as_array(value));
  return arrays;
}

std::vector<Value> as_values(std::vector<Array> arrays) {
  std::vector<Value> values;
  for (Array& array : arrays) values.push_back(Value::concrete(std::move(array)));
  return values;
}

Value zeros_like_value(const Aval& aval) {
  const Literal zero = scalar_literal(0.0, aval.dtype, false);
  if (aval.rank() == 0) return Value::scalar(zero);
  return bind1("broadcast_in_dim", {Value::scalar(zero)},
               {{"shape", ParamValue::int_tuple(aval.shape)},
                {"broadcast_dimensions", ParamValue::int_tuple({})},
                {"sharding", ParamValue::None{}}});
}

}  // namespace

Traced trace_function(const Function& f, const std::vector<Aval>& avals, const std::string& name,
                      std::optional<int64_t> vmap_axis_size) {
  Trace trace(name);
  trace.set_vmap_axis_size(vmap_axis_size);
  std::vector<Value> args;
  for (const Aval& aval : avals) args.push_back(trace.arg(aval));
  const std::vector<Value> outputs = f(args);
  Trace::Closed closed = trace.finish(outputs);
  return {closed.jaxpr, std::move(closed.captured)};
}

namespace {

// Whether any argument is an array placed with a NamedSharding, or the arguments are values of a trace that was.
bool mesh_placed(const std::vector<Value>& args) {
  if (tracing_mesh_placed_values()) return true;
  return std::any_of(args.begin(), args.end(), [](const Value& v) {
    return v.is_concrete() && std::holds_alternative<NamedSharding>(v.array().sharding());
  });
}

}  // namespace

std::string make_jaxpr_text(const Function& f, const std::vector<Value>& args, const std::string& name) {
  return print_jaxpr(*make_jaxpr(f, args, name).jaxpr, session().profile);
}

Traced make_jaxpr(const Function& f, const std::vector<Value>& args, const std::string& name) {
  const MeshPlacedValuesScope placed(mesh_placed(args) && !tracing_mesh_placed_values());
  return trace_function(f, argument_avals(args), name);
}

std::vector<Value> call_jit(const Function& f, const std::vector<Value>& args, const JitSpec& spec) {
  return run_jit_program(trace_jit(f, args, spec), args);
}

JitProgram trace_jit(const Function& f, const std::vector<Value>& args, const JitSpec& spec) {
  const MeshPlacedValuesScope placed(mesh_placed(args) && !tracing_mesh_placed_values());
  Traced traced = trace_function(f, argument_avals(args), spec.name);
  JitProgram out;
  out.program = consts_as_args(*traced.jaxpr);
  out.num_outputs = traced.jaxpr->outvars.size();
  out.options.name = spec.name;
  if (!spec.arg_names.empty()) {
    // The program takes the captured constants first.
    out.options.arg_names.assign(traced.captured.size(), "<constant>");
    out.options.arg_names.insert(out.options.arg_names.end(), spec.arg_names.begin(), spec.arg_names.end());
  }
  out.options.in_shardings.assign(traced.captured.size(), std::nullopt);
  out.options.in_shardings.insert(out.options.in_shardings.end(), spec.in_shardings.begin(), spec.in_shardings.end());
  out.options.out_shardings = spec.out_shardings;
  out.options.default_device = default_device();
  out.captured = std::move(traced.captured);
  if (std::none_of(out.captured.begin(), out.captured.end(), [](const Value& v) { return v.is_traced(); })) {
    out.captured_arrays = as_arrays(out.captured);
  }
  return out;
}

Array argument_array(const Value& value) { return as_array(value); }

namespace {

std::mutex last_run_mutex;
std::shared_ptr<const ProgramRunRecord> last_run;

// Runs the program and keeps its name and communication log as the last run.
// A run's arguments and shardings as lowering receives them (for `shardscope explain` and the window).
std::pair<std::vector<ShapeDtypeStruct>, LoweringOptions> lowering_inputs(const std::vector<Array>& inputs,
                                                                          const JitOptions& options) {
  std::vector<ShapeDtypeStruct> args;
  args.reserve(inputs.size());
  for (const Array& input : inputs) {
    ShapeDtypeStruct arg;
    arg.shape = input.aval().shape;
    arg.dtype = input.aval().dtype;
    arg.weak_type = input.aval().weak_type;
    arg.sharding = input.sharding();
    args.push_back(std::move(arg));
  }
  LoweringOptions lowering;
  lowering.name = options.name;
  lowering.in_shardings = options.in_shardings;
  lowering.out_shardings = options.out_shardings;
  lowering.arg_names = options.arg_names;
  return {std::move(args), std::move(lowering)};
}

std::vector<Value> run_and_record(const JitProgram& program, const std::vector<Array>& inputs,
                                  const JitOptions& options) {
  auto [args, lowering] = lowering_inputs(inputs, options);
  if (program_logging()) log_program(options.name, program.program, args, lowering, true);
  JitRun run = run_jit(*program.program, inputs, options, session().profile);
  std::vector<Sharding> out_shardings;
  out_shardings.reserve(run.outputs.size());
  for (const Array& out : run.outputs) out_shardings.push_back(out.sharding());
  auto record = std::make_shared<const ProgramRunRecord>(ProgramRunRecord{options.name,
                                                                          program.program,
                                                                          std::move(run.log),
                                                                          std::move(out_shardings),
                                                                          run.layouts,
                                                                          run.mesh,
                                                                          {},
                                                                          std::move(args),
                                                                          std::move(lowering)});
  {
    const std::lock_guard lock(last_run_mutex);
    last_run = std::move(record);
  }
  return as_values(run.outputs);
}

// Keeps an eager shard_map call as the last run: its body, specs and the collectives its psums ran.
void record_shard_map_run(const JaxprPtr& body, const ShardMapSpec& spec, CommLog log,
                          const std::vector<Array>& outputs) {
  std::vector<Sharding> out_shardings;
  for (const Array& out : outputs) out_shardings.push_back(out.sharding());
  auto record = std::make_shared<const ProgramRunRecord>(ProgramRunRecord{
      spec.function_name, body, std::move(log), std::move(out_shardings), nullptr, spec.mesh, spec, {}, {}});
  const std::lock_guard lock(last_run_mutex);
  last_run = std::move(record);
}

}  // namespace

std::shared_ptr<const ProgramRunRecord> last_program_run() {
  const std::lock_guard lock(last_run_mutex);
  return last_run;
}

std::vector<Value> run_jit_program_on_arrays(const JitProgram& program, std::vector<Array> args) {
  if (program.captured_arrays.size() != program.captured.size()) {
    throw runtime_error("run_jit_program_on_arrays: the program captured tracers");
  }
  std::vector<Array> inputs;
  inputs.reserve(program.captured_arrays.size() + args.size());
  inputs.insert(inputs.end(), program.captured_arrays.begin(), program.captured_arrays.end());
  std::move(args.begin(), args.end(), std::back_inserter(inputs));
  const Device device = default_device();
  if (program.options.default_device == device) return run_and_record(program, inputs, program.options);
  JitOptions options = program.options;
  options.default_device = device;
  return run_and_record(program, inputs, options);
}

namespace {

// A staged call's in_shardings or out_shardings param: one entry per operand (captured values first, which
// no sharding names) or result, UnspecifiedValue where none was given; nullopt when none is given at all.
std::optional<ParamValue> staged_shardings(const std::vector<std::optional<Sharding>>& given, std::size_t leading,
                                           std::size_t count) {
  const bool any = std::any_of(given.begin(), given.end(), [](const auto& s) { return s.has_value(); });
  if (!any) return std::nullopt;
  std::vector<ParamValue> items;
  items.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::optional<Sharding>* entry = i >= leading && i - leading < given.size() ? &given[i - leading] : nullptr;
    const auto* named = entry != nullptr && entry->has_value() ? std::get_if<NamedSharding>(&**entry) : nullptr;
    items.push_back(named != nullptr ? ParamValue(*named) : ParamValue(ParamValue::Verbatim{"UnspecifiedValue"}));
  }
  return ParamValue::tuple(std::move(items));
}

}  // namespace

std::vector<Value> run_jit_program(const JitProgram& program, const std::vector<Value>& args) {
  const std::vector<Value> inputs = concat(program.captured, args);
  if (Trace* trace = staging_trace(inputs)) {
    return staged(*trace, inputs, [&](JaxprBuilder& builder, const std::vector<Atom>& atoms) {
      Params params = {{"jaxpr", ParamValue::JaxprRef(program.program)}, {"name", program.options.name}};
      // A nested jit keeps its own in/out shardings: JAX prints them on the call and the partitioner pins the
      // call's operands and results to them when the call is inlined (ir/inline_calls).
      if (auto in = staged_shardings(program.options.in_shardings, program.captured.size(), atoms.size())) {
        params.emplace_back("in_shardings", std::move(*in));
      }
      if (auto out = staged_shardings(program.options.out_shardings, 0, program.program->outvars.size())) {
        params.emplace_back("out_shardings", std::move(*out));
      }
      return builder.bind("jit", atoms, params);
    });
  }
  // The default device is read per run: it may have changed since tracing (copying the options is rare).
  const Device device = default_device();
  if (program.options.default_device == device) return run_and_record(program, as_arrays(inputs), program.options);
  JitOptions options = program.options;
  options.default_device = device;
  return run_and_record(program, as_arrays(inputs), options);
}

std::vector<Value> call_vmap(const Function& f, const std::vector<Value>& args,
                             const std::vector<std::optional<int64_t>>& in_axes,
                             const std::vector<std::optional<int64_t>>& out_axes,
                             const std::optional<std::string>& axis_name, const std::string& name) {
  return call_vmap_out_axes_after_trace(
      f, args, in_axes, [&out_axes] { return out_axes; }, axis_name, name);
}

std::vector<Value> call_vmap_out_axes_after_trace(const Function& f, const std::vector<Value>& args,
                                                  const std::vector<std::optional<int64_t>>& in_axes,
                                                  const AxesAfterTrace& out_axes_of,
                                                  const std::optional<std::string>& axis_name,
                                                  const std::string& name) {
  if (in_axes.size() != args.size()) {
    throw value_error("vmap in_axes has " + std::to_string(in_axes.size()) + " entries for " +
                      std::to_string(args.size()) + " arguments");
  }
  std::vector<Aval> batched = argument_avals(args);
  std::vector<Aval> instance = batched;
  std::optional<int64_t> size;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!in_axes[i]) continue;
    const auto rank = static_cast<int64_t>(batched[i].rank());
    const int64_t axis = *in_axes[i] < 0 ? *in_axes[i] + rank : *in_axes[i];
    if (axis < 0 || axis >= rank) continue;  // vmap_jaxpr raises JAX's error for it
    if (!size) size = batched[i].shape[static_cast<std::size_t>(axis)];
    instance[i].shape.erase(instance[i].shape.begin() + axis);
    if (!instance[i].dim_axes.empty()) instance[i].dim_axes.erase(instance[i].dim_axes.begin() + axis);
  }
  std::vector<std::pair<std::string, int64_t>> scope_axes;
  if (axis_name && size) scope_axes.emplace_back(*axis_name, *size);
  const AxisEnvScope scope(scope_axes);
  const Traced traced = trace_function(f, instance, name, size);
  std::vector<Aval> all_avals;
  std::vector<std::optional<int64_t>> all_axes;
  for (const Value& captured : traced.captured) {
    all_avals.push_back(captured.aval());
    all_axes.emplace_back(std::nullopt);
  }
  all_avals.insert(all_avals.end(), batched.begin(), batched.end());
  all_axes.insert(all_axes.end(), in_axes.begin(), in_axes.end());
  const std::vector<std::optional<int64_t>> out_axes = out_axes_of();
  std::vector<std::optional<int64_t>> outs = out_axes;
  if (outs.size() == 1 && traced.jaxpr->outvars.size() != 1) outs.assign(traced.jaxpr->outvars.size(), out_axes[0]);
  const JaxprPtr program = vmap_jaxpr(*consts_as_args(*traced.jaxpr), all_avals, all_axes, outs, axis_name);
  return apply_jaxpr(*program, concat(traced.captured, args));
}

namespace {

// grad and jvp of arguments whose values are all known (arrays, Python numbers, or the known primals of an
// enclosing differentiation) trace with those values alongside, as JAX's JVP of concrete arguments computes its
// primals eagerly: Python control flow and scalar conversions on them work, and the program is the path taken.
// Under a staging trace (jit, vmap, a loop body) the arguments are not known and tracing is abstract.
Traced trace_differentiated(const Function& f, const std::vector<Value>& args, const std::string& name,
                            const std::string& kind) {
  const Trace* enclosing = current_trace();
  const bool known =
      (enclosing == nullptr || !enclosing->concrete_kind().empty()) &&
      std::all_of(args.begin(), args.end(), [](const Value& v) { return v.concrete_or_known() != nullptr; });
  if (!known) return trace_function(f, argument_avals(args), name);
  // Python numbers become arrays before the trace begins, so that their known values print and convert as arrays.
  std::vector<Value> values;
  for (const Value& arg : args) values.push_back(realized(*arg.concrete_or_known()));
  Trace trace(name);
  trace.set_concrete_kind(kind);
  std::vector<Value> traced_args;
  traced_args.reserve(args.size());
  for (std::size_t i = 0; i < args.size(); ++i)
    traced_args.push_back(trace.arg_known(argument_aval(args[i]), values[i]));
  const std::vector<Value> outputs = f(traced_args);
  Trace::Closed closed = trace.finish(outputs);
  return {closed.jaxpr, std::move(closed.captured)};
}

}  // namespace

VjpResult call_vjp(const Function& f, const std::vector<Value>& primals, const std::string& name,
                   const std::function<std::size_t()>& differentiated_outputs,
                   const std::vector<bool>& nonzero_tangents) {
  const MeshPlacedValuesScope placed(mesh_placed(primals) && !tracing_mesh_placed_values());
  const Traced traced = trace_differentiated(f, primals, name, "grad");
  const JaxprPtr program = consts_as_args(*traced.jaxpr);
  const std::size_t captured = traced.captured.size();
  // What the function closed over is a constant: no tangent, no cotangent.
  std::vector<bool> tangent_in(program->invars.size(), false);
  std::vector<bool> cotangent_out(program->invars.size(), false);
  for (std::size_t i = 0; i < primals.size(); ++i) {
    tangent_in[captured + i] = i >= nonzero_tangents.size() || nonzero_tangents[i];
    cotangent_out[captured + i] = true;
  }
  const std::size_t differentiated = std::min(differentiated_outputs(), program->outvars.size());
  const VjpSplit split = vjp_split(*program, tangent_in, cotangent_out, differentiated);

  std::vector<Value> forward = apply_jaxpr(*split.forward, concat(traced.captured, primals));
  const std::size_t outputs = program->outvars.size();
  VjpResult result;
  for (std::size_t o = 0; o < outputs; ++o) result.outputs.push_back(std::move(forward[o]));
  for (std::size_t r = 0; r < split.residual_invar.size(); ++r) {
    const std::optional<std::size_t>& invar = split.residual_invar[r];
    if (invar && *invar >= captured) {
      result.program.residual_primal.emplace_back(*invar - captured);
    } else {
      result.program.residual_primal.emplace_back(std::nullopt);
      result.opaque_residuals.push_back(forward[outputs + r]);
    }
  }
  for (std::size_t o = 0; o < differentiated; ++o)
    result.program.output_types.push_back(atom_aval(program->outvars[o]));
  result.program.output_zeros = split.output_zeros;
  result.program.backward = split.backward;
  return result;
}

std::vector<Value> apply_vjp(const VjpProgram& program, const std::vector<Value>& residuals,
                             const std::vector<Value>& cotangents) {
  if (cotangents.size() != program.output_types.size()) {
    throw value_error("the VJP function takes one cotangent per output: expected " +
                      std::to_string(program.output_types.size()) + ", got " + std::to_string(cotangents.size()));
  }
  if (residuals.size() != program.residual_primal.size()) {
    throw value_error("the VJP function takes " + std::to_string(program.residual_primal.size()) + " residuals, got " +
                      std::to_string(residuals.size()));
  }
  return apply_jaxpr(*program.backward, concat(residuals, cotangents));
}

std::vector<Value> call_grad(const Function& f, const std::vector<Value>& args, const std::vector<int64_t>& argnums,
                             bool has_aux, bool with_value, const std::string& name) {
  const MeshPlacedValuesScope placed(mesh_placed(args) && !tracing_mesh_placed_values());
  const Traced traced = trace_differentiated(f, args, name, "grad");
  const auto shift = static_cast<int64_t>(traced.captured.size());
  std::vector<int64_t> shifted;
  for (const int64_t argnum : argnums) shifted.push_back(argnum < 0 ? argnum : argnum + shift);
  const JaxprPtr program = consts_as_args(*traced.jaxpr);
  const GradSeed seed = session().profile.has(JaxFeature::kGradSeedReshard) ? GradSeed::kReshard : GradSeed::kLiteral;
  const JaxprPtr transformed = with_value ? value_and_grad_jaxpr(*program, shifted, has_aux, seed)
                                          : grad_jaxpr(*program, shifted, has_aux, seed);
  return apply_jaxpr(*transformed, concat(traced.captured, args));
}

std::vector<Value> call_jvp(const Function& f, const std::vector<Value>& primals, const std::vector<Value>& tangents,
                            const std::string& name) {
  if (primals.size() != tangents.size()) {
    throw type_error("primal and tangent arguments to jax.jvp must have the same tree structure; primals have " +
                     std::to_string(primals.size()) + " leaves and tangents have " + std::to_string(tangents.size()));
  }
  const Traced traced = trace_differentiated(f, primals, name, "jvp");
  const JaxprPtr program = jvp_jaxpr(*consts_as_args(*traced.jaxpr));
  std::vector<Value> inputs = concat(traced.captured, primals);
  for (const Value& captured : traced.captured) inputs.push_back(zeros_like_value(captured.aval()));
  inputs.insert(inputs.end(), tangents.begin(), tangents.end());
  return apply_jaxpr(*program, inputs);
}

namespace {

// From JAX 0.10, a shard_map over a mesh whose axes are all Explicit takes its arguments as their types say:
// an in_specs entry that differs from the argument's type is an error, not a reshard.
void check_in_specs_match_types(const ShardMapSpec& spec, const std::vector<Aval>& globals, const JaxProfile& profile) {
  if (profile.version() < JaxVersion{0, 10, 0}) return;
  const auto& types = spec.mesh.axis_types();
  if (types.empty() || !std::all_of(types.begin(), types.end(), [](AxisType t) { return t == AxisType::kExplicit; })) {
    return;
  }
  for (std::size_t i = 0; i < globals.size() && i < spec.in_specs.size(); ++i) {
    const Aval& aval = globals[i];
    std::vector<SpecEntry> wanted = spec.in_specs[i].entries();
    wanted.resize(std::max(wanted.size(), aval.rank()));
    std::vector<SpecEntry> typed;
    for (std::size_t d = 0; d < aval.rank(); ++d) {
      typed.push_back(d < aval.dim_axes.size() ? SpecEntry::of_axes(aval.dim_axes[d]) : SpecEntry::none());
    }
    if (wanted == typed) continue;
    throw value_error("in_specs passed to shard_map: " + PartitionSpec(wanted).repr(profile) +
                      " does not match the specs of the input: " + PartitionSpec(typed).repr(profile) +
                      " for arg: " + aval.str_short(false) +
                      ". `in_specs` is an optional argument so you can omit specifying it and shard_map will infer "
                      "the in_specs from the arguments. If you want to reshard your inputs, you can use `jax.reshard` "
                      "on the arguments and then pass those args to shard_map.");
  }
}

}  // namespace

namespace {

// Each device's block of `array` laid out by `spec` on `mesh`, in mesh order.
std::vector<BufferPtr> device_blocks(const Array& array, const Mesh& mesh, const PartitionSpec& spec) {
  const Array placed = reshard(array, make_named_sharding(mesh, spec, session().profile), session().profile, nullptr);
  std::vector<BufferPtr> blocks;
  for (const Device& device : mesh.devices()) {
    for (const Array::Shard& shard : placed.shards()) {
      if (shard.device == device) {
        blocks.push_back(shard.data);
        break;
      }
    }
  }
  return blocks;
}

// A spec list flattened against the outputs must have one entry per output; the callers' prefix broadcast
// guarantees it, so a mismatch is an internal error reported with both counts rather than an out-of-range read.
void check_flat_count(const std::string& what, std::size_t specs, std::size_t outputs) {
  if (specs != outputs) {
    throw Error("ValueError",
                what + " gave " + std::to_string(specs) + " entries for " + std::to_string(outputs) + " outputs");
  }
}

// An eager shard_map (concrete arguments, no trace around it) traces its body alongside every device's blocks, as
// JAX runs it per device: printing a value inside shows each device's block. Otherwise the body is traced on its
// local types only.
Traced trace_shard_map_body(const Function& f, const std::vector<Value>& args, const std::vector<Aval>& locals,
                            const ShardMapSpec& spec) {
  const bool eager = current_trace() == nullptr &&
                     std::all_of(args.begin(), args.end(), [](const Value& v) { return v.is_concrete(); });
  if (!eager) return trace_function(f, locals, spec.function_name);
  Trace trace(spec.function_name);
  trace.set_per_device_mesh(&spec.mesh);
  std::vector<Value> traced_args;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::vector<BufferPtr> blocks = device_blocks(args[i].array(), spec.mesh, spec.in_specs.at(i));
    if (blocks.size() != static_cast<std::size_t>(spec.mesh.size()))
      return trace_function(f, locals, spec.function_name);
    traced_args.push_back(trace.arg_blocks(locals[i], std::move(blocks)));
  }
  const std::vector<Value> outputs = f(traced_args);
  Trace::Closed closed = trace.finish(outputs);
  return {closed.jaxpr, std::move(closed.captured)};
}

}  // namespace

std::vector<Value> call_shard_map(const Function& f, const std::vector<Value>& args, ShardMapSpec spec,
                                  const SpecsAfterTrace& out_specs_after_trace) {
  const std::vector<Aval> globals = argument_avals(args);
  check_shard_map_args(spec, globals);
  check_in_specs_match_types(spec, globals, session().profile);
  std::vector<std::pair<std::string, int64_t>> axes;
  for (const std::string& axis : spec.mesh.axis_names()) axes.emplace_back(axis, spec.mesh.axis_size(axis));
  const AxisEnvScope scope(axes, spec.check_vma ? AxisBinding::kManualVmaChecked : AxisBinding::kManual);
  std::vector<Aval> locals;
  for (std::size_t i = 0; i < globals.size(); ++i) {
    locals.push_back(shard_map_local_aval(globals[i], spec.in_specs.at(i), spec.mesh, spec.check_vma));
  }
  const Traced traced = trace_shard_map_body(f, args, locals, spec);
  spec.in_specs.insert(spec.in_specs.begin(), traced.captured.size(), PartitionSpec{});
  if (out_specs_after_trace) spec.out_specs = out_specs_after_trace();
  if (spec.out_specs.size() == 1 && traced.jaxpr->outvars.size() != 1) {
    spec.out_specs.assign(traced.jaxpr->outvars.size(), spec.out_specs[0]);
  }
  check_flat_count("shard_map out_specs", spec.out_specs.size(), traced.jaxpr->outvars.size());
  const JaxprPtr body = consts_as_args(*traced.jaxpr);
  const std::vector<Value> inputs = concat(traced.captured, args);
  if (Trace* trace = staging_trace(inputs)) {
    return staged(*trace, inputs, [&](JaxprBuilder& builder, const std::vector<Atom>& atoms) {
      return bind_shard_map(builder, body, atoms, spec);
    });
  }
  CommLog log;
  std::vector<Array> outputs = run_shard_map(*body, spec, as_arrays(inputs), session().profile, &log);
  record_shard_map_run(body, spec, std::move(log), outputs);
  return as_values(outputs);
}

std::vector<Value> call_pmap(const Function& f, const std::vector<Value>& args, PmapSpec spec,
                             const AxesAfterTrace& out_axes_after_trace) {
  const std::vector<Aval> avals = argument_avals(args);
  const int64_t n = pmap_axis_size(spec, avals);
  std::vector<Aval> instance;
  for (std::size_t i = 0; i < avals.size(); ++i) instance.push_back(pmap_instance_aval(avals[i], spec.in_axes[i]));
  const AxisEnvScope scope({{pmap_axis_name(spec), n}});
  const Traced traced = trace_function(f, instance, spec.function_name);
  spec.in_axes.insert(spec.in_axes.begin(), traced.captured.size(), std::nullopt);
  if (!spec.donated_invars.empty())
    spec.donated_invars.insert(spec.donated_invars.begin(), traced.captured.size(), false);
  if (out_axes_after_trace) spec.out_axes = out_axes_after_trace();
  if (spec.out_axes.size() == 1 && traced.jaxpr->outvars.size() != 1) {
    spec.out_axes.assign(traced.jaxpr->outvars.size(), spec.out_axes[0]);
  }
  check_flat_count("pmap out_axes", spec.out_axes.size(), traced.jaxpr->outvars.size());
  const JaxprPtr body = consts_as_args(*traced.jaxpr);
  const std::vector<Value> inputs = concat(traced.captured, args);
  const JaxProfile& profile = session().profile;
  if (Trace* trace = staging_trace(inputs)) {
    return staged(*trace, inputs, [&](JaxprBuilder& builder, const std::vector<Atom>& atoms) {
      return bind_pmap(builder, body, atoms, spec, session().devices, profile);
    });
  }
  return as_values(run_pmap(*body, as_arrays(inputs), spec, session().devices, profile).outputs);
}

}  // namespace shardscope::api
