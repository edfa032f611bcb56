// The jaxpr interpreters: an environment from variables to values, equations run in program order.
#include "exec/interpreter.h"

#include <map>

#include "base/dtype_dispatch.h"
#include "base/error.h"
#include "base/thread_pool.h"
#include "exec/all_reduce_combiner.h"
#include "exec/cancellation.h"
#include "exec/fusion.h"
#include "exec/host_callbacks.h"
#include "exec/program_cache.h"
#include "mesh/mesh.h"

namespace shardscope {

namespace {
thread_local int compiled_program_depth = 0;
}  // namespace

bool executing_compiled_program() { return compiled_program_depth > 0; }

CompiledProgramScope::CompiledProgramScope() { ++compiled_program_depth; }

CompiledProgramScope::~CompiledProgramScope() { --compiled_program_depth; }
namespace {

template <typename Value>
class Environment {
 public:
  void bind(const Var& var, Value value) { values_[var.id] = std::move(value); }
  [[nodiscard]] const Value& lookup(const Var& var) const {
    const auto it = values_.find(var.id);
    if (it == values_.end())
      throw runtime_error("jaxpr variable " + std::to_string(var.id) + " used before definition");
    return it->second;
  }

 private:
  std::map<int64_t, Value> values_;
};

void check_arity(const Jaxpr& jaxpr, std::size_t args, std::size_t consts) {
  if (args != jaxpr.invars.size() || consts != jaxpr.constvars.size()) {
    throw type_error("jaxpr takes " + std::to_string(jaxpr.invars.size()) + " arguments and " +
                     std::to_string(jaxpr.constvars.size()) + " constants, got " + std::to_string(args) + " and " +
                     std::to_string(consts));
  }
}

std::vector<Aval> input_avals(const Eqn& eqn) {
  std::vector<Aval> avals;
  for (const Atom& input : eqn.inputs) avals.push_back(atom_aval(input));
  return avals;
}

}  // namespace

BufferPtr literal_buffer(const Literal& literal) {
  auto buffer = std::make_shared<Buffer>(literal.aval.dtype, Shape{});
  const double value = std::visit([](auto v) { return static_cast<double>(v); }, literal.value);
  visit_dtype(literal.aval.dtype, [&](auto tag) {
    constexpr DType D = decltype(tag)::value;
    using Compute = typename DTypeTraits<D>::compute;
    buffer->as_mutable<typename DTypeTraits<D>::storage>()[0] = store<D>(static_cast<Compute>(value));
  });
  return buffer;
}

std::vector<BufferPtr> evaluate_jaxpr(const Jaxpr& jaxpr, const std::vector<BufferPtr>& args,
                                      const std::vector<BufferPtr>& consts) {
  check_arity(jaxpr, args.size(), consts.size());
  Environment<BufferPtr> env;
  for (std::size_t i = 0; i < args.size(); ++i) env.bind(jaxpr.invars[i], args[i]);
  for (std::size_t i = 0; i < consts.size(); ++i) env.bind(jaxpr.constvars[i], consts[i]);
  const auto read = [&](const Atom& atom) -> BufferPtr {
    if (const auto* literal = std::get_if<Literal>(&atom)) return literal_buffer(*literal);
    return env.lookup(std::get<Var>(atom));
  };
  const auto groups = cached_fusion_plan(jaxpr);
  const std::vector<bool> unused = unused_pure_callbacks(jaxpr);
  for (std::size_t e = 0; e < jaxpr.eqns.size(); ++e) {
    throw_if_cancelled();
    if (!unused.empty() && unused[e]) continue;
    if (const FusionGroup* group = group_starting_at(*groups, e); group != nullptr && !group->outputs.empty()) {
      // Elementwise chains run chunk by chunk (and big ones across the thread pool).
      std::vector<DeviceBuffers> group_inputs;
      for (const Var& var : group->inputs) group_inputs.push_back({env.lookup(var)});
      const std::vector<DeviceBuffers> fused = run_fusion_group(jaxpr, *group, group_inputs);
      for (std::size_t o = 0; o < fused.size(); ++o) env.bind(group->outputs[o], fused[o].front());
      e = group->end - 1;
      continue;
    }
    const Eqn& eqn = jaxpr.eqns[e];
    if (!eqn.primitive->impl) {
      throw not_implemented_error("primitive '" + eqn.primitive->name + "' cannot run on a single device");
    }
    std::vector<BufferPtr> inputs;
    for (const Atom& input : eqn.inputs) inputs.push_back(read(input));
    const std::vector<Aval> avals = input_avals(eqn);
    std::vector<BufferPtr> outputs = eqn.primitive->impl(inputs, avals, eqn.params);
    for (std::size_t i = 0; i < eqn.outputs.size(); ++i) env.bind(eqn.outputs[i], outputs.at(i));
  }
  std::vector<BufferPtr> results;
  for (const Atom& out : jaxpr.outvars) results.push_back(read(out));
  return results;
}

std::vector<DeviceBuffers> evaluate_jaxpr_per_device(const Jaxpr& jaxpr, const SpmdContext& context,
                                                     const std::vector<DeviceBuffers>& args) {
  check_arity(jaxpr, args.size(), 0);
  const auto device_count = static_cast<std::size_t>(context.mesh->size());
  Environment<DeviceBuffers> env;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i].size() != device_count) {
      throw value_error("argument " + std::to_string(i) + " has values for " + std::to_string(args[i].size()) +
                        " devices, the mesh has " + std::to_string(device_count));
    }
    env.bind(jaxpr.invars[i], args[i]);
  }
  const auto read = [&](const Atom& atom) -> DeviceBuffers {
    if (const auto* literal = std::get_if<Literal>(&atom)) return DeviceBuffers(device_count, literal_buffer(*literal));
    return env.lookup(std::get<Var>(atom));
  };
  const auto groups = cached_fusion_plan(jaxpr);
  // The body's reductions XLA's combiner runs together, numbered in the log's own id space.
  const std::vector<int64_t> combined = combine_body_all_reduces(jaxpr, *context.mesh);
  const bool combines = std::any_of(combined.begin(), combined.end(), [](int64_t id) { return id >= 0; });
  const int64_t combined_base = context.log != nullptr && combines
                                    ? context.log->reserve_combined_ids(static_cast<int64_t>(jaxpr.eqns.size()))
                                    : 0;
  for (std::size_t e = 0; e < jaxpr.eqns.size(); ++e) {
    throw_if_cancelled();
    if (const FusionGroup* group = group_starting_at(*groups, e); group != nullptr && !group->outputs.empty()) {
      std::vector<DeviceBuffers> group_inputs;
      for (const Var& var : group->inputs) group_inputs.push_back(env.lookup(var));
      const std::vector<DeviceBuffers> fused = run_fusion_group(jaxpr, *group, group_inputs);
      for (std::size_t o = 0; o < fused.size(); ++o) env.bind(group->outputs[o], fused[o]);
      e = group->end - 1;
      continue;
    }
    const Eqn& eqn = jaxpr.eqns[e];
    std::vector<DeviceBuffers> inputs;
    for (const Atom& input : eqn.inputs) inputs.push_back(read(input));
    const std::vector<Aval> avals = input_avals(eqn);
    std::vector<DeviceBuffers> outputs;
    if (eqn.primitive->collective_impl) {
      const std::size_t logged = context.log != nullptr ? context.log->records().size() : 0;
      outputs = eqn.primitive->collective_impl(context, inputs, avals, eqn.params);
      if (context.log != nullptr && combined[e] >= 0)
        context.log->set_combined_from(logged, combined_base + combined[e]);
    } else if (eqn.primitive->impl) {
      outputs.assign(eqn.outputs.size(), DeviceBuffers(device_count));
      parallel_for(device_count, large_equation(eqn), [&](std::size_t d) {
        std::vector<BufferPtr> local;
        for (const DeviceBuffers& input : inputs) local.push_back(input[d]);
        std::vector<BufferPtr> results = eqn.primitive->impl(local, avals, eqn.params);
        for (std::size_t o = 0; o < outputs.size(); ++o) outputs[o][d] = results.at(o);
      });
    } else {
      throw not_implemented_error("primitive '" + eqn.primitive->name + "' has no kernel");
    }
    for (std::size_t i = 0; i < eqn.outputs.size(); ++i) env.bind(eqn.outputs[i], outputs.at(i));
  }
  std::vector<DeviceBuffers> results;
  for (const Atom& out : jaxpr.outvars) results.push_back(read(out));
  return results;
}

}  // namespace shardscope
