// Convolutions as JAX defines them, built from pads (concatenations), strided slices and dot_generals.
#include "api/convolution.h"

#include <algorithm>

#include "base/error.h"

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

Value zeros_shaped(const Value& like, Shape shape) { return full(shape, typed_scalar(0, dtype_of(like))); }

// Pads (or, for negative amounts, crops) dimension `dim` by `low` and `high` elements of zero.
Value pad_dim(Value x, int64_t dim, int64_t low, int64_t high) {
  const auto d = static_cast<std::size_t>(dim);
  const auto crop = [&](int64_t from, int64_t to) {
    std::vector<int64_t> start(shape_of(x).size(), 0);
    std::vector<int64_t> limit(shape_of(x).begin(), shape_of(x).end());
    start[d] = from;
    limit[d] = to;
    return slice(x, start, limit);
  };
  if (low < 0) x = crop(-low, shape_of(x)[d]);
  if (high < 0) x = crop(0, shape_of(x)[d] + high);
  std::vector<Value> parts;
  Shape block = shape_of(x);
  if (low > 0) {
    block[d] = low;
    parts.push_back(zeros_shaped(x, block));
  }
  parts.push_back(x);
  if (high > 0) {
    block[d] = high;
    parts.push_back(zeros_shaped(x, block));
  }
  return parts.size() == 1 ? x : concatenate(parts, dim);
}

// d - 1 zeros between neighbours along `dim` (lhs dilation, the transposed convolution's input).
Value dilate_dim(const Value& x, int64_t dim, int64_t factor) {
  const auto d = static_cast<std::size_t>(dim);
  const int64_t n = shape_of(x)[d];
  if (factor == 1 || n == 0) return x;
  Shape shape = shape_of(x);
  Shape expanded = shape;
  expanded.insert(expanded.begin() + dim + 1, 1);
  const Value column = reshape(x, expanded);
  Shape gap = expanded;
  gap[d + 1] = factor - 1;
  const Value spread = concatenate({column, zeros_shaped(x, gap)}, dim + 1);
  Shape merged = shape;
  merged[d] = n * factor;
  const Value flat = reshape(spread, merged);
  std::vector<int64_t> start(shape.size(), 0);
  std::vector<int64_t> limit(merged.begin(), merged.end());
  limit[d] = (n - 1) * factor + 1;
  return slice(flat, start, limit);
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
  if (ndim_of(lhs) != ndim_of(rhs) || ndim_of(lhs) < 2) {
    throw type_error("conv_general_dilated lhs and rhs must have the same rank (at least 2), got " +
                     std::to_string(ndim_of(lhs)) + " and " + std::to_string(ndim_of(rhs)));
  }
  if (dtype_of(lhs) != dtype_of(rhs) && !preferred_element_type) {
    throw type_error("lax.conv_general_dilated requires arguments to have the same dtypes, got " +
                     std::string(dtype_name(dtype_of(lhs))) + ", " + std::string(dtype_name(dtype_of(rhs))) + ".");
  }
  if (batch_group_count != 1) {
    throw not_implemented_error("lax.conv_general_dilated with batch_group_count > 1 is not supported by shardscope");
  }
  const std::size_t n = static_cast<std::size_t>(ndim_of(lhs)) - 2;
  const std::vector<int64_t> strides = or_ones(window_strides, n);
  const std::vector<int64_t> lhs_dil = or_ones(lhs_dilation, n);
  const std::vector<int64_t> rhs_dil = or_ones(rhs_dilation, n);
  if (strides.size() != n || lhs_dil.size() != n || rhs_dil.size() != n) {
    throw type_error("conv_general_dilated: window_strides and dilations need one entry per spatial dimension (" +
                     std::to_string(n) + ")");
  }
  // Canonical layouts: lhs (N, C, S...), rhs (O, I, K...).
  Value x = transpose(lhs, dims.lhs_spec);
  const Value w = transpose(rhs, dims.rhs_spec);
  const int64_t groups = feature_group_count;
  const int64_t in_features = shape_of(x)[1];
  const int64_t kernel_in = shape_of(w)[1];
  const int64_t out_features = shape_of(w)[0];
  if (groups < 1 || in_features != kernel_in * groups || out_features % groups != 0) {
    throw type_error("conv_general_dilated lhs feature dimension size (" + std::to_string(in_features) +
                     ") must equal the rhs input feature dimension size (" + std::to_string(kernel_in) +
                     ") times feature_group_count (" + std::to_string(groups) + ")");
  }
  for (std::size_t i = 0; i < n; ++i) x = dilate_dim(x, static_cast<int64_t>(i + 2), lhs_dil[i]);
  Shape in_spatial(shape_of(x).begin() + 2, shape_of(x).end());
  Shape window;
  for (std::size_t i = 0; i < n; ++i) window.push_back((shape_of(w)[i + 2] - 1) * rhs_dil[i] + 1);
  const auto pads = padding.name ? named_padding(*padding.name, in_spatial, window, strides) : padding.pairs;
  if (pads.size() != n) throw type_error("conv_general_dilated padding needs one (low, high) pair per spatial dim");
  for (std::size_t i = 0; i < n; ++i) x = pad_dim(x, static_cast<int64_t>(i + 2), pads[i].first, pads[i].second);
  Shape out_spatial;
  for (std::size_t i = 0; i < n; ++i) {
    const int64_t room = shape_of(x)[i + 2] - window[i];
    out_spatial.push_back(room < 0 ? 0 : room / strides[i] + 1);
  }
  const int64_t per_group_out = out_features / groups;
  std::vector<Value> group_results;
  for (int64_t g = 0; g < groups; ++g) {
    std::optional<Value> total;
    const int64_t kernel_positions = product(Shape(shape_of(w).begin() + 2, shape_of(w).end()));
    for (int64_t flat = 0; flat < kernel_positions; ++flat) {
      // Kernel position k: the input window it sees is a strided slice of the padded input.
      std::vector<int64_t> k(n);
      int64_t rest = flat;
      for (std::size_t i = n; i-- > 0;) {
        k[i] = rest % shape_of(w)[i + 2];
        rest /= shape_of(w)[i + 2];
      }
      std::vector<int64_t> start{0, g * kernel_in};
      std::vector<int64_t> limit{shape_of(x)[0], (g + 1) * kernel_in};
      std::vector<int64_t> step{1, 1};
      std::vector<int64_t> w_start{g * per_group_out, 0};
      std::vector<int64_t> w_limit{(g + 1) * per_group_out, kernel_in};
      for (std::size_t i = 0; i < n; ++i) {
        start.push_back(k[i] * rhs_dil[i]);
        limit.push_back(out_spatial[i] == 0 ? start.back() : start.back() + (out_spatial[i] - 1) * strides[i] + 1);
        step.push_back(strides[i]);
        w_start.push_back(k[i]);
        w_limit.push_back(k[i] + 1);
      }
      const Value patch = slice(x, start, limit, step);
      Shape tap_shape{per_group_out, kernel_in};
      const Value tap = reshape(slice(w, w_start, w_limit), tap_shape);
      // (N, I, S'...) x (O, I) contracting I: (N, S'..., O).
      const Value term = dot_general(patch, tap, DotDimensionNumbers{{1}, {1}, {}, {}}, preferred_element_type);
      total = total ? add(*total, term) : term;
    }
    group_results.push_back(*total);
  }
  const Value product_out =
      group_results.size() == 1 ? group_results[0] : concatenate(group_results, static_cast<int64_t>(n + 1));
  // (N, S'..., O) to canonical (N, O, S'...), then to the requested output layout.
  std::vector<int64_t> to_canonical{0, static_cast<int64_t>(n + 1)};
  for (std::size_t i = 0; i < n; ++i) to_canonical.push_back(static_cast<int64_t>(i + 1));
  const Value canonical = transpose(product_out, to_canonical);
  std::vector<int64_t> to_out(n + 2);
  for (std::size_t i = 0; i < n + 2; ++i) to_out[static_cast<std::size_t>(dims.out_spec[i])] = static_cast<int64_t>(i);
  return transpose(canonical, to_out);
}

}  // namespace shardscope::api::lax
