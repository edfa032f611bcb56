// jax.lax over user values: thin wrappers that bind one primitive with the params JAX's lax functions give it.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "api/trace.h"
#include "sharding/sharding.h"

namespace shardscope::api {

// Python scalars as user code writes them: ints and floats are weakly typed, bools are not.
[[nodiscard]] Value py_int(int64_t value);
[[nodiscard]] Value py_float(double value);
[[nodiscard]] Value py_bool(bool value);
// A scalar literal of a fixed dtype (a numpy scalar constant in JAX).
[[nodiscard]] Value typed_scalar(double value, DType dtype, bool weak_type = false);

[[nodiscard]] inline const Shape& shape_of(const Value& x) { return x.aval().shape; }
[[nodiscard]] inline int64_t ndim_of(const Value& x) { return static_cast<int64_t>(x.aval().rank()); }
[[nodiscard]] inline DType dtype_of(const Value& x) { return x.aval().dtype; }
[[nodiscard]] inline WeakDType weak_dtype_of(const Value& x) { return {x.aval().dtype, x.aval().weak_type}; }

// A dimension index that may be negative, checked against `rank` (JAX's AxisError message otherwise).
[[nodiscard]] int64_t canonicalize_axis(int64_t axis, int64_t rank);

// Runs `body` as JAX runs a function decorated with a (non-inline) jit: inside a trace it becomes one `jit`
// equation named `name` whose program is `body` traced on the inputs' types; outside it runs op by op.
std::vector<Value> jitted(const std::string& name, const std::vector<Value>& inputs,
                          const std::function<std::vector<Value>(const std::vector<Value>&)>& body);

namespace lax {

// lax._convert_element_type: no equation when nothing changes; Python scalars become typed literals.
Value convert_element_type(const Value& x, DType dtype, bool weak_type = false);

// Elementwise primitives by name ("add", "sin", "eq", ...); weak scalars take the other operand's dtype.
Value unary(const std::string& primitive, const Value& x);
Value binary(const std::string& primitive, const Value& x, const Value& y);
Value add(const Value& x, const Value& y);
Value sub(const Value& x, const Value& y);
Value mul(const Value& x, const Value& y);
Value div(const Value& x, const Value& y);
Value rem(const Value& x, const Value& y);
Value max(const Value& x, const Value& y);
Value min(const Value& x, const Value& y);
Value pow(const Value& x, const Value& y);
Value integer_pow(const Value& x, int64_t y);
Value neg(const Value& x);
Value select_n(const Value& which, const std::vector<Value>& cases);
Value select(const Value& pred, const Value& on_true, const Value& on_false);  // select_n(pred, false, true)

// Shape primitives.
Value broadcast_in_dim(const Value& x, const Shape& shape, const std::vector<int64_t>& broadcast_dimensions);
Value broadcast(const Value& x, const Shape& leading_sizes);
Value broadcast_to_rank(const Value& x, int64_t rank);
Value reshape(const Value& x, const Shape& new_sizes);
Value transpose(const Value& x, const std::vector<int64_t>& permutation);
Value squeeze(const Value& x, const std::vector<int64_t>& dimensions);
Value expand_dims(const Value& x, const std::vector<int64_t>& dimensions);
Value concatenate(const std::vector<Value>& operands, int64_t dimension);
// lax.stack / lax.unstack (JAX 0.10.1+): the stack and unstack primitives, the axis canonicalized first.
Value stack(const std::vector<Value>& operands, int64_t axis = 0);
std::vector<Value> unstack(const Value& x, int64_t axis = 0);
Value slice(const Value& x, const std::vector<int64_t>& start, const std::vector<int64_t>& limit,
            const std::optional<std::vector<int64_t>>& strides = std::nullopt);
Value dynamic_slice(const Value& x, const std::vector<Value>& start_indices, const std::vector<int64_t>& sizes);
Value dynamic_update_slice(const Value& x, const Value& update, const std::vector<Value>& start_indices);
Value rev(const Value& x, const std::vector<int64_t>& dimensions);
// lax.pad: `config` holds (low, high, interior) per dim; padding_value is a scalar of x's dtype.
Value pad(const Value& x, const Value& padding_value, const std::vector<std::array<int64_t, 3>>& config);
Value iota(DType dtype, int64_t size);
Value broadcasted_iota(DType dtype, const Shape& shape, int64_t dimension);
// lax.full: a scalar broadcast to `shape` (no equation for rank 0).
Value full(const Shape& shape, const Value& fill_value, std::optional<DType> dtype = std::nullopt);

// Reductions (axes are canonical and sorted as JAX passes them).
Value reduce(const std::string& primitive, const Value& x, const std::vector<int64_t>& axes);
Value argminmax(const std::string& primitive, const Value& x, int64_t axis, DType index_dtype);
Value cumulative(const std::string& primitive, const Value& x, int64_t axis, bool reverse = false);

struct DotDimensionNumbers {
  std::vector<int64_t> lhs_contract, rhs_contract, lhs_batch, rhs_batch;
};
// `out_sharding`: None, or a PartitionSpec / NamedSharding naming the result's Explicit sharding.
Value dot_general(const Value& lhs, const Value& rhs, const DotDimensionNumbers& dims,
                  std::optional<DType> preferred_element_type = std::nullopt,
                  const ParamValue& out_sharding = ParamValue::None{});

// Collectives (inside shard_map, pmap and vmap bodies), one array at a time: JAX's lax functions with their
// shortcuts, automatic pvary casts under check_vma, params and errors. The Python layer maps pytrees.
Value psum(const Value& x, const std::vector<std::string>& axes);
Value pmax(const Value& x, const std::vector<std::string>& axes);
Value pmin(const Value& x, const std::vector<std::string>& axes);
Value pmean(const Value& x, const std::vector<std::string>& axes);
Value all_gather(const Value& x, const std::vector<std::string>& axes, int64_t axis = 0, bool tiled = false);
// all_gather(..., to='invarying'): the gathered value is typed invariant over the axes.
Value all_gather_invariant(const Value& x, const std::vector<std::string>& axes, int64_t axis = 0, bool tiled = false);
Value psum_scatter(const Value& x, const std::vector<std::string>& axes, int64_t scatter_dimension = 0,
                   bool tiled = false);
Value ppermute(const Value& x, const std::vector<std::string>& axes,
               const std::vector<std::pair<int64_t, int64_t>>& perm);
// `axis_name_is_tuple`: the caller passed a tuple (the param then prints as one; a bare name prints bare).
Value all_to_all(const Value& x, const std::vector<std::string>& axes, int64_t split_axis, int64_t concat_axis,
                 bool tiled = false, bool axis_name_is_tuple = false);
Value axis_index(const std::vector<std::string>& axes, bool axis_name_is_tuple = false);
// jax.lax.axis_size: the product of the bound axes' sizes (NameError for an unbound name).
[[nodiscard]] int64_t axis_size(const std::vector<std::string>& axes);
// jax.lax.pvary (0.6.0-0.9.x) and jax.lax.pcast(x, axes, to=...): casts between manual axis types.
Value pvary(const Value& x, const std::vector<std::string>& axes);
Value pcast(const Value& x, const std::vector<std::string>& axes, const std::string& to);

// lax.sort over several operands (the first num_keys are the keys, compared lexicographically) and lax.top_k:
// the sort and top_k primitives with their params canonicalized as JAX's wrappers do (numpy_sorting.cpp).
std::vector<Value> sort(const std::vector<Value>& operands, int64_t dimension = -1, bool is_stable = true,
                        int64_t num_keys = 1);
std::vector<Value> top_k(const Value& operand, int64_t k, int64_t axis = -1, bool is_stable = true);
// lax.stop_gradient on one array: the identity whose derivative is zero.
Value stop_gradient(const Value& x);

// jax.lax.with_sharding_constraint(x, NamedSharding).
Value with_sharding_constraint(const Value& x, const NamedSharding& sharding);

// jax.device_put(x, NamedSharding) on a traced value: a device_put equation the partitioner honours as a
// layout constraint (its memory kind becomes the result's memory space).
Value device_put(const Value& x, const NamedSharding& sharding);

}  // namespace lax
}  // namespace shardscope::api
