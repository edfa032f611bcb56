// dot_general: JAX's shape/dtype rules and print rule, and the contraction kernel for every dtype.
#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

#include "base/cpu_features.h"
#include "base/dtype_dispatch.h"
#include "base/error.h"
#include "ops/dot_dims.h"
#include "ops/structural.h"
#include "ops/structural_internal.h"

namespace shardscope {

ParamValue dot_dimension_numbers_param(const std::vector<int64_t>& lhs_contract,
                                       const std::vector<int64_t>& rhs_contract, const std::vector<int64_t>& lhs_batch,
                                       const std::vector<int64_t>& rhs_batch) {
  return ParamValue::tuple(
      {ParamValue::tuple({ParamValue::int_tuple(lhs_contract), ParamValue::int_tuple(rhs_contract)}),
       ParamValue::tuple({ParamValue::int_tuple(lhs_batch), ParamValue::int_tuple(rhs_batch)})});
}

namespace structural {
namespace {

struct DotDims {
  std::vector<int64_t> lhs_contract;
  std::vector<int64_t> rhs_contract;
  std::vector<int64_t> lhs_batch;
  std::vector<int64_t> rhs_batch;
};

DotDims dot_dims(const Params& params) {
  const auto* outer = param(params, "dimension_numbers").get_if<ParamValue::Tuple>();
  if (outer == nullptr || outer->items.size() != 2) {
    throw type_error("dimension_numbers must be ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))");
  }
  const auto contract = int_groups(outer->items[0], "dimension_numbers");
  const auto batch = int_groups(outer->items[1], "dimension_numbers");
  if (contract.size() != 2 || batch.size() != 2) {
    throw type_error("dimension_numbers must be ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))");
  }
  return {contract[0], contract[1], batch[0], batch[1]};
}

bool distinct(const std::vector<int64_t>& dims) {
  return std::set<int64_t>(dims.begin(), dims.end()).size() == dims.size();
}

bool overlap(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  return std::any_of(a.begin(), a.end(), [&](int64_t d) { return std::find(b.begin(), b.end(), d) != b.end(); });
}

Shape sizes_of(const Shape& shape, const std::vector<int64_t>& dims) {
  Shape sizes;
  for (const int64_t d : dims) sizes.push_back(shape[static_cast<std::size_t>(d)]);
  return sizes;
}

// XLA's HigherPrecisionType ordering, as JAX's dtype rule mirrors it: (max exponent, mantissa
// bits) for floats, then bit width, then signedness.
std::tuple<int, int, int, bool> type_properties(DType dtype) {
  int max_exponent = -1;
  int mantissa = -1;
  switch (dtype) {
    case DType::kBFloat16: max_exponent = 128, mantissa = 7; break;
    case DType::kFloat16: max_exponent = 16, mantissa = 10; break;
    case DType::kFloat32: max_exponent = 128, mantissa = 23; break;
    case DType::kFloat64: max_exponent = 1024, mantissa = 52; break;
    default: break;
  }
  return {max_exponent, mantissa, dtype_bits(dtype), dtype_kind(dtype) != DTypeKind::kUnsigned};
}

int bit_width(DType dtype) { return dtype == DType::kBool ? 1 : dtype_bits(dtype); }

DType dot_result_dtype(DType lhs, DType rhs, std::optional<DType> preferred) {
  const auto lhs_properties = type_properties(lhs);
  const auto rhs_properties = type_properties(rhs);
  DType result = lhs;
  if (rhs_properties > lhs_properties) {
    result = rhs;
  } else if (lhs_properties == rhs_properties && lhs != rhs) {
    throw type_error("lax.dot_general argument type error: " + std::string(dtype_name(lhs)) + ", " +
                     std::string(dtype_name(rhs)));
  }
  if (!preferred || *preferred == result) return result;
  if (!is_floating(result) && bit_width(*preferred) < bit_width(result)) {
    throw type_error(
        "`preferred_element_type` must not be narrower than the original type, got preferred_element_type of " +
        std::string(dtype_name(*preferred)) + " for result type of " + std::string(dtype_name(result)) + ".");
  }
  return *preferred;
}

Aval dot_general_rule(std::span<const Aval> avals, const Params& params) {
  check_arity("dot_general", avals, 2);
  const Aval& lhs = avals[0];
  const Aval& rhs = avals[1];
  const DotDims dims = dot_dims(params);
  auto in_range = [](const std::vector<int64_t>& ds, std::size_t rank) {
    return std::all_of(ds.begin(), ds.end(), [&](int64_t d) { return d >= 0 && d < static_cast<int64_t>(rank); });
  };
  if (!in_range(dims.lhs_contract, lhs.rank()) || !in_range(dims.lhs_batch, lhs.rank())) {
    throw type_error(
        "dot_general requires lhs dimension numbers to be nonnegative and less than the number of axes of the lhs "
        "value, got lhs_batch of " +
        int_tuple(dims.lhs_batch) + " and lhs_contracting of " + int_tuple(dims.lhs_contract) + " for lhs of rank " +
        std::to_string(lhs.rank()));
  }
  if (!in_range(dims.rhs_contract, rhs.rank()) || !in_range(dims.rhs_batch, rhs.rank())) {
    throw type_error(
        "dot_general requires rhs dimension numbers to be nonnegative and less than the number of axes of the rhs "
        "value, got rhs_batch of " +
        int_tuple(dims.rhs_batch) + " and rhs_contracting of " + int_tuple(dims.rhs_contract) + " for rhs of rank " +
        std::to_string(rhs.rank()));
  }
  if (dims.lhs_batch.size() != dims.rhs_batch.size()) {
    throw type_error("dot_general requires equal numbers of lhs_batch and rhs_batch dimensions, got lhs_batch " +
                     int_tuple(dims.lhs_batch) + " and rhs_batch " + int_tuple(dims.rhs_batch) + ".");
  }
  if (!distinct(dims.lhs_batch)) {
    throw type_error("dot_general requires lhs batch dimensions to be distinct, got lhs_batch " +
                     int_tuple(dims.lhs_batch) + ".");
  }
  if (!distinct(dims.rhs_batch)) {
    throw type_error("dot_general requires rhs batch dimensions to be distinct, got rhs_batch " +
                     int_tuple(dims.rhs_batch) + ".");
  }
  if (!distinct(dims.lhs_contract)) {
    throw type_error("dot_general requires lhs contracting dimensions to be distinct, got lhs_contracting " +
                     int_tuple(dims.lhs_contract) + ".");
  }
  if (!distinct(dims.rhs_contract)) {
    throw type_error("dot_general requires rhs contracting dimensions to be distinct, got rhs_contracting " +
                     int_tuple(dims.rhs_contract) + ".");
  }
  if (overlap(dims.lhs_contract, dims.lhs_batch)) {
    throw type_error(
        "dot_general requires lhs batch dimensions to be disjoint from contracting dimensions, got lhs_batch " +
        int_tuple(dims.lhs_batch) + " and lhs_contracting " + int_tuple(dims.lhs_contract) + ".");
  }
  if (overlap(dims.rhs_contract, dims.rhs_batch)) {
    throw type_error(
        "dot_general requires rhs batch dimensions to be disjoint from contracting dimensions, got rhs_batch " +
        int_tuple(dims.rhs_batch) + " and rhs_contracting " + int_tuple(dims.rhs_contract) + ".");
  }
  const Shape lhs_batch_shape = sizes_of(lhs.shape, dims.lhs_batch);
  const Shape rhs_batch_shape = sizes_of(rhs.shape, dims.rhs_batch);
  if (lhs_batch_shape != rhs_batch_shape) {
    throw type_error("dot_general requires lhs batch dimensions and rhs batch dimensions to have the same shape, got " +
                     int_tuple(lhs_batch_shape) + " and " + int_tuple(rhs_batch_shape) + ".");
  }
  const Shape lhs_contract_shape = sizes_of(lhs.shape, dims.lhs_contract);
  const Shape rhs_contract_shape = sizes_of(rhs.shape, dims.rhs_contract);
  if (lhs_contract_shape != rhs_contract_shape) {
    throw type_error("dot_general requires contracting dimensions to have the same shape, got " +
                     int_tuple(lhs_contract_shape) + " and " + int_tuple(rhs_contract_shape) + ".");
  }
  const DType dtype = dot_result_dtype(lhs.dtype, rhs.dtype, optional_dtype_param(params, "preferred_element_type"));

  const std::vector<int64_t> lhs_free = dot_free_dims(lhs.rank(), dims.lhs_contract, dims.lhs_batch);
  const std::vector<int64_t> rhs_free = dot_free_dims(rhs.rank(), dims.rhs_contract, dims.rhs_batch);
  Shape shape = lhs_batch_shape;
  for (const int64_t d : lhs_free) shape.push_back(lhs.shape[static_cast<std::size_t>(d)]);
  for (const int64_t d : rhs_free) shape.push_back(rhs.shape[static_cast<std::size_t>(d)]);
  Aval out = derived_aval(lhs, shape, dtype, lhs.weak_type && rhs.weak_type);
  out.varying = union_varying(avals);
  if (!lhs.dim_axes.empty() || !rhs.dim_axes.empty()) {
    auto axes_of = [](const Aval& aval, int64_t d) {
      return aval.dim_axes.empty() ? std::vector<std::string>{} : aval.dim_axes[static_cast<std::size_t>(d)];
    };
    out.dim_axes.clear();
    for (const int64_t d : dims.lhs_batch) out.dim_axes.push_back(axes_of(lhs, d));
    for (const int64_t d : lhs_free) out.dim_axes.push_back(axes_of(lhs, d));
    for (const int64_t d : rhs_free) out.dim_axes.push_back(axes_of(rhs, d));
  }
  apply_sharding_param(out, params, "out_sharding");
  return out;
}

// ---- printing -----------------------------------------------------------------------------

ParamValue dimension_numbers_for_print(const Params& params, bool as_lists) {
  const DotDims dims = dot_dims(params);
  auto group = [as_lists](const std::vector<int64_t>& values) {
    return as_lists ? ParamValue::list({values.begin(), values.end()}) : ParamValue::int_tuple(values);
  };
  return ParamValue::tuple({ParamValue::tuple({group(dims.lhs_contract), group(dims.rhs_contract)}),
                            ParamValue::tuple({group(dims.lhs_batch), group(dims.rhs_batch)})});
}

// Until 0.4.2 every param printed, dimension_numbers as tuples. From 0.4.2 None-valued params are
// hidden and dimension_numbers print as lists. The output-sharding param was out_type in
// 0.4.36-0.4.38 and out_sharding from 0.5.0; from 0.10.0 it is hidden altogether.
Params dot_general_printer(const Eqn& eqn, const JaxProfile& profile) {
  if (!profile.has(JaxFeature::kDotGeneralPrintRule)) {
    Params printed = versioned_params(eqn, profile, {{"precision"}, {"preferred_element_type"}});
    printed.emplace_back("dimension_numbers", dimension_numbers_for_print(eqn.params, false));
    std::sort(printed.begin(), printed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    return printed;
  }
  Params printed;
  for (const auto& [key, value] : eqn.params) {
    if (value.is_none()) continue;
    if (key == "dimension_numbers") {
      printed.emplace_back(key, dimension_numbers_for_print(eqn.params, true));
    } else if (key == "out_sharding") {
      if (profile.has(JaxFeature::kDotGeneralHidesOutSharding) || !profile.has(JaxFeature::kDotGeneralOutTypeParam))
        continue;
      printed.emplace_back(!profile.has(JaxFeature::kDotGeneralOutShardingParam) ? "out_type" : "out_sharding", value);
    } else {
      printed.emplace_back(key, value);
    }
  }
  std::sort(printed.begin(), printed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return printed;
}

// ---- kernel -------------------------------------------------------------------------------

// An operand seen as [batch, rows, cols] with element strides: lhs as [B, M, K], rhs as [B, K, N].
template <typename T>
struct MatrixView {
  const T* data = nullptr;
  int64_t batch_stride = 0;
  int64_t row_stride = 0;
  int64_t col_stride = 0;
};

// The size and stride of dims walked as one index, or nullopt when they are not evenly strided.
std::optional<std::pair<int64_t, int64_t>> collapse(const Shape& shape, const std::vector<int64_t>& strides,
                                                    const std::vector<int64_t>& dims) {
  int64_t size = 1;
  int64_t stride = 0;
  bool seen = false;
  for (const int64_t d : dims) {
    const auto dim = static_cast<std::size_t>(d);
    size *= shape[dim];
    if (shape[dim] == 1) continue;
    if (seen && stride != strides[dim] * shape[dim]) return std::nullopt;
    stride = strides[dim];
    seen = true;
  }
  return std::make_pair(size, stride);
}

// Operand buffers converted to the compute type T (a no-op view when the dtype already is T), and
// transposed first when their dim groups cannot be walked with single strides.
template <typename T>
struct PreparedOperand {
  std::shared_ptr<const Buffer> buffer;  // keeps the viewed bytes alive
  // Not std::vector, which packs bool into bits.
  std::unique_ptr<T[]> converted;  // NOLINT(*-c-arrays)
  MatrixView<T> view;
};

// The dtype whose buffers already hold T, which the kernel then reads in place.
template <typename T>
constexpr std::optional<DType> native_dtype() {
  if constexpr (std::is_same_v<T, float>) {
    return DType::kFloat32;
  } else if constexpr (std::is_same_v<T, double>) {
    return DType::kFloat64;
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    return DType::kUInt64;
  } else {
    return std::nullopt;
  }
}

template <typename T>
T convert_element(auto value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value != decltype(value){};
  } else if constexpr (!std::is_floating_point_v<T> && std::is_floating_point_v<decltype(value)>) {
    // Integer results of floating-point operands (a preferred integer type) truncate like a cast.
    if (std::isnan(value)) return T{};
    using From = decltype(value);
    const From clamped = std::clamp(value, static_cast<From>(-9.2e18), static_cast<From>(9.2e18));
    return static_cast<T>(static_cast<int64_t>(clamped));
  } else {
    return static_cast<T>(value);
  }
}

template <typename T>
PreparedOperand<T> prepare(const BufferPtr& operand, const std::vector<int64_t>& batch,
                           const std::vector<int64_t>& rows, const std::vector<int64_t>& cols) {
  PreparedOperand<T> prepared;
  prepared.buffer = operand;
  std::vector<int64_t> strides = row_major_strides(operand->shape());
  auto batch_group = collapse(operand->shape(), strides, batch);
  auto row_group = collapse(operand->shape(), strides, rows);
  auto col_group = collapse(operand->shape(), strides, cols);
  if (!batch_group || !row_group || !col_group) {
    std::vector<int64_t> permutation = batch;
    permutation.insert(permutation.end(), rows.begin(), rows.end());
    permutation.insert(permutation.end(), cols.begin(), cols.end());
    prepared.buffer = transposed(*operand, permutation);
    const int64_t batch_size = product(sizes_of(operand->shape(), batch));
    const int64_t row_size = product(sizes_of(operand->shape(), rows));
    const int64_t col_size = product(sizes_of(operand->shape(), cols));
    batch_group = std::make_pair(batch_size, row_size * col_size);
    row_group = std::make_pair(row_size, col_size);
    col_group = std::make_pair(col_size, int64_t{1});
  }
  prepared.view.batch_stride = batch_group->second;
  prepared.view.row_stride = row_group->second;
  prepared.view.col_stride = col_group->second;
  const Buffer& source = *prepared.buffer;
  if (source.dtype() == native_dtype<T>()) {
    prepared.view.data = source.as<T>().data();
    return prepared;
  }
  const auto count = static_cast<std::size_t>(source.size());
  prepared.converted = std::make_unique<T[]>(count);  // NOLINT(*-c-arrays)
  visit_dtype(source.dtype(), [&](auto tag) {
    constexpr DType kDType = decltype(tag)::value;
    using Storage = typename DTypeTraits<kDType>::storage;
    const auto values = source.as<Storage>();
    for (std::size_t i = 0; i < count; ++i) prepared.converted[i] = convert_element<T>(load<kDType>(values[i]));
  });
  prepared.view.data = prepared.converted.get();
  return prepared;
}

struct GemmShape {
  int64_t batch;
  int64_t m;
  int64_t n;
  int64_t k;
};

// A dot with a vector operand (every free dimension of one side of size 1) is XLA's reduce(multiply): each output
// sums its k products in order, and the code generator contracts each multiply into the reduction's add, one
// fused multiply-add per term. Here out[j] = sum over k of x[k*x_stride] * b[k*row_stride + j*col_stride].
// The outputs advance together a block at a time (k outside, j inside), so a contiguous row vectorizes and a strided
// one (a matrix times a vector) keeps the block's cache lines while k moves along them.
template <typename T>
[[gnu::always_inline]] inline void fused_vector_rows_body(const T* x, int64_t x_stride, const T* b, int64_t row_stride,
                                                          int64_t col_stride, int64_t k, int64_t n, T* out) {
  constexpr int64_t kBlock = 256;
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t stop = std::min(n, start + kBlock);
    std::fill(out + start, out + stop, T{});
    for (int64_t kk = 0; kk < k; ++kk) {
      const T scale = x[kk * x_stride];
      const T* row = b + kk * row_stride;
      if (col_stride == 1) {
        for (int64_t j = start; j < stop; ++j) out[j] = std::fma(scale, row[j], out[j]);
      } else {
        for (int64_t j = start; j < stop; ++j) out[j] = std::fma(scale, row[j * col_stride], out[j]);
      }
    }
  }
}

// Batched dot products of two vectors (vmap of a vector dot): one chain of fused multiply-adds per batch element.
template <typename T>
[[gnu::always_inline]] inline void fused_vector_dots_body(const GemmShape& shape, const MatrixView<T>& lhs,
                                                          const MatrixView<T>& rhs, T* out) {
  for (int64_t bi = 0; bi < shape.batch; ++bi) {
    const T* x = lhs.data + bi * lhs.batch_stride;
    const T* y = rhs.data + bi * rhs.batch_stride;
    T total = T{};
    for (int64_t kk = 0; kk < shape.k; ++kk) total = std::fma(x[kk * lhs.col_stride], y[kk * rhs.row_stride], total);
    out[bi] = total;
  }
}

// The contraction when shape.m == 1 or shape.n == 1, in XLA's order (see fused_vector_rows_body). Inlined into
// the two copies below, one built for the FMA instruction set.
template <typename T>
[[gnu::always_inline]] inline void fused_vector_contraction_body(const GemmShape& shape, const MatrixView<T>& lhs,
                                                                 const MatrixView<T>& rhs, T* out) {
  if (shape.m == 1 && shape.n == 1) {
    fused_vector_dots_body(shape, lhs, rhs, out);
    return;
  }
  for (int64_t bi = 0; bi < shape.batch; ++bi) {
    const T* a = lhs.data + bi * lhs.batch_stride;
    const T* b = rhs.data + bi * rhs.batch_stride;
    T* c = out + bi * shape.m * shape.n;
    if (shape.m == 1) {
      fused_vector_rows_body(a, lhs.col_stride, b, rhs.row_stride, rhs.col_stride, shape.k, shape.n, c);
    } else {
      fused_vector_rows_body(b, rhs.row_stride, a, lhs.col_stride, lhs.row_stride, shape.k, shape.m, c);
    }
  }
}

template <typename T>
void fused_vector_contraction_portable(const GemmShape& shape, const MatrixView<T>& lhs, const MatrixView<T>& rhs,
                                       T* out) {
  fused_vector_contraction_body(shape, lhs, rhs, out);
}

#if SHARDSCOPE_HAS_FMA_TARGET
template <typename T>
SHARDSCOPE_FMA_LOOP void fused_vector_contraction_hardware(const GemmShape& shape, const MatrixView<T>& lhs,
                                                           const MatrixView<T>& rhs, T* out) {
  fused_vector_contraction_body(shape, lhs, rhs, out);
}
#endif

// Writes every element of out (which may be unfilled memory): no path reads out before writing it.
template <typename T>
void floating_contraction(const GemmShape& shape, const MatrixView<T>& lhs, const MatrixView<T>& rhs, T* out) {
  if (shape.m == 1 || shape.n == 1) {
#if SHARDSCOPE_HAS_FMA_TARGET
    if (has_fma_instructions()) {
      fused_vector_contraction_hardware(shape, lhs, rhs, out);
      return;
    }
#endif
    fused_vector_contraction_portable(shape, lhs, rhs, out);
    return;
  }
  for (int64_t bi = 0; bi < shape.batch; ++bi) {
    const T* a = lhs.data + bi * lhs.batch_stride;
    const T* b = rhs.data + bi * rhs.batch_stride;
    T* c = out + bi * shape.m * shape.n;
    gemm_assign(shape.m, shape.n, shape.k, a, lhs.row_stride, lhs.col_stride, b, rhs.row_stride, rhs.col_stride, c);
  }
}

// ---- integers and bool: exact, wrapping ------------------------------------------------------

template <typename T>
void exact_contraction(const GemmShape& shape, const MatrixView<T>& lhs, const MatrixView<T>& rhs, T* out) {
  for (int64_t bi = 0; bi < shape.batch; ++bi) {
    const T* a = lhs.data + bi * lhs.batch_stride;
    const T* b = rhs.data + bi * rhs.batch_stride;
    T* c = out + bi * shape.m * shape.n;
    for (int64_t i = 0; i < shape.m; ++i) {
      T* c_row = c + i * shape.n;
      for (int64_t kk = 0; kk < shape.k; ++kk) {
        const T scale = a[i * lhs.row_stride + kk * lhs.col_stride];
        const T* b_row = b + kk * rhs.row_stride;
        if constexpr (std::is_same_v<T, bool>) {
          if (!scale) continue;
          for (int64_t j = 0; j < shape.n; ++j) c_row[j] = c_row[j] || b_row[j * rhs.col_stride];
        } else {
          for (int64_t j = 0; j < shape.n; ++j) c_row[j] += scale * b_row[j * rhs.col_stride];
        }
      }
    }
  }
}

template <typename T>
BufferPtr contract(std::span<const BufferPtr> inputs, const Aval& out, const DotDims& dims) {
  const BufferPtr& lhs = inputs[0];
  const BufferPtr& rhs = inputs[1];
  const std::vector<int64_t> lhs_free = dot_free_dims(lhs->shape().size(), dims.lhs_contract, dims.lhs_batch);
  const std::vector<int64_t> rhs_free = dot_free_dims(rhs->shape().size(), dims.rhs_contract, dims.rhs_batch);
  const GemmShape shape{product(sizes_of(lhs->shape(), dims.lhs_batch)), product(sizes_of(lhs->shape(), lhs_free)),
                        product(sizes_of(rhs->shape(), rhs_free)), product(sizes_of(lhs->shape(), dims.lhs_contract))};
  const auto count = static_cast<std::size_t>(shape.batch * shape.m * shape.n);
  // The floating-point paths write every element, so their result starts unfilled (a large one then reuses
  // pooled pages instead of faulting in and zeroing fresh ones); the exact ones accumulate into zeros.
  const bool writes_all = std::is_floating_point_v<T> && count != 0 && shape.k > 0;
  auto buffer = writes_all ? std::make_shared<Buffer>(out.dtype, out.shape, Buffer::Uninitialized{})
                           : new_buffer(out.dtype, out.shape);
  // Results of the compute type's own dtype are written in place; others go through a scratch array.
  const bool in_place = out.dtype == native_dtype<T>();
  std::unique_ptr<T[]> scratch;  // NOLINT(*-c-arrays)
  if (!in_place) {
    scratch = writes_all ? std::make_unique_for_overwrite<T[]>(count)  // NOLINT(*-c-arrays)
                         : std::make_unique<T[]>(count);               // zeroed; NOLINT(*-c-arrays)
  }
  T* result = in_place ? buffer->as_mutable<T>().data() : scratch.get();
  if (count != 0 && shape.k > 0) {
    const PreparedOperand<T> a = prepare<T>(lhs, dims.lhs_batch, lhs_free, dims.lhs_contract);
    const PreparedOperand<T> b = prepare<T>(rhs, dims.rhs_batch, dims.rhs_contract, rhs_free);
    if constexpr (std::is_floating_point_v<T>) {
      floating_contraction(shape, a.view, b.view, result);
    } else {
      exact_contraction(shape, a.view, b.view, result);
    }
  }
  if (in_place) return buffer;
  visit_dtype(out.dtype, [&](auto tag) {
    constexpr DType kDType = decltype(tag)::value;
    using Storage = typename DTypeTraits<kDType>::storage;
    using Compute = typename DTypeTraits<kDType>::compute;
    auto values = buffer->as_mutable<Storage>();
    for (std::size_t i = 0; i < count; ++i) values[i] = store<kDType>(convert_element<Compute>(result[i]));
  });
  return buffer;
}

BufferPtr dot_general_kernel(std::span<const BufferPtr> inputs, const Aval& out, const Params& params) {
  const DotDims dims = dot_dims(params);
  const DType lhs = inputs[0]->dtype();
  const DType rhs = inputs[1]->dtype();
  // XLA's CPU backend computes half-precision dots in float32 and rounds the result once.
  if (lhs == DType::kFloat64 || rhs == DType::kFloat64 || out.dtype == DType::kFloat64) {
    return contract<double>(inputs, out, dims);
  }
  if (is_floating(lhs) || is_floating(rhs) || is_floating(out.dtype)) return contract<float>(inputs, out, dims);
  if (out.dtype == DType::kBool) return contract<bool>(inputs, out, dims);
  return contract<uint64_t>(inputs, out, dims);
}

}  // namespace

void register_dot_general_primitive() {
  register_single_result("dot_general", dot_general_rule, dot_general_kernel, dot_general_printer);
}

}  // namespace structural
std::vector<int64_t> dot_free_dims(std::size_t rank, const std::vector<int64_t>& contract,
                                   const std::vector<int64_t>& batch) {
  std::vector<int64_t> dims;
  for (std::size_t d = 0; d < rank; ++d) {
    const auto dim = static_cast<int64_t>(d);
    if (std::find(contract.begin(), contract.end(), dim) == contract.end() &&
        std::find(batch.begin(), batch.end(), dim) == batch.end()) {
      dims.push_back(dim);
    }
  }
  return dims;
}

}  // namespace shardscope
