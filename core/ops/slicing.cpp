// Slicing primitives: slice, dynamic_slice and dynamic_update_slice.
#include <algorithm>
#include <set>

#include "base/error.h"
#include "ops/structural_internal.h"

namespace shardscope::structural {
namespace {

// What _get_sharding_for_varying_out_shape keeps: the operand's sharding, or none for scalars and
// all-ones shapes (the divisibility error needs mesh sizes and is left to the sharding rules).
void keep_operand_sharding(Aval& out, const Aval& operand) {
  if (operand.dim_axes.empty()) return;
  if (std::all_of(out.shape.begin(), out.shape.end(), [](int64_t d) { return d == 1; })) return;
  out.dim_axes = operand.dim_axes;
}

std::string index_avals_text(std::span<const Aval> indices) {
  std::vector<std::string> items;
  for (const Aval& index : indices) items.push_back("ShapedArray(" + index.str_short(false) + ")");
  return python_list(items);
}

// ---- slice --------------------------------------------------------------------------------

Aval slice_rule(std::span<const Aval> avals, const Params& params) {
  check_arity("slice", avals, 1);
  const Aval& operand = avals[0];
  const std::vector<int64_t> start = ints_param(params, "start_indices");
  const std::vector<int64_t> limit = ints_param(params, "limit_indices");
  const auto strides = optional_ints_param(params, "strides");
  check_shapelike("slice", "start_indices", start);
  check_shapelike("slice", "limit_indices", limit);
  const std::size_t rank = operand.rank();
  if (start.size() != rank) {
    throw type_error(
        "slice start_indices must have length equal to the number of dimensions of the operand, got indices " +
        int_tuple(start) + " for operand shape " + int_tuple(operand.shape) + ".");
  }
  if (limit.size() != start.size()) {
    throw type_error("slice limit_indices must have the same length as start_indices, got start_indices " +
                     int_tuple(start) + " and limit_indices " + int_tuple(limit) + ".");
  }
  for (std::size_t d = 0; d < rank; ++d) {
    if (limit[d] > operand.shape[d]) {
      throw type_error("slice limit_indices must be less than or equal to operand shape, got limit_indices " +
                       int_tuple(limit) + " for operand shape " + int_tuple(operand.shape) + ".");
    }
  }
  for (std::size_t d = 0; d < rank; ++d) {
    if (limit[d] < start[d]) {
      throw type_error("slice limit_indices must be greater than or equal to start_indices, got start_indices " +
                       int_tuple(start) + " and limit_indices " + int_tuple(limit) + ".");
    }
  }
  Shape shape(rank);
  for (std::size_t d = 0; d < rank; ++d) shape[d] = limit[d] - start[d];
  if (strides && std::any_of(strides->begin(), strides->end(), [](int64_t s) { return s != 1; })) {
    check_shapelike("slice", "strides", *strides);
    if (strides->size() != rank) {
      throw type_error("slice strides must have length equal to the number of dimensions of the operand, got strides " +
                       int_tuple(*strides) + " for operand shape " + int_tuple(operand.shape) + ".");
    }
    if (std::any_of(strides->begin(), strides->end(), [](int64_t s) { return s <= 0; })) {
      throw type_error("slice strides must be positive, got " + int_tuple(*strides));
    }
    for (std::size_t d = 0; d < rank; ++d) shape[d] = shape[d] == 0 ? 0 : (shape[d] - 1) / (*strides)[d] + 1;
  }
  Aval out = derived_aval(operand, shape, operand.dtype, operand.weak_type);
  keep_operand_sharding(out, operand);
  return out;
}

BufferPtr slice_kernel(std::span<const BufferPtr> inputs, const Aval& out, const Params& params) {
  const Buffer& operand = *inputs[0];
  const std::vector<int64_t> start = ints_param(params, "start_indices");
  const auto strides = optional_ints_param(params, "strides");
  const std::vector<int64_t> operand_strides = row_major_strides(operand.shape());
  std::vector<int64_t> src_strides = operand_strides;
  int64_t offset = 0;
  for (std::size_t d = 0; d < start.size(); ++d) {
    offset += start[d] * operand_strides[d];
    if (strides) src_strides[d] *= (*strides)[d];
  }
  auto result = new_buffer(out.dtype, out.shape);
  if (product(out.shape) == 0) return result;
  const std::size_t element_size = dtype_size(out.dtype);
  strided_copy(element_size, out.shape, result->mutable_bytes().data(), row_major_strides(out.shape),
               operand.bytes().data() + offset * static_cast<int64_t>(element_size), src_strides);
  return result;
}

// ---- dynamic_slice / dynamic_update_slice ---------------------------------------------------

void check_index_dtypes(const std::string& name, const std::string& got, std::span<const Aval> indices) {
  for (const Aval& index : indices) {
    if (index.dtype != indices[0].dtype || !is_integral(index.dtype)) {
      std::vector<std::string> names;
      for (const Aval& i : indices) names.emplace_back(dtype_name(i.dtype));
      std::string message = "index arguments to " + name;
      message += " must be integers of the same type, " + got + " " + join(names, ", ");
      throw type_error(message);
    }
  }
}

Aval dynamic_slice_rule(std::span<const Aval> avals, const Params& params) {
  if (avals.empty()) throw type_error("dynamic_slice takes an operand and start indices");
  const Aval& operand = avals[0];
  const std::span<const Aval> indices = avals.subspan(1);
  const Shape sizes = ints_param(params, "slice_sizes");
  if (indices.size() != operand.rank()) {
    throw value_error("Length of slice indices must match number of operand dimensions (" +
                      std::to_string(indices.size()) + " vs " + int_tuple(operand.shape) + ")");
  }
  if (sizes.size() != operand.rank()) {
    throw type_error(
        "slice slice_sizes must have length equal to the number of dimensions of the operand, got "
        "slice_sizes " +
        int_tuple(sizes) + " for operand shape " + int_tuple(operand.shape) + ".");
  }
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] > operand.shape[d]) {
      throw type_error("slice slice_sizes must be less than or equal to operand shape, got slice_sizes " +
                       int_tuple(sizes) + " for operand shape " + int_tuple(operand.shape) + ".");
    }
  }
  if (std::any_of(sizes.begin(), sizes.end(), [](int64_t s) { return s < 0; })) {
    throw type_error("slice slice_sizes must be greater than or equal to zero, got slice_sizes of " + int_tuple(sizes) +
                     ".");
  }
  if (std::any_of(indices.begin(), indices.end(), [](const Aval& i) { return i.rank() != 0; })) {
    throw type_error("start_indices arguments to dynamic_slice must be scalars,  got indices " +
                     index_avals_text(indices));
  }
  check_index_dtypes("dynamic_slice", "got:", indices);
  Aval out = derived_aval(operand, sizes, operand.dtype, operand.weak_type);
  out.varying = union_varying(avals);
  keep_operand_sharding(out, operand);
  return out;
}

// XLA clamps dynamic start indices so the whole window stays inside the operand.
std::vector<int64_t> clamped_starts(std::span<const BufferPtr> index_buffers, const Shape& operand_shape,
                                    const Shape& window) {
  std::vector<int64_t> starts(operand_shape.size());
  for (std::size_t d = 0; d < operand_shape.size(); ++d) {
    starts[d] = std::clamp<int64_t>(scalar_index(*index_buffers[d]), 0, operand_shape[d] - window[d]);
  }
  return starts;
}

BufferPtr dynamic_slice_kernel(std::span<const BufferPtr> inputs, const Aval& out, const Params& /*params*/) {
  const Buffer& operand = *inputs[0];
  const std::vector<int64_t> starts = clamped_starts(inputs.subspan(1), operand.shape(), out.shape);
  const std::vector<int64_t> operand_strides = row_major_strides(operand.shape());
  int64_t offset = 0;
  for (std::size_t d = 0; d < starts.size(); ++d) offset += starts[d] * operand_strides[d];
  auto result = new_buffer(out.dtype, out.shape);
  if (product(out.shape) == 0) return result;
  const std::size_t element_size = dtype_size(out.dtype);
  strided_copy(element_size, out.shape, result->mutable_bytes().data(), row_major_strides(out.shape),
               operand.bytes().data() + offset * static_cast<int64_t>(element_size), operand_strides);
  return result;
}

Aval dynamic_update_slice_rule(std::span<const Aval> avals, const Params& /*params*/) {
  if (avals.size() < 2) throw type_error("dynamic_update_slice takes an operand, an update and start indices");
  const Aval& operand = avals[0];
  const Aval& update = avals[1];
  const std::span<const Aval> indices = avals.subspan(2);
  if (operand.rank() != update.rank()) {
    throw type_error("dynamic_update_slice update must have the same rank as operand, got update shape " +
                     int_tuple(update.shape) + " for operand shape " + int_tuple(operand.shape) + ".");
  }
  if (operand.rank() != indices.size()) {
    throw type_error("dynamic_update_slice start_indices must have length equal to the rank of operand, got indices " +
                     index_avals_text(indices) + " for operand shape " + int_tuple(operand.shape) + ".");
  }
  for (std::size_t d = 0; d < operand.rank(); ++d) {
    if (update.shape[d] > operand.shape[d]) {
      throw type_error("dynamic_update_slice update shape must be smaller than operand shape, got update shape " +
                       int_tuple(update.shape) + " for operand shape " + int_tuple(operand.shape) + ".");
    }
  }
  if (std::any_of(indices.begin(), indices.end(), [](const Aval& i) { return i.rank() != 0; })) {
    throw type_error("start_indices arguments to dynamic_update_slice must be scalars, got indices " +
                     index_avals_text(indices));
  }
  if (operand.dtype != update.dtype) {
    throw type_error("lax.dynamic_update_slice requires arguments to have the same dtypes, got " +
                     std::string(dtype_name(operand.dtype)) + ", " + std::string(dtype_name(update.dtype)) + ".");
  }
  check_index_dtypes("dynamic_update_slice", "got", indices);
  const bool weak = std::all_of(avals.begin(), avals.end(), [](const Aval& a) { return a.weak_type; });
  Aval out = derived_aval(operand, operand.shape, operand.dtype, weak);
  out.varying = union_varying(avals);
  out.dim_axes = operand.dim_axes;
  return out;
}

BufferPtr dynamic_update_slice_kernel(std::span<const BufferPtr> inputs, const Aval& out, const Params& /*params*/) {
  const Buffer& operand = *inputs[0];
  const Buffer& update = *inputs[1];
  const std::vector<int64_t> starts = clamped_starts(inputs.subspan(2), operand.shape(), update.shape());
  auto result = std::make_shared<Buffer>(out.dtype, out.shape,
                                         std::vector<std::byte>(operand.bytes().begin(), operand.bytes().end()));
  if (product(update.shape()) == 0) return result;
  const std::vector<int64_t> out_strides = row_major_strides(out.shape);
  int64_t offset = 0;
  for (std::size_t d = 0; d < starts.size(); ++d) offset += starts[d] * out_strides[d];
  const std::size_t element_size = dtype_size(out.dtype);
  strided_copy(element_size, update.shape(),
               result->mutable_bytes().data() + offset * static_cast<int64_t>(element_size), out_strides,
               update.bytes().data(), row_major_strides(update.shape()));
  return result;
}

}  // namespace

void register_slicing_primitives() {
  register_single_result("slice", slice_rule, slice_kernel,
                         versioned_printer({{"limit_indices"}, {"start_indices"}, {"strides"}}));
  register_single_result("dynamic_slice", dynamic_slice_rule, dynamic_slice_kernel,
                         versioned_printer({{"slice_sizes"}}));
  register_single_result("dynamic_update_slice", dynamic_update_slice_rule, dynamic_update_slice_kernel,
                         versioned_printer({}));
}

}  // namespace shardscope::structural
