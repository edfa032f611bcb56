// sort (several operands, the first num_keys of them keys), top_k and stop_gradient: their shape rules, kernels
// and print rules as lax.py defines them.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "base/dtype_dispatch.h"
#include "base/error.h"
#include "ops/structural_internal.h"

namespace shardscope {
namespace structural {
namespace {

std::string shape_text(const Shape& shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

// lax._sort_abstract_eval: every operand keeps its type; shapes must agree.
std::vector<Aval> sort_rule(std::span<const Aval> avals, const Params& params) {
  if (avals.empty()) throw type_error("Sort requires at least one operand");
  std::string shapes;
  bool equal = true;
  for (const Aval& aval : avals) {
    shapes += (shapes.empty() ? "" : " ") + shape_text(aval.shape);
    equal = equal && aval.shape == avals[0].shape;
  }
  if (!equal) throw type_error("Arguments to sort must have equal shapes, got: " + shapes);
  const int64_t dimension = int_param(params, "dimension");
  if (dimension < 0 || dimension >= static_cast<int64_t>(avals[0].rank())) {
    throw value_error("sort dimension " + std::to_string(dimension) + " is out of range for rank " +
                      std::to_string(avals[0].rank()));
  }
  const int64_t num_keys = int_param(params, "num_keys");
  if (num_keys < 1 || num_keys > static_cast<int64_t>(avals.size())) {
    throw value_error("num_keys=" + std::to_string(num_keys) +
                      " must be between 1 and len(operand)=" + std::to_string(avals.size()));
  }
  std::vector<Aval> out;
  const std::vector<std::string> varying = union_varying(avals);
  for (const Aval& aval : avals) {
    Aval result = derived_aval(aval, aval.shape, aval.dtype, aval.weak_type);
    result.varying = varying;
    out.push_back(result);
  }
  return out;
}

// One operand's elements as doubles for comparison (NaN sorts last, -0 equals 0, as lax.sort's comparator).
std::vector<double> as_doubles(const Buffer& buffer) {
  std::vector<double> values(static_cast<std::size_t>(buffer.size()));
  visit_dtype(buffer.dtype(), [&](auto tag) {
    constexpr DType kDType = decltype(tag)::value;
    using Storage = typename DTypeTraits<kDType>::storage;
    const Storage* data = buffer.as<Storage>().data();
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(load<kDType>(data[i]));
  });
  return values;
}

// 64-bit integers do not fit a double exactly: compare them as integers.
std::vector<int64_t> as_ints(const Buffer& buffer) {
  std::vector<int64_t> values(static_cast<std::size_t>(buffer.size()));
  visit_dtype(buffer.dtype(), [&](auto tag) {
    constexpr DType kDType = decltype(tag)::value;
    using Storage = typename DTypeTraits<kDType>::storage;
    const Storage* data = buffer.as<Storage>().data();
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int64_t>(load<kDType>(data[i]));
  });
  return values;
}

int compare_doubles(double a, double b) {
  const bool a_nan = std::isnan(a);
  const bool b_nan = std::isnan(b);
  if (a_nan || b_nan) return a_nan == b_nan ? 0 : (a_nan ? 1 : -1);
  return a < b ? -1 : (b < a ? 1 : 0);
}

// Sorts every line along `dimension` by the keys (lexicographically), permuting all operands alike. XLA's
// unstable sort may order ties either way; a stable sort is one valid answer.
std::vector<BufferPtr> sort_kernel(std::span<const BufferPtr> inputs, std::span<const Aval>, const Params& params) {
  const Shape& shape = inputs[0]->shape();
  const auto dimension = static_cast<std::size_t>(int_param(params, "dimension"));
  const auto num_keys = static_cast<std::size_t>(int_param(params, "num_keys"));
  const std::vector<int64_t> strides = row_major_strides(shape);
  const int64_t length = shape.empty() ? 1 : shape[dimension];
  const int64_t stride = strides.empty() ? 1 : strides[dimension];
  const int64_t total = product(shape);
  struct Key {
    bool integral;
    std::vector<double> reals;
    std::vector<int64_t> ints;
  };
  std::vector<Key> keys;
  for (std::size_t k = 0; k < num_keys; ++k) {
    const bool integral = !is_floating(inputs[k]->dtype());
    keys.push_back({integral, integral ? std::vector<double>{} : as_doubles(*inputs[k]),
                    integral ? as_ints(*inputs[k]) : std::vector<int64_t>{}});
  }
  std::vector<BufferPtr> outputs;
  std::vector<std::shared_ptr<Buffer>> results;
  for (const BufferPtr& input : inputs) results.push_back(new_buffer(input->dtype(), input->shape()));
  std::vector<int64_t> order(static_cast<std::size_t>(length));
  std::vector<int64_t> positions(static_cast<std::size_t>(length));
  for (int64_t line = 0; line < (length == 0 ? 0 : total / length); ++line) {
    // The line's first element: `line` counts the other dims in row-major order.
    const int64_t outer = line / stride;
    const int64_t inner = line % stride;
    const int64_t base = outer * stride * length + inner;
    for (int64_t i = 0; i < length; ++i) positions[static_cast<std::size_t>(i)] = base + i * stride;
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
      const auto px = static_cast<std::size_t>(positions[static_cast<std::size_t>(x)]);
      const auto py = static_cast<std::size_t>(positions[static_cast<std::size_t>(y)]);
      for (const Key& key : keys) {
        const int c = key.integral ? (key.ints[px] < key.ints[py] ? -1 : (key.ints[py] < key.ints[px] ? 1 : 0))
                                   : compare_doubles(key.reals[px], key.reals[py]);
        if (c != 0) return c < 0;
      }
      return false;
    });
    for (std::size_t o = 0; o < inputs.size(); ++o) {
      const std::size_t size = dtype_size(inputs[o]->dtype());
      const std::byte* src = inputs[o]->bytes().data();
      std::byte* dst = results[o]->mutable_bytes().data();
      for (int64_t i = 0; i < length; ++i) {
        const auto to = static_cast<std::size_t>(positions[static_cast<std::size_t>(i)]);
        const auto from =
            static_cast<std::size_t>(positions[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])]);
        std::copy_n(src + from * size, size, dst + to * size);
      }
    }
  }
  outputs.assign(results.begin(), results.end());
  return outputs;
}

// lax._top_k_abstract_eval: values and int32 indices of the k largest along `axis`.
std::vector<Aval> top_k_rule(std::span<const Aval> avals, const Params& params) {
  check_arity("top_k", avals, 1);
  const Aval& operand = avals[0];
  const int64_t k = int_param(params, "k");
  if (k < 0) throw value_error("k argument to top_k must be nonnegative, got " + std::to_string(k));
  if (operand.rank() == 0) throw type_error("top_k operand must have >= 1 dimension, got ()");
  const int64_t axis =
      find_param(params, "axis") != nullptr ? int_param(params, "axis") : static_cast<int64_t>(operand.rank()) - 1;
  if (axis < 0 || axis >= static_cast<int64_t>(operand.rank())) {
    throw value_error("axis argument out of range: axis=" + std::to_string(axis) +
                      " for operand.shape=" + shape_text(operand.shape));
  }
  Shape shape = operand.shape;
  if (shape[static_cast<std::size_t>(axis)] < k) {
    throw value_error("k argument to top_k must be no larger than size along axis; got k=" + std::to_string(k) +
                      " with shape=" + shape_text(shape) + " and axis=" + std::to_string(axis));
  }
  shape[static_cast<std::size_t>(axis)] = k;
  Aval values = derived_aval(operand, shape, operand.dtype, operand.weak_type);
  Aval indices = derived_aval(operand, shape, DType::kInt32, false);
  values.varying = indices.varying = operand.varying;
  return {values, indices};
}

// The k largest of every line along `axis`, largest first; ties keep their order (is_stable), NaN counts largest.
std::vector<BufferPtr> top_k_kernel(std::span<const BufferPtr> inputs, std::span<const Aval> avals,
                                    const Params& params) {
  const std::vector<Aval> out = top_k_rule(buffer_avals(inputs, avals), params);
  const Buffer& operand = *inputs[0];
  const Shape& shape = operand.shape();
  const auto axis = static_cast<std::size_t>(
      find_param(params, "axis") != nullptr ? int_param(params, "axis") : static_cast<int64_t>(shape.size()) - 1);
  const int64_t k = int_param(params, "k");
  const int64_t length = shape[axis];
  const int64_t stride = row_major_strides(shape)[axis];
  const std::vector<double> keys = is_floating(operand.dtype()) ? as_doubles(operand) : std::vector<double>{};
  const std::vector<int64_t> int_keys = is_floating(operand.dtype()) ? std::vector<int64_t>{} : as_ints(operand);
  auto values = new_buffer(operand.dtype(), out[0].shape);
  auto indices = new_buffer(DType::kInt32, out[1].shape);
  const std::size_t size = dtype_size(operand.dtype());
  std::int32_t* index_data = indices->as_mutable<std::int32_t>().data();
  std::vector<int64_t> order(static_cast<std::size_t>(length));
  const int64_t lines = length == 0 ? 0 : product(shape) / length;
  for (int64_t line = 0; line < lines; ++line) {
    const int64_t outer = line / stride;
    const int64_t inner = line % stride;
    const int64_t base = outer * stride * length + inner;
    const int64_t out_base = outer * stride * k + inner;
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
      const auto px = static_cast<std::size_t>(base + x * stride);
      const auto py = static_cast<std::size_t>(base + y * stride);
      if (keys.empty()) return int_keys[py] < int_keys[px];
      return compare_doubles(keys[py], keys[px]) < 0;
    });
    for (int64_t i = 0; i < k; ++i) {
      const auto from = static_cast<std::size_t>(base + order[static_cast<std::size_t>(i)] * stride);
      const auto to = static_cast<std::size_t>(out_base + i * stride);
      std::copy_n(operand.bytes().data() + from * size, size, values->mutable_bytes().data() + to * size);
      index_data[to] = static_cast<std::int32_t>(order[static_cast<std::size_t>(i)]);
    }
  }
  return {values, indices};
}

// n log n comparisons per line, every operand read and written once.

}  // namespace

void register_sort_primitives() {
  Primitive sort;
  sort.name = "sort";
  sort.multiple_results = true;
  sort.abstract_eval = sort_rule;
  sort.impl = sort_kernel;
  sort.printed_params = versioned_printer({{"dimension"}, {"is_stable", std::nullopt, true}, {"num_keys"}});
  register_primitive(std::move(sort));

  Primitive top_k;
  top_k.name = "top_k";
  top_k.multiple_results = true;
  top_k.abstract_eval = top_k_rule;
  top_k.impl = top_k_kernel;
  top_k.printed_params = versioned_printer({{"axis"}, {"is_stable", std::nullopt, true}, {"k"}});
  register_primitive(std::move(top_k));

  // ad_util.stop_gradient_p: the identity, whose derivative is zero (the JVP rule says so).
  Primitive stop_gradient;
  stop_gradient.name = "stop_gradient";
  stop_gradient.elementwise = true;
  stop_gradient.abstract_eval = [](std::span<const Aval> avals, const Params&) {
    check_arity("stop_gradient", avals, 1);
    return std::vector<Aval>{avals[0]};
  };
  stop_gradient.impl = [](std::span<const BufferPtr> inputs, std::span<const Aval>, const Params&) {
    return std::vector<BufferPtr>{inputs[0]};
  };
  register_primitive(std::move(stop_gradient));
}

}  // namespace structural
}  // namespace shardscope
