// Partitioned execution of a jaxpr: reshard operands to what each op's factor rule needs, run the local
// kernel on every device, all-reduce partial results of sharded reduction factors.
#include "exec/jit.h"

#include <algorithm>
#include <list>

#include "base/error.h"
#include "base/thread_pool.h"
#include "exec/cancellation.h"
#include "exec/control_flow_partition.h"
#include "exec/debug_callbacks.h"
#include "exec/device_assignment.h"
#include "exec/fusion.h"
#include "exec/host_callbacks.h"
#include "exec/interpreter.h"
#include "exec/partition_plan.h"
#include "exec/program_cache.h"
#include "exec/shard_map.h"
#include "explicit/sharding_rules.h"
#include "ir/axis_env.h"
#include "ir/inline_calls.h"
#include "ir/layout_constraint.h"
#include "ir/primitive.h"
#include "spmd/collectives.h"

namespace shardscope {
namespace {

struct Placed {
  Layout layout;
  DeviceBuffers buffers;
};

Aval local_aval(const Aval& global, const Layout& layout, const Mesh& mesh) {
  Aval local = global;
  for (std::size_t d = 0; d < layout.size() && d < local.rank(); ++d) local.shape[d] /= mesh.axes_size(layout[d]);
  return local;
}

// The mesh a run uses (borrowed from the arguments, options or program), or null when nothing names one.
const Mesh* find_mesh(const Jaxpr& jaxpr, const std::vector<Array>& args, const JitOptions& options) {
  const std::vector<bool> read = arguments_read(jaxpr);
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (i < options.in_shardings.size() && options.in_shardings[i]) {
      if (const auto* named = std::get_if<NamedSharding>(&*options.in_shardings[i])) return &named->mesh;
    }
    // An argument the program never reads is pruned before devices are assigned: it places nothing, so a
    // program of constants runs on the default device (jax.jit(optimizer.init) gives single-device states).
    if (i < read.size() && !read[i]) continue;
    if (const auto* named = std::get_if<NamedSharding>(&args[i].sharding())) return &named->mesh;
  }
  for (const Eqn& eqn : jaxpr.eqns) {
    // sharding_constraint's `sharding`, or reshard's and mesh_cast's `dst_sharding`.
    for (const char* key : {"sharding", "dst_sharding"}) {
      if (const ParamValue* s = find_param(eqn.params, key)) {
        // A sharding on the empty mesh (grad's seed outside any mesh) places nothing.
        if (const auto* named = s->get_if<NamedSharding>(); named != nullptr && named->mesh.size() > 0) {
          return &named->mesh;
        }
      }
    }
    // A shard_map's mesh places the program when nothing else does.
    if (eqn.primitive->name == "shard_map") {
      if (const ParamValue* m = find_param(eqn.params, "mesh")) {
        if (const auto* mesh = m->get_if<Mesh>()) return mesh;
      }
    }
  }
  for (const auto& s : options.out_shardings) {
    if (s) {
      if (const auto* named = std::get_if<NamedSharding>(&*s)) return &named->mesh;
    }
  }
  return nullptr;
}

// The argument whose sharding chose the mesh (find_mesh's first pick among the arguments).
std::size_t mesh_source(const std::vector<Array>& args, const JitOptions& options) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (i < options.in_shardings.size() && options.in_shardings[i] &&
        std::holds_alternative<NamedSharding>(*options.in_shardings[i])) {
      return i;
    }
    if (std::holds_alternative<NamedSharding>(args[i].sharding())) return i;
  }
  return 0;
}

PlacedArgument placed_argument(const Jaxpr& jaxpr, const std::vector<Array>& args, const JitOptions& options,
                               std::size_t i) {
  const Sharding& sharding =
      i < options.in_shardings.size() && options.in_shardings[i] ? *options.in_shardings[i] : args[i].sharding();
  PlacedArgument placed;
  placed.name = i < options.arg_names.size() ? options.arg_names[i] : "args[" + std::to_string(i) + "]";
  placed.aval = jaxpr.invars[i].aval;
  if (const auto* named = std::get_if<NamedSharding>(&sharding)) {
    placed.devices = named->mesh.devices();
  } else if (const auto* single = std::get_if<SingleDeviceSharding>(&sharding)) {
    placed.devices = {single->device};
  }
  return placed;
}

// Params that carry shapes must describe the local block on each device.
Params localize_params(const Eqn& eqn, const std::vector<Aval>& local_inputs, const Aval& local_output) {
  Params params = eqn.params;
  for (auto& [key, value] : params) {
    if (key == "shape" || key == "new_sizes") value = ParamValue::int_tuple(local_output.shape);
    if (key == "limit_indices" && eqn.primitive->name == "slice") {
      std::vector<int64_t> limits = value.as_ints(key);
      const Aval& global_in = atom_aval(eqn.inputs.at(0));
      for (std::size_t d = 0; d < limits.size(); ++d) {
        if (limits[d] == global_in.shape[d]) limits[d] = local_inputs.at(0).shape[d];
      }
      value = ParamValue::int_tuple(limits);
    }
    if (key == "slice_sizes") {
      std::vector<int64_t> sizes = value.as_ints(key);
      const Aval& global_in = atom_aval(eqn.inputs.at(0));
      for (std::size_t d = 0; d < sizes.size(); ++d) {
        if (sizes[d] == global_in.shape[d]) sizes[d] = local_inputs.at(0).shape[d];
      }
      value = ParamValue::int_tuple(sizes);
    }
  }
  return params;
}

ReduceOp reduction_op(const std::string& primitive) {
  if (primitive == "reduce_max") return ReduceOp::kMax;
  if (primitive == "reduce_min") return ReduceOp::kMin;
  return ReduceOp::kSum;
}

class PartitionedRun {
 public:
  // `combined_base`: the first of the combined all-reduce ids this run reserved in the log for the plan's groups.
  PartitionedRun(const Mesh& mesh, const JaxProfile& profile, JitRun& run, int64_t combined_base)
      : mesh_(mesh), profile_(profile), run_(run), combined_base_(combined_base) {}

  void bind(const Var& var, Placed placed) { env_[var.id] = std::move(placed); }

  // A value's per-device buffers without copying them (literals are made into buffers once per call).
  const DeviceBuffers& buffers_of(const Atom& atom) {
    if (const auto* var = std::get_if<Var>(&atom)) {
      const auto it = env_.find(var->id);
      if (it == env_.end()) throw runtime_error("jit: value used before it was computed");
      return it->second.buffers;
    }
    literals_.push_back(read(atom).buffers);
    return literals_.back();
  }

  Placed read(const Atom& atom) const {
    if (const auto* literal = std::get_if<Literal>(&atom)) {
      return {{}, DeviceBuffers(static_cast<std::size_t>(mesh_.size()), literal_buffer(*literal))};
    }
    const auto it = env_.find(std::get<Var>(atom).id);
    if (it == env_.end()) throw runtime_error("jit: value used before it was computed");
    return it->second;
  }

  Placed moved(const Placed& value, const Aval& aval, const Layout& to, const std::string& origin) {
    if (value.layout == to || aval.rank() == 0) return {to, value.buffers};
    return {to, reshard_buffers(mesh_, aval.shape, value.layout, to, value.buffers, profile_, &run_.log, origin)};
  }

  // An operand whose permuted dims stay sharded: the log records the neighbour sends the partitioner makes (none
  // when every device reads only its own elements); the kernel still gets the dims whole to compute from.
  Placed exchanged(const Placed& value, const Aval& aval, const EquationPlan& plan, std::size_t operand) {
    for (const HaloExchange& exchange : plan.exchanges[operand]) {
      if (exchange.moves_data())
        run_.log.add(halo_exchange_record(exchange, mesh_, halo_exchange_reason(plan, exchange)));
    }
    const Layout& to = plan.operands.at(operand);
    return {to, reshard_buffers(mesh_, aval.shape, value.layout, to, value.buffers, profile_, nullptr, "")};
  }

  // Runs an elementwise group in one pass over memory when every value in it has one layout (so no
  // data moves between its equations); false leaves the equations to execute().
  bool execute_fused(const Jaxpr& jaxpr, const FusionGroup& group) {
    if (group.outputs.empty()) return false;
    const Layout& layout = run_.layouts->at(jaxpr.eqns[group.begin].outputs[0].id).layout;
    for (std::size_t e = group.begin; e < group.end; ++e) {
      if (run_.layouts->at(jaxpr.eqns[e].outputs[0].id).layout != layout) return false;
    }
    std::vector<DeviceBuffers> inputs;
    inputs.reserve(group.inputs.size());
    for (const Var& var : group.inputs) {
      const auto it = env_.find(var.id);
      if (it == env_.end()) throw runtime_error("jit: value used before it was computed");
      if (!reads_as_scalar(var.aval, group.shape) && it->second.layout != layout) return false;
      inputs.push_back(it->second.buffers);
    }
    std::vector<DeviceBuffers> outputs = run_fusion_group(jaxpr, group, inputs);
    for (std::size_t o = 0; o < outputs.size(); ++o) bind(group.outputs[o], {layout, std::move(outputs[o])});
    return true;
  }

  void execute(const Eqn& eqn, const EquationPlan& plan) {
    if (is_debug_effect(eqn)) {  // jax.debug callbacks (no results): exec/debug_callbacks.cpp
      return run_debug_effect(eqn, mesh_, profile_, [&](const Atom& a) {
        return PlacedOperand{read(a).layout, read(a).buffers};
      });
    }
    switch (plan.mode) {
      case EquationMode::kLayoutMove: {
        Placed value = read(eqn.inputs[0]);
        // Leaving an unreduced type sums the devices' partial values first (EquationPlan::reductions).
        for (std::size_t k = 0; k < plan.reductions.size(); ++k) {
          value.buffers = partial_results_reduced(plan, k, value.buffers, ReduceOp::kSum, eqn.primitive->name);
        }
        bind(eqn.outputs[0], moved(value, atom_aval(eqn.inputs[0]), plan.produced.at(0), plan.reason));
        return;
      }
      case EquationMode::kManual: execute_manual(eqn, plan); return;
      case EquationMode::kBlocked: execute_blocked(eqn, plan); return;
      case EquationMode::kWhole: execute_replicated(eqn, plan); return;
      case EquationMode::kLocal: break;
    }
    if (execute_control_flow(eqn, plan, mesh_,
                             {[&] {
                                std::vector<DeviceBuffers> out;
                                for (Placed& p : planned_operands(eqn, plan)) out.push_back(std::move(p.buffers));
                                return out;
                              },
                              [&](std::size_t r, DeviceBuffers b) {
                                bind_produced(eqn.outputs[r], {plan.produced.at(r), std::move(b)});
                              }}))
      return;
    const std::string& name = eqn.primitive->name;
    std::vector<Placed> inputs;
    std::vector<Aval> local_inputs;
    for (std::size_t o = 0; o < eqn.inputs.size(); ++o) {
      const Aval& aval = atom_aval(eqn.inputs[o]);
      const Placed held = read(eqn.inputs[o]);
      inputs.push_back(o < plan.exchanges.size() && !plan.exchanges[o].empty()
                           ? exchanged(held, aval, plan, o)
                           : moved(held, aval, plan.operands.at(o), operand_move_reason(plan, o, held.layout)));
      local_inputs.push_back(local_aval(aval, plan.operands[o], mesh_));
    }
    if (plan.moves_index_iota) move_index_iota(eqn, plan);
    const std::vector<Layout>& produced = plan.produced;
    const std::vector<std::string>& reduced_axes = plan.reduced_axes;
    if (plan.partial_gather) return execute_partial_gather(eqn, plan, inputs);
    if (plan.scatter_in_place) {
      // Every update lands in exactly one device's block, so the blocks of the scatter computed once are what
      // each device's local scatter leaves; nothing is communicated.
      return bind_produced(eqn.outputs[0], {plan.produced.at(0), computed_whole(eqn, inputs, plan.produced.at(0))});
    }
    if (whole_product(eqn, inputs, produced, reduced_axes)) return;
    const Aval local_out = local_aval(eqn.outputs[0].aval, produced.at(0), mesh_);
    const Params params = localize_params(eqn, local_inputs, local_out);
    std::vector<DeviceBuffers> outputs(eqn.outputs.size(), DeviceBuffers(static_cast<std::size_t>(mesh_.size())));
    parallel_for(static_cast<std::size_t>(mesh_.size()), large_equation(eqn), [&](std::size_t d) {
      throw_if_cancelled();
      std::vector<BufferPtr> local;
      for (const Placed& input : inputs) local.push_back(input.buffers[d]);
      std::vector<BufferPtr> results = eqn.primitive->impl(local, local_inputs, params);
      for (std::size_t r = 0; r < outputs.size(); ++r) outputs[r][d] = results.at(r);
    });
    for (std::size_t r = 0; r < outputs.size(); ++r) {
      for (std::size_t k = 0; k < plan.reductions.size(); ++k) {
        outputs[r] = partial_results_reduced(plan, k, outputs[r], reduction_op(name), name);
      }
      bind_produced(eqn.outputs[r], {produced[r], outputs[r]});
    }
  }

  // A result as the kernel left it, moved to its propagated layout (a local slice, or the collectives it takes).
  void bind_produced(const Var& out, Placed placed) {
    const Layout& wanted = run_.layouts->at(out.id).layout;
    if (placed.layout == wanted) {
      bind(out, std::move(placed));
    } else {
      bind(out, moved(placed, out.aval, wanted, ""));
    }
  }

 private:
  // The equation's first result computed once over its operands assembled from their blocks, cut to `layout`. The
  // operands have already moved (and logged their collectives) as the partitioner requires; assembling them here is
  // local bookkeeping.
  DeviceBuffers computed_whole(const Eqn& eqn, const std::vector<Placed>& inputs, const Layout& layout) {
    throw_if_cancelled();
    std::vector<BufferPtr> whole;
    std::vector<Aval> avals;
    for (std::size_t o = 0; o < inputs.size(); ++o) {
      const Aval& aval = atom_aval(eqn.inputs[o]);
      whole.push_back(whole_buffer(mesh_, aval.dtype, aval.shape, inputs[o].layout, inputs[o].buffers, profile_));
      avals.push_back(aval);
    }
    const Aval& out = eqn.outputs[0].aval;
    const BufferPtr result = eqn.primitive->impl(whole, avals, eqn.params).at(0);
    return reshard_buffers(mesh_, out.shape, Layout(out.rank()), layout,
                           DeviceBuffers(static_cast<std::size_t>(mesh_.size()), result), profile_, nullptr, "");
  }

  // A floating-point dot_general whose contraction stays on each device is computed once over the whole
  // operands and cut into the devices' blocks: each block then holds exactly the values the unsharded
  // product has (BLAS rounds a block differently from the same block inside a bigger product, which a TPU's
  // matrix unit does not), and replicated blocks are computed once.
  bool whole_product(const Eqn& eqn, const std::vector<Placed>& inputs, const std::vector<Layout>& produced,
                     const std::vector<std::string>& reduced_axes) {
    const Aval& out = eqn.outputs[0].aval;
    if (eqn.primitive->name != "dot_general" || !reduced_axes.empty() || eqn.outputs.size() != 1 ||
        !is_floating(out.dtype) || mesh_.size() == 1) {
      return false;
    }
    const Placed result{produced[0], computed_whole(eqn, inputs, produced[0])};
    const Layout& wanted = run_.layouts->at(eqn.outputs[0].id).layout;
    bind(eqn.outputs[0], produced[0] == wanted ? result : moved(result, out, wanted, ""));
    return true;
  }

  // A gather from an operand sharded along the dims it indexes (partition_plan's partial_gather). Every row is held
  // by exactly one device of the reduced group, so the summed partial results are the lookup's values whichever
  // device contributes which row: the lookup runs once over the operand assembled from its blocks
  // (computed_whole), the device at position 0 along the reduced axes holds it, the others hold
  // -0.0 (the identity of IEEE addition, so every value, -0.0 and NaN included, comes through unchanged), and the
  // all-reduce the partitioner inserts sums them and is logged.
  void execute_partial_gather(const Eqn& eqn, const EquationPlan& plan, const std::vector<Placed>& inputs) {
    const Aval& out = eqn.outputs[0].aval;
    DeviceBuffers parts = computed_whole(eqn, inputs, plan.produced.at(0));
    std::vector<std::size_t> summed;
    for (const std::string& axis : plan.reduced_axes) summed.push_back(*mesh_.axis_index(axis));
    for (std::size_t d = 0; d < parts.size(); ++d) {
      const std::vector<int64_t> position = mesh_.position_of(d);
      if (std::all_of(summed.begin(), summed.end(), [&](std::size_t a) { return position[a] == 0; })) continue;
      auto identity = std::make_shared<Buffer>(out.dtype, parts[d]->shape());
      if (is_floating(out.dtype)) {
        // The sign bit is the top bit of each element, stored last (little-endian).
        const std::size_t width = dtype_size(out.dtype);
        std::span<std::byte> bytes = identity->mutable_bytes();
        for (std::size_t b = width - 1; b < bytes.size(); b += width) bytes[b] = std::byte{0x80};
      }
      parts[d] = std::move(identity);
    }
    for (std::size_t k = 0; k < plan.reductions.size(); ++k) {
      parts = partial_results_reduced(plan, k, parts, ReduceOp::kSum, eqn.primitive->name);
    }
    bind_produced(eqn.outputs[0], {plan.produced.at(0), std::move(parts)});
  }

  // The index iota argmax/argmin reduce beside their operand moves as the operand does (its values are the
  // kernel's own business; only the collectives are the partitioner's).
  void move_index_iota(const Eqn& eqn, const EquationPlan& plan) {
    const Aval& operand = atom_aval(eqn.inputs[0]);
    const Layout& held = read(eqn.inputs[0]).layout;
    Aval iota = local_aval(operand, held, mesh_);
    iota.dtype = DType::kInt32;
    const DeviceBuffers blocks(static_cast<std::size_t>(mesh_.size()),
                               std::make_shared<Buffer>(DType::kInt32, iota.shape));
    (void)reshard_buffers(mesh_, operand.shape, held, plan.operands.at(0), blocks, profile_, &run_.log,
                          index_iota_reason(eqn));
  }

  // The all-reduce of reduction `k`'s partial results, logged with the combined all-reduce it belongs to.
  DeviceBuffers partial_results_reduced(const EquationPlan& plan, std::size_t k, const DeviceBuffers& values,
                                        ReduceOp op, const std::string& primitive) {
    CommLog log;
    DeviceBuffers reduced = all_reduce(mesh_, plan.reductions[k], values, op, &log, primitive + " partial results");
    for (CollectiveRecord record : log.records()) {
      const int64_t id = k < plan.combined.size() ? plan.combined[k] : -1;
      record.combined = id < 0 ? -1 : combined_base_ + id;
      run_.log.add(std::move(record));
    }
    return reduced;
  }

  // The operands moved to the layouts the plan gives them.
  std::vector<Placed> planned_operands(const Eqn& eqn, const EquationPlan& plan) {
    std::vector<Placed> operands;
    operands.reserve(eqn.inputs.size());
    for (std::size_t i = 0; i < eqn.inputs.size(); ++i) {
      const Placed held = read(eqn.inputs[i]);
      operands.push_back(
          moved(held, atom_aval(eqn.inputs[i]), plan.operands.at(i), operand_move_reason(plan, i, held.layout)));
    }
    return operands;
  }

  // shard_map inside the program: operands move to their in_specs, every device runs the body on its own blocks
  // (the body's collectives logged with the rest), and the results are laid out as the out_specs say.
  void execute_manual(const Eqn& eqn, const EquationPlan& plan) {
    const ShardMapSpec spec = shard_map_spec_of(eqn.params);
    std::vector<DeviceBuffers> locals;
    for (Placed& operand : planned_operands(eqn, plan)) locals.push_back(std::move(operand.buffers));
    std::vector<std::pair<std::string, int64_t>> axes;
    for (const std::string& axis : spec.mesh.axis_names()) axes.emplace_back(axis, spec.mesh.axis_size(axis));
    const AxisEnvScope scope(axes);
    const SpmdContext context{&spec.mesh, &run_.log};
    const std::vector<DeviceBuffers> outputs = evaluate_jaxpr_per_device(shard_map_body(eqn.params), context, locals);
    for (std::size_t r = 0; r < eqn.outputs.size(); ++r)
      bind_produced(eqn.outputs[r], {plan.produced.at(r), outputs.at(r)});
  }

  // Values whose elements depend on their global position (random bits, split keys): operands are
  // gathered whole (keys are small) and each device computes only its own block of the result; devices
  // holding the same block share one buffer.
  void execute_blocked(const Eqn& eqn, const EquationPlan& plan) {
    std::vector<BufferPtr> global_inputs;
    std::vector<Aval> avals;
    const std::vector<Placed> operands = planned_operands(eqn, plan);
    for (std::size_t i = 0; i < operands.size(); ++i) {
      global_inputs.push_back(operands[i].buffers.front());
      avals.push_back(atom_aval(eqn.inputs[i]));
    }
    const Var& out = eqn.outputs.at(0);
    const Layout& layout = plan.produced.at(0);
    const std::vector<DeviceIndex> blocks =
        devices_indices_map(sharding_of_layout(mesh_, layout, std::nullopt), out.aval.shape, profile_);
    std::map<std::vector<DimSlice>, BufferPtr> computed;
    DeviceBuffers buffers;
    for (const DeviceIndex& entry : blocks) {
      BufferPtr& block = computed[entry.index];
      if (!block) block = eqn.primitive->block_impl(global_inputs, avals, eqn.params, entry.index).at(0);
      buffers.push_back(block);
    }
    bind_produced(out, {layout, buffers});
  }

  // Ops without a factor rule (or values made from nothing) run on the whole value and are then cut.
  void execute_replicated(const Eqn& eqn, const EquationPlan& plan) {
    std::vector<BufferPtr> global_inputs;
    for (const Placed& operand : planned_operands(eqn, plan)) global_inputs.push_back(operand.buffers.front());
    std::vector<Aval> avals;
    for (const Atom& input : eqn.inputs) avals.push_back(atom_aval(input));
    if (!eqn.primitive->impl) throw not_implemented_error("primitive '" + eqn.primitive->name + "' has no kernel");
    const std::vector<BufferPtr> results = eqn.primitive->impl(global_inputs, avals, eqn.params);
    for (std::size_t r = 0; r < eqn.outputs.size(); ++r) {
      const DeviceBuffers replicated(static_cast<std::size_t>(mesh_.size()), results.at(r));
      bind_produced(eqn.outputs[r], {plan.produced.at(r), replicated});
    }
  }

  const Mesh& mesh_;
  const JaxProfile& profile_;
  JitRun& run_;
  int64_t combined_base_ = 0;
  std::map<int64_t, Placed> env_;
  std::list<DeviceBuffers> literals_;  // stable addresses for buffers_of
};

JitRun run_on_one_device(const Jaxpr& jaxpr, const std::vector<Array>& args, const JitOptions& options,
                         const JaxProfile& profile) {
  JitRun run;
  std::optional<Device> device = options.default_device;
  for (const Array& a : args) {
    if (const auto* single = std::get_if<SingleDeviceSharding>(&a.sharding())) {
      device = single->device;
      break;
    }
  }
  if (!device) throw value_error("jit of a program with no inputs needs a default device");
  std::vector<BufferPtr> inputs;
  for (const Array& a : args) inputs.push_back(a.gather());
  const std::vector<BufferPtr> results = evaluate_jaxpr(jaxpr, inputs);
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Aval& aval = atom_aval(jaxpr.outvars[i]);
    Sharding sharding = make_single_device_sharding(*device, profile);
    if (i < options.out_shardings.size() && options.out_shardings[i]) sharding = *options.out_shardings[i];
    run.outputs.push_back(Array::from_host(results[i], sharding, profile, aval.weak_type));
  }
  return run;
}

// Everything a run on a mesh derives from the program, its arguments' shardings and the options, never
// from values: computed once per such combination and reused by every later call (what JAX's jit cache
// holds after lowering).
struct MeshPlan {
  Mesh mesh;
  std::shared_ptr<const LayoutMap> layouts;
  // Per argument: where it must move, or nullopt when its shards already are the program's blocks.
  std::vector<std::optional<NamedSharding>> moves;
  std::shared_ptr<const std::vector<FusionGroup>> groups;
  std::vector<EquationPlan> equations;  // how each equation runs (the decisions lower() prints)
  struct Output {
    Sharding sharding;
    std::vector<Array::Shard> shards;  // devices and indices; no data
  };
  std::vector<Output> outputs;
};

// A device_put inside the program may not move values to devices its placed arguments are not on.
void check_device_puts(const Jaxpr& jaxpr, const std::vector<Array>& args, const JitOptions& options,
                       const JaxProfile& profile, const Mesh& mesh) {
  const std::size_t source = mesh_source(args, options);
  if (source >= args.size()) return;
  const bool placed = (source < options.in_shardings.size() && options.in_shardings[source]) ||
                      std::holds_alternative<NamedSharding>(args[source].sharding());
  if (!placed) return;
  std::vector<int64_t> ours;
  for (const Device& device : mesh.devices()) ours.push_back(device.id);
  std::sort(ours.begin(), ours.end());
  for (const Eqn& eqn : jaxpr.eqns) {
    if (eqn.primitive->name != "device_put") continue;
    const auto& targets = param(eqn.params, "devices").as_items("devices");
    for (const ParamValue& target : targets) {
      const auto* named = target.get_if<NamedSharding>();
      if (named == nullptr || named->mesh.size() == 0) continue;
      std::vector<int64_t> theirs;
      for (const Device& device : named->mesh.devices()) theirs.push_back(device.id);
      std::sort(theirs.begin(), theirs.end());
      if (theirs != ours) {
        throw_device_put_mismatch(options.name, placed_argument(jaxpr, args, options, source), named->mesh.devices(),
                                  summarize(eqn.source), profile);
      }
    }
  }
}

MeshPlan plan_mesh_run(const Jaxpr& jaxpr, const std::vector<Array>& args, const JitOptions& options,
                       const JaxProfile& profile, const Mesh& mesh) {
  MeshPlan plan;
  plan.mesh = mesh;
  LayoutMap known;
  std::optional<NamedSharding> reference;  // the first NamedSharding input, for reading outputs back
  std::size_t reference_rank = 0;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const Var& var = jaxpr.invars[i];
    std::optional<Sharding> given = i < options.in_shardings.size() ? options.in_shardings[i] : std::nullopt;
    if (!given && std::holds_alternative<NamedSharding>(args[i].sharding())) given = args[i].sharding();
    if (given) {
      const auto* named = std::get_if<NamedSharding>(&*given);
      if (named == nullptr || named->mesh.devices() != mesh.devices()) {
        throw_device_assignment_mismatch(options.name,
                                         placed_argument(jaxpr, args, options, mesh_source(args, options)),
                                         placed_argument(jaxpr, args, options, i), profile);
      }
      if (!reference) {
        reference = *named;
        reference_rank = var.aval.rank();
      }
      pin_argument(known, var, *named, i, i < options.in_shardings.size() && options.in_shardings[i]);
    }
  }
  check_device_puts(jaxpr, args, options, profile, mesh);
  pin_outputs_and_types(known, jaxpr, options.out_shardings, mesh);
  const bool explicit_mesh =
      std::find(mesh.axis_types().begin(), mesh.axis_types().end(), AxisType::kExplicit) != mesh.axis_types().end();
  plan.layouts = cached_layouts(jaxpr, mesh, known);  // propagation depends on no value
  for (std::size_t i = 0; i < args.size(); ++i) {
    const Var& var = jaxpr.invars[i];
    const Layout& layout = plan.layouts->at(var.id).layout;
    const auto* named = std::get_if<NamedSharding>(&args[i].sharding());
    // Committed inputs already cut into the chosen blocks are used as they are.
    const bool in_place = named != nullptr && named->mesh.devices() == mesh.devices() &&
                          args[i].shape() == var.aval.shape && dim_axes_of(*named, var.aval.rank()) == layout;
    if (in_place) {
      plan.moves.emplace_back();
    } else {
      plan.moves.emplace_back(sharding_of_layout(mesh, layout, std::nullopt));
    }
  }
  plan.groups = cached_fusion_plan(jaxpr);
  plan.equations = plan_equations(jaxpr, *plan.layouts, mesh);
  for (std::size_t o = 0; o < jaxpr.outvars.size(); ++o) {
    const Atom& out = jaxpr.outvars[o];
    const Aval& aval = atom_aval(out);
    const auto* var = std::get_if<Var>(&out);
    const Layout layout = var != nullptr ? plan.layouts->at(var->id).layout : Layout(aval.rank());
    // A result the program put in host memory (device_put to pinned_host) stays there.
    const std::optional<std::string> memory_kind = aval.memory == MemorySpace::kHost
                                                       ? std::optional<std::string>("pinned_host")
                                                       : default_memory_kind(mesh.platform(), profile);
    Sharding sharding = sharding_of_layout(mesh, layout, memory_kind);
    if (o < options.out_shardings.size() && options.out_shardings[o]) {
      sharding = *options.out_shardings[o];
    } else if (explicit_mesh && aval.dim_axes.size() == aval.rank()) {
      // Explicit mode: the output's sharding is its type's, one spec entry per dimension.
      sharding = NamedSharding{mesh, type_partition_spec(aval), memory_kind};
    } else if (reference && reference_rank == aval.rank() && dim_axes_of(*reference, aval.rank()) == layout &&
               (aval.memory != MemorySpace::kHost || reference->memory_kind == memory_kind)) {
      sharding = *reference;  // JAX hands back the input's own sharding object when equivalent
    } else {
      // Read back from the layout: trailing unsharded dims are dropped from the spec.
      Layout trimmed = layout;
      while (!trimmed.empty() && trimmed.back().empty()) trimmed.pop_back();
      sharding = sharding_of_layout(mesh, trimmed, memory_kind);
    }
    MeshPlan::Output output{sharding, {}};
    for (DeviceIndex& entry : devices_indices_map(sharding, aval.shape, profile)) {
      output.shards.push_back({std::move(entry.device), std::move(entry.index), entry.replica_id, nullptr});
    }
    plan.outputs.push_back(std::move(output));
  }
  return plan;
}

// What a plan depends on besides the program, borrowed for lookups and copied into an entry on a miss.
struct MeshProbe {
  const std::vector<Array>* args;
  const JitOptions* options;
  const JaxProfile* profile;
};

struct MeshKey {
  explicit MeshKey(const MeshProbe& probe)
      : in_shardings(probe.options->in_shardings),
        out_shardings(probe.options->out_shardings),
        version(probe.profile->version()) {
    for (const Array& arg : *probe.args) {
      arg_shardings.push_back(arg.sharding());
      arg_shapes.push_back(arg.shape());
    }
  }
  bool operator==(const MeshProbe& probe) const {
    const std::vector<Array>& args = *probe.args;
    if (args.size() != arg_shardings.size() || version != probe.profile->version() ||
        in_shardings != probe.options->in_shardings || out_shardings != probe.options->out_shardings) {
      return false;
    }
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (args[i].shape() != arg_shapes[i] || args[i].sharding() != arg_shardings[i]) return false;
    }
    return true;
  }
  std::vector<Sharding> arg_shardings;
  std::vector<Shape> arg_shapes;
  std::vector<std::optional<Sharding>> in_shardings;
  std::vector<std::optional<Sharding>> out_shardings;
  JaxVersion version;
};

constexpr std::size_t kPlanCacheEntries = 64;

}  // namespace

JitRun run_jit(const Jaxpr& caller, const std::vector<Array>& args, const JitOptions& options,
               const JaxProfile& profile) {
  if (args.size() != caller.invars.size()) {
    throw type_error(options.name + "() takes " + std::to_string(caller.invars.size()) + " arguments, got " +
                     std::to_string(args.size()));
  }
  const CompiledProgramScope compiled;
  // Nested calls (jit inside jit, jax.nn's jitted functions, checkpoint) are partitioned as part of their
  // caller, so shardings flow through them instead of stopping at a call boundary.
  std::shared_ptr<const InlinedProgram> inlined;
  if (rewritten_for_partitioning(caller)) inlined = cached_inlined(caller);
  const Jaxpr& jaxpr = inlined ? inlined->jaxpr : caller;
  const Mesh* mesh = find_mesh(jaxpr, args, options);
  // A one-device mesh still partitions (trivially): its outputs keep NamedShardings on that mesh.
  if (!mesh) return run_on_one_device(jaxpr, args, options, profile);

  static ProgramCache<MeshKey, MeshPlan> plans(kPlanCacheEntries);
  const std::shared_ptr<const MeshPlan> plan = plans.get(jaxpr, MeshProbe{&args, &options, &profile}, [&] {
    MeshPlan made = plan_mesh_run(jaxpr, args, options, profile, *mesh);
    if (inlined && !inlined->replaced.empty()) {
      // The caller's call results (shown by the program view) take the layouts of the values that replaced them.
      LayoutMap layouts = *made.layouts;
      for (const auto& [id, atom] : inlined->replaced) {
        const auto* var = std::get_if<Var>(&atom);
        if (var != nullptr && layouts.count(var->id) != 0) layouts[id] = layouts.at(var->id);
      }
      made.layouts = std::make_shared<const LayoutMap>(std::move(layouts));
    }
    return made;
  });

  JitRun run;
  run.mesh = plan->mesh;
  run.layouts = plan->layouts;
  int64_t combined_ids = 0;
  for (const EquationPlan& equation : plan->equations) {
    for (const int64_t id : equation.combined) combined_ids = std::max(combined_ids, id + 1);
  }
  PartitionedRun partitioned(plan->mesh, profile, run, run.log.reserve_combined_ids(combined_ids));
  for (std::size_t i = 0; i < args.size(); ++i) {
    const Var& var = jaxpr.invars[i];
    const Layout& layout = run.layouts->at(var.id).layout;
    DeviceBuffers buffers;
    buffers.reserve(args[i].shards().size());
    if (!plan->moves[i]) {
      for (const Array::Shard& shard : args[i].shards()) buffers.push_back(shard.data);
    } else {
      // Uncommitted inputs are cut into the chosen blocks locally; committed ones are resharded.
      const Array placed = reshard(args[i], *plan->moves[i], profile, &run.log, "jit argument");
      for (const Array::Shard& shard : placed.shards()) buffers.push_back(shard.data);
    }
    partitioned.bind(var, {layout, std::move(buffers)});
  }
  const std::vector<FusionGroup>& groups = *plan->groups;
  const std::vector<bool> unused = unused_pure_callbacks(jaxpr);
  for (std::size_t e = 0; e < jaxpr.eqns.size();) {
    throw_if_cancelled();
    if (!unused.empty() && unused[e]) {
      ++e;
      continue;
    }
    const FusionGroup* group = group_starting_at(groups, e);
    if (group != nullptr && partitioned.execute_fused(jaxpr, *group)) {
      e = group->end;
    } else {
      partitioned.execute(jaxpr.eqns[e], plan->equations[e]);
      ++e;
    }
  }

  for (std::size_t o = 0; o < jaxpr.outvars.size(); ++o) {
    const MeshPlan::Output& output = plan->outputs[o];
    const DeviceBuffers& buffers = partitioned.buffers_of(jaxpr.outvars[o]);
    std::vector<Array::Shard> shards = output.shards;
    for (std::size_t d = 0; d < shards.size(); ++d) shards[d].data = buffers[d];
    run.outputs.push_back(Array::from_shards(atom_aval(jaxpr.outvars[o]).shaped(), output.sharding, std::move(shards)));
  }
  return run;
}

}  // namespace shardscope
