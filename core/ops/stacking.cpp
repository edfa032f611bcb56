// stack and unstack (JAX 0.10.1+): join same-shape operands along a new axis, and take an array apart along one.
#include <algorithm>
#include <numeric>

#include "base/error.h"
#include "ops/structural_internal.h"

namespace shardscope::structural {
namespace {

// The primitive is bound by lax.stack/lax.unstack with a canonical axis; a direct bind may pass anything.
std::size_t checked_axis(const Params& params, std::size_t limit) {
  const int64_t axis = int_param(params, "axis");
  if (axis < 0 || axis > static_cast<int64_t>(limit)) {
    throw value_error("axis " + std::to_string(axis) + " is out of bounds for array of dimension " +
                      std::to_string(limit));
  }
  return static_cast<std::size_t>(axis);
}

// ---- stack --------------------------------------------------------------------------------

Aval stack_rule(std::span<const Aval> avals, const Params& params) {
  // JAX checks shapes first, then dtypes (check_same_dtypes), then shardings (the Explicit rule).
  if (avals.empty()) throw value_error("stack expects at least one operand, got 0.");
  const Aval& first = avals[0];
  if (std::any_of(avals.begin(), avals.end(), [&](const Aval& a) { return a.rank() != first.rank(); })) {
    throw value_error("Cannot stack arrays with different numbers of dimensions: got " + shapes_text(avals) + ".");
  }
  if (std::any_of(avals.begin(), avals.end(), [&](const Aval& a) { return a.shape != first.shape; })) {
    throw value_error("All input arrays must have the same shape. Got " + shapes_text(avals) + ".");
  }
  if (std::any_of(avals.begin(), avals.end(), [&](const Aval& a) { return a.dtype != first.dtype; })) {
    std::vector<std::string> names;
    for (const Aval& a : avals) names.emplace_back(dtype_name(a.dtype));
    throw type_error("lax.stack requires arguments to have the same dtypes, got " + join(names, ", ") + ".");
  }
  const std::size_t axis = checked_axis(params, first.rank());
  Shape shape = first.shape;
  shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(axis), static_cast<int64_t>(avals.size()));
  const bool weak = std::all_of(avals.begin(), avals.end(), [](const Aval& a) { return a.weak_type; });
  Aval out = derived_aval(first, shape, first.dtype, weak);
  out.varying = union_varying(avals);
  // The operands' dims keep their sharding; the new dim is unsharded.
  std::vector<int64_t> sources(first.rank());
  std::iota(sources.begin(), sources.end(), 0);
  sources.insert(sources.begin() + static_cast<std::ptrdiff_t>(axis), -1);
  map_dim_axes(out, first, sources);
  return out;
}

BufferPtr stack_kernel(std::span<const BufferPtr> inputs, const Aval& out, const Params& params) {
  const auto axis = static_cast<std::size_t>(int_param(params, "axis"));
  auto result = new_buffer(out.dtype, out.shape);
  std::vector<int64_t> out_strides = row_major_strides(out.shape);
  const int64_t step = out_strides[axis];
  // Each operand fills one index of the new dim: the output's strides without that dim.
  out_strides.erase(out_strides.begin() + static_cast<std::ptrdiff_t>(axis));
  const std::size_t element_size = dtype_size(out.dtype);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Buffer& input = *inputs[i];
    strided_copy(element_size, input.shape(),
                 result->mutable_bytes().data() + static_cast<int64_t>(i) * step * static_cast<int64_t>(element_size),
                 out_strides, input.bytes().data(), row_major_strides(input.shape()));
  }
  return result;
}

// ---- unstack (multiple results) -------------------------------------------------------------

std::vector<Aval> unstack_rule(std::span<const Aval> avals, const Params& params) {
  check_arity("unstack", avals, 1);
  const Aval& operand = avals[0];
  if (operand.rank() == 0) {
    throw value_error("unstack requires arrays with rank > 0, however a scalar array of shape " +
                      int_tuple(operand.shape) + " was passed.");
  }
  const std::size_t axis = checked_axis(params, operand.rank() - 1);
  Shape shape = operand.shape;
  const int64_t count = shape[axis];
  shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(axis));
  std::vector<int64_t> sources;
  for (std::size_t d = 0; d < operand.rank(); ++d) {
    if (d != axis) sources.push_back(static_cast<int64_t>(d));
  }
  std::vector<Aval> outs;
  for (int64_t i = 0; i < count; ++i) {
    Aval out = derived_aval(operand, shape, operand.dtype, operand.weak_type);
    map_dim_axes(out, operand, sources);
    outs.push_back(std::move(out));
  }
  return outs;
}

std::vector<BufferPtr> unstack_kernel(std::span<const BufferPtr> inputs, std::span<const Aval> avals,
                                      const Params& params) {
  const std::vector<Aval> outs = unstack_rule(buffer_avals(inputs, avals), params);
  const Buffer& operand = *inputs[0];
  const auto axis = static_cast<std::size_t>(int_param(params, "axis"));
  std::vector<int64_t> src_strides = row_major_strides(operand.shape());
  const int64_t step = src_strides[axis];
  src_strides.erase(src_strides.begin() + static_cast<std::ptrdiff_t>(axis));
  const std::size_t element_size = dtype_size(operand.dtype());
  std::vector<BufferPtr> results;
  for (std::size_t i = 0; i < outs.size(); ++i) {
    auto piece = new_buffer(outs[i].dtype, outs[i].shape);
    strided_copy(element_size, outs[i].shape, piece->mutable_bytes().data(), row_major_strides(outs[i].shape),
                 operand.bytes().data() + static_cast<int64_t>(i) * step * static_cast<int64_t>(element_size),
                 src_strides);
    results.push_back(std::move(piece));
  }
  return results;
}

}  // namespace

void register_stacking_primitives() {
  register_single_result("stack", stack_rule, stack_kernel, versioned_printer({{"axis"}}));
  Primitive unstack;
  unstack.name = "unstack";
  unstack.multiple_results = true;
  unstack.abstract_eval = unstack_rule;
  unstack.impl = unstack_kernel;
  unstack.printed_params = versioned_printer({{"axis"}});
  register_primitive(std::move(unstack));
}

}  // namespace shardscope::structural
