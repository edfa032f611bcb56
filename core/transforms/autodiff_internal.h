// Helpers the JVP and transpose rules share: lax-style op builders, zeros, broadcasting undo.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "trace/builder.h"
#include "transforms/autodiff.h"

namespace shardscope {
// scatter-add's dimension_numbers: the five int tuples of lax.ScatterDimensionNumbers, in field order.
[[nodiscard]] ParamValue scatter_dimension_numbers_param(const std::vector<int64_t>& update_window_dims,
                                                         const std::vector<int64_t>& inserted_window_dims,
                                                         const std::vector<int64_t>& scatter_dims_to_operand_dims,
                                                         const std::vector<int64_t>& operand_batching_dims,
                                                         const std::vector<int64_t>& scatter_indices_batching_dims);
}  // namespace shardscope

namespace shardscope::ad {

// A remat2 equation with some unknown inputs, split by its checkpoint policy (JAX's remat_partial_eval). The
// known equations run inline, hoisted out of the remat, and compute the equation's known outputs (or forward an
// operand to them) and the residuals; the staged remat2 (differentiated=True) reads the residuals and the inputs it
// still needs, recomputing what the policy did not save. Null for other equations.
struct RematSplit {
  std::vector<Eqn> known_eqns;
  std::vector<std::pair<Var, Atom>> forwarded;  // known outputs that are an operand or a literal
  Eqn staged;
  std::vector<bool> out_unknowns;
};
[[nodiscard]] std::optional<RematSplit> split_remat_eqn(const Eqn& eqn, const std::vector<bool>& unknown_inputs);

// Rule families, registered by ensure_autodiff_rules().
void register_elementwise_jvp_rules();
void register_structural_jvp_rules();
void register_program_jvp_rules();
void register_mapped_jvp_rules();
void register_elementwise_transpose_rules();
void register_structural_transpose_rules();
void register_program_transpose_rules();

// Whether values of this dtype carry tangents (floating point); others get symbolic zeros.
[[nodiscard]] bool has_tangent_space(DType dtype);

// The type spec of `aval`'s cotangent, its dims taken in `order` (all, in order, when empty): JAX's to_ct_spec swaps
// reduced and unreduced axes (a reduced weight's gradient comes back as an unreduced partial sum).
[[nodiscard]] PartitionSpec cotangent_spec(const Aval& aval, const std::vector<int64_t>& order = {});
// A spec in cotangent space: its unreduced axes become reduced and its reduced ones unreduced.
[[nodiscard]] PartitionSpec cotangent_spec(const PartitionSpec& spec);

// A rank-0 constant of `like`'s dtype, not weakly typed (JAX's _const).
[[nodiscard]] Literal const_like(const Aval& like, double value);
// Under an Explicit mesh context, the type sharding of `aval` with its dims taken in `order` (a value JAX
// types like `aval`: a filled constant, a cotangent); None when the value is untyped or no mesh is set,
// unless `as_cotangent` asks for the cotangent's type (cotangent_spec), spelled out even when replicated.
[[nodiscard]] ParamValue typed_sharding_param(const Aval& aval, const std::vector<int64_t>& order,
                                              bool as_cotangent = false);

// lax.full_like(x, value): a literal for scalars, broadcast_in_dim of one otherwise.
[[nodiscard]] Atom full_like(JaxprBuilder& b, const Aval& like, double value);
[[nodiscard]] Atom zeros_like(JaxprBuilder& b, const Aval& like);
[[nodiscard]] Atom instantiate(JaxprBuilder& b, const std::optional<Atom>& tangent, const Aval& aval);
// add_any of two tangents, either of which may be a symbolic zero.
[[nodiscard]] std::optional<Atom> add_tangents(JaxprBuilder& b, const std::optional<Atom>& x,
                                               const std::optional<Atom>& y);
// lax._unbroadcast: sums a cotangent of the broadcast shape back to `aval`'s shape.
[[nodiscard]] Atom unbroadcast(JaxprBuilder& b, const Aval& aval, const Atom& x);

// lax ops with JAX's default params.
[[nodiscard]] Atom mul(JaxprBuilder& b, const Atom& x, const Atom& y);
[[nodiscard]] Atom div(JaxprBuilder& b, const Atom& x, const Atom& y);
[[nodiscard]] Atom add(JaxprBuilder& b, const Atom& x, const Atom& y);
[[nodiscard]] Atom sub(JaxprBuilder& b, const Atom& x, const Atom& y);
[[nodiscard]] Atom neg(JaxprBuilder& b, const Atom& x);
[[nodiscard]] Atom unary(JaxprBuilder& b, const std::string& name, const Atom& x, const Params& params = {});
[[nodiscard]] Atom unary_accurate(JaxprBuilder& b, const std::string& name, const Atom& x);  // accuracy=None
[[nodiscard]] Atom integer_pow(JaxprBuilder& b, const Atom& x, int64_t y);
[[nodiscard]] Atom select_n(JaxprBuilder& b, const Atom& which, const std::vector<Atom>& cases);
[[nodiscard]] Atom compare(JaxprBuilder& b, const std::string& name, const Atom& x, const Atom& y);
[[nodiscard]] Atom convert(JaxprBuilder& b, const Atom& x, DType dtype, bool weak_type);
[[nodiscard]] Atom reduce_sum(JaxprBuilder& b, const Atom& x, const std::vector<int64_t>& axes);
// `sharding` is the result's type under an Explicit mesh (typed_sharding_param), None to derive it.
[[nodiscard]] Atom broadcast_in_dim(JaxprBuilder& b, const Atom& x, const Shape& shape,
                                    const std::vector<int64_t>& dims, ParamValue sharding = ParamValue::None{});
[[nodiscard]] Atom reshape(JaxprBuilder& b, const Atom& x, const Shape& shape);
[[nodiscard]] Atom transpose(JaxprBuilder& b, const Atom& x, const std::vector<int64_t>& permutation);
// x broadcast to `shape` (numpy rules for equal-rank or scalar operands), or x itself.
[[nodiscard]] Atom maybe_broadcast(JaxprBuilder& b, const Atom& x, const Shape& shape);

// Small utilities.
[[nodiscard]] std::vector<int64_t> iota_vector(std::size_t n);
[[nodiscard]] std::vector<int64_t> inverse_permutation(const std::vector<int64_t>& permutation);
[[nodiscard]] bool all_zero(std::span<const std::optional<Atom>> tangents);

// A rule for ops whose outputs never carry tangents (comparisons, integer ops, argmax, ...).
[[nodiscard]] JvpRule zero_jvp(const std::string& primitive);
// A rule for ops linear in each of two operands (dot_general, conv_general_dilated): one product per tangent.
[[nodiscard]] JvpRule bilinear_jvp(const std::string& primitive);
// A rule for ops linear in their operands (jvp = the op on the tangents, zeros instantiated).
[[nodiscard]] JvpRule linear_jvp(const std::string& primitive);

// One-output JVP rules written as (builder, primals, tangents, primal out, params) -> tangent out.
using SimpleJvp = std::function<std::optional<Atom>(JaxprBuilder&, std::span<const Atom>,
                                                    std::span<const std::optional<Atom>>, const Atom&, const Params&)>;
[[nodiscard]] JvpRule single_output_jvp(const std::string& primitive, SimpleJvp tangent_rule);

// Single-output, single-cotangent transpose rule.
using SimpleTranspose = std::function<std::vector<std::optional<Atom>>(JaxprBuilder&, const Atom& cotangent,
                                                                       std::span<const std::optional<Atom>> primals,
                                                                       std::span<const Aval> avals, const Params&)>;
[[nodiscard]] TransposeRule single_output_transpose(SimpleTranspose rule);

}  // namespace shardscope::ad
