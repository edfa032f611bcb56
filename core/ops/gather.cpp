// gather: XLA's general gather (what jnp indexing with arrays lowers to), its checks and print rule.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <set>

#include "base/dtype_dispatch.h"
#include "base/error.h"
#include "ops/structural.h"
#include "ops/structural_internal.h"

namespace shardscope {

ParamValue gather_dimension_numbers_param(const GatherDimensionNumbers& numbers) {
  return ParamValue::tuple(
      {ParamValue::int_tuple(numbers.offset_dims), ParamValue::int_tuple(numbers.collapsed_slice_dims),
       ParamValue::int_tuple(numbers.start_index_map), ParamValue::int_tuple(numbers.operand_batching_dims),
       ParamValue::int_tuple(numbers.start_indices_batching_dims)});
}

GatherDimensionNumbers parse_gather_dimension_numbers(const ParamValue& value) {
  const auto groups = structural::int_groups(value, "dimension_numbers");
  if (groups.size() != 3 && groups.size() != 5) {
    throw type_error("gather dimension_numbers must hold 3 or 5 tuples of ints");
  }
  GatherDimensionNumbers numbers{groups[0], groups[1], groups[2], {}, {}};
  if (groups.size() == 5) {
    numbers.operand_batching_dims = groups[3];
    numbers.start_indices_batching_dims = groups[4];
  }
  return numbers;
}

namespace {
constexpr std::array<const char*, 4> kModeNames = {"CLIP", "FILL_OR_DROP", "PROMISE_IN_BOUNDS", "ONE_HOT"};
}  // namespace

ParamValue gather_mode_param(GatherMode mode) {
  return ParamValue::Verbatim{std::string("GatherScatterMode.") + kModeNames.at(static_cast<std::size_t>(mode))};
}

GatherMode parse_gather_mode(const ParamValue& value) {
  if (value.is_none()) return GatherMode::kFillOrDrop;
  if (const auto* number = value.get_if<int64_t>()) {
    // enum.auto() numbers GatherScatterMode's members from 1.
    if (*number >= 1 && *number <= 4) return static_cast<GatherMode>(*number - 1);
  }
  std::string text;
  if (const auto* verbatim = value.get_if<ParamValue::Verbatim>()) text = verbatim->text;
  if (const auto* string = value.get_if<std::string>()) text = *string;
  const std::string prefix = "GatherScatterMode.";
  if (text.rfind(prefix, 0) == 0) text = text.substr(prefix.size());
  if (text == "clip" || text == "CLIP") return GatherMode::kClip;
  if (text == "fill" || text == "drop" || text == "FILL_OR_DROP") return GatherMode::kFillOrDrop;
  if (text == "promise_in_bounds" || text == "PROMISE_IN_BOUNDS") return GatherMode::kPromiseInBounds;
  if (text == "one_hot" || text == "ONE_HOT") return GatherMode::kOneHot;
  throw value_error("Unknown gather mode \"" + text + "\"");
}

namespace structural {
namespace {

void gather_is_sorted(const std::vector<int64_t>& dims, const std::string& name) {
  for (std::size_t i = 1; i < dims.size(); ++i) {
    if (dims[i] < dims[i - 1]) throw type_error(name + " in gather op must be sorted; got " + int_tuple(dims));
  }
}

void gather_no_duplicates(const std::vector<int64_t>& dims, const std::string& name) {
  if (std::set<int64_t>(dims.begin(), dims.end()).size() != dims.size()) {
    throw type_error(name + " in gather op must not repeat; got: " + int_tuple(dims) + ".");
  }
}

void gather_sorted_in_range(const std::vector<int64_t>& dims, std::size_t rank, const std::string& name) {
  if (dims.empty()) return;
  int64_t invalid = 0;
  if (dims.front() < 0) {
    invalid = dims.front();
  } else if (dims.back() >= static_cast<int64_t>(rank)) {
    invalid = dims.back();
  }
  // JAX tests the offending dim's truthiness, so an invalid 0 slips through; so does this.
  if (invalid != 0) {
    throw type_error("Invalid " + name + " set in gather op; valid range is [0, " + std::to_string(rank) +
                     "); got: " + std::to_string(invalid) + ".");
  }
}

void gather_disjoint(const std::vector<int64_t>& a, const std::vector<int64_t>& b, const std::string& name_a,
                     const std::string& name_b) {
  for (const int64_t d : a) {
    if (std::find(b.begin(), b.end(), d) != b.end()) {
      std::string message = name_a;
      message += " and " + name_b + " in gather op must be disjoint; got: " + int_tuple(a);
      message += " and " + int_tuple(b) + ".";
      throw type_error(message);
    }
  }
}

Aval gather_rule(std::span<const Aval> avals, const Params& params) {
  check_arity("gather", avals, 2);
  const Aval& operand = avals[0];
  const Aval& indices = avals[1];
  const GatherDimensionNumbers numbers = parse_gather_dimension_numbers(param(params, "dimension_numbers"));
  const Shape slice_sizes = ints_param(params, "slice_sizes");
  const std::size_t operand_rank = operand.rank();
  const std::size_t indices_rank = indices.rank();
  if (indices_rank == 0) {
    throw type_error(
        "Gather index leaf dimension must be within [0, rank(indices) + 1). rank(indices) is 0 and "
        "gather index leaf dimension is -1.");
  }
  const std::size_t index_vector_dim = indices_rank - 1;
  const auto& offset_dims = numbers.offset_dims;
  gather_is_sorted(offset_dims, "offset_dims");
  gather_no_duplicates(offset_dims, "offset_dims");
  const std::size_t output_rank = offset_dims.size() + indices_rank - 1;
  for (std::size_t i = 0; i < offset_dims.size(); ++i) {
    if (offset_dims[i] < 0 || offset_dims[i] >= static_cast<int64_t>(output_rank)) {
      throw type_error("Offset dimension " + std::to_string(i) + " in gather op is out of bounds; got " +
                       std::to_string(offset_dims[i]) + ", but should have been in [0, " + std::to_string(output_rank) +
                       ")");
    }
  }
  const auto& start_index_map = numbers.start_index_map;
  if (static_cast<int64_t>(start_index_map.size()) != indices.shape[index_vector_dim]) {
    throw type_error(
        "Gather op has " + std::to_string(start_index_map.size()) +
        " elements in start_index_map and the bound of dimension index_vector_dim=" + std::to_string(index_vector_dim) +
        " of indices is " + std::to_string(indices.shape[index_vector_dim]) + ". These two numbers must be equal.");
  }
  for (std::size_t i = 0; i < start_index_map.size(); ++i) {
    if (start_index_map[i] < 0 || start_index_map[i] >= static_cast<int64_t>(operand_rank)) {
      throw type_error("Invalid start_index_map; domain is [0, " + std::to_string(operand_rank) +
                       "), got: " + std::to_string(i) + "->" + std::to_string(start_index_map[i]) + ".");
    }
  }
  gather_no_duplicates(start_index_map, "start_index_map");
  const auto& collapsed = numbers.collapsed_slice_dims;
  gather_is_sorted(collapsed, "collapsed_slice_dims");
  gather_sorted_in_range(collapsed, operand_rank, "collapsed_slice_dims");
  gather_no_duplicates(collapsed, "collapsed_slice_dims");
  const auto& operand_batching = numbers.operand_batching_dims;
  gather_no_duplicates(operand_batching, "operand_batching_dims");
  gather_is_sorted(operand_batching, "operand_batching_dims");
  gather_sorted_in_range(operand_batching, operand_rank, "operand_batching_dims");
  gather_disjoint(collapsed, operand_batching, "collapsed_slice_dims", "operand_batching_dims");
  gather_disjoint(start_index_map, operand_batching, "start_index_map", "operand_batching_dims");
  const auto& indices_batching = numbers.start_indices_batching_dims;
  gather_no_duplicates(indices_batching, "start_indices_batching_dims");
  for (const int64_t d : indices_batching) {
    if (d < 0 || d >= static_cast<int64_t>(indices_rank)) {
      throw type_error("Invalid start_indices_batching_dims set in gather op; valid range is [0, " +
                       std::to_string(indices_rank) + "); got: " + std::to_string(d) + ".");
    }
  }
  if (std::find(indices_batching.begin(), indices_batching.end(), static_cast<int64_t>(index_vector_dim)) !=
      indices_batching.end()) {
    throw type_error("Gather op cannot have the index vector dimension as a batching dimension; got " +
                     int_tuple(indices_batching) + ".");
  }
  if (operand_batching.size() != indices_batching.size()) {
    throw type_error("Gather op requires equal numbers of operand_batching_dims and start_indices_batching_dims, got " +
                     int_tuple(operand_batching) + " and" + int_tuple(indices_batching) + ".");
  }
  std::vector<int64_t> operand_batch_shape;
  std::vector<int64_t> indices_batch_shape;
  operand_batch_shape.reserve(operand_batching.size());
  indices_batch_shape.reserve(indices_batching.size());
  for (const int64_t d : operand_batching) operand_batch_shape.push_back(operand.shape[static_cast<std::size_t>(d)]);
  for (const int64_t d : indices_batching) indices_batch_shape.push_back(indices.shape[static_cast<std::size_t>(d)]);
  if (operand_batch_shape != indices_batch_shape) {
    throw type_error(
        "Gather op requires operand batching dimensions and indices batching dimensions to have the same shape, got " +
        int_tuple(operand_batch_shape) + " and " + int_tuple(indices_batch_shape) + ".");
  }
  if (operand_rank != slice_sizes.size()) {
    throw type_error("Gather op must have one slice size for every input dimension; got: len(slice_sizes)=" +
                     std::to_string(slice_sizes.size()) + ", input_shape.rank=" + std::to_string(operand_rank));
  }
  if (slice_sizes.size() != offset_dims.size() + collapsed.size() + operand_batching.size()) {
    throw type_error(
        "All components of the offset index in a gather op must either be a offset dimension or explicitly "
        "collapsed/batching; got len(slice_sizes)=" +
        std::to_string(slice_sizes.size()) + ", output_slice_sizes=" + int_tuple(offset_dims) +
        ", collapsed_slice_dims=" + int_tuple(collapsed) + ", operand_batching_dims=" + int_tuple(operand_batching) +
        ".");
  }
  if (product(indices.shape) != 0) {
    for (std::size_t i = 0; i < slice_sizes.size(); ++i) {
      if (slice_sizes[i] < 0 || slice_sizes[i] > operand.shape[i]) {
        throw type_error("Slice size at index " + std::to_string(i) +
                         " in gather op is out of range, must be within [0, " + std::to_string(operand.shape[i]) +
                         " + 1), got " + std::to_string(slice_sizes[i]) + ".");
      }
    }
  }
  for (std::size_t i = 0; i < collapsed.size(); ++i) {
    const int64_t bound = slice_sizes[static_cast<std::size_t>(collapsed[i])];
    if (bound != 1) {
      throw type_error("Gather op can only collapse slice dims with bound 1, but bound is " + std::to_string(bound) +
                       " for index " + std::to_string(collapsed[i]) + " at position " + std::to_string(i) + ".");
    }
  }
  for (std::size_t i = 0; i < operand_batching.size(); ++i) {
    const int64_t bound = slice_sizes[static_cast<std::size_t>(operand_batching[i])];
    if (bound > 1) {
      throw type_error("Gather op can only have operand batching dims with bound 0/1, but bound is " +
                       std::to_string(bound) + " for index " + std::to_string(operand_batching[i]) + " at position " +
                       std::to_string(i) + ".");
    }
  }
  if (!is_integral(indices.dtype)) throw value_error("indices must have an integer type");
  Shape shape(output_rank);
  std::size_t next_index_dim = 0;
  std::size_t next_slice_dim = 0;
  auto is_window_dim = [&](std::size_t d) {
    const auto dim = static_cast<int64_t>(d);
    return std::find(collapsed.begin(), collapsed.end(), dim) == collapsed.end() &&
           std::find(operand_batching.begin(), operand_batching.end(), dim) == operand_batching.end();
  };
  for (std::size_t d = 0; d < output_rank; ++d) {
    if (std::find(offset_dims.begin(), offset_dims.end(), static_cast<int64_t>(d)) != offset_dims.end()) {
      while (!is_window_dim(next_slice_dim)) ++next_slice_dim;
      shape[d] = slice_sizes[next_slice_dim++];
    } else {
      shape[d] = indices.shape[next_index_dim++];
    }
  }
  Aval out = derived_aval(operand, shape, operand.dtype, operand.weak_type);
  out.varying = union_varying(avals);
  return out;
}

template <typename T>
void gather_elements(const Buffer& operand, const Buffer& indices, Buffer& result,
                     const GatherDimensionNumbers& numbers, const Shape& slice_sizes, GatherMode mode, T fill) {
  const Shape& operand_shape = operand.shape();
  const Shape& out_shape = result.shape();
  const std::size_t operand_rank = operand_shape.size();
  const std::size_t index_depth = numbers.start_index_map.size();
  const std::vector<int64_t> operand_strides = row_major_strides(operand_shape);
  const std::vector<int64_t> out_strides = row_major_strides(out_shape);

  // Output dims split into batch dims (walking the indices) and offset dims (walking a window).
  std::vector<std::size_t> batch_dims;
  std::vector<std::size_t> offset_dims;
  for (std::size_t d = 0; d < out_shape.size(); ++d) {
    const bool is_offset = std::find(numbers.offset_dims.begin(), numbers.offset_dims.end(), static_cast<int64_t>(d)) !=
                           numbers.offset_dims.end();
    (is_offset ? offset_dims : batch_dims).push_back(d);
  }
  std::vector<std::size_t> window_operand_dims;
  for (std::size_t d = 0; d < operand_rank; ++d) {
    const auto dim = static_cast<int64_t>(d);
    const auto& collapsed = numbers.collapsed_slice_dims;
    const auto& batching = numbers.operand_batching_dims;
    if (std::find(collapsed.begin(), collapsed.end(), dim) == collapsed.end() &&
        std::find(batching.begin(), batching.end(), dim) == batching.end()) {
      window_operand_dims.push_back(d);
    }
  }
  Shape window_shape;
  std::vector<int64_t> window_out_strides;
  std::vector<int64_t> window_src_strides;
  for (std::size_t i = 0; i < offset_dims.size(); ++i) {
    window_shape.push_back(out_shape[offset_dims[i]]);
    window_out_strides.push_back(out_strides[offset_dims[i]]);
    window_src_strides.push_back(operand_strides[window_operand_dims[i]]);
  }
  const int64_t window_size = product(window_shape);
  Shape batch_shape;
  for (const std::size_t d : batch_dims) batch_shape.push_back(out_shape[d]);
  const int64_t batch_count = product(batch_shape);
  const std::vector<int64_t> batch_strides = row_major_strides(batch_shape);

  const T* src = operand.as<T>().data();
  T* dst = result.as_mutable<T>().data();
  std::vector<int64_t> batch_index(batch_dims.size());
  std::vector<int64_t> start(operand_rank);
  for (int64_t b = 0; b < batch_count; ++b) {
    int64_t out_offset = 0;
    for (std::size_t i = 0; i < batch_dims.size(); ++i) {
      batch_index[i] = (b / batch_strides[i]) % batch_shape[i];
      out_offset += batch_index[i] * out_strides[batch_dims[i]];
    }
    // The batch dims are the indices' leading dims, and the index vector is innermost.
    const int64_t indices_offset = b * static_cast<int64_t>(index_depth);
    std::fill(start.begin(), start.end(), 0);
    bool in_bounds = true;
    for (std::size_t k = 0; k < index_depth; ++k) {
      const auto d = static_cast<std::size_t>(numbers.start_index_map[k]);
      const int64_t raw = scalar_index(indices, indices_offset + static_cast<int64_t>(k));
      const int64_t upper = operand_shape[d] - slice_sizes[d];
      if (raw < 0 || raw > upper) in_bounds = false;
      start[d] = std::clamp<int64_t>(raw, 0, upper);
    }
    for (std::size_t i = 0; i < numbers.operand_batching_dims.size(); ++i) {
      const auto d = static_cast<std::size_t>(numbers.operand_batching_dims[i]);
      start[d] = batch_index[static_cast<std::size_t>(numbers.start_indices_batching_dims[i])];
    }
    if (mode == GatherMode::kFillOrDrop && !in_bounds) {
      if (window_size == 1) {
        dst[out_offset] = fill;
      } else {
        std::vector<int64_t> zero_strides(window_shape.size(), 0);
        strided_copy(sizeof(T), window_shape, reinterpret_cast<std::byte*>(dst + out_offset), window_out_strides,
                     reinterpret_cast<const std::byte*>(&fill), zero_strides);
      }
      continue;
    }
    int64_t src_offset = 0;
    for (std::size_t d = 0; d < operand_rank; ++d) src_offset += start[d] * operand_strides[d];
    if (window_size == 1) {
      dst[out_offset] = src[src_offset];
    } else if (window_size > 1) {
      strided_copy(sizeof(T), window_shape, reinterpret_cast<std::byte*>(dst + out_offset), window_out_strides,
                   reinterpret_cast<const std::byte*>(src + src_offset), window_src_strides);
    }
  }
}

// The storage bits of lax.gather's fill value: the param, or JAX's default for the dtype.
template <DType D>
typename DTypeTraits<D>::storage gather_fill_value(const ParamValue* fill) {
  using Compute = typename DTypeTraits<D>::compute;
  if (fill != nullptr && !fill->is_none()) {
    if (const auto* flag = fill->get_if<bool>()) return store<D>(static_cast<Compute>(*flag));
    if (const auto* number = fill->get_if<int64_t>()) return store<D>(static_cast<Compute>(*number));
    if (const auto* real = fill->get_if<double>()) return store<D>(static_cast<Compute>(*real));
  }
  if constexpr (std::is_same_v<Compute, bool>) {
    return store<D>(true);
  } else if constexpr (std::is_floating_point_v<Compute>) {
    return store<D>(std::numeric_limits<Compute>::quiet_NaN());
  } else if constexpr (std::is_signed_v<Compute>) {
    return store<D>(std::numeric_limits<Compute>::min());
  } else {
    return store<D>(std::numeric_limits<Compute>::max());
  }
}

BufferPtr gather_kernel(std::span<const BufferPtr> inputs, const Aval& out, const Params& params) {
  const Buffer& operand = *inputs[0];
  const Buffer& indices = *inputs[1];
  const GatherDimensionNumbers numbers = parse_gather_dimension_numbers(param(params, "dimension_numbers"));
  const Shape slice_sizes = ints_param(params, "slice_sizes");
  const ParamValue* mode_param = find_param(params, "mode");
  const GatherMode mode = mode_param != nullptr ? parse_gather_mode(*mode_param) : GatherMode::kPromiseInBounds;
  if (mode == GatherMode::kOneHot) throw not_implemented_error("gather mode GatherScatterMode.ONE_HOT");
  auto result = new_buffer(out.dtype, out.shape);
  if (product(out.shape) == 0) return result;
  const ParamValue* fill = find_param(params, "fill_value");
  visit_dtype(out.dtype, [&](auto tag) {
    constexpr DType kDType = decltype(tag)::value;
    using Storage = typename DTypeTraits<kDType>::storage;
    gather_elements<Storage>(operand, indices, *result, numbers, slice_sizes, mode, gather_fill_value<kDType>(fill));
  });
  return result;
}

// GatherDimensionNumbers and GatherScatterMode print as their Python reprs; the batching fields
// exist from 0.4.35.
Params gather_printer(const Eqn& eqn, const JaxProfile& profile) {
  Params printed = versioned_params(eqn, profile,
                                    {{"dimension_numbers"},
                                     {"fill_value"},
                                     {"indices_are_sorted", std::nullopt, false},
                                     {"mode", std::nullopt, gather_mode_param(GatherMode::kPromiseInBounds)},
                                     {"slice_sizes"},
                                     {"unique_indices", std::nullopt, false}});
  for (auto& [key, value] : printed) {
    if (key == "dimension_numbers" && value.get_if<ParamValue::Tuple>() != nullptr) {
      const GatherDimensionNumbers numbers = parse_gather_dimension_numbers(value);
      std::string text = "GatherDimensionNumbers(offset_dims=" + int_tuple(numbers.offset_dims) +
                         ", collapsed_slice_dims=" + int_tuple(numbers.collapsed_slice_dims) +
                         ", start_index_map=" + int_tuple(numbers.start_index_map);
      if (profile.has(JaxFeature::kGatherBatchingDims)) {
        text += ", operand_batching_dims=" + int_tuple(numbers.operand_batching_dims) +
                ", start_indices_batching_dims=" + int_tuple(numbers.start_indices_batching_dims);
      }
      value = ParamValue::Verbatim{text + ")"};
    } else if (key == "mode" && !value.is_none()) {
      value = gather_mode_param(parse_gather_mode(value));
    }
  }
  return printed;
}

}  // namespace

void register_gather_primitive() { register_single_result("gather", gather_rule, gather_kernel, gather_printer); }

}  // namespace structural
}  // namespace shardscope
