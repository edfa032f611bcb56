// Primitives about programs rather than values: sharding_constraint, device_put and nested jit.
#include <algorithm>

#include "base/error.h"
#include "exec/interpreter.h"
#include "ir/primitive.h"
#include "ir/remat_policy.h"
#include "ops/ops.h"

namespace shardscope {
namespace {

Primitive sharding_constraint_primitive() {
  Primitive p;
  p.name = "sharding_constraint";
  p.abstract_eval = [](std::span<const Aval> in, const Params&) { return std::vector<Aval>{in[0]}; };
  // On one device a constraint changes nothing; the partitioner reshards at this point.
  p.impl = [](std::span<const BufferPtr> in, std::span<const Aval>, const Params&) {
    return std::vector<BufferPtr>{in[0]};
  };
  return p;
}

// jax.device_put inside a traced program: the value passes through and the partitioner moves it to the target
// sharding (a layout constraint); a target memory kind sets the result's memory space, as JAX's aval does.
Primitive device_put_primitive() {
  Primitive p;
  p.name = "device_put";
  p.abstract_eval = [](std::span<const Aval> in, const Params& params) {
    Aval out = in[0];
    const auto& targets = param(params, "devices").as_items("devices");
    if (!targets.empty()) {
      if (const auto* named = targets.front().get_if<NamedSharding>(); named != nullptr && named->memory_kind) {
        out.memory = *named->memory_kind == "device" ? MemorySpace::kDevice : MemorySpace::kHost;
      }
      // A bare memory space (a checkpoint policy offloading a residual and loading it back).
      if (const auto* space = targets.front().get_if<ParamValue::Verbatim>()) {
        if (space->text == kHostMemorySpaceText) out.memory = MemorySpace::kHost;
        if (space->text == kDeviceMemorySpaceText) out.memory = MemorySpace::kDevice;
      }
    }
    return std::vector<Aval>{out};
  };
  p.impl = [](std::span<const BufferPtr> in, std::span<const Aval>, const Params&) {
    return std::vector<BufferPtr>{in[0]};
  };
  return p;
}

const Jaxpr& inner_jaxpr(const Params& params) {
  const auto* ref = param(params, "jaxpr").get_if<ParamValue::JaxprRef>();
  if (ref == nullptr || !*ref) throw type_error("jit equation without a jaxpr");
  return **ref;
}

Primitive jit_primitive() {
  Primitive p;
  p.name = "jit";
  p.multiple_results = true;
  p.abstract_eval = [](std::span<const Aval>, const Params& params) {
    std::vector<Aval> out;
    for (const Atom& atom : inner_jaxpr(params).outvars) out.push_back(atom_aval(atom));
    return out;
  };
  p.impl = [](std::span<const BufferPtr> in, std::span<const Aval>, const Params& params) {
    const CompiledProgramScope compiled;  // an eager call of a jitted function compiles it
    return evaluate_jaxpr(inner_jaxpr(params), std::vector<BufferPtr>(in.begin(), in.end()));
  };
  p.printed_name = [](const JaxProfile& profile) -> std::string {
    if (profile.has(JaxFeature::kJitPrimitiveJit)) return "jit";
    return profile.has(JaxFeature::kJitPrimitivePjit) ? "pjit" : "xla_call";
  };
  // pjit/jit print name= first, then the rest sorted; xla_call called its program call_jaxpr and sorted all.
  p.printed_params = [](const Eqn& eqn, const JaxProfile& profile) {
    Params params = eqn.params;
    if (!profile.has(JaxFeature::kJitPrimitivePjit)) {
      for (auto& [key, value] : params) {
        if (key == "jaxpr") key = "call_jaxpr";
      }
      std::sort(params.begin(), params.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      return params;
    }
    std::sort(params.begin(), params.end(), [](const auto& a, const auto& b) {
      const bool a_is_name = a.first == "name";
      const bool b_is_name = b.first == "name";
      if (a_is_name != b_is_name) return a_is_name;
      return a.first < b.first;
    });
    return params;
  };
  return p;
}

}  // namespace

void register_program_primitives() {
  register_primitive(sharding_constraint_primitive());
  register_primitive(device_put_primitive());
  register_primitive(jit_primitive());
}

}  // namespace shardscope
