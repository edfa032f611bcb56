// JVP rules of the structural, reduction and contraction primitives (mostly linear in their data operands).
#include <algorithm>

#include "base/error.h"
#include "ops/structural.h"
#include "transforms/autodiff_internal.h"

namespace shardscope::ad {
namespace {

const Aval& av(const Atom& atom) { return atom_aval(atom); }

// The op applied to the tangents of its data operands (zeros instantiated); the other operands
// (integer indices) pass their primal values. `data` says which operands carry data.
JvpRule linear_in(const std::string& name, std::function<bool(std::size_t index, std::size_t count)> data) {
  return [name, data](JaxprBuilder& b, std::span<const Atom> x, std::span<const std::optional<Atom>> t,
                      const Params& params) {
    std::vector<Atom> outs = b.bind(name, {x.begin(), x.end()}, params);
    std::vector<Atom> tangent_ins;
    for (std::size_t i = 0; i < x.size(); ++i) {
      tangent_ins.push_back(data(i, x.size()) ? instantiate(b, t[i], av(x[i])) : x[i]);
    }
    std::vector<Atom> tangent_outs = b.bind(name, std::move(tangent_ins), params);
    std::vector<std::optional<Atom>> tangents;
    for (std::size_t i = 0; i < outs.size(); ++i) {
      tangents.push_back(has_tangent_space(av(outs[i]).dtype) ? std::optional<Atom>(tangent_outs[i]) : std::nullopt);
    }
    return std::pair{outs, tangents};
  };
}

// t[..., idx, ...] along `dim` with idx of t's shape (or shorter along dim): take_along_axis's gather, the other
// dims batching dims.
Atom take_along(JaxprBuilder& b, const Atom& t, const Atom& idx, int64_t dim) {
  Shape index_shape = av(idx).shape;
  GatherDimensionNumbers numbers{{}, {dim}, {dim}, {}, {}};
  std::vector<int64_t> slice_sizes;
  for (std::size_t d = 0; d < index_shape.size(); ++d) {
    slice_sizes.push_back(av(t).shape[d] == 0 ? 0 : 1);
    if (static_cast<int64_t>(d) == dim) continue;
    numbers.operand_batching_dims.push_back(static_cast<int64_t>(d));
    numbers.start_indices_batching_dims.push_back(static_cast<int64_t>(d));
  }
  index_shape.push_back(1);
  return b.bind1("gather", {t, reshape(b, idx, index_shape)},
                 {{"dimension_numbers", gather_dimension_numbers_param(numbers)},
                  {"fill_value", ParamValue::None{}},
                  {"indices_are_sorted", false},
                  {"mode", gather_mode_param(GatherMode::kPromiseInBounds)},
                  {"slice_sizes", ParamValue::int_tuple(slice_sizes)},
                  {"unique_indices", false}});
}

// lax._sort_jvp: sort an iota along with the operands; each tangent is permuted as its operand was.
std::pair<std::vector<Atom>, std::vector<std::optional<Atom>>> sort_jvp(JaxprBuilder& b, std::span<const Atom> x,
                                                                        std::span<const std::optional<Atom>> t,
                                                                        const Params& params) {
  const int64_t dim = param(params, "dimension").as_int("dimension");
  std::vector<Atom> operands(x.begin(), x.end());
  operands.push_back(b.bind1("iota", {},
                             {{"dimension", dim},
                              {"dtype", DType::kInt32},
                              {"shape", ParamValue::int_tuple(av(x[0]).shape)},
                              {"sharding", ParamValue::None{}}}));
  std::vector<Atom> sorted = b.bind("sort", operands, params);
  const Atom permutation = sorted.back();
  sorted.pop_back();
  std::vector<std::optional<Atom>> tangents;
  for (std::size_t i = 0; i < x.size(); ++i) {
    tangents.push_back(t[i] ? std::optional<Atom>(take_along(b, *t[i], permutation, dim)) : std::nullopt);
  }
  return {sorted, tangents};
}

// lax._top_k_jvp: the tangents at the indices top_k chose.
std::pair<std::vector<Atom>, std::vector<std::optional<Atom>>> top_k_jvp(JaxprBuilder& b, std::span<const Atom> x,
                                                                         std::span<const std::optional<Atom>> t,
                                                                         const Params& params) {
  const int64_t axis = param(params, "axis").as_int("axis");
  std::vector<Atom> outs = b.bind("top_k", {x[0]}, params);
  std::vector<std::optional<Atom>> tangents(2);
  if (t[0]) tangents[0] = take_along(b, *t[0], outs[1], axis);
  return {outs, tangents};
}

// Differentiating through these is not supported yet: constants pass (zero tangents), anything else says so.
JvpRule unsupported_unless_constant(const std::string& name) {
  return
      [name](JaxprBuilder& b, std::span<const Atom> x, std::span<const std::optional<Atom>> t, const Params& params) {
        for (const std::optional<Atom>& tangent : t) {
          if (tangent)
            throw not_implemented_error("differentiation of " + name + " is not supported by shardscope yet");
        }
        std::vector<Atom> outs = b.bind(name, {x.begin(), x.end()}, params);
        return std::pair{outs, std::vector<std::optional<Atom>>(outs.size())};
      };
}

std::vector<int64_t> axes_of(const Params& params) { return param(params, "axes").as_ints("axes"); }

// lax._reduce_chooser_jvp_rule: the tangent averaged over the positions that attain the extremum.
std::optional<Atom> chooser_tangent(JaxprBuilder& b, std::span<const Atom> x, std::span<const std::optional<Atom>> t,
                                    const Atom& ans, const Params& params) {
  const std::vector<int64_t> axes = axes_of(params);
  Shape kept = av(x[0]).shape;
  for (const int64_t axis : axes) kept[static_cast<std::size_t>(axis)] = 1;
  const Atom locations = convert(b, compare(b, "eq", x[0], reshape(b, ans, kept)), av(*t[0]).dtype, false);
  const Atom counts = reduce_sum(b, locations, axes);
  return div(b, reduce_sum(b, mul(b, *t[0], locations), axes), counts);
}

// The operand seen as (n, rest) with the reduced axes first, for products that skip one factor.
Atom axes_to_front(JaxprBuilder& b, const Atom& x, const std::vector<int64_t>& axes, int64_t& reduced_size) {
  const Shape& shape = av(x).shape;
  std::vector<int64_t> permutation = axes;
  reduced_size = 1;
  int64_t rest = 1;
  for (const int64_t axis : axes) reduced_size *= shape[static_cast<std::size_t>(axis)];
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) == axes.end()) {
      permutation.push_back(static_cast<int64_t>(d));
      rest *= shape[d];
    }
  }
  return reshape(b, transpose(b, x, permutation), {reduced_size, rest});
}

// d prod(x) = sum_i t_i prod_{j != i} x_j, with the products of the other factors formed from exclusive
// prefix and suffix products so zeros in x are handled exactly.
std::optional<Atom> reduce_prod_tangent(JaxprBuilder& b, std::span<const Atom> x,
                                        std::span<const std::optional<Atom>> t, const Atom& ans, const Params& params) {
  const std::vector<int64_t> axes = axes_of(params);
  int64_t n = 0;
  const Atom flat = axes_to_front(b, x[0], axes, n);
  const Atom flat_t = axes_to_front(b, *t[0], axes, n);
  const int64_t rest = av(flat).shape[1];
  if (n == 0) return full_like(b, av(ans), 0);
  const Params cumprod_forward{{"axis", 0}, {"reverse", false}};
  const Params cumprod_backward{{"axis", 0}, {"reverse", true}};
  const Atom ones = full_like(b, Aval::of({1, rest}, av(flat).dtype), 1);
  auto slice_rows = [&](int64_t start, int64_t limit) {
    return b.bind1("slice", {flat},
                   {{"start_indices", ParamValue::int_tuple({start, 0})},
                    {"limit_indices", ParamValue::int_tuple({limit, rest})},
                    {"strides", ParamValue::None{}}});
  };
  const Atom before =
      b.bind1("cumprod", {b.bind1("concatenate", {ones, slice_rows(0, n - 1)}, {{"dimension", 0}})}, cumprod_forward);
  const Atom after =
      b.bind1("cumprod", {b.bind1("concatenate", {slice_rows(1, n), ones}, {{"dimension", 0}})}, cumprod_backward);
  const Atom summed = reduce_sum(b, mul(b, flat_t, mul(b, before, after)), {0});
  return reshape(b, summed, av(ans).shape);
}

// Tangents of cummax/cummin: each output takes the tangent of the prefix (suffix, reversed) element it
// equals, averaged over ties, the cumulative analogue of the reduce_max rule.
std::optional<Atom> cumulative_chooser_tangent(JaxprBuilder& b, std::span<const Atom> x,
                                               std::span<const std::optional<Atom>> t, const Atom& ans,
                                               const Params& params) {
  const auto axis = static_cast<std::size_t>(param(params, "axis").as_int("axis"));
  const ParamValue* reverse_param = find_param(params, "reverse");
  const bool reverse = reverse_param != nullptr && reverse_param->as_bool("reverse");
  const Shape& shape = av(x[0]).shape;
  Shape pairs = shape;  // (..., i, j, ...): output position i, source position j
  pairs.insert(pairs.begin() + static_cast<std::ptrdiff_t>(axis) + 1, shape[axis]);
  std::vector<int64_t> source_dims;
  std::vector<int64_t> target_dims;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    const auto shifted = static_cast<int64_t>(d < axis ? d : d + 1);
    source_dims.push_back(shifted);
    target_dims.push_back(d == axis ? static_cast<int64_t>(axis) : shifted);
  }
  const Atom sources = broadcast_in_dim(b, x[0], pairs, source_dims);
  const Atom targets = broadcast_in_dim(b, ans, pairs, target_dims);
  const Atom source_tangents = broadcast_in_dim(b, *t[0], pairs, source_dims);
  auto position = [&](std::size_t dim) {
    return b.bind1("iota", {},
                   {{"dimension", static_cast<int64_t>(dim)},
                    {"dtype", DType::kInt32},
                    {"shape", ParamValue::int_tuple(pairs)},
                    {"sharding", ParamValue::None{}}});
  };
  const Atom in_window = compare(b, reverse ? "ge" : "le", position(axis + 1), position(axis));
  const Atom hits = convert(b, b.bind1("and", {compare(b, "eq", sources, targets), in_window}), av(*t[0]).dtype, false);
  const std::vector<int64_t> source_axis{static_cast<int64_t>(axis) + 1};
  return div(b, reduce_sum(b, mul(b, source_tangents, hits), source_axis), reduce_sum(b, hits, source_axis));
}

// d cumprod(x) = cumprod(x) * cumsum(t / x); exact wherever x has no zeros.
std::optional<Atom> cumprod_tangent(JaxprBuilder& b, std::span<const Atom> x, std::span<const std::optional<Atom>> t,
                                    const Atom& ans, const Params& params) {
  return mul(b, ans, b.bind1("cumsum", {div(b, *t[0], x[0])}, params));
}

}  // namespace

JvpRule bilinear_jvp(const std::string& name) {
  return
      [name](JaxprBuilder& b, std::span<const Atom> x, std::span<const std::optional<Atom>> t, const Params& params) {
        const Atom out = b.bind1(name, {x[0], x[1]}, params);
        std::optional<Atom> tangent;
        if (t[0]) tangent = b.bind1(name, {*t[0], x[1]}, params);
        if (t[1]) tangent = add_tangents(b, tangent, b.bind1(name, {x[0], *t[1]}, params));
        if (!has_tangent_space(av(out).dtype)) tangent.reset();
        return std::pair{std::vector<Atom>{out}, std::vector<std::optional<Atom>>{tangent}};
      };
}

void register_structural_jvp_rules() {
  const auto all = [](std::size_t, std::size_t) { return true; };
  for (const char* name : {"broadcast_in_dim", "reshape", "transpose", "squeeze", "rev", "reduce_sum", "slice", "pad",
                           "concatenate", "split", "stack", "unstack", "cumsum"}) {
    register_jvp_rule(name, linear_in(name, all));
  }
  register_jvp_rule("dynamic_slice", linear_in("dynamic_slice", [](std::size_t i, std::size_t) { return i == 0; }));
  register_jvp_rule("dynamic_update_slice",
                    linear_in("dynamic_update_slice", [](std::size_t i, std::size_t) { return i < 2; }));
  register_jvp_rule("gather", linear_in("gather", [](std::size_t i, std::size_t) { return i == 0; }));
  register_jvp_rule("dot_general", bilinear_jvp("dot_general"));
  register_jvp_rule("reduce_max", single_output_jvp("reduce_max", chooser_tangent));
  register_jvp_rule("reduce_min", single_output_jvp("reduce_min", chooser_tangent));
  register_jvp_rule("reduce_prod", single_output_jvp("reduce_prod", reduce_prod_tangent));
  register_jvp_rule("cummax", single_output_jvp("cummax", cumulative_chooser_tangent));
  register_jvp_rule("cummin", single_output_jvp("cummin", cumulative_chooser_tangent));
  register_jvp_rule("cumprod", single_output_jvp("cumprod", cumprod_tangent));
  // lax.scatter: the tangents scatter like the values (exact for unique indices, which .at[].set gives).
  for (const char* name : {"scatter", "scatter-sub"}) {
    register_jvp_rule(name, linear_in(name, [](std::size_t i, std::size_t) { return i != 1; }));
  }
  for (const char* name : {"scatter-mul", "scatter-min", "scatter-max"}) {
    register_jvp_rule(name, unsupported_unless_constant(name));
  }
  register_jvp_rule("sort", sort_jvp);
  register_jvp_rule("top_k", top_k_jvp);
  for (const char* name : {"argmax", "argmin", "reduce_and", "reduce_or", "reduce_xor", "iota", "stop_gradient"}) {
    register_jvp_rule(name, zero_jvp(name));
  }
}

}  // namespace shardscope::ad
