// The program IR: jaxpr-like equations over typed variables, produced by tracing.
#pragma once

#include <cstdint>
#include <memory>
#include <variant>
#include <vector>

#include "ir/aval.h"
#include "ir/param.h"
#include "ir/source_info.h"

namespace shardscope {

struct Primitive;

struct Var {
  int64_t id = 0;  // unique within the process; printers assign names lazily
  Aval aval;
  bool operator==(const Var& other) const { return id == other.id; }
};

// A constant inlined into an equation: a scalar (as JAX prints literals) with its type.
struct Literal {
  std::variant<bool, int64_t, double> value;
  Aval aval;
  bool operator==(const Literal&) const = default;
};

using Atom = std::variant<Var, Literal>;

[[nodiscard]] const Aval& atom_aval(const Atom& atom);

struct Eqn {
  const Primitive* primitive = nullptr;
  Params params;
  std::vector<Atom> inputs;
  std::vector<Var> outputs;
  SourceInfo source;  // the user code that traced it (or the operation a transform derived it from)
};

struct Jaxpr {
  std::vector<Var> constvars;
  std::vector<Var> invars;
  std::vector<Eqn> eqns;
  std::vector<Atom> outvars;
};

using JaxprPtr = std::shared_ptr<const Jaxpr>;

// The types of a jaxpr's outputs, in order.
[[nodiscard]] std::vector<Aval> outvar_avals(const Jaxpr& jaxpr);

// Fresh variable ids, process-wide (variables of nested jaxprs never collide).
[[nodiscard]] Var new_var(Aval aval);

}  // namespace shardscope
