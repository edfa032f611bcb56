// Call inlining for partitioning: nested jit, checkpoint and custom-derivative calls dissolve into their caller so
// shardings flow through them, as Shardy and GSPMD propagate through called computations.
#pragma once

#include <map>
#include <memory>

#include "ir/jaxpr.h"

namespace shardscope {

// True for equations that only call their body once with their operands (jit/pjit, checkpoint, custom_jvp /
// custom_vjp calls, closed_call): evaluating the body in place gives the same values.
[[nodiscard]] bool is_inlinable_call(const Eqn& eqn);

struct InlinedProgram {
  // The caller with every call replaced by its body's equations (recursively); invars, constvars and outvar
  // positions are the caller's own, body variables are renamed so a body called twice gets distinct values.
  Jaxpr jaxpr;
  // Each call result of the caller (by variable id) and what replaced it: the body's value, renamed.
  std::map<int64_t, Atom> replaced;
};

// The program with its calls inlined and each split written as one slice per result read (what JAX lowers a split
// to, so the partitioner plans each slice's halos on its own), and without the equations nothing reads (XLA's dead
// code elimination; a shard_map keeps only its read results); `rewritten_for_partitioning(jaxpr)` false means it
// would come back unchanged.
[[nodiscard]] InlinedProgram inline_calls(const Jaxpr& jaxpr);
[[nodiscard]] bool rewritten_for_partitioning(const Jaxpr& jaxpr);

// Per argument, whether the program reads it at all (one pass over the equations). jit prunes the arguments it
// does not read before it assigns devices (keep_unused=False), so they place nothing.
[[nodiscard]] std::vector<bool> arguments_read(const Jaxpr& jaxpr);

}  // namespace shardscope
