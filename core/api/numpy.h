// jax.numpy over user values: each function emits the primitives JAX's implementation emits.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "api/lax.h"

namespace shardscope::api::jnp {

// `axis=None` is nullopt; an int or a tuple of ints otherwise.
using Axis = std::optional<std::vector<int64_t>>;

// ---- promotion (numpy_promote.cpp) ----
[[nodiscard]] WeakDType result_type(const std::vector<Value>& values);
std::vector<Value> promote_dtypes(const std::vector<Value>& values);
std::vector<Value> promote_dtypes_inexact(const std::vector<Value>& values);
std::vector<Value> promote_dtypes_numeric(const std::vector<Value>& values);
std::vector<Value> promote_shapes(const std::string& name, const std::vector<Value>& values);
std::vector<Value> broadcast_arrays(const std::vector<Value>& values);
Value broadcast_to(const Value& x, const Shape& shape);
[[nodiscard]] Shape broadcast_shapes(const std::vector<Shape>& shapes);
Value astype(const Value& x, DType dtype);

// ---- creation (numpy_creation.cpp) ----
// jnp.asarray of host data, placed on the default device (as device_put of a numpy array).
Value asarray(const BufferPtr& host);
Value asarray(const Value& x, std::optional<DType> dtype = std::nullopt);
// jnp.array of a list holding traced values: each element converted to `dtype`, given a leading axis and
// concatenated (a stack), the result strongly typed.
Value array_from_elements(const std::vector<Value>& elements, DType dtype);
Value zeros(const Shape& shape, std::optional<DType> dtype = std::nullopt);
Value ones(const Shape& shape, std::optional<DType> dtype = std::nullopt);
Value full(const Shape& shape, const Value& fill_value, std::optional<DType> dtype = std::nullopt);
Value zeros_like(const Value& x, std::optional<DType> dtype = std::nullopt);
Value ones_like(const Value& x, std::optional<DType> dtype = std::nullopt);
Value full_like(const Value& x, const Value& fill_value, std::optional<DType> dtype = std::nullopt);
// `value` with the sharding in `like`'s type (its Explicit axes) when `like` is traced with one; as it was otherwise.
[[nodiscard]] Value with_typed_sharding_of(const Value& value, const Value& like);
// jnp.arange(start, stop, step): Python numbers; integers give int32 unless any is a float.
Value arange(double start, std::optional<double> stop = std::nullopt, std::optional<double> step = std::nullopt,
             std::optional<DType> dtype = std::nullopt, bool integer_args = true);
Value eye(int64_t n, std::optional<int64_t> m = std::nullopt, int64_t k = 0, std::optional<DType> dtype = std::nullopt);
Value linspace(double start, double stop, int64_t num = 50, bool endpoint = true,
               std::optional<DType> dtype = std::nullopt);

// ---- elementwise (numpy_ufuncs.cpp, numpy_ufuncs_binary.cpp) ----
Value add(const Value& x, const Value& y);
Value subtract(const Value& x, const Value& y);
Value multiply(const Value& x, const Value& y);
Value true_divide(const Value& x, const Value& y);
Value floor_divide(const Value& x, const Value& y);
Value remainder(const Value& x, const Value& y);
Value power(const Value& x, const Value& y);
Value maximum(const Value& x, const Value& y);
Value minimum(const Value& x, const Value& y);
Value equal(const Value& x, const Value& y);
Value not_equal(const Value& x, const Value& y);
Value less(const Value& x, const Value& y);
Value less_equal(const Value& x, const Value& y);
Value greater(const Value& x, const Value& y);
Value greater_equal(const Value& x, const Value& y);
Value logical_and(const Value& x, const Value& y);
Value logical_or(const Value& x, const Value& y);
Value logical_xor(const Value& x, const Value& y);
Value bitwise_and(const Value& x, const Value& y);
Value bitwise_or(const Value& x, const Value& y);
Value logaddexp(const Value& x, const Value& y);
Value arctan2(const Value& x, const Value& y);
Value logical_not(const Value& x);
Value negative(const Value& x);
Value positive(const Value& x);
Value abs(const Value& x);
Value sign(const Value& x);
Value square(const Value& x);
Value reciprocal(const Value& x);
Value floor(const Value& x);
Value ceil(const Value& x);
Value isfinite(const Value& x);
Value isnan(const Value& x);
// Float-valued functions of one argument ("exp", "log", "sin", "tanh", "sqrt", "rsqrt", "arcsin", ...), by jnp name.
Value math(const std::string& name, const Value& x);
Value exp(const Value& x);
Value log(const Value& x);
Value sqrt(const Value& x);
Value tanh(const Value& x);
Value sin(const Value& x);
Value cos(const Value& x);
Value where(const Value& condition, const Value& x, const Value& y);
Value clip(const Value& x, const std::optional<Value>& min, const std::optional<Value>& max);
Value isinf(const Value& x);
// rtol and atol are values (Python floats are weak): JAX passes them into its jitted isclose.
Value isclose(const Value& a, const Value& b, const Value& rtol, const Value& atol, bool equal_nan = false);
Value allclose(const Value& a, const Value& b, const Value& rtol, const Value& atol, bool equal_nan = false);
// Arrays of different shapes are unequal (a bool Array, not an error); array_equiv broadcasts first.
Value array_equal(const Value& a, const Value& b, bool equal_nan = false);
Value array_equiv(const Value& a, const Value& b);

// ---- reductions (numpy_reductions.cpp) ----
Value sum(const Value& x, const Axis& axis = std::nullopt, std::optional<DType> dtype = std::nullopt,
          bool keepdims = false);
Value prod(const Value& x, const Axis& axis = std::nullopt, std::optional<DType> dtype = std::nullopt,
           bool keepdims = false);
Value max(const Value& x, const Axis& axis = std::nullopt, bool keepdims = false);
Value min(const Value& x, const Axis& axis = std::nullopt, bool keepdims = false);
Value all(const Value& x, const Axis& axis = std::nullopt, bool keepdims = false);
Value any(const Value& x, const Axis& axis = std::nullopt, bool keepdims = false);
Value mean(const Value& x, const Axis& axis = std::nullopt, std::optional<DType> dtype = std::nullopt,
           bool keepdims = false);
Value var(const Value& x, const Axis& axis = std::nullopt, std::optional<DType> dtype = std::nullopt, int64_t ddof = 0,
          bool keepdims = false);
Value stddev(const Value& x, const Axis& axis = std::nullopt, std::optional<DType> dtype = std::nullopt,
             int64_t ddof = 0, bool keepdims = false);
Value argmax(const Value& x, std::optional<int64_t> axis = std::nullopt, bool keepdims = false);
Value argmin(const Value& x, std::optional<int64_t> axis = std::nullopt, bool keepdims = false);
Value cumsum(const Value& x, std::optional<int64_t> axis = std::nullopt, std::optional<DType> dtype = std::nullopt);
Value cumprod(const Value& x, std::optional<int64_t> axis = std::nullopt, std::optional<DType> dtype = std::nullopt);

// ---- shapes (numpy_shapes.cpp) ----
Value reshape(const Value& x, const std::vector<int64_t>& shape);  // one -1 allowed
Value ravel(const Value& x);
Value transpose(const Value& x, const std::optional<std::vector<int64_t>>& axes = std::nullopt);
Value swapaxes(const Value& x, int64_t axis1, int64_t axis2);
Value moveaxis(const Value& x, const std::vector<int64_t>& source, const std::vector<int64_t>& destination);
Value expand_dims(const Value& x, const std::vector<int64_t>& axis);
Value squeeze(const Value& x, const Axis& axis = std::nullopt);
Value concatenate(const std::vector<Value>& arrays, std::optional<int64_t> axis = 0);
// jnp.stack of a sequence: the stack primitive from JAX 0.10.1, expand_dims and concatenate before; of one array
// (stack_array): expand_dims and the reshape that concatenates its rows.
Value stack(const std::vector<Value>& arrays, int64_t axis = 0, std::optional<DType> dtype = std::nullopt);
Value stack_array(const Value& arrays, int64_t axis = 0, std::optional<DType> dtype = std::nullopt);
// jnp.unstack: the unstack primitive from JAX 0.10.1, a split and one squeeze per piece before.
std::vector<Value> unstack(const Value& x, int64_t axis = 0);
std::vector<Value> split(const Value& x, int64_t sections, int64_t axis = 0);
std::vector<Value> split_at(const Value& x, const std::vector<int64_t>& indices, int64_t axis = 0);
Value tile(const Value& x, const std::vector<int64_t>& reps);
Value repeat(const Value& x, int64_t repeats, std::optional<int64_t> axis = std::nullopt);

// ---- padding, rolling, uneven splits (numpy_pad.cpp) ----
using PadWidth = std::pair<int64_t, int64_t>;
// numpy's pad_width forms (n, (n,), (before, after), ((before, after),), one pair per axis) as pairs per axis;
// `values` is the row-major content of an array of `given_shape`.
std::vector<PadWidth> broadcast_pad_width(const std::vector<int64_t>& values, const Shape& given_shape, int64_t rank);
Value pad(const Value& x, const std::vector<PadWidth>& widths, const std::string& mode, const Value& constant);
// shift and axes broadcast against each other; no axes rolls the flattened array.
Value roll(const Value& x, const std::vector<int64_t>& shifts, const std::optional<std::vector<int64_t>>& axes);
std::vector<Value> array_split(const Value& x, int64_t sections, int64_t axis = 0);
std::vector<Value> meshgrid(const std::vector<Value>& arrays, bool sparse = false, const std::string& indexing = "xy");

// ---- indexing (numpy_indexing.cpp) ----
// One entry of an index expression: x[i], x[a:b:c], x[None], x[...], or an integer array x[idx].
struct IndexItem {
  enum class Kind { kInt, kSlice, kNewAxis, kEllipsis, kArray };
  Kind kind = Kind::kInt;
  int64_t index = 0;
  std::optional<int64_t> start, stop, step;
  std::shared_ptr<const Value> array;  // kArray: the index values (an integer array, possibly 0-d)
  static IndexItem at(int64_t i) { return {Kind::kInt, i, {}, {}, {}, nullptr}; }
  static IndexItem range(std::optional<int64_t> start, std::optional<int64_t> stop,
                         std::optional<int64_t> step = std::nullopt) {
    return {Kind::kSlice, 0, start, stop, step, nullptr};
  }
  static IndexItem all() { return {Kind::kSlice, 0, {}, {}, {}, nullptr}; }
  static IndexItem newaxis() { return {Kind::kNewAxis, 0, {}, {}, {}, nullptr}; }
  static IndexItem ellipsis() { return {Kind::kEllipsis, 0, {}, {}, {}, nullptr}; }
  static IndexItem of_array(const Value& value);
};
// Static indices only: JAX's static-slice strategy.
Value getitem(const Value& x, const std::vector<IndexItem>& index);

// ---- gather and scatter indexing (numpy_gather.cpp) ----
// The keywords of .at[idx].get/set/..., jnp.take and take_along_axis; mode is lax.GatherScatterMode's name
// ("fill", "clip", "promise_in_bounds", ...), nullopt for the function's default.
struct IndexOptions {
  std::optional<std::string> mode;
  std::optional<double> fill_value;
  bool indices_are_sorted = false;
  bool unique_indices = false;
  bool normalize_indices = true;
};
// x[idx] for any index: static ones slice, integer arrays gather (indexing.rewriting_take).
Value getitem_general(const Value& x, const std::vector<IndexItem>& index, const IndexOptions& options = {});
// The gather path of x[idx] (what .at[idx].get() and array indices use).
Value gather_index(const Value& x, const std::vector<IndexItem>& index, const IndexOptions& options = {});
enum class ScatterOp { kSet, kAdd, kSub, kMul, kMin, kMax };
// x.at[idx].set/add/multiply/min/max(y): scatter._scatter_update.
Value scatter_update(const Value& x, const std::vector<IndexItem>& index, const Value& y, ScatterOp op,
                     const IndexOptions& options = {});
Value take(const Value& a, const Value& indices, std::optional<int64_t> axis, const IndexOptions& options = {});
Value take_along_axis(const Value& a, const Value& indices, std::optional<int64_t> axis,
                      const IndexOptions& options = {});

// ---- sorting, triangles and diagonals (numpy_sorting.cpp) ----
// axis nullopt sorts the flattened array.
Value sort(const Value& a, std::optional<int64_t> axis = -1, bool stable = true, bool descending = false);
Value argsort(const Value& a, std::optional<int64_t> axis = -1, bool stable = true, bool descending = false,
              std::optional<DType> dtype = std::nullopt);
Value tril(const Value& m, int64_t k = 0);
Value triu(const Value& m, int64_t k = 0);
Value diagonal(const Value& a, int64_t offset = 0, int64_t axis1 = 0, int64_t axis2 = 1);
Value diag(const Value& v, int64_t k = 0);

// ---- linear algebra (numpy_linalg.cpp) ----
Value dot(const Value& a, const Value& b, std::optional<DType> preferred_element_type = std::nullopt);
Value vdot(const Value& a, const Value& b);
Value matmul(const Value& a, const Value& b, std::optional<DType> preferred_element_type = std::nullopt);
Value tensordot(const Value& a, const Value& b, const std::vector<int64_t>& a_axes, const std::vector<int64_t>& b_axes);
Value tensordot(const Value& a, const Value& b, int64_t axes = 2);
Value inner(const Value& a, const Value& b);
Value outer(const Value& a, const Value& b);
Value einsum(const std::string& subscripts, const Value& a, const Value& b);
// Any number of operands (contracted left to right), "..." and labels summed away; no diagonals.
// `out_spec`: jnp.einsum's out_sharding, typing the last contraction's product under an Explicit mesh.
Value einsum(const std::string& subscripts, const std::vector<Value>& operands,
             const std::optional<PartitionSpec>& out_spec = std::nullopt);

}  // namespace shardscope::api::jnp
