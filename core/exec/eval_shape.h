// jax.eval_shape: output shapes, dtypes and shardings of a program from abstract arguments, no kernels run.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/jaxpr.h"
#include "sharding/sharding.h"

namespace shardscope {

// jax.ShapeDtypeStruct: shape, dtype, optional sharding, weak type. Never holds data, so it may describe
// arrays far larger than memory.
struct ShapeDtypeStruct {
  Shape shape;
  DType dtype = DType::kFloat32;
  std::optional<Sharding> sharding;  // what JAX reports
  bool weak_type = false;
  // Beyond JAX: the layout shardscope's Auto propagation chose for an output whose sharding JAX leaves
  // unspecified before compilation (what `compile().output_shardings` will report).
  std::optional<Sharding> propagated_sharding;

  [[nodiscard]] Aval aval() const { return Aval::of(shape, dtype, weak_type); }
  // ShapeDtypeStruct(shape=(4, 4), dtype=float32[, sharding=...][, weak_type=True])
  [[nodiscard]] std::string repr(const JaxProfile& profile) const;
  bool operator==(const ShapeDtypeStruct&) const = default;
};

// Runs every equation's shape rule on `args` (which may differ from the avals the program was traced
// with; the rules raise JAX's errors). TypeError when the argument count is wrong.
[[nodiscard]] std::vector<Aval> abstract_eval_jaxpr(const Jaxpr& jaxpr, const std::vector<Aval>& args,
                                                    const std::string& name = "f");

struct EvalShapeOptions {
  std::string name = "f";
  std::vector<std::optional<Sharding>> out_shardings;  // per output; reported as given, as jit does
};

// jax.eval_shape(jit(f), *args). Outputs carry a sharding as JAX reports it: the out_sharding when one
// is given, the type's sharding for Explicit-mode values, none otherwise; `propagated_sharding` holds
// Auto propagation's choice whenever some argument is sharded over a mesh.
[[nodiscard]] std::vector<ShapeDtypeStruct> eval_shape(const Jaxpr& jaxpr, const std::vector<ShapeDtypeStruct>& args,
                                                       const JaxProfile& profile, const EvalShapeOptions& options = {});

}  // namespace shardscope
