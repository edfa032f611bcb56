// The windowed reductions' derivative and batching rules as lax's windowed_reductions module states them:
// reduce_window_sum is linear (its transpose pads the cotangent and sums windows again), the max and min pools
// differentiate through select_and_gather_add, whose transpose is select_and_scatter_add; vmap adds a window of
// one along the mapped dim.
#include "transforms/window_rules.h"

#include "base/error.h"
#include "ops/convolution.h"
#include "ops/windowed.h"
#include "transforms/autodiff_internal.h"
#include "transforms/batching.h"

namespace shardscope {
namespace {

using Cts = std::vector<std::optional<Atom>>;

Params with_select(Params params, const std::string& select) {
  params.emplace(params.begin(), "select_prim", select);
  return params;
}

Params scatter_params(const WindowParams& w, const std::string& select) {
  std::vector<ParamValue> pads;
  for (const auto& [lo, hi] : w.padding) pads.push_back(ParamValue::int_tuple({lo, hi}));
  return {{"select_prim", select},
          {"window_dimensions", ParamValue::int_tuple(w.window_dimensions)},
          {"window_strides", ParamValue::int_tuple(w.window_strides)},
          {"padding", ParamValue::tuple(pads)}};
}

// lax's _reduce_window_sum_transpose_rule: the cotangent spread back over the stride gaps, padded so each input
// element's windows line up, then summed over windows of the same size.
Cts reduce_window_sum_transpose(JaxprBuilder& b, const Atom& ct, std::span<const std::optional<Atom>>,
                                std::span<const Aval> avals, const Params& params) {
  const WindowParams w = window_params(params);
  const Shape& input = avals[0].shape;
  const Shape& out = atom_aval(ct).shape;
  std::vector<ParamValue> config;
  for (std::size_t d = 0; d < input.size(); ++d) {
    const int64_t lhs_dilated = dilated_size(input[d], w.base_dilation[d]);
    const int64_t window = dilated_size(w.window_dimensions[d], w.window_dilation[d]);
    const int64_t out_dilated = dilated_size(out[d], w.window_strides[d]);
    const int64_t before = window - w.padding[d].first - 1;
    const int64_t after = lhs_dilated + window - 1 - out_dilated - before;
    config.push_back(ParamValue::int_tuple({before, after, w.window_strides[d] - 1}));
  }
  const Atom padded =
      b.bind1("pad", {ct, ad::const_like(atom_aval(ct), 0)}, {{"padding_config", ParamValue::tuple(config)}});
  WindowParams back;
  back.window_dimensions = w.window_dimensions;
  back.window_strides = w.base_dilation;
  back.padding.assign(input.size(), {0, 0});
  back.base_dilation.assign(input.size(), 1);
  back.window_dilation = w.window_dilation;
  return Cts{b.bind1("reduce_window_sum", {padded}, window_params_to_params(back))};
}

// lax's _reduce_window_chooser_jvp_rule: the tangent at each window's chosen element.
JvpRule chooser_jvp(const std::string& name, const std::string& select) {
  return [name, select](JaxprBuilder& b, std::span<const Atom> x, std::span<const std::optional<Atom>> t,
                        const Params& params) {
    const Atom out = b.bind1(name, {x[0]}, params);
    std::optional<Atom> tangent;
    if (t[0] && ad::has_tangent_space(atom_aval(x[0]).dtype)) {
      tangent = b.bind1("select_and_gather_add", {*t[0], x[0]}, with_select(params, select));
    }
    return std::pair{std::vector<Atom>{out}, std::vector<std::optional<Atom>>{tangent}};
  };
}

// select_and_gather_add and select_and_scatter_add are linear in the values they move; the operand only decides
// where.
JvpRule linear_in_first(const std::string& name) {
  return
      [name](JaxprBuilder& b, std::span<const Atom> x, std::span<const std::optional<Atom>> t, const Params& params) {
        const Atom out = b.bind1(name, {x[0], x[1]}, params);
        std::optional<Atom> tangent;
        if (t[0]) tangent = b.bind1(name, {*t[0], x[1]}, params);
        return std::pair{std::vector<Atom>{out}, std::vector<std::optional<Atom>>{tangent}};
      };
}

// lax's _select_and_scatter_add_transpose: each window gathers back the cotangent at its selected element.
Cts scatter_add_transpose(JaxprBuilder& b, const Atom& ct, std::span<const std::optional<Atom>> primals,
                          std::span<const Aval>, const Params& params) {
  if (!primals[1]) throw runtime_error("select_and_scatter_add is not linear in its operand");
  const WindowParams w = window_params(params);
  const std::string select = param(params, "select_prim").as_string("select_prim");
  return Cts{b.bind1("select_and_gather_add", {ct, *primals[1]}, with_select(window_params_to_params(w), select)),
             std::nullopt};
}

// lax's _select_and_gather_add_transpose (without window or base dilation, as there).
Cts gather_add_transpose(JaxprBuilder& b, const Atom& ct, std::span<const std::optional<Atom>> primals,
                         std::span<const Aval>, const Params& params) {
  if (!primals[1]) throw runtime_error("select_and_gather_add is not linear in its operand");
  const WindowParams w = window_params(params);
  for (std::size_t d = 0; d < w.window_dimensions.size(); ++d) {
    if (w.window_dilation[d] != 1 || w.base_dilation[d] != 1) {
      throw not_implemented_error("the derivative of a max or min pool with dilation is not supported by shardscope");
    }
  }
  const std::string select = param(params, "select_prim").as_string("select_prim");
  return Cts{b.bind1("select_and_scatter_add", {ct, *primals[1]}, scatter_params(w, select)), std::nullopt};
}

// _reduce_window_batch_rule: a window of one (stride one, no padding or dilation) along the mapped dim.
WindowParams with_unit_window_at(WindowParams w, int64_t dim) {
  const auto at = static_cast<std::ptrdiff_t>(dim);
  w.window_dimensions.insert(w.window_dimensions.begin() + at, 1);
  w.window_strides.insert(w.window_strides.begin() + at, 1);
  w.padding.insert(w.padding.begin() + at, {0, 0});
  w.base_dilation.insert(w.base_dilation.begin() + at, 1);
  w.window_dilation.insert(w.window_dilation.begin() + at, 1);
  return w;
}

BatchRule reduce_window_batch(const std::string& name) {
  return [name](JaxprBuilder& b, std::span<const BatchedValue> args, const Params& params, const BatchAxis&) {
    const int64_t bdim = *args[0].batch_dim;
    const WindowParams w = with_unit_window_at(window_params(params), bdim);
    return batching::all_at(b.bind(name, {args[0].value}, window_params_to_params(w)), bdim);
  };
}

// select_and_gather_add / select_and_scatter_add: both operands moved to the front, a unit window there.
BatchRule select_batch(const std::string& name) {
  return [name](JaxprBuilder& b, std::span<const BatchedValue> args, const Params& params, const BatchAxis& axis) {
    const Atom first = batching::bdim_at_front(b, args[0], axis.size);
    const Atom second = batching::bdim_at_front(b, args[1], axis.size);
    const WindowParams w = with_unit_window_at(window_params(params), 0);
    const std::string select = param(params, "select_prim").as_string("select_prim");
    const Params batched =
        name == "select_and_scatter_add" ? scatter_params(w, select) : with_select(window_params_to_params(w), select);
    return batching::all_at(b.bind(name, {first, second}, batched), 0);
  };
}

}  // namespace

void register_window_ad_rules() {
  register_jvp_rule("reduce_window_sum", ad::linear_jvp("reduce_window_sum"));
  register_transpose_rule("reduce_window_sum", ad::single_output_transpose(reduce_window_sum_transpose));
  register_jvp_rule("reduce_window_max", chooser_jvp("reduce_window_max", "ge"));
  register_jvp_rule("reduce_window_min", chooser_jvp("reduce_window_min", "le"));
  register_jvp_rule("select_and_gather_add", linear_in_first("select_and_gather_add"));
  register_jvp_rule("select_and_scatter_add", linear_in_first("select_and_scatter_add"));
  register_transpose_rule("select_and_scatter_add", ad::single_output_transpose(scatter_add_transpose));
  register_transpose_rule("select_and_gather_add", ad::single_output_transpose(gather_add_transpose));
}

void register_window_batch_rules() {
  for (const char* name : {"reduce_window_sum", "reduce_window_max", "reduce_window_min"}) {
    register_batch_rule(name, reduce_window_batch(name));
  }
  for (const char* name : {"select_and_gather_add", "select_and_scatter_add"}) {
    register_batch_rule(name, select_batch(name));
  }
}

}  // namespace shardscope
