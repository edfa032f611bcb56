// Shared machinery of the structural, reduction and contraction primitives (internal to core/ops).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "array/buffer.h"
#include "base/checked_math.h"
#include "compat/jax_version.h"
#include "ir/primitive.h"
#include "ops/windowed.h"

namespace shardscope::structural {

// Families registered by register_structural_primitives(), one per source file.
void register_reshaping_primitives();
void register_stacking_primitives();
void register_slicing_primitives();
void register_gather_primitive();
void register_scatter_primitives();
void register_sort_primitives();
void register_reduction_primitives();
void register_dot_general_primitive();
void register_convolution_primitive();
void register_windowed_primitives();

// ---- params -------------------------------------------------------------------------------

[[nodiscard]] int64_t int_param(const Params& params, const std::string& key);
[[nodiscard]] std::vector<int64_t> ints_param(const Params& params, const std::string& key);
// None or absent gives nullopt.
[[nodiscard]] std::optional<std::vector<int64_t>> optional_ints_param(const Params& params, const std::string& key);
[[nodiscard]] bool bool_param(const Params& params, const std::string& key, bool fallback);
[[nodiscard]] DType dtype_param(const Params& params, const std::string& key);
// None or absent gives nullopt.
[[nodiscard]] std::optional<DType> optional_dtype_param(const Params& params, const std::string& key);
// A tuple of tuples of ints, e.g. padding_config or one half of dimension_numbers.
[[nodiscard]] std::vector<std::vector<int64_t>> int_groups(const ParamValue& value, const std::string& what);

// ---- Python-style text for error messages ---------------------------------------------------

[[nodiscard]] std::string int_tuple(const std::vector<int64_t>& values);  // "(1, 2)", "(3,)"
// The operands' shapes as concatenate's and stack's errors list them: "(2, 3), (4,)".
[[nodiscard]] std::string shapes_text(std::span<const Aval> avals);
using shardscope::check_shapelike;  // base/checked_math.h
// str(ShapedArray) in the newest JAX: "float32[3,4]", with "~" in front of weak types.
[[nodiscard]] std::string aval_str(const Aval& aval);

// ---- avals ----------------------------------------------------------------------------------

// An output aval that keeps `like`'s memory space and varying axes; sharding dims start unsharded
// (empty lists) when `like` carries sharding in its type, and absent otherwise.
[[nodiscard]] Aval derived_aval(const Aval& like, Shape shape, DType dtype, bool weak_type);
// dim_axes of `like` rearranged: entry i of the result is like.dim_axes[source_dims[i]], or
// unsharded where source_dims[i] is negative. No-op when `like` has no sharding in its type.
void map_dim_axes(Aval& out, const Aval& like, const std::vector<int64_t>& source_dims);
// A NamedSharding in params[key] (out_sharding=, sharding=) decides the output's sharding in types.
void apply_sharding_param(Aval& out, const Params& params, const std::string& key);
// The varying axes of several operands, first-seen order.
[[nodiscard]] std::vector<std::string> union_varying(std::span<const Aval> avals);

// ---- printing -------------------------------------------------------------------------------

// The releases that changed what these primitives print are rows of the JaxFeature table
// (core/compat/jax_version.cpp).

// One parameter as JAX prints it: present from `since` on, `fallback` when the equation lacks it.
struct PrintedParam {
  std::string key;
  std::optional<JaxFeature> since = std::nullopt;  // absent: printed in every version
  ParamValue fallback = ParamValue::None{};
};
// The params a profile's JAX had, sorted by key as JAX's default printer does.
[[nodiscard]] Params versioned_params(const Eqn& eqn, const JaxProfile& profile,
                                      const std::vector<PrintedParam>& specs);
[[nodiscard]] std::function<Params(const Eqn&, const JaxProfile&)> versioned_printer(std::vector<PrintedParam> specs);

// ---- registration ---------------------------------------------------------------------------

using ShapeRule = std::function<Aval(std::span<const Aval>, const Params&)>;
using Kernel = std::function<BufferPtr(std::span<const BufferPtr>, const Aval& out, const Params&)>;

// A single-result primitive whose impl re-derives the output aval from the buffers actually given
// (local shards), then runs `kernel`.
void register_single_result(const std::string& name, const ShapeRule& rule, const Kernel& kernel,
                            std::function<Params(const Eqn&, const JaxProfile&)> printer);
// Avals of the buffers themselves (weak types copied from `avals` when they line up).
[[nodiscard]] std::vector<Aval> buffer_avals(std::span<const BufferPtr> inputs, std::span<const Aval> avals);
void check_arity(const std::string& name, std::span<const Aval> avals, std::size_t expected);

// ---- windows ---------------------------------------------------------------------------------

// Calls visit(output flat index, source flat index or -1) for every window tap of every output, outputs and taps in
// row-major order: -1 marks a tap on padding or between dilated operand elements. The windowed reductions and the
// convolution kernel walk their windows with it.
void for_each_tap(const Shape& in, const Shape& out, const WindowParams& window,
                  const std::function<void(int64_t, int64_t)>& visit);

// ---- matrix multiplication ------------------------------------------------------------------

// c[m x n] (row-major) += a . b, where a(i, l) = a[i*a_rows + l*a_cols] and b(l, j) = b[l*b_rows + j*b_cols]
// for l < k: cache-blocked, packed, SIMD when the CPU has it.
void gemm_accumulate(int64_t m, int64_t n, int64_t k, const float* a, int64_t a_rows, int64_t a_cols, const float* b,
                     int64_t b_rows, int64_t b_cols, float* c);
void gemm_accumulate(int64_t m, int64_t n, int64_t k, const double* a, int64_t a_rows, int64_t a_cols, const double* b,
                     int64_t b_rows, int64_t b_cols, double* c);
// c = a . b: c's prior contents (possibly an unfilled buffer) are never read. For k within one packed panel (256)
// on a processor with FMA, each element is fma(a_k, b_k, ...) over k in order, as XLA:CPU rounds a dot.
void gemm_assign(int64_t m, int64_t n, int64_t k, const float* a, int64_t a_rows, int64_t a_cols, const float* b,
                 int64_t b_rows, int64_t b_cols, float* c);
void gemm_assign(int64_t m, int64_t n, int64_t k, const double* a, int64_t a_rows, int64_t a_cols, const double* b,
                 int64_t b_rows, int64_t b_cols, double* c);

// ---- strided copies -------------------------------------------------------------------------

[[nodiscard]] std::vector<int64_t> row_major_strides(const Shape& shape);
// dst[i . dst_strides] = src[i . src_strides] for every index i of `shape`; strides count elements
// and may be zero (broadcast) or negative (reversal).
void strided_copy(std::size_t element_size, const Shape& shape, std::byte* dst, std::span<const int64_t> dst_strides,
                  const std::byte* src, std::span<const int64_t> src_strides);
// A new zero-filled buffer that kernels fill before sharing it.
[[nodiscard]] std::shared_ptr<Buffer> new_buffer(DType dtype, const Shape& shape);
// operand with its dimensions permuted: result dim i is operand dim permutation[i].
[[nodiscard]] std::shared_ptr<Buffer> transposed(const Buffer& operand, const std::vector<int64_t>& permutation);
// Reads an integer scalar buffer of any dtype (dynamic_slice start indices).
[[nodiscard]] int64_t scalar_index(const Buffer& buffer, int64_t flat_index = 0);

}  // namespace shardscope::structural
