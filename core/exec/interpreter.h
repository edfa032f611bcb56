// Runs jaxprs: on one device (the reference semantics) or on every device of a mesh in lockstep.
#pragma once

#include <vector>

#include "ir/jaxpr.h"
#include "ir/primitive.h"

namespace shardscope {

// Single-device evaluation with each primitive's kernel: the reference every sharded run must match.
[[nodiscard]] std::vector<BufferPtr> evaluate_jaxpr(const Jaxpr& jaxpr, const std::vector<BufferPtr>& args,
                                                    const std::vector<BufferPtr>& consts = {});

// Evaluates `jaxpr` on every device of `context.mesh` at once: argument i holds one local buffer per
// device; ordinary primitives run per device on local shapes, collectives move data between devices.
[[nodiscard]] std::vector<DeviceBuffers> evaluate_jaxpr_per_device(const Jaxpr& jaxpr, const SpmdContext& context,
                                                                   const std::vector<DeviceBuffers>& args);

// Whether what runs now is a program XLA compiles as a whole (a jit or pmap call, a control-flow primitive, a
// nested jit run eagerly), where its code generator contracts a multiply feeding an add into one fused
// multiply-add. Eager ops, and eager shard_map and vmap bodies, run op by op in JAX: each result is rounded.
[[nodiscard]] bool executing_compiled_program();
// Marks the evaluations it encloses, on this thread, as a compiled program's.
class CompiledProgramScope {
 public:
  CompiledProgramScope();
  ~CompiledProgramScope();
  CompiledProgramScope(const CompiledProgramScope&) = delete;
  CompiledProgramScope& operator=(const CompiledProgramScope&) = delete;
};

// A scalar buffer holding a literal's value in the literal's dtype.
[[nodiscard]] BufferPtr literal_buffer(const Literal& literal);

}  // namespace shardscope
