// Batching rules of collectives (parallel.py's vmap-with-axis_name rules), nested jit and relayout primitives.
#include <algorithm>

#include "base/error.h"
#include "ir/primitive.h"
#include "transforms/batching.h"
#include "transforms/call_params.h"

namespace shardscope::batching {
namespace {

std::vector<std::string> axis_names(const Params& params, const std::string& key) {
  const ParamValue& value = param(params, key);
  if (const auto* single = value.get_if<std::string>()) return {*single};
  std::vector<std::string> names;
  for (const ParamValue& item : value.as_items(key)) names.push_back(item.as_string(key));
  return names;
}

bool names_frame(const std::vector<std::string>& names, const BatchAxis& axis) {
  return axis.name && std::find(names.begin(), names.end(), *axis.name) != names.end();
}

std::vector<std::string> without_frame(std::vector<std::string> names, const BatchAxis& axis) {
  std::erase(names, *axis.name);
  return names;
}

int64_t int_of(const Params& params, const std::string& key) { return param(params, key).as_int(key); }

// parallel._splitaxis / _foldaxis: one dim split in two (factor first), or two adjacent dims merged.
Atom split_axis(JaxprBuilder& builder, const Atom& x, int64_t axis, int64_t factor) {
  Shape shape = shape_of(x);
  const auto at = static_cast<std::size_t>(axis);
  const int64_t size = shape[at];
  shape[at] = size / factor;
  shape.insert(shape.begin() + axis, factor);
  return builder.bind1("reshape", {x},
                       {{"new_sizes", ParamValue::int_tuple(shape)},
                        {"dimensions", ParamValue::None{}},
                        {"sharding", ParamValue::None{}}});
}

Atom fold_axis(JaxprBuilder& builder, const Atom& x, int64_t axis) {
  Shape shape = shape_of(x);
  const auto at = static_cast<std::size_t>(axis);
  shape[at] *= shape[at + 1];
  shape.erase(shape.begin() + axis + 1);
  return builder.bind1("reshape", {x},
                       {{"new_sizes", ParamValue::int_tuple(shape)},
                        {"dimensions", ParamValue::None{}},
                        {"sharding", ParamValue::None{}}});
}

Atom times_size(JaxprBuilder& builder, const Atom& x, int64_t size, bool constant_first) {
  const Aval& aval = atom_aval(x);
  const Atom factor = scalar_literal(static_cast<double>(size), aval.dtype, !constant_first);
  return constant_first ? builder.bind1("mul", {factor, x}) : builder.bind1("mul", {x, factor});
}

// parallel._batched_reduction_collective. Reducing over the vmapped axis becomes a reduction over the
// batch dim (reduce_sum/max/min, then the collective over the remaining names), unmapped afterwards.
std::vector<BatchedValue> reduction_collective_rule(const std::string& name, JaxprBuilder& builder,
                                                    std::span<const BatchedValue> args, const Params& params,
                                                    const BatchAxis& axis) {
  const std::vector<std::string> axes = axis_names(params, "axes");
  if (!names_frame(axes, axis)) {
    std::vector<BatchedValue> out = all_at(builder.bind(name, values(args), params), std::nullopt);
    for (std::size_t i = 0; i < out.size(); ++i) out[i].batch_dim = args[i].batch_dim;
    return out;
  }
  const std::vector<std::string> remaining = without_frame(axes, axis);
  const Params rest = with_param(params, "axes", ParamValue::name_tuple(remaining));
  const std::string local = name == "pmax" ? "reduce_max" : name == "pmin" ? "reduce_min" : "reduce_sum";
  std::vector<BatchedValue> out;
  for (const BatchedValue& arg : args) {
    Atom value = arg.value;
    if (arg.batch_dim) {
      value = builder.bind1(local, {value},
                            {{"axes", ParamValue::int_tuple({*arg.batch_dim})}, {"out_sharding", ParamValue::None{}}});
    }
    if (!remaining.empty()) value = builder.bind(name, {value}, rest)[0];
    if (!arg.batch_dim && local == "reduce_sum") value = times_size(builder, value, axis.size, true);
    out.push_back({value, std::nullopt});
  }
  return out;
}

// all_gather and all_gather_invariant (`primitive`): the same rule, rebinding the same primitive.
std::vector<BatchedValue> gather_collective_rule(const std::string& primitive, JaxprBuilder& builder,
                                                 std::span<const BatchedValue> args, const Params& params,
                                                 const BatchAxis& axis) {
  const BatchedValue& x = args[0];
  int64_t dimension = int_of(params, "all_gather_dimension");
  const bool tiled = param(params, "tiled").as_bool("tiled");
  if (!names_frame(axis_names(params, "axis_name"), axis)) {
    std::optional<int64_t> d = x.batch_dim;
    if (d && *d <= dimension) {
      ++dimension;
    } else if (d && !tiled) {
      ++*d;
    }
    return all_at(builder.bind(primitive, {x.value}, with_param(params, "all_gather_dimension", dimension)), d);
  }
  if (axis_names(params, "axis_name").size() > 1) throw not_implemented_error("Please open a feature request!");
  Atom y = x.batch_dim ? move_axis(builder, x.value, *x.batch_dim, dimension)
                       : broadcast_axis(builder, x.value, axis.size, dimension);
  if (tiled) y = fold_axis(builder, y, dimension);
  return {{y, std::nullopt}};
}

std::vector<BatchedValue> reduce_scatter_rule(JaxprBuilder& builder, std::span<const BatchedValue> args,
                                              const Params& params, const BatchAxis& axis) {
  const BatchedValue& x = args[0];
  int64_t dimension = int_of(params, "scatter_dimension");
  const bool tiled = param(params, "tiled").as_bool("tiled");
  if (!names_frame(axis_names(params, "axis_name"), axis)) {
    std::optional<int64_t> d = x.batch_dim;
    if (d && *d <= dimension) {
      ++dimension;
    } else if (d && !tiled) {
      --*d;  // the scattered dim disappears in front of the batch dim
    }
    return all_at(builder.bind("reduce_scatter", {x.value}, with_param(params, "scatter_dimension", dimension)), d);
  }
  if (axis_names(params, "axis_name").size() > 1) throw not_implemented_error("Please open a feature request!");
  Atom y = x.batch_dim
               ? builder.bind1("reduce_sum", {x.value},
                               {{"axes", ParamValue::int_tuple({*x.batch_dim})}, {"out_sharding", ParamValue::None{}}})
               : times_size(builder, x.value, axis.size, false);
  if (tiled) y = split_axis(builder, y, dimension, axis.size);
  return {{y, dimension}};
}

std::vector<BatchedValue> ppermute_rule(JaxprBuilder& builder, std::span<const BatchedValue> args, const Params& params,
                                        const BatchAxis& axis) {
  const BatchedValue& x = args[0];
  const std::vector<std::string> names = axis_names(params, "axis_name");
  if (!names_frame(names, axis)) return all_at(builder.bind("ppermute", {x.value}, params), x.batch_dim);
  const std::vector<std::string> remaining = without_frame(names, axis);
  if (!remaining.empty()) {
    return all_at(
        builder.bind("ppermute", {x.value}, with_param(params, "axis_name", ParamValue::name_tuple(remaining))),
        x.batch_dim);
  }
  if (!x.batch_dim) return {x};
  // Destination j takes source perm^-1(j): gather the batch entries in that order.
  std::vector<int64_t> source(static_cast<std::size_t>(axis.size), 0);
  for (const ParamValue& pair : param(params, "perm").as_items("perm")) {
    const std::vector<int64_t> ends = pair.as_ints("perm");
    source.at(static_cast<std::size_t>(ends.at(1))) = ends.at(0);
  }
  const Shape& shape = shape_of(x.value);
  const auto d = static_cast<std::size_t>(*x.batch_dim);
  std::vector<Atom> pieces;
  for (const int64_t s : source) {
    std::vector<int64_t> start(shape.size(), 0);
    Shape limit = shape;
    start[d] = s;
    limit[d] = s + 1;
    pieces.push_back(builder.bind1("slice", {x.value},
                                   {{"start_indices", ParamValue::int_tuple(start)},
                                    {"limit_indices", ParamValue::int_tuple(limit)},
                                    {"strides", ParamValue::None{}}}));
  }
  return {{builder.bind1("concatenate", pieces, {{"dimension", *x.batch_dim}}), x.batch_dim}};
}

std::vector<BatchedValue> all_to_all_rule(JaxprBuilder& builder, std::span<const BatchedValue> args,
                                          const Params& params, const BatchAxis& axis) {
  const BatchedValue& x = args[0];
  const int64_t split = int_of(params, "split_axis");
  const int64_t concat = int_of(params, "concat_axis");
  const std::vector<std::string> names = axis_names(params, "axis_name");
  if (!names_frame(names, axis)) {
    const int64_t d = *x.batch_dim;
    Params out = with_param(params, "split_axis", split + (d <= split ? 1 : 0));
    out = with_param(out, "concat_axis", concat + (d <= concat ? 1 : 0));
    return all_at(builder.bind("all_to_all", {x.value}, out), d);
  }
  if (names.size() > 1) throw not_implemented_error("all_to_all over the vmapped axis and others together");
  Atom value = x.value;
  int64_t d = 0;
  if (x.batch_dim) {
    d = *x.batch_dim;
  } else {
    value = broadcast_leading(builder, value, {axis.size});
  }
  if (split == concat) {
    const int64_t at = split + (d <= split ? 1 : 0);
    const int64_t d_before = d;
    value = split_axis(builder, value, at, axis.size);
    d += at <= d ? 1 : 0;
    std::vector<int64_t> permutation(static_cast<std::size_t>(rank_of(value)));
    for (std::size_t i = 0; i < permutation.size(); ++i) permutation[i] = static_cast<int64_t>(i);
    std::swap(permutation[static_cast<std::size_t>(d)], permutation[static_cast<std::size_t>(at)]);
    value = builder.bind1("transpose", {value}, {{"permutation", ParamValue::int_tuple(permutation)}});
    return {{fold_axis(builder, value, at), d_before}};
  }
  value = fold_axis(builder, move_axis(builder, value, d, concat), concat);
  return {{split_axis(builder, value, split, axis.size), split}};
}

std::vector<BatchedValue> axis_index_rule(JaxprBuilder& builder, std::span<const BatchedValue>, const Params& params,
                                          const BatchAxis& axis) {
  if (!names_frame(axis_names(params, "axis_name"), axis)) {
    return all_at(builder.bind("axis_index", {}, params), std::nullopt);
  }
  const Params iota = {{"dtype", DType::kInt32},
                       {"shape", ParamValue::int_tuple({axis.size})},
                       {"dimension", int64_t{0}},
                       {"sharding", ParamValue::None{}}};
  return {{builder.bind1("iota", {}, iota), 0}};
}

// pjit's batcher: the inner program is batched with the same input dims; outputs keep the dims it gives.
std::vector<BatchedValue> jit_rule(JaxprBuilder& builder, std::span<const BatchedValue> args, const Params& params,
                                   const BatchAxis& axis) {
  const auto* ref = param(params, "jaxpr").get_if<ParamValue::JaxprRef>();
  if (ref == nullptr || !*ref) throw type_error("jit equation without a jaxpr");
  JaxprBuilder inner;
  std::vector<BatchedValue> inner_args;
  for (const BatchedValue& arg : args) inner_args.push_back({inner.arg(atom_aval(arg.value)), arg.batch_dim});
  const std::vector<BatchedValue> results = batch_jaxpr_into(inner, **ref, inner_args, axis);
  std::vector<Atom> outs = values(results);
  const ParamValue::JaxprRef batched = inner.build(std::move(outs));
  std::vector<BatchedValue> out =
      all_at(builder.bind("jit", values(args), call_params_with_body(params, batched)), std::nullopt);
  for (std::size_t i = 0; i < out.size(); ++i) out[i].batch_dim = results[i].batch_dim;
  return out;
}

// A sharding for the per-example value, widened to the batched one: the batch dim at `dim` is unsharded
// (JAX's sharding_constraint and reshard batchers insert spmd_axis_name there, None without one).
PartitionSpec spec_with_batch_dim(const PartitionSpec& spec, std::size_t dim) {
  std::vector<SpecEntry> entries = spec.entries();
  if (entries.size() < dim) entries.resize(dim, SpecEntry::none());
  entries.insert(entries.begin() + static_cast<std::ptrdiff_t>(dim), SpecEntry::none());
  PartitionSpec out(std::move(entries));
  out.set_unreduced(spec.unreduced(), spec.unreduced_kind());
  out.set_reduced(spec.reduced());
  return out;
}

Params with_batched_sharding(const Params& params, const std::string& key, std::size_t dim) {
  const ParamValue* value = find_param(params, key);
  if (value == nullptr) return params;
  if (const auto* named = value->get_if<NamedSharding>()) {
    NamedSharding widened = *named;
    widened.spec = spec_with_batch_dim(named->spec, dim);
    return with_param(params, key, widened);
  }
  if (const auto* spec = value->get_if<PartitionSpec>())
    return with_param(params, key, spec_with_batch_dim(*spec, dim));
  return params;
}

// Primitives that only retag their operands (layout, varying axes) keep every batch dim where it is.
std::vector<BatchedValue> passthrough_rule(const std::string& name, JaxprBuilder& builder,
                                           std::span<const BatchedValue> args, const Params& params,
                                           const BatchAxis& axis) {
  Params updated = params;
  if ((name == "pvary" || name == "vary_unreduced_cast_p" || name == "reduced_vary_cast_p") && axis.name) {
    const std::vector<std::string> axes = axis_names(params, "axes");
    updated = with_param(params, "axes", ParamValue::name_tuple(without_frame(axes, axis)));
  }
  if (!args.empty() && args[0].batch_dim) {
    const auto dim = static_cast<std::size_t>(*args[0].batch_dim);
    if (name == "sharding_constraint") updated = with_batched_sharding(updated, "sharding", dim);
    if (name == "reshard" || name == "mesh_cast") updated = with_batched_sharding(updated, "dst_sharding", dim);
  }
  std::vector<BatchedValue> out = all_at(builder.bind(name, values(args), updated), std::nullopt);
  for (std::size_t i = 0; i < out.size() && i < args.size(); ++i) out[i].batch_dim = args[i].batch_dim;
  return out;
}

using Rule = std::vector<BatchedValue> (*)(JaxprBuilder&, std::span<const BatchedValue>, const Params&,
                                           const BatchAxis&);

}  // namespace

void register_program_batch_rules() {
  for (const char* name : {"psum", "psum_invariant", "psum2", "pmax", "pmin"}) {
    const std::string primitive = name;
    register_batch_rule(primitive, [primitive](JaxprBuilder& builder, std::span<const BatchedValue> args,
                                               const Params& params, const BatchAxis& axis) {
      return reduction_collective_rule(primitive, builder, args, params, axis);
    });
  }
  for (const char* name : {"sharding_constraint", "device_put", "pvary", "reshard", "mesh_cast",
                           "vary_unreduced_cast_p", "reduced_vary_cast_p"}) {
    const std::string primitive = name;
    register_batch_rule(primitive, [primitive](JaxprBuilder& builder, std::span<const BatchedValue> args,
                                               const Params& params, const BatchAxis& axis) {
      return passthrough_rule(primitive, builder, args, params, axis);
    });
  }
  const std::vector<std::pair<std::string, Rule>> rules = {
      {"all_gather",
       [](JaxprBuilder& builder, std::span<const BatchedValue> args, const Params& params, const BatchAxis& axis) {
         return gather_collective_rule("all_gather", builder, args, params, axis);
       }},
      {"all_gather_invariant",
       [](JaxprBuilder& builder, std::span<const BatchedValue> args, const Params& params, const BatchAxis& axis) {
         return gather_collective_rule("all_gather_invariant", builder, args, params, axis);
       }},
      {"reduce_scatter", reduce_scatter_rule},
      {"ppermute", ppermute_rule},
      {"all_to_all", all_to_all_rule},
      {"axis_index", axis_index_rule},
      {"jit", jit_rule}};
  for (const auto& [name, rule] : rules) register_batch_rule(name, rule);
  // Nested SPMD programs: JAX rewrites their in/out specs around the new dim; each batch element
  // runs the program unchanged here.
  for (const char* name : {"shard_map", "xla_pmap"}) {
    if (find_primitive(name) == nullptr) continue;
    const std::string primitive = name;
    register_batch_rule(primitive, [primitive](JaxprBuilder& builder, std::span<const BatchedValue> args,
                                               const Params& params, const BatchAxis& axis) {
      return batch_by_unrolling(builder, primitive, args, params, axis);
    });
  }
  // Key-handling primitives: each batch element draws from its own key, so mapping one element at a
  // time gives exactly the values JAX's vectorized rules give.
  for (const Primitive* primitive : all_primitives()) {
    if (find_batch_rule(primitive->name) != nullptr) continue;
    if (primitive->name.rfind("random_", 0) != 0 && primitive->name != "threefry2x32") continue;
    const std::string name = primitive->name;
    register_batch_rule(
        name, [name](JaxprBuilder& builder, std::span<const BatchedValue> args, const Params& params,
                     const BatchAxis& axis) { return batch_by_unrolling(builder, name, args, params, axis); });
  }
}

}  // namespace shardscope::batching
