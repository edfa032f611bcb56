// Transpose rules of the linear structural primitives: shape ops, slicing, gather, reductions, dot_general.
#include <algorithm>

#include "base/error.h"
#include "ops/structural.h"
#include "transforms/autodiff_internal.h"

namespace shardscope::ad {
namespace {

// A value of `like`'s shape and sharding with another dtype (zeros that stand for an operand's cotangent).
Aval typed_like(const Aval& like, DType dtype) {
  Aval out = like;
  out.dtype = dtype;
  out.weak_type = false;
  return out;
}

using Cts = std::vector<std::optional<Atom>>;

std::vector<int64_t> ints(const Params& params, const std::string& key) { return param(params, key).as_ints(key); }

bool has(const std::vector<int64_t>& values, int64_t value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

// Dims of `rank` that are in neither list, in order (lax's `remaining`).
std::vector<int64_t> remaining(std::size_t rank, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out;
  for (std::size_t d = 0; d < rank; ++d) {
    if (!has(a, static_cast<int64_t>(d)) && !has(b, static_cast<int64_t>(d))) out.push_back(static_cast<int64_t>(d));
  }
  return out;
}

Atom pad(JaxprBuilder& b, const Atom& x, const std::vector<std::vector<int64_t>>& config) {
  std::vector<ParamValue> groups;
  for (const auto& g : config) groups.push_back(ParamValue::int_tuple(g));
  return b.bind1("pad", {x, const_like(atom_aval(x), 0)}, {{"padding_config", ParamValue::tuple(groups)}});
}

Atom slice(JaxprBuilder& b, const Atom& x, const std::vector<int64_t>& start, const std::vector<int64_t>& limit,
           const std::optional<std::vector<int64_t>>& strides) {
  return b.bind1("slice", {x},
                 {{"limit_indices", ParamValue::int_tuple(limit)},
                  {"start_indices", ParamValue::int_tuple(start)},
                  {"strides", strides ? ParamValue::int_tuple(*strides) : ParamValue(ParamValue::None{})}});
}

// lax._dot_general_transpose_lhs: contract the cotangent with the other operand, then permute.
Atom dot_transpose_lhs(JaxprBuilder& b, const Atom& g, const Aval& x_aval, const Atom& y,
                       const std::vector<int64_t>& x_contract, const std::vector<int64_t>& y_contract,
                       const std::vector<int64_t>& x_batch, const std::vector<int64_t>& y_batch, const Params& params,
                       bool swap_ans) {
  const std::size_t x_ndim = x_aval.rank();
  const std::vector<int64_t> x_kept = remaining(x_ndim, x_contract, x_batch);
  const std::vector<int64_t> y_kept = remaining(atom_aval(y).rank(), y_contract, y_batch);
  const auto nb = static_cast<int64_t>(x_batch.size());
  std::vector<int64_t> ans_batch = iota_vector(x_batch.size());
  std::vector<int64_t> ans_y;
  const int64_t y_start = swap_ans ? nb : nb + static_cast<int64_t>(x_kept.size());
  for (std::size_t i = 0; i < y_kept.size(); ++i) ans_y.push_back(y_start + static_cast<int64_t>(i));
  std::vector<std::size_t> order(y_contract.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t c) { return y_contract[a] < y_contract[c]; });
  std::vector<int64_t> unsorted = x_batch;
  unsorted.insert(unsorted.end(), x_kept.begin(), x_kept.end());
  for (const std::size_t i : order) unsorted.push_back(x_contract[i]);
  Params dot_params;
  for (const auto& [key, value] : params) {
    if (key == "dimension_numbers") {
      dot_params.emplace_back(key, dot_dimension_numbers_param(ans_y, y_kept, ans_batch, y_batch));
    } else if (key == "out_sharding") {
      // JAX always types the transposed product like the primal operand, so two contracting dims sharded on
      // one axis (x.T @ g for a batch-sharded x) reduce into it instead of being refused as ambiguous.
      dot_params.emplace_back(key, typed_sharding_param(x_aval, unsorted, /*as_cotangent=*/true));
    } else {
      dot_params.emplace_back(key, value);
    }
  }
  const Atom product = b.bind1("dot_general", {g, y}, dot_params);
  Atom x_bar = transpose(b, product, inverse_permutation(unsorted));
  if (atom_aval(x_bar).dtype != x_aval.dtype) x_bar = convert(b, x_bar, x_aval.dtype, x_aval.weak_type);
  return x_bar;
}

void register_shape_ops() {
  register_transpose_rule("broadcast_in_dim", single_output_transpose([](JaxprBuilder& b, const Atom& ct, auto,
                                                                         auto avals, const Params& params) {
                            const Shape& operand_shape = avals[0].shape;
                            const std::vector<int64_t> dims = ints(params, "broadcast_dimensions");
                            std::vector<int64_t> unit_dims;
                            std::vector<int64_t> kept_dims;
                            for (std::size_t i = 0; i < operand_shape.size(); ++i) {
                              if (operand_shape[i] == 1) {
                                unit_dims.push_back(static_cast<int64_t>(i));
                              } else {
                                kept_dims.push_back(dims[i]);
                              }
                            }
                            std::vector<int64_t> axes;
                            for (std::size_t d = 0; d < atom_aval(ct).rank(); ++d) {
                              if (!has(kept_dims, static_cast<int64_t>(d))) axes.push_back(static_cast<int64_t>(d));
                            }
                            Atom summed = reduce_sum(b, ct, axes);
                            if (!unit_dims.empty()) {
                              // lax.expand_dims: size-1 dims back in place.
                              std::vector<int64_t> kept_positions;
                              for (std::size_t i = 0; i < operand_shape.size(); ++i) {
                                if (!has(unit_dims, static_cast<int64_t>(i)))
                                  kept_positions.push_back(static_cast<int64_t>(i));
                              }
                              summed = broadcast_in_dim(b, summed, operand_shape, kept_positions);
                            }
                            return Cts{summed};
                          }));
  register_transpose_rule("reshape",
                          single_output_transpose([](JaxprBuilder& b, const Atom& ct, auto, auto avals, const Params&) {
                            return Cts{reshape(b, ct, avals[0].shape)};
                          }));
  register_transpose_rule("squeeze",
                          single_output_transpose([](JaxprBuilder& b, const Atom& ct, auto, auto avals, const Params&) {
                            return Cts{reshape(b, ct, avals[0].shape)};
                          }));
  register_transpose_rule(
      "transpose", single_output_transpose([](JaxprBuilder& b, const Atom& ct, auto, auto, const Params& params) {
        return Cts{transpose(b, ct, inverse_permutation(ints(params, "permutation")))};
      }));
  register_transpose_rule(
      "rev", single_output_transpose([](JaxprBuilder& b, const Atom& ct, auto, auto, const Params& params) {
        return Cts{b.bind1("rev", {ct}, params)};
      }));
  register_transpose_rule("reduce_sum", single_output_transpose([](JaxprBuilder& b, const Atom& ct, auto, auto avals,
                                                                   const Params& params) {
                            const std::vector<int64_t> axes = ints(params, "axes");
                            // Typed like the summed operand, as JAX's rule passes out_sharding=operand's sharding.
                            return Cts{broadcast_in_dim(b, ct, avals[0].shape, remaining(avals[0].rank(), axes, {}),
                                                        typed_sharding_param(avals[0], iota_vector(avals[0].rank())))};
                          }));
  register_transpose_rule(
      "cumsum", single_output_transpose([](JaxprBuilder& b, const Atom& ct, auto, auto, const Params& params) {
        const ParamValue* reverse = find_param(params, "reverse");
        const bool reversed = reverse != nullptr && reverse->as_bool("reverse");
        return Cts{b.bind1("cumsum", {ct}, {{"axis", param(params, "axis").as_int("axis")}, {"reverse", !reversed}})};
      }));
}

void register_slicing_ops() {
  register_transpose_rule(
      "slice", single_output_transpose([](JaxprBuilder& b, const Atom& ct, auto, auto avals, const Params& params) {
        const Shape& shape = avals[0].shape;
        const std::vector<int64_t> start = ints(params, "start_indices");
        const ParamValue* strides_param = find_param(params, "strides");
        std::vector<std::vector<int64_t>> config;
        const Shape& ct_shape = atom_aval(ct).shape;
        for (std::size_t d = 0; d < shape.size(); ++d) {
          int64_t stride = 1;
          if (strides_param != nullptr && !strides_param->is_none()) {
            stride = strides_param->as_ints("strides")[d];
          }
          const int64_t real_limit = ct_shape[d] == 0 ? start[d] : start[d] + (ct_shape[d] - 1) * stride + 1;
          config.push_back({start[d], shape[d] - real_limit, stride - 1});
        }
        return Cts{pad(b, ct, config)};
      }));
  register_transpose_rule(
      "pad", single_output_transpose([](JaxprBuilder& b, const Atom& ct, auto primals, auto, const Params& params) {
        std::vector<std::vector<int64_t>> unpad;
        std::vector<int64_t> strides;
        for (const ParamValue& group : param(params, "padding_config").as_items("padding_config")) {
          const std::vector<int64_t> lhi = group.as_ints("padding_config");
          unpad.push_back({-lhi[0], -lhi[1], 0});
          strides.push_back(lhi[2] + 1);
        }
        const std::size_t rank = atom_aval(ct).rank();
        Cts cts(2);
        std::optional<Atom> operand_ct;
        if (!primals[0] || !primals[1]) {
          const Atom unpadded = pad(b, ct, unpad);
          operand_ct = slice(b, unpadded, std::vector<int64_t>(rank, 0), atom_aval(unpadded).shape, strides);
        }
        if (!primals[0]) cts[0] = operand_ct;
        if (!primals[1]) {
          cts[1] = sub(b, reduce_sum(b, ct, iota_vector(rank)), reduce_sum(b, *operand_ct, iota_vector(rank)));
        }
        return cts;
      }));
  register_transpose_rule("concatenate", single_output_transpose([](JaxprBuilder& b, const Atom& ct, auto primals,
                                                                    auto avals, const Params& params) {
                            const auto dim = static_cast<std::size_t>(param(params, "dimension").as_int("dimension"));
                            const Shape& shape = atom_aval(ct).shape;
                            Cts cts(primals.size());
                            int64_t offset = 0;
                            for (std::size_t i = 0; i < primals.size(); ++i) {
                              const int64_t size = avals[i].shape[dim];
                              if (!primals[i]) {
                                std::vector<int64_t> start(shape.size(), 0);
                                std::vector<int64_t> limit(shape.begin(), shape.end());
                                start[dim] = offset;
                                limit[dim] = offset + size;
                                cts[i] = slice(b, ct, start, limit, std::nullopt);
                              }
                              offset += size;
                            }
                            return cts;
                          }));
  register_transpose_rule(
      "split", [](JaxprBuilder& b, std::span<const std::optional<Atom>> cts, auto, auto avals, const Params& params) {
        const Shape& shape = avals[0].shape;
        const auto axis = static_cast<std::size_t>(param(params, "axis").as_int("axis"));
        const std::vector<int64_t> sizes = ints(params, "sizes");
        std::vector<Atom> pieces;
        for (std::size_t i = 0; i < cts.size(); ++i) {
          // A zero piece keeps the operand's type, sharding included (JAX's Zero.instantiate), so that the
          // concatenate type-checks under an Explicit mesh.
          Aval piece = avals[0];
          piece.shape = shape;
          piece.shape[axis] = sizes[i];
          pieces.push_back(instantiate(b, cts[i], piece));
        }
        return Cts{b.bind1("concatenate", pieces, {{"dimension", static_cast<int64_t>(axis)}})};
      });
  // stack and unstack transpose to each other (lax._stack_transpose_rule, _unstack_transpose_rule).
  register_transpose_rule(
      "stack", single_output_transpose([](JaxprBuilder& b, const Atom& ct, auto primals, auto, const Params& params) {
        const std::vector<Atom> pieces = b.bind("unstack", {ct}, {{"axis", param(params, "axis")}});
        Cts cts(primals.size());
        for (std::size_t i = 0; i < cts.size() && i < pieces.size(); ++i) {
          if (!primals[i]) cts[i] = pieces[i];
        }
        return cts;
      }));
  register_transpose_rule(
      "unstack", [](JaxprBuilder& b, std::span<const std::optional<Atom>> cts, auto, auto avals, const Params& params) {
        const auto axis = static_cast<std::size_t>(param(params, "axis").as_int("axis"));
        // Every result has one type, so symbolic zeros take a given cotangent's (sharding included); the rule only
        // runs when some cotangent is nonzero.
        Aval piece = avals[0];
        piece.shape.erase(piece.shape.begin() + static_cast<std::ptrdiff_t>(axis));
        if (piece.dim_axes.size() > axis)
          piece.dim_axes.erase(piece.dim_axes.begin() + static_cast<std::ptrdiff_t>(axis));
        for (const std::optional<Atom>& ct : cts) {
          if (ct) {
            piece = atom_aval(*ct);
            break;
          }
        }
        std::vector<Atom> pieces;
        for (const std::optional<Atom>& ct : cts) pieces.push_back(instantiate(b, ct, piece));
        return Cts{b.bind1("stack", pieces, {{"axis", static_cast<int64_t>(axis)}})};
      });
  register_transpose_rule("dynamic_slice", single_output_transpose([](JaxprBuilder& b, const Atom& ct, auto primals,
                                                                      auto avals, const Params&) {
                            std::vector<Atom> inputs{full_like(b, avals[0], 0), ct};
                            for (std::size_t i = 1; i < primals.size(); ++i) inputs.push_back(*primals[i]);
                            Cts cts(primals.size());
                            cts[0] = b.bind1("dynamic_update_slice", std::move(inputs));
                            return cts;
                          }));
  register_transpose_rule(
      "dynamic_update_slice",
      single_output_transpose([](JaxprBuilder& b, const Atom& ct, auto primals, auto avals, const Params&) {
        std::vector<Atom> indices;
        for (std::size_t i = 2; i < primals.size(); ++i) indices.push_back(*primals[i]);
        Cts cts(primals.size());
        if (!primals[0]) {
          std::vector<Atom> inputs{ct, full_like(b, avals[1], 0)};
          inputs.insert(inputs.end(), indices.begin(), indices.end());
          cts[0] = b.bind1("dynamic_update_slice", std::move(inputs));
        }
        if (!primals[1]) {
          std::vector<Atom> inputs{ct};
          inputs.insert(inputs.end(), indices.begin(), indices.end());
          cts[1] =
              b.bind1("dynamic_slice", std::move(inputs), {{"slice_sizes", ParamValue::int_tuple(avals[1].shape)}});
        }
        return cts;
      }));
  register_transpose_rule(
      "gather",
      single_output_transpose([](JaxprBuilder& b, const Atom& ct, auto primals, auto avals, const Params& params) {
        const GatherDimensionNumbers numbers = parse_gather_dimension_numbers(param(params, "dimension_numbers"));
        auto flag = [&](const char* key) {
          const ParamValue* value = find_param(params, key);
          return value != nullptr ? *value : ParamValue(false);
        };
        const ParamValue* mode = find_param(params, "mode");
        const Atom zeros = full_like(b, typed_like(avals[0], atom_aval(ct).dtype), 0);
        Params scatter_params{
            {"dimension_numbers",
             scatter_dimension_numbers_param(numbers.offset_dims, numbers.collapsed_slice_dims, numbers.start_index_map,
                                             numbers.operand_batching_dims, numbers.start_indices_batching_dims)},
            {"indices_are_sorted", flag("indices_are_sorted")},
            {"mode", mode != nullptr ? *mode : gather_mode_param(GatherMode::kFillOrDrop)},
            {"unique_indices", flag("unique_indices")},
            {"update_consts", ParamValue::tuple({})},
            {"update_jaxpr", ParamValue::None{}}};
        return Cts{b.bind1("scatter-add", {zeros, *primals[1], ct}, scatter_params), {}};
      }));
}

// The cotangent of a scatter's updates: the gather that reads each update's window back out of `ct`
// (slicing._scatter_add_transpose_rule and _scatter_transpose_rule), zero where windows fell out of bounds.
Atom scatter_updates_cotangent(JaxprBuilder& b, const Atom& ct, const Atom& indices, const Aval& updates,
                               const Params& params) {
  const auto groups = param(params, "dimension_numbers").as_items("dimension_numbers");
  const auto group = [&](std::size_t i) {
    return i < groups.size() ? groups[i].as_ints("dimension_numbers") : std::vector<int64_t>{};
  };
  const GatherDimensionNumbers numbers{group(0), group(1), group(2), group(3), group(4)};
  std::vector<int64_t> slice_sizes;
  std::size_t pos = 0;
  for (std::size_t i = 0; i < atom_aval(ct).rank(); ++i) {
    const auto dim = static_cast<int64_t>(i);
    const bool inserted =
        std::count(numbers.collapsed_slice_dims.begin(), numbers.collapsed_slice_dims.end(), dim) +
            std::count(numbers.operand_batching_dims.begin(), numbers.operand_batching_dims.end(), dim) >
        0;
    slice_sizes.push_back(inserted ? 1 : updates.shape.at(static_cast<std::size_t>(numbers.offset_dims.at(pos++))));
  }
  const ParamValue* mode = find_param(params, "mode");
  const auto flag = [&](const char* key) {
    const ParamValue* value = find_param(params, key);
    return value != nullptr ? *value : ParamValue(false);
  };
  return b.bind1("gather", {ct, indices},
                 {{"dimension_numbers", gather_dimension_numbers_param(numbers)},
                  {"fill_value", int64_t{0}},
                  {"indices_are_sorted", flag("indices_are_sorted")},
                  {"mode", mode != nullptr ? *mode : gather_mode_param(GatherMode::kFillOrDrop)},
                  {"slice_sizes", ParamValue::int_tuple(slice_sizes)},
                  {"unique_indices", flag("unique_indices")}});
}

void register_scatter_transposes() {
  // scatter-add is linear in the operand (the cotangent passes) and in the updates (gathered back).
  register_transpose_rule("scatter-add", single_output_transpose([](JaxprBuilder& b, const Atom& ct, auto primals,
                                                                    auto avals, const Params& params) {
                            if (!primals[1])
                              throw runtime_error("scatter-add cannot be transposed with respect to its indices");
                            Cts cts(3);
                            if (!primals[0]) cts[0] = ct;
                            if (!primals[2]) cts[2] = scatter_updates_cotangent(b, ct, *primals[1], avals[2], params);
                            return cts;
                          }));
  // scatter overwrites: the operand's cotangent is zero where updates landed; the updates' is read back.
  register_transpose_rule(
      "scatter",
      single_output_transpose([](JaxprBuilder& b, const Atom& ct, auto primals, auto avals, const Params& params) {
        const ParamValue* unique = find_param(params, "unique_indices");
        if (unique == nullptr || unique->get_if<bool>() == nullptr || !*unique->get_if<bool>()) {
          throw not_implemented_error("scatter transpose is only implemented where unique_indices=True");
        }
        if (!primals[1]) throw runtime_error("scatter cannot be transposed with respect to its indices");
        Cts cts(3);
        if (!primals[0]) {
          const Atom zeros = full_like(b, typed_like(avals[2], atom_aval(ct).dtype), 0);
          cts[0] = b.bind1("scatter", {ct, *primals[1], zeros}, params);
        }
        if (!primals[2]) cts[2] = scatter_updates_cotangent(b, ct, *primals[1], avals[2], params);
        return cts;
      }));
}

void register_dot_general() {
  register_transpose_rule(
      "dot_general",
      single_output_transpose([](JaxprBuilder& b, const Atom& ct, auto primals, auto avals, const Params& params) {
        const auto* outer = param(params, "dimension_numbers").get_if<ParamValue::Tuple>();
        const auto contract = outer->items[0].as_items("dimension_numbers");
        const auto batch = outer->items[1].as_items("dimension_numbers");
        const std::vector<int64_t> xc = contract[0].as_ints("dimension_numbers");
        const std::vector<int64_t> yc = contract[1].as_ints("dimension_numbers");
        const std::vector<int64_t> xb = batch[0].as_ints("dimension_numbers");
        const std::vector<int64_t> yb = batch[1].as_ints("dimension_numbers");
        if (!primals[0] && !primals[1]) throw runtime_error("nonlinear dot_general can't be transposed");
        if (!primals[0]) return Cts{dot_transpose_lhs(b, ct, avals[0], *primals[1], xc, yc, xb, yb, params, false), {}};
        return Cts{{}, dot_transpose_lhs(b, ct, avals[1], *primals[0], yc, xc, yb, xb, params, true)};
      }));
}

}  // namespace

void register_structural_transpose_rules() {
  register_shape_ops();
  register_slicing_ops();
  register_dot_general();
  register_scatter_transposes();
}

}  // namespace shardscope::ad
