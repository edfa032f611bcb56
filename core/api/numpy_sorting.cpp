// jnp.sort, argsort, lax.sort and top_k (sorting.py, lax.py), and the triangle and diagonal helpers tril, triu,
// diagonal and diag (lax_numpy.py), each emitting what JAX's jitted implementation emits.
#include <algorithm>
#include <cstdlib>

#include "api/numpy.h"
#include "base/error.h"

namespace shardscope::api {
namespace lax {

std::vector<Value> sort(const std::vector<Value>& operands, int64_t dimension, bool is_stable, int64_t num_keys) {
  if (operands.empty()) throw type_error("Sort requires at least one operand");
  if (num_keys < 1 || num_keys > static_cast<int64_t>(operands.size())) {
    throw value_error("num_keys=" + std::to_string(num_keys) +
                      " must be between 1 and len(operand)=" + std::to_string(operands.size()));
  }
  const int64_t dim = canonicalize_axis(dimension, ndim_of(operands[0]));
  return bind("sort", operands, {{"dimension", dim}, {"is_stable", is_stable}, {"num_keys", num_keys}});
}

std::vector<Value> top_k(const Value& operand, int64_t k, int64_t axis, bool is_stable) {
  if (k < 0) throw value_error("k argument to top_k must be nonnegative, got " + std::to_string(k));
  const int64_t canonical = canonicalize_axis(axis, ndim_of(operand));
  return bind("top_k", {operand}, {{"axis", canonical}, {"is_stable", is_stable}, {"k", k}});
}

Value stop_gradient(const Value& x) { return bind1("stop_gradient", {x}); }

}  // namespace lax

namespace jnp {
namespace {

// lax_utils.int_dtype_for_dim then dtypes.default_int_dtype: int32 unless the axis is too long for it.
DType index_dtype_for(int64_t size) { return size > 2147483647 ? DType::kInt64 : DType::kInt32; }

// lax._tri: ones on and below the k-th diagonal of an (n, m) bool matrix.
Value tri_mask(int64_t n, int64_t m, int64_t k) {
  const DType shape_dtype = index_dtype_for(std::max(n, m));
  const Value rows = lax::broadcasted_iota(shape_dtype, {n, m}, 0);
  const Value cols = lax::broadcasted_iota(shape_dtype, {n, m}, 1);
  const Value mask = lax::binary("ge", lax::add(rows, typed_scalar(static_cast<double>(k), shape_dtype)), cols);
  return lax::convert_element_type(mask, DType::kBool);
}

Value triangle(const std::string& name, const Value& m, int64_t k, bool lower) {
  const Shape& shape = shape_of(m);
  if (shape.size() < 2) throw value_error("Argument to jax.numpy." + name + " must be at least 2D");
  return jitted(name, {m}, [&](const std::vector<Value>& in) {
    const Value& x = in[0];
    const int64_t n = shape[shape.size() - 2];
    const int64_t cols = shape.back();
    const Value mask = tri_mask(n, cols, lower ? k : k - 1);
    // The mask takes the operand's typed sharding, as JAX's broadcast with out_sharding gives it.
    const Value which = with_typed_sharding_of(lax::broadcast(mask, Shape(shape.begin(), shape.end() - 2)), x);
    return std::vector<Value>{lower ? lax::select(which, x, zeros_like(x)) : lax::select(which, zeros_like(x), x)};
  })[0];
}

}  // namespace

Value sort(const Value& a, std::optional<int64_t> axis, bool stable, bool descending) {
  return jitted("sort", {a}, [&](const std::vector<Value>& in) {
    Value arr = in[0];
    int64_t dim = 0;
    if (!axis) {
      arr = ravel(arr);
    } else {
      dim = canonicalize_axis(*axis, ndim_of(arr));
    }
    const Value result = lax::sort({arr}, dim, stable, 1)[0];
    return std::vector<Value>{descending ? lax::rev(result, {dim}) : result};
  })[0];
}

Value argsort(const Value& a, std::optional<int64_t> axis, bool stable, bool descending, std::optional<DType> dtype) {
  return jitted("argsort", {a}, [&](const std::vector<Value>& in) {
    Value arr = in[0];
    int64_t dim = 0;
    if (!axis) {
      arr = ravel(arr);
    } else {
      dim = canonicalize_axis(*axis, ndim_of(arr));
    }
    const DType idx_dtype = dtype.value_or(index_dtype_for(shape_of(arr)[static_cast<std::size_t>(dim)]));
    Value iota = lax::broadcasted_iota(idx_dtype, shape_of(arr), dim);
    // A stable descending sort reverses first so that ties keep their order once the indices are reversed.
    if (descending && stable) {
      arr = lax::rev(arr, {dim});
      iota = lax::rev(iota, {dim});
    }
    const Value indices = lax::sort({arr, iota}, dim, stable, 1)[1];
    return std::vector<Value>{descending ? lax::rev(indices, {dim}) : indices};
  })[0];
}

Value tril(const Value& m, int64_t k) { return triangle("tril", m, k, true); }
Value triu(const Value& m, int64_t k) { return triangle("triu", m, k, false); }

Value diagonal(const Value& a, int64_t offset, int64_t axis1, int64_t axis2) {
  if (ndim_of(a) < 2) throw value_error("diagonal requires an array of at least two dimensions.");
  return jitted("diagonal", {a}, [&](const std::vector<Value>& in) {
    const Shape a_shape = shape_of(in[0]);
    const int64_t rank = ndim_of(in[0]);
    const int64_t ax1 = canonicalize_axis(axis1, rank);
    const int64_t ax2 = canonicalize_axis(axis2, rank);
    const Value x = moveaxis(in[0], {ax1, ax2}, {rank - 2, rank - 1});
    const int64_t diag_size =
        std::max<int64_t>(0, std::min(a_shape[static_cast<std::size_t>(ax1)] + std::min<int64_t>(offset, 0),
                                      a_shape[static_cast<std::size_t>(ax2)] - std::max<int64_t>(offset, 0)));
    const Value i = arange(0, static_cast<double>(diag_size));
    const Value j = arange(static_cast<double>(std::abs(offset)), static_cast<double>(std::abs(offset) + diag_size));
    const std::vector<IndexItem> index = {IndexItem::ellipsis(), IndexItem::of_array(offset >= 0 ? i : j),
                                          IndexItem::of_array(offset >= 0 ? j : i)};
    return std::vector<Value>{gather_index(x, index)};
  })[0];
}

Value diag(const Value& v, int64_t k) {
  const Shape& shape = shape_of(v);
  if (shape.size() != 1 && shape.size() != 2) throw value_error("diag input must be 1d or 2d");
  return jitted("_diag", {v}, [&](const std::vector<Value>& in) {
    if (shape.size() == 2) return std::vector<Value>{diagonal(in[0], k, 0, 1)};
    const Value zero = lax::full({}, typed_scalar(0, dtype_of(in[0])));
    const int64_t n = shape[0] + std::abs(k);
    const Value padded = lax::pad(in[0], zero, {{std::max<int64_t>(0, -k), std::max<int64_t>(0, k), 0}});
    const Value column = getitem(padded, {IndexItem::all(), IndexItem::newaxis()});
    return std::vector<Value>{where(eye(n, std::nullopt, k, DType::kBool), column, zero)};
  })[0];
}

}  // namespace jnp
}  // namespace shardscope::api
