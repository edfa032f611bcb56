// Layout primitives: broadcast_in_dim, reshape, transpose, squeeze, concatenate, split, pad, rev, iota.
#include <algorithm>
#include <numeric>
#include <set>

#include "base/dtype_dispatch.h"
#include "base/error.h"
#include "ops/structural_internal.h"

namespace shardscope::structural {
namespace {

BufferPtr copy_with_shape(const Buffer& operand, const Shape& shape) {
  std::vector<std::byte> bytes(operand.bytes().begin(), operand.bytes().end());
  return std::make_shared<const Buffer>(operand.dtype(), shape, std::move(bytes));
}

// ---- broadcast_in_dim ---------------------------------------------------------------------

Aval broadcast_in_dim_rule(std::span<const Aval> avals, const Params& params) {
  check_arity("broadcast_in_dim", avals, 1);
  const Aval& operand = avals[0];
  const Shape shape = ints_param(params, "shape");
  const std::vector<int64_t> dims = ints_param(params, "broadcast_dimensions");
  check_shapelike("broadcast_in_dim", "shape", shape);
  check_shapelike("broadcast_in_dim", "broadcast_dimensions", dims);
  const std::size_t ndim = operand.rank();
  if (ndim != dims.size()) {
    throw type_error(
        "broadcast_in_dim broadcast_dimensions must have length equal to operand ndim; got broadcast_dimensions " +
        int_tuple(dims) + " for operand ndim " + std::to_string(ndim) + ".");
  }
  if (shape.size() < ndim) {
    throw type_error(
        "broadcast_in_dim target broadcast shape must have equal or higher rank to the operand shape; got operand "
        "ndim " +
        std::to_string(ndim) + " and target broadcast ndim " + std::to_string(shape.size()) + ".");
  }
  if (std::any_of(dims.begin(), dims.end(), [&](int64_t d) { return d >= static_cast<int64_t>(shape.size()); })) {
    throw type_error("broadcast_in_dim broadcast_dimensions must be a subset of output dimensions, got " +
                     int_tuple(dims) + " for operand ndim " + std::to_string(ndim) + " and shape " + int_tuple(shape) +
                     ".");
  }
  for (std::size_t i = 0; i < ndim; ++i) {
    const int64_t size = operand.shape[i];
    if (size != 1 && size != shape[static_cast<std::size_t>(dims[i])]) {
      throw type_error(
          "broadcast_in_dim operand dimension sizes must either be 1, or be equal to their corresponding dimensions "
          "in the target broadcast shape; got operand of shape " +
          int_tuple(operand.shape) + ", target broadcast shape " + int_tuple(shape) + ", broadcast_dimensions " +
          int_tuple(dims) + " ");
    }
  }
  if (std::set<int64_t>(dims.begin(), dims.end()).size() != dims.size()) {
    throw type_error("broadcast_in_dim broadcast_dimensions must not contain duplicates, got broadcast_dimensions " +
                     int_tuple(dims));
  }
  Aval out = derived_aval(operand, shape, operand.dtype, operand.weak_type);
  std::vector<int64_t> sources(shape.size(), -1);
  for (std::size_t i = 0; i < ndim; ++i) sources[static_cast<std::size_t>(dims[i])] = static_cast<int64_t>(i);
  map_dim_axes(out, operand, sources);
  apply_sharding_param(out, params, "sharding");
  return out;
}

BufferPtr broadcast_in_dim_kernel(std::span<const BufferPtr> inputs, const Aval& out, const Params& params) {
  const Buffer& operand = *inputs[0];
  const std::vector<int64_t> dims = ints_param(params, "broadcast_dimensions");
  const std::vector<int64_t> operand_strides = row_major_strides(operand.shape());
  std::vector<int64_t> src_strides(out.rank(), 0);
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (operand.shape()[i] != 1) src_strides[static_cast<std::size_t>(dims[i])] = operand_strides[i];
  }
  auto result = new_buffer(out.dtype, out.shape);
  strided_copy(dtype_size(out.dtype), out.shape, result->mutable_bytes().data(), row_major_strides(out.shape),
               operand.bytes().data(), src_strides);
  return result;
}

// JAX hides the shape and sharding (implied by the binder's type) and empty broadcast_dimensions
// from 0.9.1; before, every param printed.
Params broadcast_in_dim_printer(const Eqn& eqn, const JaxProfile& profile) {
  if (!profile.has(JaxFeature::kBroadcastInDimPrintRule)) {
    return versioned_params(
        eqn, profile,
        {{"broadcast_dimensions"}, {"shape"}, {"sharding", JaxFeature::kShapeOpShardingParam, ParamValue::None{}}});
  }
  Params printed;
  const ParamValue* dims = find_param(eqn.params, "broadcast_dimensions");
  const auto* tuple = dims != nullptr ? dims->get_if<ParamValue::Tuple>() : nullptr;
  if (dims != nullptr && (tuple == nullptr || !tuple->items.empty()))
    printed.emplace_back("broadcast_dimensions", *dims);
  return printed;
}

// ---- reshape ------------------------------------------------------------------------------

Aval reshape_rule(std::span<const Aval> avals, const Params& params) {
  check_arity("reshape", avals, 1);
  const Aval& operand = avals[0];
  const Shape new_sizes = ints_param(params, "new_sizes");
  const auto dimensions = optional_ints_param(params, "dimensions");
  if (std::any_of(new_sizes.begin(), new_sizes.end(), [](int64_t d) { return d < 0; })) {
    throw type_error("reshape new_sizes must all be positive, got " + int_tuple(new_sizes) + ".");
  }
  // JAX 0.10 dropped this check from the shape rule (the mismatch then fails at lowering); the
  // message is the one every earlier release raised.
  const int64_t operand_size = product(operand.shape);
  const int64_t new_size = product(new_sizes);
  if (operand_size != new_size) {
    throw type_error("reshape total size must be unchanged, got new_sizes " + int_tuple(new_sizes) +
                     " (of total size " + std::to_string(new_size) + ") for shape " + int_tuple(operand.shape) +
                     " (of total size " + std::to_string(operand_size) + ").");
  }
  if (dimensions) {
    std::vector<int64_t> sorted = *dimensions;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    std::vector<int64_t> expected(operand.rank());
    std::iota(expected.begin(), expected.end(), 0);
    if (sorted != expected) {
      throw type_error("reshape dimensions must be a permutation of operand dimensions, got dimensions " +
                       int_tuple(*dimensions) + " for shape " + int_tuple(operand.shape) + ".");
    }
  }
  Aval out = derived_aval(operand, new_sizes, operand.dtype, operand.weak_type);
  apply_sharding_param(out, params, "sharding");
  return out;
}

BufferPtr reshape_kernel(std::span<const BufferPtr> inputs, const Aval& out, const Params& params) {
  const Buffer& operand = *inputs[0];
  if (const auto dimensions = optional_ints_param(params, "dimensions")) {
    const auto permuted = transposed(operand, *dimensions);
    return copy_with_shape(*permuted, out.shape);
  }
  return copy_with_shape(operand, out.shape);
}

// ---- transpose ----------------------------------------------------------------------------

Aval transpose_rule(std::span<const Aval> avals, const Params& params) {
  check_arity("transpose", avals, 1);
  const Aval& operand = avals[0];
  const std::vector<int64_t> permutation = ints_param(params, "permutation");
  std::vector<int64_t> sorted = permutation;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> expected(operand.rank());
  std::iota(expected.begin(), expected.end(), 0);
  if (sorted != expected) {
    throw type_error("transpose permutation isn't a permutation of operand dimensions, got permutation " +
                     int_tuple(permutation) + " for operand shape " + int_tuple(operand.shape) + ".");
  }
  Shape shape;
  for (const int64_t source : permutation) shape.push_back(operand.shape[static_cast<std::size_t>(source)]);
  Aval out = derived_aval(operand, shape, operand.dtype, operand.weak_type);
  map_dim_axes(out, operand, permutation);
  return out;
}

BufferPtr transpose_kernel(std::span<const BufferPtr> inputs, const Aval& /*out*/, const Params& params) {
  return transposed(*inputs[0], ints_param(params, "permutation"));
}

// ---- squeeze ------------------------------------------------------------------------------

Aval squeeze_rule(std::span<const Aval> avals, const Params& params) {
  check_arity("squeeze", avals, 1);
  const Aval& operand = avals[0];
  const std::vector<int64_t> dimensions = ints_param(params, "dimensions");
  const std::set<int64_t> removed(dimensions.begin(), dimensions.end());
  if (removed.size() != dimensions.size()) {
    throw value_error("dimensions are not unique: " + int_tuple(dimensions));
  }
  const auto rank = static_cast<int64_t>(operand.rank());
  if (std::any_of(dimensions.begin(), dimensions.end(), [&](int64_t d) { return d < 0 || d >= rank; })) {
    throw value_error("dimensions outside range [0, ndim): " + int_tuple(dimensions));
  }
  for (const int64_t d : dimensions) {
    if (operand.shape[static_cast<std::size_t>(d)] != 1) {
      throw value_error("cannot select an axis to squeeze out which has size not equal to one, got shape=" +
                        int_tuple(operand.shape) + " and dimensions=" + int_tuple(dimensions));
    }
  }
  Shape shape;
  std::vector<int64_t> sources;
  for (int64_t d = 0; d < rank; ++d) {
    if (removed.contains(d)) continue;
    shape.push_back(operand.shape[static_cast<std::size_t>(d)]);
    sources.push_back(d);
  }
  Aval out = derived_aval(operand, shape, operand.dtype, operand.weak_type);
  map_dim_axes(out, operand, sources);
  return out;
}

BufferPtr squeeze_kernel(std::span<const BufferPtr> inputs, const Aval& out, const Params& /*params*/) {
  return copy_with_shape(*inputs[0], out.shape);
}

// ---- concatenate ----------------------------------------------------------------------------

Aval concatenate_rule(std::span<const Aval> avals, const Params& params) {
  const int64_t dimension = int_param(params, "dimension");
  if (avals.empty()) throw type_error("concatenate expects at least one operand, got 0.");
  const std::size_t rank = avals[0].rank();
  if (std::any_of(avals.begin(), avals.end(), [&](const Aval& a) { return a.rank() != rank; })) {
    throw type_error("Cannot concatenate arrays with different numbers of dimensions: got " + shapes_text(avals) + ".");
  }
  if (dimension < 0 || dimension >= static_cast<int64_t>(rank)) {
    throw type_error("concatenate dimension out of bounds: dimension " + std::to_string(dimension) + " for shapes " +
                     shapes_text(avals) + ".");
  }
  const auto axis = static_cast<std::size_t>(dimension);
  int64_t total = 0;
  for (const Aval& aval : avals) {
    for (std::size_t d = 0; d < rank; ++d) {
      if (d != axis && aval.shape[d] != avals[0].shape[d]) {
        throw type_error(
            "Cannot concatenate arrays with shapes that differ in dimensions other than the one being concatenated: "
            "concatenating along dimension " +
            std::to_string(dimension) + " for shapes " + shapes_text(avals) + ".");
      }
    }
    total += aval.shape[axis];
  }
  for (const Aval& aval : avals) {
    if (aval.dtype != avals[0].dtype) {
      std::vector<std::string> names;
      for (const Aval& a : avals) names.emplace_back(dtype_name(a.dtype));
      throw type_error("lax.concatenate requires arguments to have the same dtypes, got " + join(names, ", ") +
                       ". (Tip: jnp.concatenate is a similar function that does automatic type promotion on inputs).");
    }
  }
  Shape shape = avals[0].shape;
  shape[axis] = total;
  const bool weak = std::all_of(avals.begin(), avals.end(), [](const Aval& a) { return a.weak_type; });
  Aval out = derived_aval(avals[0], shape, avals[0].dtype, weak);
  out.varying = union_varying(avals);
  std::vector<int64_t> sources(rank);
  std::iota(sources.begin(), sources.end(), 0);
  map_dim_axes(out, avals[0], sources);
  return out;
}

BufferPtr concatenate_kernel(std::span<const BufferPtr> inputs, const Aval& out, const Params& params) {
  const auto axis = static_cast<std::size_t>(int_param(params, "dimension"));
  auto result = new_buffer(out.dtype, out.shape);
  const std::vector<int64_t> out_strides = row_major_strides(out.shape);
  const std::size_t element_size = dtype_size(out.dtype);
  int64_t offset = 0;
  for (const BufferPtr& input : inputs) {
    strided_copy(element_size, input->shape(),
                 result->mutable_bytes().data() + offset * out_strides[axis] * static_cast<int64_t>(element_size),
                 out_strides, input->bytes().data(), row_major_strides(input->shape()));
    offset += input->shape()[axis];
  }
  return result;
}

// ---- split (multiple results) ---------------------------------------------------------------

std::vector<Aval> split_rule(std::span<const Aval> avals, const Params& params) {
  check_arity("split", avals, 1);
  const Aval& operand = avals[0];
  const std::vector<int64_t> sizes = ints_param(params, "sizes");
  const int64_t axis = int_param(params, "axis");
  if (axis < 0 || axis >= static_cast<int64_t>(operand.rank())) {
    throw value_error("axis " + std::to_string(axis) + " is out of bounds for array of dimension " +
                      std::to_string(operand.rank()));
  }
  std::vector<std::string> size_texts;
  size_texts.reserve(sizes.size());
  for (const int64_t s : sizes) size_texts.push_back(std::to_string(s));
  if (std::any_of(sizes.begin(), sizes.end(), [](int64_t s) { return s < 0; })) {
    throw value_error("Sizes passed to split must be nonnegative, got " + python_list(size_texts));
  }
  const int64_t total = std::accumulate(sizes.begin(), sizes.end(), int64_t{0});
  const auto dim = static_cast<std::size_t>(axis);
  if (operand.shape[dim] != total) {
    std::vector<std::string> dims;
    for (const int64_t d : operand.shape) dims.push_back(std::to_string(d));
    throw value_error("Sum of sizes " + std::to_string(total) + " must be equal to dimension " + std::to_string(axis) +
                      " of the operand shape " + python_list(dims));
  }
  std::vector<Aval> outs;
  std::vector<int64_t> sources(operand.rank());
  std::iota(sources.begin(), sources.end(), 0);
  for (const int64_t size : sizes) {
    Shape shape = operand.shape;
    shape[dim] = size;
    Aval out = derived_aval(operand, shape, operand.dtype, operand.weak_type);
    map_dim_axes(out, operand, sources);
    outs.push_back(std::move(out));
  }
  return outs;
}

void register_split() {
  Primitive primitive;
  primitive.name = "split";
  primitive.multiple_results = true;
  primitive.abstract_eval = split_rule;
  primitive.impl = [](std::span<const BufferPtr> inputs, std::span<const Aval> avals, const Params& params) {
    const std::vector<Aval> outs = split_rule(buffer_avals(inputs, avals), params);
    const Buffer& operand = *inputs[0];
    const auto axis = static_cast<std::size_t>(int_param(params, "axis"));
    const std::vector<int64_t> operand_strides = row_major_strides(operand.shape());
    const std::size_t element_size = dtype_size(operand.dtype());
    std::vector<BufferPtr> results;
    int64_t offset = 0;
    for (const Aval& out : outs) {
      auto piece = new_buffer(out.dtype, out.shape);
      strided_copy(element_size, out.shape, piece->mutable_bytes().data(), row_major_strides(out.shape),
                   operand.bytes().data() + offset * operand_strides[axis] * static_cast<int64_t>(element_size),
                   operand_strides);
      offset += out.shape[axis];
      results.push_back(std::move(piece));
    }
    return results;
  };
  primitive.printed_params = versioned_printer({{"axis"}, {"sizes"}});
  register_primitive(std::move(primitive));
}

// ---- pad ----------------------------------------------------------------------------------

struct PadDim {
  int64_t low;
  int64_t high;
  int64_t interior;
};

std::vector<PadDim> padding_config(const Params& params) {
  std::vector<PadDim> config;
  for (const auto& group : int_groups(param(params, "padding_config"), "padding_config")) {
    if (group.size() != 3) throw type_error("padding_config entries must be (low, high, interior) triples");
    config.push_back({group[0], group[1], group[2]});
  }
  return config;
}

std::string padding_config_text(const std::vector<PadDim>& config) {
  std::vector<std::string> items;
  items.reserve(config.size());
  for (const PadDim& dim : config) items.push_back(int_tuple({dim.low, dim.high, dim.interior}));
  return python_tuple(items);
}

Aval pad_rule(std::span<const Aval> avals, const Params& params) {
  check_arity("pad", avals, 2);
  const Aval& operand = avals[0];
  const Aval& padding_value = avals[1];
  const std::vector<PadDim> config = padding_config(params);
  if (padding_value.rank() != 0) {
    throw value_error("padding_value must be a scalar; got np.shape(padding_value)=" + int_tuple(padding_value.shape));
  }
  if (config.size() != operand.rank()) {
    throw value_error("length of padding_config must equal the number of axes of operand, got padding_config " +
                      padding_config_text(config) + " for operand shape " + int_tuple(operand.shape));
  }
  if (std::any_of(config.begin(), config.end(), [](const PadDim& d) { return d.interior < 0; })) {
    throw value_error("interior padding in padding_config must be nonnegative, got padding_config " +
                      padding_config_text(config));
  }
  Shape shape;
  for (std::size_t d = 0; d < config.size(); ++d) {
    const int64_t size = operand.shape[d];
    const int64_t dilated = size == 0 ? 0 : 1 + (config[d].interior + 1) * (size - 1);
    shape.push_back(config[d].low + config[d].high + dilated);
  }
  if (std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d < 0; })) {
    throw value_error("Dimension size after padding is not at least 0, got result shape " + int_tuple(shape) +
                      ", for padding_config " + padding_config_text(config) + " and operand shape " +
                      int_tuple(operand.shape));
  }
  if (operand.dtype != padding_value.dtype) {
    throw type_error("pad operand and padding_value must be same dtype: got " + std::string(dtype_name(operand.dtype)) +
                     " and " + std::string(dtype_name(padding_value.dtype)) + ".");
  }
  Aval out = derived_aval(operand, shape, operand.dtype, operand.weak_type && padding_value.weak_type);
  out.varying = union_varying(avals);
  std::vector<int64_t> sources(operand.rank());
  std::iota(sources.begin(), sources.end(), 0);
  map_dim_axes(out, operand, sources);
  return out;
}

BufferPtr pad_kernel(std::span<const BufferPtr> inputs, const Aval& out, const Params& params) {
  const Buffer& operand = *inputs[0];
  const Buffer& padding_value = *inputs[1];
  const std::vector<PadDim> config = padding_config(params);
  auto result = new_buffer(out.dtype, out.shape);
  const std::size_t element_size = dtype_size(out.dtype);
  std::byte* out_bytes = result->mutable_bytes().data();
  const std::vector<int64_t> out_strides = row_major_strides(out.shape);
  strided_copy(element_size, out.shape, out_bytes, out_strides, padding_value.bytes().data(),
               std::vector<int64_t>(out.shape.size(), 0));
  // Negative low/high padding crops: copy only the operand elements that land inside the output.
  const std::vector<int64_t> operand_strides = row_major_strides(operand.shape());
  Shape copy_shape(config.size());
  std::vector<int64_t> dst_strides(config.size());
  int64_t dst_offset = 0;
  int64_t src_offset = 0;
  for (std::size_t d = 0; d < config.size(); ++d) {
    const int64_t step = config[d].interior + 1;
    const int64_t first = config[d].low >= 0 ? 0 : (-config[d].low + step - 1) / step;
    // Last operand index i with low + i*step <= out_size - 1.
    const int64_t room = out.shape[d] - 1 - config[d].low;
    const int64_t last = room < 0 ? -1 : std::min(operand.shape()[d] - 1, room / step);
    copy_shape[d] = std::max<int64_t>(0, last - first + 1);
    dst_strides[d] = out_strides[d] * step;
    dst_offset += (config[d].low + first * step) * out_strides[d];
    src_offset += first * operand_strides[d];
  }
  if (product(copy_shape) == 0) return result;
  const auto element_bytes = static_cast<int64_t>(element_size);
  strided_copy(element_size, copy_shape, out_bytes + dst_offset * element_bytes, dst_strides,
               operand.bytes().data() + src_offset * element_bytes, operand_strides);
  return result;
}

// ---- rev ----------------------------------------------------------------------------------

Aval rev_rule(std::span<const Aval> avals, const Params& params) {
  check_arity("rev", avals, 1);
  const Aval& operand = avals[0];
  const std::vector<int64_t> dimensions = ints_param(params, "dimensions");
  check_shapelike("rev", "dimensions", dimensions);
  if (std::set<int64_t>(dimensions.begin(), dimensions.end()).size() != dimensions.size()) {
    throw type_error("rev dimensions must be unique, got " + int_tuple(dimensions) + ".");
  }
  if (!dimensions.empty() &&
      *std::max_element(dimensions.begin(), dimensions.end()) >= static_cast<int64_t>(operand.rank())) {
    throw type_error("rev dimensions must all be less than operand ndim, got dimensions " + int_tuple(dimensions) +
                     " for operand ndim " + std::to_string(operand.rank()) + ".");
  }
  Aval out = derived_aval(operand, operand.shape, operand.dtype, operand.weak_type);
  out.dim_axes = operand.dim_axes;
  return out;
}

BufferPtr rev_kernel(std::span<const BufferPtr> inputs, const Aval& out, const Params& params) {
  const Buffer& operand = *inputs[0];
  std::vector<int64_t> src_strides = row_major_strides(operand.shape());
  int64_t src_offset = 0;
  for (const int64_t d : ints_param(params, "dimensions")) {
    const auto dim = static_cast<std::size_t>(d);
    src_offset += (operand.shape()[dim] - 1) * src_strides[dim];
    src_strides[dim] = -src_strides[dim];
  }
  auto result = new_buffer(out.dtype, out.shape);
  if (product(out.shape) == 0) return result;
  const auto element_size = dtype_size(out.dtype);
  strided_copy(element_size, out.shape, result->mutable_bytes().data(), row_major_strides(out.shape),
               operand.bytes().data() + src_offset * static_cast<int64_t>(element_size), src_strides);
  return result;
}

// ---- iota ---------------------------------------------------------------------------------

Aval iota_rule(std::span<const Aval> avals, const Params& params) {
  check_arity("iota", avals, 0);
  const DType dtype = dtype_param(params, "dtype");
  const Shape shape = ints_param(params, "shape");
  const int64_t dimension = int_param(params, "dimension");
  check_shapelike("iota", "shape", shape);
  if (dtype == DType::kBool) {
    throw type_error(
        "iota does not accept dtype bool. Accepted dtypes are subtypes of integer, floating, "
        "complexfloating.");
  }
  if (dimension < 0 || dimension >= static_cast<int64_t>(shape.size())) {
    throw value_error("iota dimension must be between 0 and len(shape), got dimension=" + std::to_string(dimension) +
                      " for shape=" + int_tuple(shape));
  }
  Aval out = Aval::of(shape, dtype, false);
  apply_sharding_param(out, params, "sharding");
  return out;
}

BufferPtr iota_kernel(std::span<const BufferPtr> /*inputs*/, const Aval& out, const Params& params) {
  const auto dimension = static_cast<std::size_t>(int_param(params, "dimension"));
  auto result = new_buffer(out.dtype, out.shape);
  const int64_t count = product(out.shape);
  if (count == 0) return result;
  const int64_t inner = row_major_strides(out.shape)[dimension];
  const int64_t size = out.shape[dimension];
  visit_dtype(out.dtype, [&](auto tag) {
    constexpr DType kDType = decltype(tag)::value;
    using Storage = typename DTypeTraits<kDType>::storage;
    using Compute = typename DTypeTraits<kDType>::compute;
    auto values = result->as_mutable<Storage>();
    for (int64_t i = 0; i < count; ++i) {
      const int64_t position = (i / inner) % size;
      values[static_cast<std::size_t>(i)] = store<kDType>(static_cast<Compute>(position));
    }
  });
  return result;
}

}  // namespace

void register_reshaping_primitives() {
  register_single_result("broadcast_in_dim", broadcast_in_dim_rule, broadcast_in_dim_kernel, broadcast_in_dim_printer);
  register_single_result(
      "reshape", reshape_rule, reshape_kernel,
      versioned_printer(
          {{"dimensions"}, {"new_sizes"}, {"sharding", JaxFeature::kShapeOpShardingParam, ParamValue::None{}}}));
  register_single_result("transpose", transpose_rule, transpose_kernel, versioned_printer({{"permutation"}}));
  register_single_result("squeeze", squeeze_rule, squeeze_kernel, versioned_printer({{"dimensions"}}));
  register_single_result("concatenate", concatenate_rule, concatenate_kernel, versioned_printer({{"dimension"}}));
  register_split();
  register_single_result("pad", pad_rule, pad_kernel, versioned_printer({{"padding_config"}}));
  register_single_result("rev", rev_rule, rev_kernel, versioned_printer({{"dimensions"}}));
  register_single_result(
      "iota", iota_rule, iota_kernel,
      versioned_printer(
          {{"dimension"}, {"dtype"}, {"shape"}, {"sharding", JaxFeature::kIotaShardingParam, ParamValue::None{}}}));
}

}  // namespace shardscope::structural
