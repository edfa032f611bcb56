// Automatic differentiation as jaxpr-to-jaxpr transformations: JVP rules, partial evaluation, transposition.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ir/jaxpr.h"
#include "trace/builder.h"

namespace shardscope {

// Tangents are optional: nullopt is a symbolic zero (JAX's ad_util.Zero), which rules propagate
// without materializing. Integer- and boolean-valued results always get symbolic-zero tangents.
using JvpRule = std::function<std::pair<std::vector<Atom>, std::vector<std::optional<Atom>>>(
    JaxprBuilder&, std::span<const Atom> primals, std::span<const std::optional<Atom>> tangents, const Params&)>;

// Transposes one linear equation. `primals[i]` is the operand's value when it is not linear in the
// tangent inputs, and nullopt when it is (JAX's UndefinedPrimal); `avals[i]` is every operand's type.
// `cotangents` holds one entry per output (nullopt: symbolic zero). Returns one cotangent per operand;
// entries for non-linear operands are ignored, nullopt means zero.
using TransposeRule = std::function<std::vector<std::optional<Atom>>(
    JaxprBuilder&, std::span<const std::optional<Atom>> cotangents, std::span<const std::optional<Atom>> primals,
    std::span<const Aval> avals, const Params&)>;

void register_jvp_rule(const std::string& primitive, JvpRule rule);
[[nodiscard]] const JvpRule* find_jvp_rule(const std::string& primitive);
void register_transpose_rule(const std::string& primitive, TransposeRule rule);
[[nodiscard]] const TransposeRule* find_transpose_rule(const std::string& primitive);
// Names of every primitive with a transpose rule, sorted.
[[nodiscard]] std::vector<std::string> transposable_primitives();

// Registers the core primitives (and the AD-only ones) and every rule, once.
void ensure_autodiff_rules();

struct JvpOutputs {
  std::vector<Atom> primals;
  std::vector<std::optional<Atom>> tangents;
};

// Emits the JVP of `jaxpr` into `builder`. `primals` bind the invars; constvars become fresh
// constants of `builder` with zero tangents.
JvpOutputs jvp_jaxpr_into(JaxprBuilder& builder, const Jaxpr& jaxpr, std::span<const Atom> primals,
                          std::span<const std::optional<Atom>> tangents);

// jax.jvp: (primals..., tangents...) -> (primal outs..., tangent outs...). Zero output tangents are
// instantiated as zeros of the output's type.
[[nodiscard]] JaxprPtr jvp_jaxpr(const Jaxpr& jaxpr);

// How grad starts its backward pass. JAX 0.8.1 and later seed the cotangent with `reshard 1.0` to the output's
// replicated sharding (lax._one_vjp), which their jaxprs show; earlier versions use the literal 1.0.
enum class GradSeed { kLiteral, kReshard };

// jax.value_and_grad(f, argnums, has_aux): (args...) -> (value, [aux...], grads for argnums...).
// With has_aux the first output is differentiated and the rest pass through. Raises JAX's TypeErrors.
[[nodiscard]] JaxprPtr value_and_grad_jaxpr(const Jaxpr& jaxpr, const std::vector<int64_t>& argnums, bool has_aux,
                                            GradSeed seed = GradSeed::kLiteral);
// jax.grad: (args...) -> (grads for argnums..., [aux...]), the flattening of JAX's (g, aux) pair.
[[nodiscard]] JaxprPtr grad_jaxpr(const Jaxpr& jaxpr, const std::vector<int64_t>& argnums, bool has_aux,
                                  GradSeed seed = GradSeed::kLiteral);

// ---- the pieces reverse mode is made of, exposed for nested programs (jit) and tests ----

// Partial evaluation with some inputs unknown: `known` maps (known invars) -> (known outs...,
// residuals...), `unknown` maps (residuals..., unknown invars) -> (unknown outs).
struct PartialEvalResult {
  JaxprPtr known;
  JaxprPtr unknown;
  std::vector<bool> out_unknowns;
  std::size_t num_residuals = 0;
};
[[nodiscard]] PartialEvalResult partial_eval_jaxpr(const Jaxpr& jaxpr, const std::vector<bool>& in_unknowns);

// Runs the linear jaxpr `linear` backwards: its first `nonlinear.size()` invars are the given non-linear
// values, the rest are linear. Returns the cotangent of each linear invar (nullopt: zero).
std::vector<std::optional<Atom>> backward_pass(JaxprBuilder& builder, const Jaxpr& linear,
                                               std::span<const Atom> nonlinear,
                                               std::span<const std::optional<Atom>> output_cotangents);

}  // namespace shardscope
