// Batching rules of layout and indexing primitives (lax.py and slicing.py rules: reshape, pad, gather, ...).
#include <algorithm>
#include <numeric>

#include "base/error.h"
#include "ops/structural.h"
#include "transforms/batching.h"

namespace shardscope::batching {
namespace {

std::vector<int64_t> ints(const Params& params, const std::string& key) { return param(params, key).as_ints(key); }

std::optional<std::vector<int64_t>> optional_ints(const Params& params, const std::string& key) {
  const ParamValue* value = find_param(params, key);
  if (value == nullptr || value->is_none()) return std::nullopt;
  return value->as_ints(key);
}

std::vector<int64_t> shifted(const std::vector<int64_t>& dims, int64_t by) {
  std::vector<int64_t> out;
  out.reserve(dims.size());
  for (const int64_t d : dims) out.push_back(d + by);
  return out;
}

// Dimensions at or after the inserted batch dim move up by one.
std::vector<int64_t> bumped(const std::vector<int64_t>& dims, int64_t bdim) {
  std::vector<int64_t> out;
  out.reserve(dims.size());
  for (const int64_t d : dims) out.push_back(d >= bdim ? d + 1 : d);
  return out;
}

std::vector<BatchedValue> one(Atom value, std::optional<int64_t> dim) { return {{std::move(value), dim}}; }

std::vector<BatchedValue> broadcast_in_dim_rule(JaxprBuilder& builder, std::span<const BatchedValue> args,
                                                const Params& params) {
  const BatchedValue& operand = args[0];
  const Atom moved = move_axis(builder, operand.value, *operand.batch_dim, 0);
  Shape shape = ints(params, "shape");
  shape.insert(shape.begin(), shape_of(operand.value)[static_cast<std::size_t>(*operand.batch_dim)]);
  std::vector<int64_t> dims = shifted(ints(params, "broadcast_dimensions"), 1);
  dims.insert(dims.begin(), 0);
  Params out = with_param(params, "shape", ParamValue::int_tuple(shape));
  out = with_param(out, "broadcast_dimensions", ParamValue::int_tuple(dims));
  return one(builder.bind1("broadcast_in_dim", {moved}, out), 0);
}

std::vector<BatchedValue> reshape_rule(JaxprBuilder& builder, std::span<const BatchedValue> args,
                                       const Params& params) {
  const BatchedValue& operand = args[0];
  const Atom moved = move_axis(builder, operand.value, *operand.batch_dim, 0);
  Shape sizes = ints(params, "new_sizes");
  sizes.insert(sizes.begin(), shape_of(moved)[0]);
  Params out = with_param(params, "new_sizes", ParamValue::int_tuple(sizes));
  if (auto dims = optional_ints(params, "dimensions")) {
    std::vector<int64_t> moved_dims = shifted(*dims, 1);
    moved_dims.insert(moved_dims.begin(), 0);
    out = with_param(out, "dimensions", ParamValue::int_tuple(moved_dims));
  }
  return one(builder.bind1("reshape", {moved}, out), 0);
}

std::vector<BatchedValue> transpose_rule(JaxprBuilder& builder, std::span<const BatchedValue> args,
                                         const Params& params) {
  const int64_t bdim = *args[0].batch_dim;
  std::vector<int64_t> permutation = bumped(ints(params, "permutation"), bdim);
  permutation.insert(permutation.begin(), bdim);
  return one(builder.bind1("transpose", {args[0].value}, {{"permutation", ParamValue::int_tuple(permutation)}}), 0);
}

std::vector<BatchedValue> squeeze_rule(JaxprBuilder& builder, std::span<const BatchedValue> args,
                                       const Params& params) {
  const Atom moved = move_axis(builder, args[0].value, *args[0].batch_dim, 0);
  const std::vector<int64_t> dims = shifted(ints(params, "dimensions"), 1);
  return one(builder.bind1("squeeze", {moved}, with_param(params, "dimensions", ParamValue::int_tuple(dims))), 0);
}

std::vector<BatchedValue> concatenate_rule(JaxprBuilder& builder, std::span<const BatchedValue> args,
                                           const Params& params) {
  const int64_t size = mapped_size(args);
  std::vector<Atom> operands;
  for (const BatchedValue& arg : args) {
    operands.push_back(arg.batch_dim ? move_axis(builder, arg.value, *arg.batch_dim, 0)
                                     : broadcast_leading(builder, arg.value, {size}));
  }
  const int64_t dimension = param(params, "dimension").as_int("dimension") + 1;
  return one(builder.bind1("concatenate", operands, with_param(params, "dimension", dimension)), 0);
}

std::vector<BatchedValue> split_rule(JaxprBuilder& builder, std::span<const BatchedValue> args, const Params& params) {
  const int64_t bdim = *args[0].batch_dim;
  const int64_t axis = param(params, "axis").as_int("axis");
  const Params out = with_param(params, "axis", axis >= bdim ? axis + 1 : axis);
  return all_at(builder.bind("split", {args[0].value}, out), bdim);
}

// lax._stack_batch_rule: one shared batch dim stays put (the stacked axis placed around it); otherwise every
// operand's batch dim moves to the front (unbatched ones broadcast) and the stack goes one axis further in.
std::vector<BatchedValue> stack_rule(JaxprBuilder& builder, std::span<const BatchedValue> args, const Params& params) {
  const int64_t axis = param(params, "axis").as_int("axis");
  const std::optional<int64_t> bdim = args[0].batch_dim;
  if (bdim && std::all_of(args.begin(), args.end(), [&](const BatchedValue& a) { return a.batch_dim == bdim; })) {
    const bool before = axis <= *bdim;
    return one(builder.bind1("stack", values(args), with_param(params, "axis", before ? axis : axis + 1)),
               before ? *bdim + 1 : *bdim);
  }
  const int64_t size = mapped_size(args);
  std::vector<Atom> operands;
  for (const BatchedValue& arg : args) {
    operands.push_back(arg.batch_dim ? move_axis(builder, arg.value, *arg.batch_dim, 0)
                                     : broadcast_leading(builder, arg.value, {size}));
  }
  return one(builder.bind1("stack", operands, with_param(params, "axis", axis + 1)), 0);
}

// lax._unstack_batch_rule: the axis shifts past the batch dim, and each result keeps the batch dim where it lands.
std::vector<BatchedValue> unstack_rule(JaxprBuilder& builder, std::span<const BatchedValue> args,
                                       const Params& params) {
  const int64_t bdim = *args[0].batch_dim;
  const int64_t axis = param(params, "axis").as_int("axis");
  const bool before = axis < bdim;
  return all_at(builder.bind("unstack", {args[0].value}, with_param(params, "axis", before ? axis : axis + 1)),
                before ? bdim - 1 : bdim);
}

std::vector<ParamValue> padding_entries(const Params& params) {
  const auto* tuple = param(params, "padding_config").get_if<ParamValue::Tuple>();
  if (tuple == nullptr) throw type_error("pad padding_config must be a tuple of (low, high, interior) triples");
  return tuple->items;
}

std::vector<BatchedValue> pad_rule(JaxprBuilder& builder, std::span<const BatchedValue> args, const Params& params) {
  Atom operand = args[0].value;
  int64_t operand_bdim = args[0].batch_dim.value_or(0);
  const BatchedValue& padding_value = args[1];
  if (!args[0].batch_dim) {
    const int64_t size = shape_of(padding_value.value)[static_cast<std::size_t>(*padding_value.batch_dim)];
    operand = broadcast_leading(builder, operand, {size});
  }
  std::vector<ParamValue> config = padding_entries(params);
  config.insert(config.begin() + operand_bdim, ParamValue::int_tuple({0, 0, 0}));
  const Params padded = with_param(params, "padding_config", ParamValue::tuple(config));
  if (!padding_value.batch_dim) return one(builder.bind1("pad", {operand, padding_value.value}, padded), operand_bdim);
  // A per-example padding value: pad with zeros, then select the padding value where the mask says so.
  const Aval& aval = atom_aval(operand);
  const Atom zero = scalar_literal(0, aval.dtype, false);
  const Atom x = builder.bind1("pad", {operand, zero}, padded);
  const Atom ones = broadcast_in_dim(builder, scalar_literal(1, DType::kBool, false), aval.shape, {});
  const Atom mask = builder.bind1("pad", {ones, scalar_literal(0, DType::kBool, false)}, padded);
  const Atom fill = broadcast_in_dim(builder, padding_value.value, shape_of(x), {operand_bdim});
  return one(builder.bind1("select_n", {mask, fill, x}), operand_bdim);
}

std::vector<BatchedValue> rev_rule(JaxprBuilder& builder, std::span<const BatchedValue> args, const Params& params) {
  const int64_t bdim = *args[0].batch_dim;
  const std::vector<int64_t> dims = bumped(ints(params, "dimensions"), bdim);
  return one(builder.bind1("rev", {args[0].value}, with_param(params, "dimensions", ParamValue::int_tuple(dims))),
             bdim);
}

std::vector<BatchedValue> slice_rule(JaxprBuilder& builder, std::span<const BatchedValue> args, const Params& params) {
  const int64_t bdim = *args[0].batch_dim;
  std::vector<int64_t> start = ints(params, "start_indices");
  std::vector<int64_t> limit = ints(params, "limit_indices");
  start.insert(start.begin() + bdim, 0);
  limit.insert(limit.begin() + bdim, shape_of(args[0].value)[static_cast<std::size_t>(bdim)]);
  Params out = with_param(params, "start_indices", ParamValue::int_tuple(start));
  out = with_param(out, "limit_indices", ParamValue::int_tuple(limit));
  if (auto strides = optional_ints(params, "strides")) {
    strides->insert(strides->begin() + bdim, 1);
    out = with_param(out, "strides", ParamValue::int_tuple(*strides));
  }
  return one(builder.bind1("slice", {args[0].value}, out), bdim);
}

// slicing._gather_batching_rule.
std::vector<BatchedValue> gather_batch(JaxprBuilder& builder, const BatchedValue& operand, const BatchedValue& indices,
                                       const Params& params) {
  const GatherDimensionNumbers numbers = parse_gather_dimension_numbers(param(params, "dimension_numbers"));
  Shape slice_sizes = ints(params, "slice_sizes");
  GatherDimensionNumbers out = numbers;
  Params updated = params;
  Atom operand_value = operand.value;
  Atom indices_value = indices.value;
  if (operand.batch_dim && !indices.batch_dim) {
    operand_value = move_axis(builder, operand.value, *operand.batch_dim, 0);
    slice_sizes.insert(slice_sizes.begin(), shape_of(operand_value)[0]);
    out.offset_dims = shifted(numbers.offset_dims, 1);
    out.offset_dims.insert(out.offset_dims.begin(), 0);
    out.collapsed_slice_dims = shifted(numbers.collapsed_slice_dims, 1);
    out.operand_batching_dims = shifted(numbers.operand_batching_dims, 1);
    out.start_index_map = shifted(numbers.start_index_map, 1);
  } else if (!operand.batch_dim && indices.batch_dim) {
    indices_value = move_axis(builder, indices.value, *indices.batch_dim, 0);
    out.offset_dims = shifted(numbers.offset_dims, 1);
    out.start_indices_batching_dims = shifted(numbers.start_indices_batching_dims, 1);
    // Batched lookups into one array are no longer sorted or unique.
    updated = with_param(updated, "unique_indices", false);
    updated = with_param(updated, "indices_are_sorted", false);
  } else {
    operand_value = move_axis(builder, operand.value, *operand.batch_dim, 0);
    indices_value = move_axis(builder, indices.value, *indices.batch_dim, 0);
    slice_sizes.insert(slice_sizes.begin(), shape_of(operand_value)[0] == 0 ? 0 : 1);
    out.collapsed_slice_dims = shifted(numbers.collapsed_slice_dims, 1);
    out.operand_batching_dims = shifted(numbers.operand_batching_dims, 1);
    out.operand_batching_dims.insert(out.operand_batching_dims.begin(), 0);
    out.start_indices_batching_dims = shifted(numbers.start_indices_batching_dims, 1);
    out.start_indices_batching_dims.insert(out.start_indices_batching_dims.begin(), 0);
    out.offset_dims = shifted(numbers.offset_dims, 1);
    out.start_index_map = shifted(numbers.start_index_map, 1);
  }
  updated = with_param(updated, "dimension_numbers", gather_dimension_numbers_param(out));
  updated = with_param(updated, "slice_sizes", ParamValue::int_tuple(slice_sizes));
  return one(builder.bind1("gather", {operand_value, indices_value}, updated), 0);
}

// slicing._batch_dynamic_slice_indices: scalar start indices stacked into one index array.
BatchedValue stacked_indices(JaxprBuilder& builder, std::span<const BatchedValue> indices) {
  const auto mapped = std::find_if(indices.begin(), indices.end(), [](const BatchedValue& i) { return i.batch_dim; });
  std::vector<Atom> pieces;
  if (mapped == indices.end()) {
    for (const BatchedValue& index : indices) pieces.push_back(broadcast_leading(builder, index.value, {1}));
    return {builder.bind1("concatenate", pieces, {{"dimension", int64_t{0}}}), std::nullopt};
  }
  const int64_t size = shape_of(mapped->value)[static_cast<std::size_t>(*mapped->batch_dim)];
  for (const BatchedValue& index : indices) {
    pieces.push_back(broadcast_in_dim(builder, index.value, {size, 1},
                                      index.batch_dim ? std::vector<int64_t>{0} : std::vector<int64_t>{}));
  }
  return {builder.bind1("concatenate", pieces, {{"dimension", int64_t{1}}}), 0};
}

std::vector<BatchedValue> dynamic_slice_rule(JaxprBuilder& builder, std::span<const BatchedValue> args,
                                             const Params& params) {
  const BatchedValue& operand = args[0];
  const int64_t rank = rank_of(operand.value) - (operand.batch_dim ? 1 : 0);
  std::vector<int64_t> dims(static_cast<std::size_t>(rank));
  std::iota(dims.begin(), dims.end(), 0);
  const BatchedValue index = stacked_indices(builder, args.subspan(1, static_cast<std::size_t>(rank)));
  const Params gather_params = {
      {"dimension_numbers", gather_dimension_numbers_param({dims, {}, dims, {}, {}})},
      {"fill_value", ParamValue::None{}},
      {"indices_are_sorted", true},
      {"mode", gather_mode_param(GatherMode::kClip)},
      {"slice_sizes", param(params, "slice_sizes")},
      {"unique_indices", true},
  };
  return gather_batch(builder, operand, index, gather_params);
}

using Rule = std::vector<BatchedValue> (*)(JaxprBuilder&, std::span<const BatchedValue>, const Params&);

void add(const std::string& name, Rule rule) {
  register_batch_rule(name, [rule](JaxprBuilder& builder, std::span<const BatchedValue> args, const Params& params,
                                   const BatchAxis&) { return rule(builder, args, params); });
}

}  // namespace

void register_structural_batch_rules() {
  add("broadcast_in_dim", broadcast_in_dim_rule);
  add("reshape", reshape_rule);
  add("transpose", transpose_rule);
  add("squeeze", squeeze_rule);
  add("concatenate", concatenate_rule);
  add("split", split_rule);
  add("stack", stack_rule);
  add("unstack", unstack_rule);
  add("pad", pad_rule);
  add("rev", rev_rule);
  add("slice", slice_rule);
  add("dynamic_slice", dynamic_slice_rule);
  add("gather", [](JaxprBuilder& builder, std::span<const BatchedValue> args, const Params& params) {
    return gather_batch(builder, args[0], args[1], params);
  });
  // sort and top_k: every mapped operand's batch dim moved to the front, the sorted dim shifted past it.
  for (const char* name : {"sort", "top_k"}) {
    const std::string primitive = name;
    const std::string key = primitive == "sort" ? "dimension" : "axis";
    register_batch_rule(primitive, [primitive, key](JaxprBuilder& builder, std::span<const BatchedValue> args,
                                                    const Params& params, const BatchAxis&) {
      const int64_t size = mapped_size(args);
      std::vector<Atom> operands;
      for (const BatchedValue& arg : args) operands.push_back(bdim_at_front(builder, arg, size));
      return all_at(builder.bind(primitive, operands, with_param(params, key, param(params, key).as_int(key) + 1)), 0);
    });
  }
  // iota has no operands, so it is never mapped: it rebinds as it is.
  register_batch_rule(
      "iota", [](JaxprBuilder& builder, std::span<const BatchedValue> args, const Params& params, const BatchAxis&) {
        return all_at(builder.bind("iota", values(args), params), std::nullopt);
      });
  // JAX batches these through scatter, which the engine lacks: map them one element at a time.
  for (const char* name :
       {"dynamic_update_slice", "scatter", "scatter-add", "scatter-sub", "scatter-mul", "scatter-min", "scatter-max"}) {
    const std::string primitive = name;
    register_batch_rule(primitive, [primitive](JaxprBuilder& builder, std::span<const BatchedValue> args,
                                               const Params& params, const BatchAxis& axis) {
      return batch_by_unrolling(builder, primitive, args, params, axis);
    });
  }
}

}  // namespace shardscope::batching
