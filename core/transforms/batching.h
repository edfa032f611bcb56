// vmap as a jaxpr-to-jaxpr transformation: per-primitive batching rules and the driver that applies them.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/jaxpr.h"
#include "trace/builder.h"

namespace shardscope {

// A value of the batched program: where its mapped dimension is, if it has one.
struct BatchedValue {
  Atom value;
  std::optional<int64_t> batch_dim;  // nullopt = not mapped
};

// The axis being vmapped: its size and, for collectives, its name.
struct BatchAxis {
  int64_t size = 0;
  std::optional<std::string> name;
};

// Emits the batched form of one equation. Called only when at least one input is mapped.
using BatchRule = std::function<std::vector<BatchedValue>(JaxprBuilder&, std::span<const BatchedValue>, const Params&,
                                                          const BatchAxis&)>;

void register_batch_rule(const std::string& primitive, BatchRule rule);
[[nodiscard]] const BatchRule* find_batch_rule(const std::string& primitive);
// Registers the rules of every core primitive once (idempotent, thread-safe).
void ensure_batch_rules();

// Emits into `builder` the batched equations of `jaxpr` applied to `args` (the inlined form JAX's
// make_jaxpr(vmap(f)) shows). Constvars of `jaxpr` become unmapped constants of `builder`.
std::vector<BatchedValue> batch_jaxpr_into(JaxprBuilder& builder, const Jaxpr& jaxpr,
                                           std::span<const BatchedValue> args, const BatchAxis& axis);

// jax.vmap of a traced function: in_axes per argument (nullopt = None, negative counts from the end),
// out_axes per output; returns the jaxpr of the vmapped function (invars = the batched argument avals).
[[nodiscard]] JaxprPtr vmap_jaxpr(const Jaxpr& jaxpr, const std::vector<Aval>& batched_arg_avals,
                                  const std::vector<std::optional<int64_t>>& in_axes,
                                  const std::vector<std::optional<int64_t>>& out_axes,
                                  std::optional<std::string> axis_name = std::nullopt);

// Building blocks the rules share (JAX's batching utilities), emitting the equations JAX emits.
namespace batching {

[[nodiscard]] const Shape& shape_of(const Atom& atom);
[[nodiscard]] int64_t rank_of(const Atom& atom);
// util.moveaxis: a transpose moving dimension `src` to `dst` (no equation when equal).
[[nodiscard]] Atom move_axis(JaxprBuilder& builder, const Atom& x, int64_t src, int64_t dst);
// lax.broadcast_in_dim with sharding=None.
[[nodiscard]] Atom broadcast_in_dim(JaxprBuilder& builder, const Atom& x, const Shape& shape,
                                    const std::vector<int64_t>& dims);
// batching.broadcast: a new dimension of `size` inserted at `axis`.
[[nodiscard]] Atom broadcast_axis(JaxprBuilder& builder, const Atom& x, int64_t size, int64_t axis);
// lax.broadcast: new leading dimensions `sizes`.
[[nodiscard]] Atom broadcast_leading(JaxprBuilder& builder, const Atom& x, const Shape& sizes);
// lax.expand_dims: size-1 dimensions at `dims` of the result.
[[nodiscard]] Atom expand_dims(JaxprBuilder& builder, const Atom& x, const std::vector<int64_t>& dims);
// batching.bdim_at_front: the mapped dimension moved to 0, or a new leading dimension of `size`.
[[nodiscard]] Atom bdim_at_front(JaxprBuilder& builder, const BatchedValue& x, int64_t size);
// batching.matchaxis towards an integer destination.
[[nodiscard]] Atom match_axis(JaxprBuilder& builder, const BatchedValue& x, int64_t size, int64_t dst);
// The mapped size of the first mapped argument.
[[nodiscard]] int64_t mapped_size(std::span<const BatchedValue> args);
[[nodiscard]] std::vector<Atom> values(std::span<const BatchedValue> args);
// `params` with `key` set to `value` (replaced in place, or appended).
[[nodiscard]] Params with_param(Params params, const std::string& key, ParamValue value);
// Every output of `outputs` mapped at `dim` (nullopt: unmapped).
[[nodiscard]] std::vector<BatchedValue> all_at(std::vector<Atom> outputs, std::optional<int64_t> dim);
// Python's canonicalize_axis: ValueError for axes outside [-ndim, ndim).
[[nodiscard]] int64_t canonicalize_axis(int64_t axis, int64_t ndim);

// A rule that maps the primitive over the batch one element at a time (slice, apply, stack). Correct
// for any primitive; used where JAX's own rule needs a primitive the engine does not have.
[[nodiscard]] std::vector<BatchedValue> batch_by_unrolling(JaxprBuilder& builder, const std::string& primitive,
                                                           std::span<const BatchedValue> args, const Params& params,
                                                           const BatchAxis& axis);

// Rule families, one per source file.
void register_elementwise_batch_rules();
void register_structural_batch_rules();
void register_reduction_batch_rules();
void register_program_batch_rules();

}  // namespace batching
}  // namespace shardscope
