// Control flow on local blocks: the nested programs are rewritten with per-device shapes and run on every device.
#include "exec/control_flow_partition.h"

#include <unordered_map>

#include "base/error.h"
#include "base/thread_pool.h"
#include "exec/cancellation.h"
#include "ops/control_flow.h"
#include "propagation/control_flow_factor_rule.h"
#include "spmd/reshard.h"

namespace shardscope {
namespace {

// `jaxpr` with every value of shape `global` retyped to `local` (elementwise bodies keep the same equations).
JaxprPtr localized(const Jaxpr& jaxpr, const Shape& global, const Shape& local) {
  auto out = std::make_shared<Jaxpr>(jaxpr);
  const auto fix = [&](Var& var) {
    if (var.aval.shape == global) var.aval.shape = local;
  };
  const auto fix_atom = [&](Atom& atom) {
    if (auto* var = std::get_if<Var>(&atom)) fix(*var);
  };
  for (Var& var : out->invars) fix(var);
  for (Var& var : out->constvars) fix(var);
  for (Eqn& eqn : out->eqns) {
    for (Atom& input : eqn.inputs) fix_atom(input);
    for (Var& output : eqn.outputs) fix(output);
  }
  for (Atom& atom : out->outvars) fix_atom(atom);
  return out;
}

Params localized_params(const Eqn& eqn, const Shape& global, const Shape& local) {
  const std::string& name = eqn.primitive->name;
  if (name == "scan") {
    return replace_param(eqn.params, "jaxpr", ParamValue(localized(*nested_jaxpr(eqn.params, "jaxpr"), global, local)));
  }
  if (name == "while") {
    Params params = replace_param(eqn.params, "cond_jaxpr",
                                  ParamValue(localized(*nested_jaxpr(eqn.params, "cond_jaxpr"), global, local)));
    return replace_param(params, "body_jaxpr",
                         ParamValue(localized(*nested_jaxpr(eqn.params, "body_jaxpr"), global, local)));
  }
  std::vector<JaxprPtr> branches;
  for (const JaxprPtr& branch : cond_branches(eqn.params)) branches.push_back(localized(*branch, global, local));
  return cond_params(branches);
}

// Bodies that reduce, reshard or index inside: the equation runs once over the whole operands (assembled from
// the blocks the plan put them in: local bookkeeping) and each device keeps its block of the results. The values
// are those of the partitioned loop; the collectives its body runs are what lower() reports for it.
void execute_whole(const Eqn& eqn, const EquationPlan& plan, const Mesh& mesh, const ControlFlowIo& io) {
  const JaxProfile profile;
  const std::vector<DeviceBuffers> operands = io.operands();
  std::vector<BufferPtr> whole;
  std::vector<Aval> avals;
  for (std::size_t i = 0; i < eqn.inputs.size(); ++i) {
    const Aval& aval = atom_aval(eqn.inputs[i]);
    whole.push_back(aval.rank() == 0
                        ? operands[i].front()
                        : whole_buffer(mesh, aval.dtype, aval.shape, plan.operands.at(i), operands[i], profile));
    avals.push_back(aval);
  }
  throw_if_cancelled();
  const std::vector<BufferPtr> outs = eqn.primitive->impl(whole, avals, eqn.params);
  const auto devices = static_cast<std::size_t>(mesh.size());
  for (std::size_t r = 0; r < eqn.outputs.size(); ++r) {
    const Aval& aval = eqn.outputs[r].aval;
    const DeviceBuffers replicated(devices, outs.at(r));
    const Layout& produced = plan.produced.at(r);
    io.produce(r, aval.rank() == 0 ? replicated
                                   : reshard_buffers(mesh, aval.shape, Layout(aval.rank()), produced, replicated,
                                                     profile, nullptr, ""));
  }
}

}  // namespace

bool execute_control_flow(const Eqn& eqn, const EquationPlan& plan, const Mesh& mesh, const ControlFlowIo& io) {
  if (!is_control_flow(eqn)) return false;
  const std::string& name = eqn.primitive->name;
  const std::optional<Shape> shape = control_flow_local_shape(eqn);
  if (!shape) {
    execute_whole(eqn, plan, mesh, io);
    return true;
  }
  // The layout every body-shaped value has (one factor set: propagation gave them all the same).
  const bool is_scan = name == "scan";
  const ScanLayout scan = is_scan ? scan_layout(eqn.params) : ScanLayout{};
  std::optional<Layout> layout;
  for (std::size_t i = 0; i < eqn.inputs.size(); ++i) {
    const Aval& aval = atom_aval(eqn.inputs[i]);
    const bool stacked = is_scan && i >= scan.num_consts + scan.num_carry;
    const Shape slice = stacked ? unstacked_aval(aval).shape : aval.shape;
    if (slice.empty() || slice != *shape) continue;
    const Layout& planned = plan.operands.at(i);
    const Layout candidate = stacked && !planned.empty() ? Layout(planned.begin() + 1, planned.end()) : planned;
    if (layout && *layout != candidate) {
      execute_whole(eqn, plan, mesh, io);  // unrelated values of one shape laid out differently
      return true;
    }
    layout = candidate;
  }
  if (!layout) return false;
  Shape local = *shape;
  for (std::size_t d = 0; d < local.size() && d < layout->size(); ++d) local[d] /= mesh.axes_size((*layout)[d]);
  const Params params = localized_params(eqn, *shape, local);
  const std::vector<DeviceBuffers> operands = io.operands();
  std::vector<Aval> local_avals;
  for (std::size_t i = 0; i < eqn.inputs.size(); ++i) {
    Aval aval = atom_aval(eqn.inputs[i]);
    for (std::size_t d = 0; d < plan.operands[i].size() && d < aval.rank(); ++d) {
      aval.shape[d] /= mesh.axes_size(plan.operands[i][d]);
    }
    local_avals.push_back(std::move(aval));
  }
  const auto devices = static_cast<std::size_t>(mesh.size());
  std::vector<DeviceBuffers> results(eqn.outputs.size(), DeviceBuffers(devices));
  parallel_for(devices, true, [&](std::size_t d) {
    throw_if_cancelled();
    std::vector<BufferPtr> local_inputs;
    for (const DeviceBuffers& operand : operands) local_inputs.push_back(operand[d]);
    std::vector<BufferPtr> outs = eqn.primitive->impl(local_inputs, local_avals, params);
    for (std::size_t r = 0; r < results.size(); ++r) results[r][d] = outs.at(r);
  });
  for (std::size_t r = 0; r < results.size(); ++r) io.produce(r, std::move(results[r]));
  return true;
}

}  // namespace shardscope
