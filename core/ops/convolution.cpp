// conv_general_dilated: JAX's params, shape/dtype rule and print rule, and its kernel (patches times weights, one
// matrix product per image and group). Its jvp, transposes and batching are in transforms/conv_rules.cpp, its
// Shardy factor rule in propagation/factor_rule.cpp, its Explicit rule in explicit/rules_structural.cpp.
#include "ops/convolution.h"

#include <algorithm>
#include <numeric>

#include "base/dtype_dispatch.h"
#include "base/error.h"
#include "ops/structural_internal.h"
#include "ops/windowed.h"

namespace shardscope {

namespace {

std::vector<int64_t> ints_of(const ParamValue& value, const std::string& what) { return value.as_ints(what); }

}  // namespace

ConvParams conv_params(const Params& params) {
  ConvParams conv;
  conv.window_strides = ints_of(param(params, "window_strides"), "window_strides");
  for (const ParamValue& pair : param(params, "padding").as_items("padding")) {
    const std::vector<int64_t> lo_hi = pair.as_ints("padding");
    if (lo_hi.size() != 2) throw value_error("conv_general_dilated padding entries must be (low, high) pairs");
    conv.padding.emplace_back(lo_hi[0], lo_hi[1]);
  }
  conv.lhs_dilation = ints_of(param(params, "lhs_dilation"), "lhs_dilation");
  conv.rhs_dilation = ints_of(param(params, "rhs_dilation"), "rhs_dilation");
  const auto& specs = param(params, "dimension_numbers").as_items("dimension_numbers");
  if (specs.size() != 3) throw value_error("conv_general_dilated dimension_numbers must hold three specs");
  conv.dims = {specs[0].as_ints("lhs_spec"), specs[1].as_ints("rhs_spec"), specs[2].as_ints("out_spec")};
  conv.feature_group_count = param(params, "feature_group_count").as_int("feature_group_count");
  conv.batch_group_count = param(params, "batch_group_count").as_int("batch_group_count");
  if (const ParamValue* preferred = find_param(params, "preferred_element_type")) {
    if (const auto* dtype = preferred->get_if<DType>()) conv.preferred_element_type = *dtype;
  }
  if (const ParamValue* precision = find_param(params, "precision")) conv.precision = *precision;
  if (const ParamValue* sharding = find_param(params, "out_sharding")) conv.out_sharding = *sharding;
  return conv;
}

Params conv_params_to_params(const ConvParams& conv) {
  std::vector<ParamValue> pads;
  for (const auto& [lo, hi] : conv.padding) pads.push_back(ParamValue::int_tuple({lo, hi}));
  ParamValue preferred = ParamValue::None{};
  if (conv.preferred_element_type) preferred = *conv.preferred_element_type;
  return {{"window_strides", ParamValue::int_tuple(conv.window_strides)},
          {"padding", ParamValue::tuple(pads)},
          {"lhs_dilation", ParamValue::int_tuple(conv.lhs_dilation)},
          {"rhs_dilation", ParamValue::int_tuple(conv.rhs_dilation)},
          {"dimension_numbers",
           ParamValue::tuple({ParamValue::int_tuple(conv.dims.lhs_spec), ParamValue::int_tuple(conv.dims.rhs_spec),
                              ParamValue::int_tuple(conv.dims.out_spec)})},
          {"feature_group_count", conv.feature_group_count},
          {"batch_group_count", conv.batch_group_count},
          {"precision", conv.precision},
          {"preferred_element_type", preferred},
          {"out_sharding", conv.out_sharding}};
}

int64_t dilated_size(int64_t size, int64_t dilation) { return size == 0 ? 0 : 1 + dilation * (size - 1); }

Shape conv_output_shape(const Shape& lhs, const Shape& rhs, const ConvParams& conv) {
  const ConvDims& d = conv.dims;
  if (lhs.size() != rhs.size()) {
    throw value_error("conv_general_dilated lhs and rhs must have the same number of dimensions, but got " +
                      structural::int_tuple(lhs) + " and " + structural::int_tuple(rhs) + ".");
  }
  const std::size_t rank = lhs.size();
  const auto valid_spec = [rank](const std::vector<int64_t>& spec) {
    if (spec.size() != rank) return false;
    std::vector<int64_t> sorted = spec;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < rank; ++i) {
      if (sorted[i] != static_cast<int64_t>(i)) return false;
    }
    return true;
  };
  if (rank < 2 || !valid_spec(d.lhs_spec) || !valid_spec(d.rhs_spec) || !valid_spec(d.out_spec)) {
    throw type_error("conv_general_dilated dimension_numbers must be permutations of the operands' " +
                     std::to_string(rank) + " dimensions, got lhs_spec=" + structural::int_tuple(d.lhs_spec) +
                     ", rhs_spec=" + structural::int_tuple(d.rhs_spec) +
                     ", out_spec=" + structural::int_tuple(d.out_spec));
  }
  const auto at = [](const Shape& shape, int64_t dim) { return shape[static_cast<std::size_t>(dim)]; };
  const int64_t features = conv.feature_group_count;
  const int64_t batches = conv.batch_group_count;
  if (features <= 0) {
    throw value_error("conv_general_dilated feature_group_count must be a positive integer, got " +
                      std::to_string(features) + ".");
  }
  const int64_t lhs_features = at(lhs, d.lhs_spec[1]);
  if (lhs_features % features != 0) {
    throw value_error("conv_general_dilated feature_group_count must divide lhs feature dimension size, but " +
                      std::to_string(features) + " does not divide " + std::to_string(lhs_features) + ".");
  }
  if (lhs_features / features != at(rhs, d.rhs_spec[1])) {
    throw value_error(
        "conv_general_dilated lhs feature dimension size divided by feature_group_count must equal the rhs input "
        "feature dimension size, but " +
        std::to_string(lhs_features) + " // " + std::to_string(features) +
        " != " + std::to_string(at(rhs, d.rhs_spec[1])) + ".");
  }
  const int64_t out_features = at(rhs, d.rhs_spec[0]);
  if (out_features % features != 0) {
    throw value_error(
        "conv_general_dilated rhs output feature dimension size must be a multiple of feature_group_count, but " +
        std::to_string(out_features) + " is not a multiple of " + std::to_string(features) + ".");
  }
  if (batches <= 0) {
    throw value_error("conv_general_dilated batch_group_count must be a positive integer, got " +
                      std::to_string(batches) + ".");
  }
  const int64_t lhs_batch = at(lhs, d.lhs_spec[0]);
  if (batches > 1 && lhs_batch % batches != 0) {
    throw value_error("conv_general_dilated batch_group_count must divide lhs batch dimension size, but " +
                      std::to_string(batches) + " does not divide " + std::to_string(lhs_batch) + ".");
  }
  if (out_features % batches != 0) {
    throw value_error(
        "conv_general_dilated rhs output feature dimension size must be a multiple of batch_group_count, but " +
        std::to_string(out_features) + " is not a multiple of " + std::to_string(batches) + ".");
  }
  if (batches > 1 && features > 1) {
    throw value_error("At most one of batch_group_count and feature_group_count may be > 1, got batch_group_count=" +
                      std::to_string(batches) + " and feature_group_count=" + std::to_string(features));
  }
  const std::size_t spatial = rank - 2;
  if (conv.window_strides.size() != spatial) {
    throw value_error(
        "conv_general_dilated window and window_strides must have the same number of dimensions, but "
        "got " +
        std::to_string(spatial) + " and " + std::to_string(conv.window_strides.size()));
  }
  if (conv.padding.size() != spatial) {
    throw type_error("Wrong number of explicit pads for convolution: expected " + std::to_string(spatial) + ", got " +
                     std::to_string(conv.padding.size()) + ".");
  }
  if (conv.lhs_dilation.size() != spatial || conv.rhs_dilation.size() != spatial) {
    throw value_error("conv_general_dilated lhs_dilation and rhs_dilation need one entry per spatial dimension (" +
                      std::to_string(spatial) + ")");
  }
  Shape canonical_out(rank);
  canonical_out[0] = batches > 1 ? lhs_batch / batches : lhs_batch;
  canonical_out[1] = out_features;
  for (std::size_t i = 0; i < spatial; ++i) {
    if (conv.window_strides[i] <= 0 || conv.lhs_dilation[i] <= 0 || conv.rhs_dilation[i] <= 0) {
      throw value_error("conv_general_dilated window_strides and dilations must be positive, got window_strides=" +
                        structural::int_tuple(conv.window_strides) +
                        ", lhs_dilation=" + structural::int_tuple(conv.lhs_dilation) +
                        ", rhs_dilation=" + structural::int_tuple(conv.rhs_dilation));
    }
    const int64_t in = dilated_size(at(lhs, d.lhs_spec[i + 2]), conv.lhs_dilation[i]);
    const int64_t window = dilated_size(at(rhs, d.rhs_spec[i + 2]), conv.rhs_dilation[i]);
    const int64_t padded = in + conv.padding[i].first + conv.padding[i].second;
    if (padded < 0) {
      throw value_error("Negative padding is larger than the size of the corresponding dimension: got padding=" +
                        std::string("(") + std::to_string(conv.padding[i].first) + ", " +
                        std::to_string(conv.padding[i].second) + ") for lhs_shape[2:]");
    }
    canonical_out[i + 2] = padded < window ? 0 : (padded - window) / conv.window_strides[i] + 1;
  }
  Shape out(rank);
  for (std::size_t i = 0; i < rank; ++i) out[static_cast<std::size_t>(d.out_spec[i])] = canonical_out[i];
  return out;
}

namespace structural {
namespace {

Aval conv_rule(std::span<const Aval> avals, const Params& params) {
  check_arity("conv_general_dilated", avals, 2);
  const Aval& lhs = avals[0];
  const Aval& rhs = avals[1];
  const ConvParams conv = conv_params(params);
  if (lhs.dtype != rhs.dtype) {
    throw type_error("lax.conv_general_dilated requires arguments to have the same dtypes, got " +
                     std::string(dtype_name(lhs.dtype)) + ", " + std::string(dtype_name(rhs.dtype)) + ".");
  }
  if (lhs.dtype == DType::kBool) {
    throw type_error("conv_general_dilated does not accept dtype bool. Accepted dtypes are subtypes of number.");
  }
  const DType dtype = conv.preferred_element_type.value_or(lhs.dtype);
  Aval out = derived_aval(lhs, conv_output_shape(lhs.shape, rhs.shape, conv), dtype, lhs.weak_type && rhs.weak_type);
  out.varying = union_varying(avals);
  apply_sharding_param(out, params, "out_sharding");
  return out;
}

// Every param printed, sorted; dimension_numbers as ConvDimensionNumbers' repr. out_sharding is a param from 0.7.2.
Params conv_printer(const Eqn& eqn, const JaxProfile& profile) {
  Params printed;
  for (const auto& [key, value] : eqn.params) {
    if (key == "out_sharding" && !profile.has(JaxFeature::kConvOutShardingParam)) continue;
    if (key == "dimension_numbers") {
      const auto& specs = value.as_items(key);
      printed.emplace_back(
          key, ParamValue::Verbatim{"ConvDimensionNumbers(lhs_spec=" + structural::int_tuple(specs.at(0).as_ints(key)) +
                                    ", rhs_spec=" + structural::int_tuple(specs.at(1).as_ints(key)) +
                                    ", out_spec=" + structural::int_tuple(specs.at(2).as_ints(key)) + ")"});
      continue;
    }
    printed.emplace_back(key, value);
  }
  std::sort(printed.begin(), printed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return printed;
}

// An operand's elements in compute type T, its dims reordered to `order` (canonical (N, C, S...) or (O, I, K...)).
template <typename T>
std::vector<T> canonical_values(const Buffer& operand, const std::vector<int64_t>& order) {
  const std::shared_ptr<Buffer> moved = transposed(operand, order);
  std::vector<T> values(static_cast<std::size_t>(moved->size()));
  visit_dtype(moved->dtype(), [&](auto tag) {
    constexpr DType kDType = decltype(tag)::value;
    using Storage = typename DTypeTraits<kDType>::storage;
    const auto stored = std::as_const(*moved).template as<Storage>();
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<T>(load<kDType>(stored[i]));
  });
  return values;
}

template <typename T>
void multiply_accumulate(int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    gemm_accumulate(m, n, k, a, k, 1, b, n, 1, c);
  } else {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t l = 0; l < k; ++l) {
        const T x = a[i * k + l];
        for (int64_t j = 0; j < n; ++j) c[i * n + j] += x * b[l * n + j];
      }
    }
  }
}

// XLA's convolution: out[n, o, p...] = sum over the group's input features i and kernel taps k of
// lhs[batch row, feature, p * stride - pad_low + k * rhs_dilation (in lhs-dilated coordinates)] * rhs[o, i, k].
// Taps that land between dilated lhs elements or in the padding read zero.
template <typename T>
std::vector<T> convolve(const Buffer& lhs, const Buffer& rhs, const ConvParams& conv, const Shape& canonical_out) {
  const std::vector<T> x = canonical_values<T>(lhs, conv.dims.lhs_spec);
  const std::vector<T> w = canonical_values<T>(rhs, conv.dims.rhs_spec);
  Shape in_shape(conv.dims.lhs_spec.size());
  Shape kernel_shape(conv.dims.rhs_spec.size());
  for (std::size_t i = 0; i < in_shape.size(); ++i) {
    in_shape[i] = lhs.shape()[static_cast<std::size_t>(conv.dims.lhs_spec[i])];
    kernel_shape[i] = rhs.shape()[static_cast<std::size_t>(conv.dims.rhs_spec[i])];
  }
  const int64_t groups = std::max(conv.feature_group_count, conv.batch_group_count);
  const int64_t out_batch = canonical_out[0];
  const int64_t out_features = canonical_out[1];
  const int64_t group_out = out_features / groups;
  const int64_t in_features = kernel_shape[1];
  const Shape out_spatial(canonical_out.begin() + 2, canonical_out.end());
  const Shape taps_shape(kernel_shape.begin() + 2, kernel_shape.end());
  const Shape in_spatial(in_shape.begin() + 2, in_shape.end());
  const int64_t positions = product(out_spatial);
  const int64_t taps = product(taps_shape);
  const int64_t in_positions = product(in_spatial);
  const int64_t depth = in_features * taps;
  std::vector<T> out(static_cast<std::size_t>(out_batch * out_features * positions), T{0});
  if (positions == 0 || out_batch == 0 || out_features == 0) return out;

  // For each output position and tap, the flat lhs spatial offset it reads, or -1 for a zero: the convolution's
  // window is the kernel, dilated by rhs_dilation, over the lhs dilated by lhs_dilation.
  std::vector<int64_t> source;
  source.reserve(static_cast<std::size_t>(positions * taps));
  WindowParams window;
  window.window_dimensions = taps_shape;
  window.window_strides = conv.window_strides;
  window.padding = conv.padding;
  window.base_dilation = conv.lhs_dilation;
  window.window_dilation = conv.rhs_dilation;
  for_each_tap(in_spatial, out_spatial, window, [&source](int64_t, int64_t from) { source.push_back(from); });

  std::vector<T> patches(static_cast<std::size_t>(positions * depth));
  std::vector<T> weights(static_cast<std::size_t>(depth * group_out));
  std::vector<T> product_block(static_cast<std::size_t>(positions * group_out));
  for (int64_t g = 0; g < groups; ++g) {
    // Weights of the group's output features as a (feature, tap) x out-feature matrix.
    for (int64_t o = 0; o < group_out; ++o) {
      for (int64_t l = 0; l < depth; ++l) {
        weights[static_cast<std::size_t>(l * group_out + o)] =
            w[static_cast<std::size_t>((g * group_out + o) * depth + l)];
      }
    }
    const int64_t feature_offset = conv.feature_group_count > 1 ? g * in_features : 0;
    const int64_t batch_offset = conv.batch_group_count > 1 ? g * out_batch : 0;
    for (int64_t n = 0; n < out_batch; ++n) {
      const T* image = x.data() + ((n + batch_offset) * in_shape[1] + feature_offset) * in_positions;
      for (int64_t pos = 0; pos < positions; ++pos) {
        T* row = patches.data() + pos * depth;
        const int64_t* from = source.data() + pos * taps;
        for (int64_t i = 0; i < in_features; ++i) {
          const T* channel = image + i * in_positions;
          for (int64_t tap = 0; tap < taps; ++tap) row[i * taps + tap] = from[tap] < 0 ? T{0} : channel[from[tap]];
        }
      }
      std::fill(product_block.begin(), product_block.end(), T{0});
      multiply_accumulate(positions, group_out, depth, patches.data(), weights.data(), product_block.data());
      for (int64_t o = 0; o < group_out; ++o) {
        T* target = out.data() + (n * out_features + g * group_out + o) * positions;
        for (int64_t pos = 0; pos < positions; ++pos)
          target[pos] = product_block[static_cast<std::size_t>(pos * group_out + o)];
      }
    }
  }
  return out;
}

template <typename T>
BufferPtr conv_kernel_as(std::span<const BufferPtr> inputs, const Aval& out, const ConvParams& conv) {
  Shape canonical_out(out.shape.size());
  for (std::size_t i = 0; i < canonical_out.size(); ++i) {
    canonical_out[i] = out.shape[static_cast<std::size_t>(conv.dims.out_spec[i])];
  }
  const std::vector<T> values = convolve<T>(*inputs[0], *inputs[1], conv, canonical_out);
  auto canonical = std::make_shared<Buffer>(out.dtype, canonical_out, Buffer::Uninitialized{});
  visit_dtype(out.dtype, [&](auto tag) {
    constexpr DType kDType = decltype(tag)::value;
    using Storage = typename DTypeTraits<kDType>::storage;
    using Compute = typename DTypeTraits<kDType>::compute;
    auto stored = canonical->template as_mutable<Storage>();
    for (std::size_t i = 0; i < values.size(); ++i) stored[i] = store<kDType>(static_cast<Compute>(values[i]));
  });
  // Canonical (N, O, P...) back to the requested layout: result dim out_spec[i] is canonical dim i.
  std::vector<int64_t> to_out(canonical_out.size());
  for (std::size_t i = 0; i < to_out.size(); ++i)
    to_out[static_cast<std::size_t>(conv.dims.out_spec[i])] = static_cast<int64_t>(i);
  return transposed(*canonical, to_out);
}

BufferPtr conv_kernel(std::span<const BufferPtr> inputs, const Aval& out, const Params& params) {
  const ConvParams conv = conv_params(params);
  const DType in = inputs[0]->dtype();
  // Half-precision convolutions are computed in float32 and rounded once, as XLA's CPU backend does.
  if (in == DType::kFloat64 || out.dtype == DType::kFloat64) return conv_kernel_as<double>(inputs, out, conv);
  if (is_floating(in) || is_floating(out.dtype)) return conv_kernel_as<float>(inputs, out, conv);
  return conv_kernel_as<int64_t>(inputs, out, conv);
}

}  // namespace

void register_convolution_primitive() {
  register_single_result("conv_general_dilated", conv_rule, conv_kernel, conv_printer);
}

}  // namespace structural
}  // namespace shardscope
