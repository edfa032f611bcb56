// lax.conv_general_dilated's argument forms (named padding, string dimension numbers) bound as the primitive.
#include "api/convolution.h"

#include <algorithm>

#include "api/session.h"
#include "base/error.h"
#include "ops/convolution.h"

namespace shardscope::api::lax {
namespace {

std::vector<int64_t> iota_dims(std::size_t n) {
  std::vector<int64_t> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<int64_t>(i);
  return out;
}

std::vector<int64_t> spec_from_string(const std::string& spec, char batch, char feature,
                                      const std::string& spatial_order) {
  const auto at = [&spec](char c) {
    const auto i = spec.find(c);
    if (i == std::string::npos) throw type_error("conv dimension spec " + spec + " has no '" + std::string(1, c) + "'");
    return static_cast<int64_t>(i);
  };
  std::vector<int64_t> out{at(batch), at(feature)};
  for (const char c : spatial_order) out.push_back(at(c));
  return out;
}

std::vector<std::pair<int64_t, int64_t>> named_padding(const std::string& name, const Shape& in, const Shape& window,
                                                       const std::vector<int64_t>& strides) {
  std::vector<std::pair<int64_t, int64_t>> pads;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (name == "VALID") {
      pads.emplace_back(0, 0);
      continue;
    }
    if (name != "SAME" && name != "SAME_LOWER") {
      throw type_error("Unknown padding type: " + name + ".");
    }
    const int64_t out = (in[i] + strides[i] - 1) / strides[i];
    const int64_t total = std::max<int64_t>((out - 1) * strides[i] + window[i] - in[i], 0);
    const int64_t low = name == "SAME" ? total / 2 : (total + 1) / 2;
    pads.emplace_back(low, total - low);
  }
  return pads;
}

std::vector<int64_t> or_ones(const std::vector<int64_t>& values, std::size_t n) {
  return values.empty() ? std::vector<int64_t>(n, 1) : values;
}

}  // namespace

ConvDimensionNumbers conv_dimension_numbers(std::size_t rank, const std::optional<std::vector<std::string>>& specs) {
  if (!specs) return {iota_dims(rank), iota_dims(rank), iota_dims(rank)};
  if (specs->size() != 3) throw type_error("conv dimension_numbers must be (lhs_spec, rhs_spec, out_spec)");
  const std::string& lhs = (*specs)[0];
  const std::string& rhs = (*specs)[1];
  const std::string& out = (*specs)[2];
  if (lhs.size() != rank || rhs.size() != rank || out.size() != rank) {
    throw type_error("convolution dimension_numbers must have the operands' rank " + std::to_string(rank) + ", got " +
                     lhs + ", " + rhs + ", " + out);
  }
  std::string spatial;
  for (const char c : rhs) {
    if (c != 'O' && c != 'I') spatial += c;
  }
  return {spec_from_string(lhs, 'N', 'C', spatial), spec_from_string(rhs, 'O', 'I', spatial),
          spec_from_string(out, 'N', 'C', spatial)};
}

Value conv_general_dilated(const Value& lhs, const Value& rhs, const std::vector<int64_t>& window_strides,
                           const ConvPadding& padding, const std::vector<int64_t>& lhs_dilation,
                           const std::vector<int64_t>& rhs_dilation, const ConvDimensionNumbers& dims,
                           int64_t feature_group_count, int64_t batch_group_count,
                           std::optional<DType> preferred_element_type) {
  if (ndim_of(lhs) != ndim_of(rhs)) {
    throw value_error("conv_general_dilated lhs and rhs must have the same number of dimensions, but got " +
                      std::to_string(ndim_of(lhs)) + " and " + std::to_string(ndim_of(rhs)) + ".");
  }
  const std::size_t n = ndim_of(lhs) < 2 ? 0 : static_cast<std::size_t>(ndim_of(lhs)) - 2;
  ConvParams conv;
  conv.window_strides = window_strides;
  conv.lhs_dilation = or_ones(lhs_dilation, n);
  conv.rhs_dilation = or_ones(rhs_dilation, n);
  conv.dims = {dims.lhs_spec, dims.rhs_spec, dims.out_spec};
  conv.feature_group_count = feature_group_count;
  conv.batch_group_count = batch_group_count;
  if (preferred_element_type) {
    conv.preferred_element_type = canonicalize_dtype(*preferred_element_type, session().enable_x64);
  }
  if (padding.name) {
    if (std::any_of(conv.lhs_dilation.begin(), conv.lhs_dilation.end(), [](int64_t d) { return d != 1; })) {
      throw value_error(
          "String padding is not implemented for transposed convolution using this op. Please either exactly "
          "specify the required padding or use conv_transpose.");
    }
    if (conv.window_strides.size() != n || conv.dims.lhs_spec.size() != n + 2 || conv.dims.rhs_spec.size() != n + 2) {
      throw value_error(
          "conv_general_dilated window and window_strides must have the same number of dimensions, but got " +
          std::to_string(n) + " and " + std::to_string(conv.window_strides.size()));
    }
    Shape in_spatial;
    Shape window;
    for (std::size_t i = 0; i < n; ++i) {
      in_spatial.push_back(shape_of(lhs)[static_cast<std::size_t>(dims.lhs_spec[i + 2])]);
      window.push_back(
          dilated_size(shape_of(rhs)[static_cast<std::size_t>(dims.rhs_spec[i + 2])], conv.rhs_dilation[i]));
    }
    conv.padding = named_padding(*padding.name, in_spatial, window, conv.window_strides);
  } else {
    conv.padding = padding.pairs;
  }
  return bind1("conv_general_dilated", {lhs, rhs}, conv_params_to_params(conv));
}

}  // namespace shardscope::api::lax
