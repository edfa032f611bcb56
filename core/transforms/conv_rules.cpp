// conv_general_dilated's derivative and batching rules as lax's convolution module states them: bilinear jvp,
// transposes that are themselves convolutions (groups moved between feature and batch dims), and vmap folding the
// mapped dim into the batch or feature dims.
#include "transforms/conv_rules.h"

#include <algorithm>

#include "base/error.h"
#include "ops/convolution.h"
#include "transforms/autodiff_internal.h"
#include "transforms/batching.h"

namespace shardscope {
namespace {

using Cts = std::vector<std::optional<Atom>>;

Atom conv(JaxprBuilder& b, const Atom& lhs, const Atom& rhs, const ConvParams& params) {
  return b.bind1("conv_general_dilated", {lhs, rhs}, conv_params_to_params(params));
}

// lax's _reshape_axis_into: moves axis `src` next to `dst` (numbered without `src`) and merges it in, major.
Atom reshape_axis_into(JaxprBuilder& b, int64_t src, int64_t dst, const Atom& x) {
  const Shape& shape = atom_aval(x).shape;
  std::vector<int64_t> permutation;
  for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i) {
    if (i != src) permutation.push_back(i);
  }
  permutation.insert(permutation.begin() + dst, src);
  Shape merged;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (static_cast<int64_t>(i) != src) merged.push_back(shape[i]);
  }
  merged[static_cast<std::size_t>(dst)] *= shape[static_cast<std::size_t>(src)];
  return ad::reshape(b, ad::transpose(b, x, permutation), merged);
}

// lax's _reshape_axis_out_of: splits axis `src` into (size1, rest).
Atom reshape_axis_out_of(JaxprBuilder& b, int64_t src, int64_t size1, const Atom& x) {
  Shape shape = atom_aval(x).shape;
  const auto at = static_cast<std::size_t>(src);
  const int64_t rest = shape[at] / size1;
  shape[at] = size1;
  shape.insert(shape.begin() + src + 1, rest);
  return ad::reshape(b, x, shape);
}

std::vector<int64_t> spatial_of(const std::vector<int64_t>& spec) { return {spec.begin() + 2, spec.end()}; }

std::vector<int64_t> swap_first_two(std::vector<int64_t> spec) {
  std::swap(spec[0], spec[1]);
  return spec;
}

Shape taken(const Shape& shape, const std::vector<int64_t>& dims) {
  Shape out;
  for (const int64_t d : dims) out.push_back(shape[static_cast<std::size_t>(d)]);
  return out;
}

// Padding of the lhs cotangent's convolution: the window runs backwards over the dilated cotangent.
std::vector<std::pair<int64_t, int64_t>> lhs_transpose_padding(const Shape& in, const Shape& window,
                                                               const ConvParams& c, const Shape& out) {
  std::vector<std::pair<int64_t, int64_t>> pads;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const int64_t lhs_dilated = dilated_size(in[i], c.lhs_dilation[i]);
    const int64_t rhs_dilated = dilated_size(window[i], c.rhs_dilation[i]);
    const int64_t out_dilated = dilated_size(out[i], c.window_strides[i]);
    const int64_t before = rhs_dilated - c.padding[i].first - 1;
    pads.emplace_back(before, lhs_dilated + rhs_dilated - 1 - out_dilated - before);
  }
  return pads;
}

// Padding of the rhs cotangent's convolution: the forward low padding, and the high side that ends the window
// where the forward pass's last window ended.
std::vector<std::pair<int64_t, int64_t>> rhs_transpose_padding(const Shape& in, const Shape& window,
                                                               const ConvParams& c, const Shape& out) {
  std::vector<std::pair<int64_t, int64_t>> pads;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const int64_t lhs_dilated = dilated_size(in[i], c.lhs_dilation[i]);
    const int64_t rhs_dilated = dilated_size(window[i], c.rhs_dilation[i]);
    const int64_t out_dilated = dilated_size(out[i], c.window_strides[i]);
    const int64_t low = c.padding[i].first;
    pads.emplace_back(low, (out_dilated - lhs_dilated) + (rhs_dilated - low - 1));
  }
  return pads;
}

Atom to_dtype(JaxprBuilder& b, const Atom& x, const Aval& like) {
  return atom_aval(x).dtype == like.dtype ? x : ad::convert(b, x, like.dtype, like.weak_type);
}

Atom transpose_lhs(JaxprBuilder& b, const Atom& g, const Aval& lhs, Atom rhs, const ConvParams& c) {
  const ConvDims& d = c.dims;
  const Shape rhs_shape = atom_aval(rhs).shape;
  ConvParams t = c;
  int64_t feature_groups = c.feature_group_count;
  if (c.feature_group_count > 1 || c.batch_group_count > 1) {
    const int64_t groups = std::max(c.feature_group_count, c.batch_group_count);
    rhs = reshape_axis_out_of(b, d.rhs_spec[0], groups, rhs);
    rhs = reshape_axis_into(b, d.rhs_spec[0], d.rhs_spec[1], rhs);
    feature_groups = groups;
  }
  t.dims = {d.out_spec, swap_first_two(d.rhs_spec), d.lhs_spec};
  t.padding = lhs_transpose_padding(taken(lhs.shape, spatial_of(d.lhs_spec)), taken(rhs_shape, spatial_of(d.rhs_spec)),
                                    c, taken(atom_aval(g).shape, spatial_of(d.out_spec)));
  t.window_strides = c.lhs_dilation;
  t.lhs_dilation = c.window_strides;
  t.feature_group_count = feature_groups;
  t.batch_group_count = 1;
  t.out_sharding = ad::typed_sharding_param(lhs, {}, /*as_cotangent=*/true);
  Atom reversed = b.bind1("rev", {rhs}, {{"dimensions", ParamValue::int_tuple(spatial_of(d.rhs_spec))}});
  if (atom_aval(reversed).dtype != atom_aval(g).dtype) reversed = ad::convert(b, reversed, atom_aval(g).dtype, false);
  Atom out = to_dtype(b, conv(b, g, reversed, t), lhs);
  if (c.batch_group_count > 1) {
    out = reshape_axis_out_of(b, d.lhs_spec[1], c.batch_group_count, out);
    out = reshape_axis_into(b, d.lhs_spec[1], d.lhs_spec[0], out);
  }
  return out;
}

std::optional<Atom> transpose_rhs(JaxprBuilder& b, const Atom& g, Atom lhs, const Aval& rhs, const ConvParams& c) {
  if (product(atom_aval(g).shape) == 0) return std::nullopt;  // degenerate: no window ever ran
  const ConvDims& d = c.dims;
  ConvParams t = c;
  t.feature_group_count = c.batch_group_count;
  t.batch_group_count = c.feature_group_count;
  t.dims = {swap_first_two(d.lhs_spec), swap_first_two(d.out_spec), swap_first_two(d.rhs_spec)};
  t.padding = rhs_transpose_padding(taken(atom_aval(lhs).shape, spatial_of(d.lhs_spec)),
                                    taken(rhs.shape, spatial_of(d.rhs_spec)), c,
                                    taken(atom_aval(g).shape, spatial_of(d.out_spec)));
  t.window_strides = c.rhs_dilation;
  t.rhs_dilation = c.window_strides;
  t.out_sharding = ad::typed_sharding_param(rhs, {}, /*as_cotangent=*/true);
  if (atom_aval(lhs).dtype != atom_aval(g).dtype) lhs = ad::convert(b, lhs, atom_aval(g).dtype, false);
  return to_dtype(b, conv(b, lhs, g, t), rhs);
}

Cts conv_transpose(JaxprBuilder& b, const Atom& g, std::span<const std::optional<Atom>> primals,
                   std::span<const Aval> avals, const Params& params) {
  const ConvParams c = conv_params(params);
  if (!primals[0] && !primals[1]) throw runtime_error("nonlinear conv_general_dilated can't be transposed");
  if (!primals[0]) return Cts{transpose_lhs(b, g, avals[0], *primals[1], c), {}};
  return Cts{{}, transpose_rhs(b, g, *primals[0], avals[1], c)};
}

// vmap: the mapped dim joins the lhs batch (lhs mapped), the rhs output features (rhs mapped), or both with
// the mapped size as extra feature (or batch) groups; the result's mapped dim is split back out of the batch or
// feature dim.
std::vector<BatchedValue> conv_batch(JaxprBuilder& b, std::span<const BatchedValue> args, const Params& params) {
  ConvParams c = conv_params(params);
  const ConvDims& d = c.dims;
  const Atom& lhs = args[0].value;
  const Atom& rhs = args[1].value;
  const std::optional<int64_t> lhs_bdim = args[0].batch_dim;
  const std::optional<int64_t> rhs_bdim = args[1].batch_dim;
  const auto size_at = [](const Atom& x, int64_t dim) { return atom_aval(x).shape[static_cast<std::size_t>(dim)]; };
  if (!lhs_bdim && !rhs_bdim) return batching::all_at({conv(b, lhs, rhs, c)}, std::nullopt);
  const int64_t mapped = lhs_bdim ? size_at(lhs, *lhs_bdim) : size_at(rhs, *rhs_bdim);
  if (mapped == 0 || product(atom_aval(lhs).shape) == 0 || product(atom_aval(rhs).shape) == 0) {
    throw not_implemented_error("vmap of conv_general_dilated over an empty axis is not supported by shardscope");
  }
  if (lhs_bdim && rhs_bdim) {
    Atom new_lhs = lhs;
    if (c.batch_group_count > 1) {
      new_lhs = reshape_axis_into(b, *lhs_bdim, d.lhs_spec[0], lhs);
      c.batch_group_count *= mapped;
    } else {
      new_lhs = reshape_axis_into(b, *lhs_bdim, d.lhs_spec[1], lhs);
      c.feature_group_count *= mapped;
    }
    const Atom new_rhs = reshape_axis_into(b, *rhs_bdim, d.rhs_spec[0], rhs);
    const Atom out = reshape_axis_out_of(b, d.out_spec[1], mapped, conv(b, new_lhs, new_rhs, c));
    return batching::all_at({out}, d.out_spec[1]);
  }
  if (lhs_bdim) {
    Atom new_lhs = lhs;
    if (c.batch_group_count == 1) {
      new_lhs = reshape_axis_into(b, *lhs_bdim, d.lhs_spec[0], lhs);
    } else {
      new_lhs = reshape_axis_out_of(b, d.lhs_spec[0] + (*lhs_bdim <= d.lhs_spec[0] ? 1 : 0), c.batch_group_count, lhs);
      new_lhs = reshape_axis_into(b, *lhs_bdim + (d.lhs_spec[0] < *lhs_bdim ? 1 : 0), d.lhs_spec[0] + 1, new_lhs);
      new_lhs = reshape_axis_into(b, d.lhs_spec[0], d.lhs_spec[0], new_lhs);
    }
    const Atom out = reshape_axis_out_of(b, d.out_spec[0], mapped, conv(b, new_lhs, rhs, c));
    return batching::all_at({out}, d.out_spec[0]);
  }
  if (c.feature_group_count == 1 && c.batch_group_count == 1) {
    const Atom new_rhs = reshape_axis_into(b, *rhs_bdim, d.rhs_spec[0], rhs);
    const Atom out = reshape_axis_out_of(b, d.out_spec[1], mapped, conv(b, lhs, new_rhs, c));
    return batching::all_at({out}, d.out_spec[1]);
  }
  // Groups stay outermost in the output features: factor them out, fold the mapped dim in, put them back.
  const int64_t groups = std::max(c.feature_group_count, c.batch_group_count);
  Atom new_rhs = reshape_axis_out_of(b, d.rhs_spec[0] + (*rhs_bdim <= d.rhs_spec[0] ? 1 : 0), groups, rhs);
  new_rhs = reshape_axis_into(b, *rhs_bdim + (d.rhs_spec[0] < *rhs_bdim ? 1 : 0), d.rhs_spec[0] + 1, new_rhs);
  new_rhs = reshape_axis_into(b, d.rhs_spec[0], d.rhs_spec[0], new_rhs);
  Atom out = conv(b, lhs, new_rhs, c);
  out = reshape_axis_out_of(b, d.out_spec[1], groups, out);
  out = reshape_axis_out_of(b, d.out_spec[1] + 1, mapped, out);
  out = reshape_axis_into(b, d.out_spec[1], d.out_spec[1] + 1, out);
  return batching::all_at({out}, d.out_spec[1]);
}

}  // namespace

void register_conv_ad_rules() {
  register_jvp_rule("conv_general_dilated", ad::bilinear_jvp("conv_general_dilated"));
  register_transpose_rule("conv_general_dilated", ad::single_output_transpose(conv_transpose));
}

void register_conv_batch_rule() {
  register_batch_rule("conv_general_dilated",
                      [](JaxprBuilder& b, std::span<const BatchedValue> args, const Params& params, const BatchAxis&) {
                        return conv_batch(b, args, params);
                      });
}

}  // namespace shardscope
