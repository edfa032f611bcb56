// The abstract partitioner behind lower()/compile(): the same layout choices and collectives as run_jit
// (see exec/jit.cpp and spmd/reshard.cpp), decided from types alone so any array size works.
#include "exec/lowering.h"

#include <algorithm>
#include <set>

#include "base/error.h"
#include "exec/all_reduce_combiner.h"
#include "exec/hlo_program.h"
#include "exec/partition_plan.h"
#include "exec/shard_map.h"
#include "ir/inline_calls.h"
#include "ir/layout_constraint.h"
#include "ir/primitive.h"
#include "propagation/control_flow_factor_rule.h"
#include "propagation/factor_rule.h"
#include "spmd/collectives.h"

namespace shardscope {
namespace {

Aval local_under(const Aval& global, const Layout& layout, const Mesh& mesh) {
  Aval local = Aval::of(global.shape, global.dtype, global.weak_type);
  for (std::size_t d = 0; d < layout.size() && d < local.rank(); ++d) {
    const int64_t ways = mesh.axes_size(layout[d]);
    local.shape[d] = (local.shape[d] + ways - 1) / ways;
  }
  return local;
}

std::optional<Mesh> find_mesh(const Jaxpr& jaxpr, const std::vector<ShapeDtypeStruct>& args,
                              const LoweringOptions& options) {
  const std::vector<bool> read = arguments_read(jaxpr);
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (i < options.in_shardings.size() && options.in_shardings[i]) {
      if (const auto* named = std::get_if<NamedSharding>(&*options.in_shardings[i])) return named->mesh;
    }
    // An argument the program never reads is pruned before devices are assigned, as jit prunes it.
    if (args[i].sharding && (i >= read.size() || read[i])) {
      if (const auto* named = std::get_if<NamedSharding>(&*args[i].sharding)) return named->mesh;
    }
  }
  for (const Eqn& eqn : jaxpr.eqns) {
    for (const char* key : {"sharding", "dst_sharding"}) {
      if (const ParamValue* s = find_param(eqn.params, key)) {
        // A sharding on the empty mesh (grad's seed outside any mesh) places nothing.
        if (const auto* named = s->get_if<NamedSharding>(); named != nullptr && named->mesh.size() > 0) {
          return named->mesh;
        }
      }
    }
    if (eqn.primitive->name == "shard_map") {
      if (const ParamValue* m = find_param(eqn.params, "mesh")) {
        if (const auto* mesh = m->get_if<Mesh>()) return *mesh;
      }
    }
  }
  for (const auto& s : options.out_shardings) {
    if (s) {
      if (const auto* named = std::get_if<NamedSharding>(&*s)) return named->mesh;
    }
  }
  return std::nullopt;
}

Layout trimmed(Layout layout) {
  while (!layout.empty() && layout.back().empty()) layout.pop_back();
  return layout;
}

// Walks the program the way the partitioned run does, recording collectives instead of moving data.
class Planner {
 public:
  Planner(const Mesh& mesh, PartitionPlan& plan) : mesh_(mesh), plan_(plan), layouts_(&plan.layouts) {}

  // Every live equation of `jaxpr` (whose values have layouts in `layouts`), recorded against `index` when set
  // (a body's collectives count for the equation that runs the body).
  void program(const Jaxpr& jaxpr, const LayoutMap& layouts, std::optional<std::size_t> index) {
    const LayoutMap* outer = layouts_;
    layouts_ = &layouts;
    const std::vector<bool> live = live_equations(jaxpr);
    std::vector<EquationPlan> decided = plan_equations(jaxpr, layouts, mesh_);
    for (const EquationPlan& plan : decided) {
      for (const int64_t id : plan.combined) next_combined_id_ = std::max(next_combined_id_, id + 1);
    }
    if (index) {
      // The combiner's groups are numbered per program; a body's would collide with its caller's, and the run
      // executes bodies per device without combining, so a body's all-reduces are listed one by one.
      for (EquationPlan& plan : decided) std::fill(plan.combined.begin(), plan.combined.end(), -1);
    }
    for (std::size_t e = 0; e < jaxpr.eqns.size(); ++e) {
      if (live[e]) equation(index.value_or(e), jaxpr.eqns[e], decided[e]);
    }
    layouts_ = outer;
  }

  void control_flow_bodies(std::size_t index, const Eqn& eqn, const EquationPlan& decided) {
    const std::string outer = context_;
    context_ = (outer.empty() ? "" : outer + ", ") + eqn.primitive->name + " body";
    for (const BodyLayouts& body : control_flow_body_layouts(eqn, decided.operands, decided.produced, mesh_)) {
      program(*body.body, body.layouts, index);
    }
    context_ = outer;
  }

  void move(const Atom& value, const Layout& from, const Layout& to, std::size_t equation, const std::string& origin,
            int64_t operand = -1) {
    const Aval& global = atom_aval(value);
    const auto* var = std::get_if<Var>(&value);
    const int64_t var_id = var == nullptr ? -1 : var->id;
    if (from == to || global.rank() == 0) return;
    for (const ReshardStep& step : reshard_steps(from, to, mesh_)) {
      add({equation, step.kind, step.axes, step.dimension, step.concat_dimension,
           local_under(global, step.before, mesh_), local_under(global, step.after, mesh_), origin, var_id, operand});
    }
  }

  // Neighbour sends of a slice-like operand whose permuted dims stay sharded, and the collective that makes a dim a
  // slice's or pad's result drops whole (exec/halo_exchange).
  void exchange_halos(std::size_t index, const Eqn& eqn, const Atom& value, const EquationPlan& decided,
                      const std::vector<HaloExchange>& exchanges) {
    const auto* var = std::get_if<Var>(&value);
    const Aval local = local_under(atom_aval(value), layout_of(value), mesh_);
    for (const HaloExchange& exchange : exchanges) {
      if (!exchange.moves_data()) continue;
      if (exchange.kind == CollectiveKind::kAllReduce && eqn.outputs.size() == 1) {
        // A result made whole by summing its blocks into place: the all-reduce runs on the equation's result,
        // after it, over the whole dim.
        const Var& output = eqn.outputs[0];
        const Aval whole = local_under(output.aval, decided.produced.at(0), mesh_);
        add({index, exchange.kind, exchange.axes, static_cast<int64_t>(exchange.dim), -1, whole, whole,
             halo_exchange_reason(decided, exchange), output.id});
        continue;
      }
      add({index, exchange.kind, exchange.axes, static_cast<int64_t>(exchange.dim), -1, local, local,
           halo_exchange_reason(decided, exchange), var == nullptr ? -1 : var->id});
    }
  }

  // The equation's decisions (exec/partition_plan), recorded as the collectives they take.
  void equation(std::size_t index, const Eqn& eqn, const EquationPlan& decided) {
    for (std::size_t i = 0; i < eqn.inputs.size(); ++i) {
      if (i < decided.exchanges.size() && !decided.exchanges[i].empty()) {
        exchange_halos(index, eqn, eqn.inputs[i], decided, decided.exchanges[i]);
        continue;
      }
      move(eqn.inputs[i], layout_of(eqn.inputs[i]), decided.operands.at(i), index,
           operand_move_reason(decided, i, layout_of(eqn.inputs[i])), static_cast<int64_t>(i));
    }
    if (decided.moves_index_iota) {
      Aval iota = atom_aval(eqn.inputs.at(0));
      iota.dtype = DType::kInt32;
      move(Atom{new_var(iota)}, layout_of(eqn.inputs[0]), decided.operands.at(0), index, index_iota_reason(eqn));
    }
    if (decided.mode == EquationMode::kManual) body_collectives(index, shard_map_body(eqn.params));
    // A loop or branch runs its body partitioned: the body's own collectives run inside it.
    if (decided.mode == EquationMode::kLocal && is_control_flow(eqn)) control_flow_bodies(index, eqn, decided);
    for (std::size_t r = 0; r < eqn.outputs.size(); ++r) {
      const Var& output = eqn.outputs[r];
      for (std::size_t k = 0; k < decided.reductions.size(); ++k) {
        const Aval local = local_under(output.aval, decided.produced.at(r), mesh_);
        add({index, CollectiveKind::kAllReduce, decided.reductions[k], -1, -1, local, local,
             eqn.primitive->name + " partial results", output.id, -1,
             k < decided.combined.size() ? decided.combined[k] : -1});
      }
      move(Atom{output}, decided.produced.at(r), layout_of(Atom{output}), index, "");
    }
  }

  // The collectives a shard_map body calls run per device on the body's (local) types. XLA's combiner joins
  // the body's independent reductions as it does the partitioner's, and a psum of several values is one
  // all-reduce of their tuple: such all-reduces share a combined id.
  void body_collectives(std::size_t index, const Jaxpr& body) {
    const std::vector<int64_t> combined = combine_body_all_reduces(body, mesh_);
    const int64_t combined_base = next_combined_id_;
    next_combined_id_ += static_cast<int64_t>(body.eqns.size());
    for (std::size_t e = 0; e < body.eqns.size(); ++e) {
      const Eqn& eqn = body.eqns[e];
      const std::string& name = eqn.primitive->name;
      // Calls and control flow inside the body: their collectives appear once per called computation (a loop
      // body's psum is one instruction of the loop's body computation).
      bool nested = false;
      for (const char* key : {"jaxpr", "call_jaxpr", "body_jaxpr", "cond_jaxpr", "branches"}) {
        const ParamValue* value = find_param(eqn.params, key);
        if (value == nullptr) continue;
        if (const auto* ref = value->get_if<ParamValue::JaxprRef>(); ref != nullptr && *ref) {
          body_collectives(index, **ref);
          nested = true;
        } else if (const auto* items = value->get_if<ParamValue::Tuple>()) {
          for (const ParamValue& item : items->items) {
            if (const auto* branch = item.get_if<ParamValue::JaxprRef>(); branch != nullptr && *branch) {
              body_collectives(index, **branch);
              nested = true;
            }
          }
        }
      }
      if (nested) continue;
      const std::optional<CollectiveKind> kind = collective_kind_of(name);
      if (!kind || eqn.inputs.empty() || eqn.outputs.empty()) continue;
      const char* axes_key = find_param(eqn.params, "axes") != nullptr ? "axes" : "axis_name";
      const ParamValue* axes_value = find_param(eqn.params, axes_key);
      if (axes_value == nullptr) continue;
      std::vector<std::string> axes;
      if (const auto* single = axes_value->get_if<std::string>()) axes.push_back(*single);
      if (const auto* tuple = axes_value->get_if<ParamValue::Tuple>()) {
        for (const ParamValue& item : tuple->items) {
          if (const auto* axis = item.get_if<std::string>()) axes.push_back(*axis);
        }
      }
      int64_t dimension = -1;
      for (const char* key : {"all_gather_dimension", "scatter_dimension", "split_axis"}) {
        if (const ParamValue* value = find_param(eqn.params, key)) dimension = value->as_int(key);
      }
      const int64_t id = combined[e] < 0 ? -1 : combined_base + combined[e];
      // A reduction moves each of its operands; the other collectives take one.
      const std::size_t moved =
          *kind == CollectiveKind::kAllReduce ? std::min(eqn.inputs.size(), eqn.outputs.size()) : 1;
      for (std::size_t o = 0; o < moved; ++o) {
        const Var& out = eqn.outputs[o];
        add({index, *kind, axes, dimension, -1, atom_aval(eqn.inputs[o]), out.aval, name + " in shard_map body", out.id,
             -1, id});
      }
    }
  }

  static std::optional<CollectiveKind> collective_kind_of(const std::string& name) {
    if (name == "psum" || name == "psum_invariant" || name == "psum2" || name == "pmax" || name == "pmin") {
      return CollectiveKind::kAllReduce;
    }
    if (name == "all_gather" || name == "all_gather_invariant") return CollectiveKind::kAllGather;
    if (name == "reduce_scatter") return CollectiveKind::kReduceScatter;
    if (name == "all_to_all") return CollectiveKind::kAllToAll;
    if (name == "ppermute") return CollectiveKind::kCollectivePermute;
    return std::nullopt;
  }

 private:
  // Literals are scalars: no layout.
  const Layout& layout_of(const Atom& atom) const {
    static const Layout kScalar;
    if (const auto* var = std::get_if<Var>(&atom)) {
      const auto it = layouts_->find(var->id);
      if (it != layouts_->end()) return it->second.layout;
    }
    return kScalar;
  }

  void add(PlannedCollective collective) {
    if (!context_.empty()) collective.origin = context_ + ": " + collective.origin;
    plan_.collectives.push_back(std::move(collective));
  }

  const Mesh& mesh_;
  PartitionPlan& plan_;
  // Combined all-reduce ids not used yet: a program's groups are numbered from 0, shard_map bodies' after them.
  int64_t next_combined_id_ = 0;
  const LayoutMap* layouts_;  // the program being walked: the partitioned one, or a loop body inside it
  std::string context_;       // "scan body" while walking one
};

}  // namespace

Aval PartitionPlan::local_aval(const Atom& atom) const {
  const Aval& global = atom_aval(atom);
  const auto* var = std::get_if<Var>(&atom);
  if (!mesh || var == nullptr) return global;
  const auto it = layouts.find(var->id);
  if (it == layouts.end()) return global;
  return local_under(global, it->second.layout, *mesh);
}

CommLog PartitionPlan::comm_log() const {
  CommLog log;
  if (!mesh) return log;
  // Device groups per set of axes, computed once (a large mesh has thousands of devices per collective).
  std::map<std::vector<std::string>, std::vector<std::vector<int64_t>>> groups_by_axes;  // device ids
  std::vector<int64_t> device_ids;
  device_ids.reserve(mesh->devices().size());
  for (const Device& d : mesh->devices()) device_ids.push_back(d.id);
  for (const PlannedCollective& c : collectives) {
    CollectiveRecord record;
    record.kind = c.kind;
    record.axes = c.axes;
    record.origin = c.origin;
    record.combined = c.combined;
    auto cached = groups_by_axes.find(c.axes);
    if (cached == groups_by_axes.end()) {
      std::vector<std::vector<int64_t>> id_groups;
      for (const auto& group : axis_groups(*mesh, c.axes)) {
        std::vector<int64_t> ids;
        for (const std::size_t m : group) ids.push_back(mesh->devices()[m].id);
        id_groups.push_back(std::move(ids));
      }
      cached = groups_by_axes.emplace(c.axes, std::move(id_groups)).first;
    }
    const auto& groups = cached->second;
    record.groups = groups;
    const auto n = static_cast<int64_t>(groups.empty() ? 1 : groups.front().size());
    const auto bytes = static_cast<int64_t>(aval_bytes(c.local_operand));
    int64_t sent = 0;
    switch (c.kind) {
      case CollectiveKind::kAllReduce: sent = 2 * (n - 1) * bytes / n; break;
      case CollectiveKind::kAllGather: sent = (n - 1) * bytes; break;
      case CollectiveKind::kReduceScatter:
      case CollectiveKind::kAllToAll: sent = (n - 1) * bytes / n; break;
      case CollectiveKind::kCollectivePermute: sent = bytes; break;
    }
    // Every device takes part, sending and receiving the same bytes: copies of one id list, not 2048 appends.
    record.device_ids = device_ids;
    record.bytes_sent.assign(device_ids.size(), sent);
    record.bytes_received.assign(device_ids.size(), sent);
    log.add(std::move(record));
  }
  return log;
}

PartitionPlan plan_partitioning(const Jaxpr& jaxpr, const std::vector<ShapeDtypeStruct>& args,
                                const LoweringOptions& options, const JaxProfile& profile) {
  if (args.size() != jaxpr.invars.size()) {
    throw type_error("Computation compiled for " + std::to_string(jaxpr.invars.size()) + " inputs but called with " +
                     std::to_string(args.size()));
  }
  if (rewritten_for_partitioning(jaxpr)) return plan_partitioning(inline_calls(jaxpr).jaxpr, args, options, profile);
  PartitionPlan plan;
  const std::optional<Mesh> mesh = find_mesh(jaxpr, args, options);
  if (!mesh || mesh->size() == 1) {
    for (const ShapeDtypeStruct& a : args) {
      if (a.sharding && std::holds_alternative<SingleDeviceSharding>(*a.sharding)) {
        plan.device = std::get<SingleDeviceSharding>(*a.sharding).device;
        break;
      }
    }
    if (!plan.device && mesh) plan.device = mesh->devices().front();
    const Sharding single = plan.device ? Sharding{make_single_device_sharding(*plan.device, profile)}
                                        : Sharding{make_single_device_sharding(Device{}, profile)};
    for (std::size_t i = 0; i < args.size(); ++i) {
      plan.input_shardings.push_back(i < options.in_shardings.size() && options.in_shardings[i]
                                         ? *options.in_shardings[i]
                                         : args[i].sharding.value_or(single));
    }
    for (std::size_t o = 0; o < jaxpr.outvars.size(); ++o) {
      plan.output_shardings.push_back(
          o < options.out_shardings.size() && options.out_shardings[o] ? *options.out_shardings[o] : single);
    }
    return plan;
  }
  plan.mesh = mesh;
  LayoutMap known;
  std::optional<NamedSharding> reference;
  std::size_t reference_rank = 0;
  std::vector<std::optional<Sharding>> given_inputs;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const Var& var = jaxpr.invars[i];
    std::optional<Sharding> given = i < options.in_shardings.size() ? options.in_shardings[i] : std::nullopt;
    if (!given && args[i].sharding && std::holds_alternative<NamedSharding>(*args[i].sharding)) {
      given = args[i].sharding;
    }
    given_inputs.push_back(given);
    if (!given) continue;
    const auto* named = std::get_if<NamedSharding>(&*given);
    if (named == nullptr || named->mesh.devices() != mesh->devices()) {
      throw value_error("Received incompatible devices for jitted computation. Got argument " + std::to_string(i) +
                        " of " + options.name + " with shape " + var.aval.str_short(true) +
                        " on devices that differ from the mesh's");
    }
    if (!reference) {
      reference = *named;
      reference_rank = var.aval.rank();
    }
    pin_argument(known, var, *named, i, i < options.in_shardings.size() && options.in_shardings[i]);
  }
  pin_outputs_and_types(known, jaxpr, options.out_shardings, *mesh);
  plan.layouts = propagate_layouts(jaxpr, *mesh, known);
  const auto memory_kind = default_memory_kind(mesh->platform(), profile);
  for (std::size_t i = 0; i < args.size(); ++i) {
    plan.input_shardings.push_back(
        given_inputs[i]
            ? *given_inputs[i]
            : Sharding{sharding_of_layout(*mesh, trimmed(plan.layouts.at(jaxpr.invars[i].id).layout), memory_kind)});
  }
  Planner planner(*mesh, plan);
  planner.program(jaxpr, plan.layouts, std::nullopt);
  for (std::size_t o = 0; o < jaxpr.outvars.size(); ++o) {
    const Atom& out = jaxpr.outvars[o];
    const Aval& aval = atom_aval(out);
    const auto* var = std::get_if<Var>(&out);
    const Layout layout = var != nullptr ? plan.layouts.at(var->id).layout : Layout(aval.rank());
    if (o < options.out_shardings.size() && options.out_shardings[o]) {
      plan.output_shardings.push_back(*options.out_shardings[o]);
    } else if (reference && reference_rank == aval.rank() && dim_axes_of(*reference, aval.rank()) == layout) {
      plan.output_shardings.push_back(*reference);  // JAX hands back the input's own sharding when equivalent
    } else {
      plan.output_shardings.push_back(sharding_of_layout(*mesh, trimmed(layout), memory_kind));
    }
  }
  return plan;
}

Compiled::Compiled(JaxprPtr jaxpr, std::vector<ShapeDtypeStruct> args, LoweringOptions options, PartitionPlan plan,
                   JaxProfile profile)
    : jaxpr_(std::move(jaxpr)),
      args_(std::move(args)),
      options_(std::move(options)),
      plan_(std::move(plan)),
      profile_(profile) {}

MemoryAnalysis Compiled::memory_analysis() const {
  MemoryAnalysis m;
  for (const Var& v : jaxpr_->invars) {
    m.argument_size_in_bytes += static_cast<int64_t>(aval_bytes(plan_.local_aval(Atom{v})));
  }
  for (const Atom& out : jaxpr_->outvars) {
    m.output_size_in_bytes += static_cast<int64_t>(aval_bytes(plan_.local_aval(out)));
  }
  // Values that cross XLA:CPU's fusions, live from their fusion to their last reader's (exec/hlo_program).
  m.temp_size_in_bytes = hlo_temp_bytes(compiled_hlo(*jaxpr_, plan_));
  return m;
}

std::string Compiled::as_text() const { return compiled_text(*jaxpr_, plan_, options_.name, profile_); }

void Compiled::check_call_args(const std::vector<Aval>& args) const {
  if (args.size() != args_.size()) {
    throw type_error("Computation compiled for " + std::to_string(args_.size()) + " inputs but called with " +
                     std::to_string(args.size()));
  }
  std::vector<std::string> errors;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const Aval expected = args_[i].aval();
    if (expected.shape == args[i].shape && expected.dtype == args[i].dtype) continue;
    const std::string name = i < options_.arg_names.size() ? options_.arg_names[i] : "args[" + std::to_string(i) + "]";
    errors.push_back("Argument '" + name + "' compiled with " + expected.str_short(false) + " and called with " +
                     Aval::of(args[i].shape, args[i].dtype).str_short(false));
  }
  if (errors.empty()) return;
  constexpr std::size_t kMaxErrors = 5;
  std::string listed;
  for (std::size_t i = 0; i < errors.size() && i < kMaxErrors; ++i) listed += (i == 0 ? "" : "\n") + errors[i];
  const std::string count =
      errors.size() >= kMaxErrors ? "The first 5 of " + std::to_string(errors.size()) : std::string("The");
  throw type_error(
      "Argument types differ from the types for which this computation was compiled. Perhaps you are calling the "
      "compiled executable with a different enable_x64 mode than when it was AOT compiled? " +
      count + " mismatches are:\n" + listed);
}

JitRun Compiled::call(const std::vector<Array>& args) const {
  std::vector<Aval> avals;
  for (const Array& a : args) avals.push_back(Aval::of(a.shape(), a.dtype(), a.aval().weak_type));
  check_call_args(avals);
  JitOptions options;
  options.name = options_.name;
  options.in_shardings = options_.in_shardings;
  options.out_shardings = options_.out_shardings;
  return run_jit(*jaxpr_, args, options, profile_);
}

Lowered::Lowered(JaxprPtr jaxpr, std::vector<ShapeDtypeStruct> args, LoweringOptions options, const JaxProfile& profile)
    : jaxpr_(std::move(jaxpr)), args_(std::move(args)), options_(std::move(options)), profile_(profile) {
  if (args_.size() != jaxpr_->invars.size()) {
    throw type_error(options_.name + "() takes " + std::to_string(jaxpr_->invars.size()) +
                     " positional arguments but " + std::to_string(args_.size()) + " were given");
  }
  for (std::size_t i = 0; i < args_.size(); ++i) {
    const Aval& traced = jaxpr_->invars[i].aval;
    if (traced.shape != args_[i].shape || traced.dtype != args_[i].dtype) {
      throw type_error("Argument " + std::to_string(i) + " of " + options_.name + " was traced as " +
                       traced.str_short(false) + " but lowered with " + args_[i].aval().str_short(false));
    }
  }
  // Nested calls are partitioned, priced and printed as part of their caller (XLA inlines them too).
  if (rewritten_for_partitioning(*jaxpr_)) jaxpr_ = std::make_shared<const Jaxpr>(inline_calls(*jaxpr_).jaxpr);
  plan_ = plan_partitioning(*jaxpr_, args_, options_, profile_);
}

std::string Lowered::as_text() const { return lowered_text(*jaxpr_, plan_, options_.name, profile_); }

Compiled Lowered::compile() const { return {jaxpr_, args_, options_, plan_, profile_}; }

std::vector<ShapeDtypeStruct> Lowered::out_info() const {
  EvalShapeOptions options;
  options.name = options_.name;
  options.out_shardings = options_.out_shardings;
  return eval_shape(*jaxpr_, args_, profile_, options);
}

}  // namespace shardscope
