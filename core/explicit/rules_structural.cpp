// Explicit sharding rules of layout ops: reshape, transpose, broadcasts, concatenation, slicing, gather, creation,
// sharding constraints and reshard.
#include <algorithm>
#include <set>

#include "base/python_format.h"
#include "explicit/rules_internal.h"
#include "ops/convolution.h"
#include "ops/structural.h"

namespace shardscope::explicit_rules {
namespace {

std::optional<std::vector<int64_t>> optional_ints(const Params& params, const std::string& key) {
  const ParamValue* value = find_param(params, key);
  if (value == nullptr || value->is_none()) return std::nullopt;
  return value->as_ints(key);
}

TypeSpec keep_unreduced(TypeSpec spec, const Aval& operand) {
  spec.unreduced = operand.unreduced;
  return spec;
}

std::vector<TypeSpec> same_as_operand(const RuleContext&, std::span<const Aval> inputs, const Params&,
                                      std::span<const Aval>) {
  return {spec_of(inputs[0])};
}

std::vector<TypeSpec> transpose_rule(const RuleContext&, std::span<const Aval> inputs, const Params& params,
                                     std::span<const Aval>) {
  const TypeSpec in = spec_of(inputs[0]);
  TypeSpec out;
  for (const int64_t p : param(params, "permutation").as_ints("permutation")) {
    out.dims.push_back(in.dims.at(static_cast<std::size_t>(p)));
  }
  return {keep_unreduced(out, inputs[0])};
}

std::vector<TypeSpec> squeeze_rule(const RuleContext&, std::span<const Aval> inputs, const Params& params,
                                   std::span<const Aval>) {
  const TypeSpec in = spec_of(inputs[0]);
  const std::vector<int64_t> dims = param(params, "dimensions").as_ints("dimensions");
  TypeSpec out;
  for (std::size_t d = 0; d < in.dims.size(); ++d) {
    if (std::find(dims.begin(), dims.end(), static_cast<int64_t>(d)) == dims.end()) out.dims.push_back(in.dims[d]);
  }
  return {keep_unreduced(out, inputs[0])};
}

std::vector<TypeSpec> broadcast_in_dim_rule(const RuleContext& context, std::span<const Aval> inputs,
                                            const Params& params, std::span<const Aval> outputs) {
  if (auto given = sharding_param(context, params, "sharding", outputs[0].rank())) return {*given};
  const TypeSpec in = spec_of(inputs[0]);
  const std::vector<int64_t> dims = param(params, "broadcast_dimensions").as_ints("broadcast_dimensions");
  TypeSpec out;
  out.dims.resize(outputs[0].rank());
  for (std::size_t i = 0; i < dims.size(); ++i) out.dims.at(static_cast<std::size_t>(dims[i])) = in.dims[i];
  return {keep_unreduced(out, inputs[0])};
}

// ---- reshape ------------------------------------------------------------------------------

[[noreturn]] void reshape_error(const RuleContext& context, const Aval& operand, const Shape& new_sizes) {
  throw sharding_type_error(
      "This reshape is not supported. Please specify the sharding of the output via the `out_sharding` argument of "
      "jax.lax.reshape. Got operand type: " +
      aval_text(operand, context.profile) + ", new sizes: " + python_int_tuple(new_sizes));
}

Shape non_unit(const Shape& shape) {
  Shape out;
  for (const int64_t s : shape) {
    if (s != 1) out.push_back(s);
  }
  return out;
}

// One piece per `from` dim: the run of `to` dims it splits into (a single dim when unchanged). nullopt: not a
// split of `from`; `ambiguous` is set when more than one dim would split.
struct Grouping {
  std::vector<std::vector<int64_t>> pieces;
  bool ok = false;
  bool ambiguous = false;
};

Grouping split_grouping(const Shape& from_all, const Shape& to_all) {
  const Shape from = non_unit(from_all);
  const Shape to = non_unit(to_all);
  Grouping g;
  if (to.size() <= from.size()) return g;
  std::size_t i = 0;
  std::size_t j = 0;
  int splits = 0;
  while (j < to.size()) {
    if (i >= from.size()) return g;
    if (from[i] == to[j]) {
      g.pieces.push_back({to[j]});
    } else {
      if (++splits > 1) {
        g.ambiguous = true;
        return g;
      }
      std::vector<int64_t> run{to[j]};
      while (product(run) != from[i]) {
        if (product(run) > from[i] || j + 1 >= to.size()) return g;
        run.push_back(to[++j]);
      }
      g.pieces.push_back(run);
    }
    ++i;
    ++j;
  }
  g.ok = g.pieces.size() == from.size();
  return g;
}

// Hands the axes of `axes` (major to minor) to dims of the given sizes, left to right.
std::vector<DimSpec> split_axes(const RuleContext& context, const DimSpec& axes, const std::vector<int64_t>& sizes,
                                const Aval& operand, const Shape& new_sizes) {
  std::size_t next = 0;
  std::vector<DimSpec> out;
  for (int64_t size : sizes) {
    DimSpec dim;
    while (size > 1 && next < axes.size()) {
      const int64_t axis_size = context.axis_size(axes[next]);
      if (size % axis_size != 0) reshape_error(context, operand, new_sizes);
      size /= axis_size;
      dim.push_back(axes[next++]);
    }
    out.push_back(dim);
  }
  if (next != axes.size()) reshape_error(context, operand, new_sizes);
  return out;
}

// Re-inserts size-1 dims: a size-1 dim keeps the operand's entry at the same position if that was size 1 too.
TypeSpec with_unit_dims(const std::vector<DimSpec>& non_unit_specs, const Aval& operand, const TypeSpec& in,
                        const Shape& new_sizes) {
  TypeSpec out;
  std::size_t next = 0;
  for (std::size_t i = 0; i < new_sizes.size(); ++i) {
    if (new_sizes[i] == 1) {
      out.dims.push_back(i < operand.rank() && operand.shape[i] == 1 ? in.dims[i] : DimSpec{});
    } else {
      out.dims.push_back(next < non_unit_specs.size() ? non_unit_specs[next++] : DimSpec{});
    }
  }
  return out;
}

std::vector<TypeSpec> reshape_rule(const RuleContext& context, std::span<const Aval> inputs, const Params& params,
                                   std::span<const Aval> outputs) {
  const Aval& operand = inputs[0];
  const Shape new_sizes = param(params, "new_sizes").as_ints("new_sizes");
  if (auto given = sharding_param(context, params, "sharding", outputs[0].rank())) {
    if (!operand.unreduced.empty() && given->unreduced != operand.unreduced) {
      throw value_error(
          "out_sharding passed to reshape must be unreduced over the same mesh axes as operand. Got "
          "out_sharding: " +
          partition_spec(*given).repr(context.profile) + " and operand type: " + aval_short(operand));
    }
    return {*given};
  }
  const TypeSpec in = spec_of(operand);
  const bool has_dimensions = optional_ints(params, "dimensions").has_value();
  if (all_none(in.dims)) return {keep_unreduced(TypeSpec{std::vector<DimSpec>(new_sizes.size()), {}}, operand)};
  std::vector<DimSpec> in_non_unit;
  for (std::size_t d = 0; d < operand.rank(); ++d) {
    if (operand.shape[d] != 1) in_non_unit.push_back(in.dims[d]);
  }
  if (non_unit(operand.shape) == non_unit(new_sizes)) {
    // Only size-1 dims come or go: the others keep their entries, new size-1 dims are unsharded.
    TypeSpec out;
    std::size_t next = 0;
    for (const int64_t n : new_sizes) out.dims.push_back(n == 1 ? DimSpec{} : in_non_unit[next++]);
    return {keep_unreduced(out, operand)};
  }
  const Grouping split = split_grouping(operand.shape, new_sizes);
  if (split.ambiguous) reshape_error(context, operand, new_sizes);
  if (split.ok) {
    std::vector<DimSpec> pieces;
    for (std::size_t i = 0; i < split.pieces.size(); ++i) {
      const std::vector<int64_t>& run = split.pieces[i];
      if (run.size() == 1 && run[0] == non_unit(operand.shape)[i]) {
        pieces.push_back(in_non_unit[i]);
      } else if (in_non_unit[i].empty()) {
        pieces.insert(pieces.end(), run.size(), DimSpec{});
      } else if (has_dimensions) {
        reshape_error(context, operand, new_sizes);
      } else {
        for (DimSpec& d : split_axes(context, in_non_unit[i], run, operand, new_sizes)) pieces.push_back(d);
      }
    }
    return {keep_unreduced(with_unit_dims(pieces, operand, in, new_sizes), operand)};
  }
  const Grouping merge = split_grouping(new_sizes, operand.shape);
  if (merge.ambiguous || !merge.ok) reshape_error(context, operand, new_sizes);
  const Shape new_non_unit = non_unit(new_sizes);
  std::vector<DimSpec> pieces;
  std::size_t next = 0;
  for (std::size_t i = 0; i < merge.pieces.size(); ++i) {
    const std::vector<int64_t>& run = merge.pieces[i];
    if (run.size() == 1 && run[0] == new_non_unit[i]) {
      pieces.push_back(in_non_unit[next++]);
      continue;
    }
    // Merged dims: their axes concatenate, and no unsharded dim may come before a sharded one.
    std::vector<DimSpec> merged(in_non_unit.begin() + static_cast<std::ptrdiff_t>(next),
                                in_non_unit.begin() + static_cast<std::ptrdiff_t>(next + run.size()));
    next += run.size();
    if (all_none(merged)) {
      pieces.emplace_back();
      continue;
    }
    if (has_dimensions) reshape_error(context, operand, new_sizes);
    while (!merged.empty() && merged.back().empty()) merged.pop_back();
    DimSpec axes;
    for (const DimSpec& m : merged) {
      if (m.empty()) reshape_error(context, operand, new_sizes);
      axes.insert(axes.end(), m.begin(), m.end());
    }
    for (DimSpec& d : split_axes(context, axes, {new_non_unit[i]}, operand, new_sizes)) pieces.push_back(d);
  }
  return {keep_unreduced(with_unit_dims(pieces, operand, in, new_sizes), operand)};
}

// ---- concatenation, slicing, padding -------------------------------------------------------

std::vector<TypeSpec> concatenate_rule(const RuleContext& context, std::span<const Aval> inputs, const Params&,
                                       std::span<const Aval>) {
  const TypeSpec first = spec_of(inputs[0]);
  for (const Aval& a : inputs) {
    const TypeSpec s = spec_of(a);
    if (s.dims != first.dims || s.unreduced != first.unreduced) {
      std::vector<std::string> shown;
      for (const Aval& each : inputs) shown.push_back(sharding_text(context, spec_of(each)));
      throw sharding_type_error("All operands should have the same sharding. Got shardings " + join(shown, ", "));
    }
  }
  return {first};
}

// stack: the operands' common sharding with the new dim unsharded (JAX's _stack_sharding_rule).
std::vector<TypeSpec> stack_rule(const RuleContext& context, std::span<const Aval> inputs, const Params& params,
                                 std::span<const Aval> outputs) {
  TypeSpec out = concatenate_rule(context, inputs, params, outputs)[0];
  const auto axis = static_cast<std::size_t>(param(params, "axis").as_int("axis"));
  out.dims.insert(out.dims.begin() + static_cast<std::ptrdiff_t>(std::min(axis, out.dims.size())), DimSpec{});
  return {out};
}

// unstack: every result drops the unstacked dim, which must not be sharded (each result is one index of it).
std::vector<TypeSpec> unstack_rule(const RuleContext&, std::span<const Aval> inputs, const Params& params,
                                   std::span<const Aval> outputs) {
  const auto axis = static_cast<std::size_t>(param(params, "axis").as_int("axis"));
  TypeSpec in = spec_of(inputs[0]);
  if (!in.dims.at(axis).empty()) {
    throw sharding_type_error("unstack operand cannot be sharded on the unstacking axis " + std::to_string(axis) +
                              ". Got operand type=" + aval_short(inputs[0]));
  }
  in.dims.erase(in.dims.begin() + static_cast<std::ptrdiff_t>(axis));
  return std::vector<TypeSpec>(outputs.size(), keep_unreduced(in, inputs[0]));
}

// The result shape as JAX's rule computed it: pad's shape rule sums numpy integers, which print as np.int64(10)
// (numpy 2, which every JAX with sharding in types runs on); slicing's sizes are Python ints.
std::string shape_as_computed(const Shape& shape, const std::string& what) {
  if (what != "padding") return python_int_tuple(shape);
  std::string text = "(";
  for (std::size_t d = 0; d < shape.size(); ++d) {
    text += (d == 0 ? "" : ", ") + std::string("np.int64(") + std::to_string(shape[d]) + ")";
  }
  return text + (shape.size() == 1 ? ",)" : ")");
}

// Ops whose result shape differs from the operand's keep the operand's sharding where the new sizes still divide.
TypeSpec varying_shape_spec(const RuleContext& context, const Aval& operand, const Shape& out_shape,
                            const std::string& what) {
  if (std::all_of(out_shape.begin(), out_shape.end(), [](int64_t s) { return s == 1; })) {
    return TypeSpec{std::vector<DimSpec>(out_shape.size()), {}};
  }
  const TypeSpec in = spec_of(operand);
  for (std::size_t d = 0; d < operand.rank() && d < out_shape.size(); ++d) {
    if (operand.shape[d] == out_shape[d] || in.dims[d].empty()) continue;
    const int64_t parts = context.axes_size(in.dims[d]);
    if (out_shape[d] % parts != 0) {
      throw sharding_type_error(what + " on sharded dims where out dim (" + std::to_string(out_shape[d]) +
                                ") is not divisible by mesh axes (" + std::to_string(parts) + ") with spec (" +
                                entry_str(in.dims[d]) + ") is not implemented. Got input type=" + aval_short(operand) +
                                " and output shape=" + shape_as_computed(out_shape, what));
    }
  }
  return in;
}

Rule varying_shape_rule(std::string what, bool keeps_unreduced) {
  return [what = std::move(what), keeps_unreduced](const RuleContext& context, std::span<const Aval> inputs,
                                                   const Params&, std::span<const Aval> outputs) {
    if (!keeps_unreduced) refuse_unreduced_generic(context.name, inputs);
    std::vector<TypeSpec> out;
    for (const Aval& o : outputs) {
      TypeSpec spec = varying_shape_spec(context, inputs[0], o.shape, what);
      spec.unreduced = keeps_unreduced ? inputs[0].unreduced : std::vector<std::string>{};
      out.push_back(spec);
    }
    return out;
  };
}

std::string with_axis_types_text(const RuleContext& context, const Aval& aval) {
  // str_short(mesh_axis_types=True): the type followed by the mesh's axes grouped by type.
  std::vector<std::pair<AxisType, std::vector<std::string>>> groups;
  if (context.mesh) {
    for (std::size_t i = 0; i < context.mesh->axis_names.size(); ++i) {
      const AxisType t = context.mesh->axis_types[i];
      auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == t; });
      if (it == groups.end()) {
        groups.push_back({t, {}});
        it = groups.end() - 1;
      }
      it->second.push_back(python_string_repr(context.mesh->axis_names[i]));
    }
  }
  std::vector<std::string> items;
  for (const auto& [type, names] : groups) items.push_back(axis_type_name(type) + ": " + python_tuple(names));
  return aval.str_short(false) + "({" + join(items, ", ") + "})";
}

std::vector<TypeSpec> dynamic_update_slice_rule(const RuleContext& context, std::span<const Aval> inputs, const Params&,
                                                std::span<const Aval>) {
  const TypeSpec operand = spec_of(inputs[0]);
  const TypeSpec update = spec_of(inputs[1]);
  if (operand.dims != update.dims) {
    throw sharding_type_error(
        "dynamic_update_slice operand sharding must be equal to update sharding, got operand "
        "sharding " +
        with_axis_types_text(context, inputs[0]) + " and update sharding " + with_axis_types_text(context, inputs[1]) +
        ".");
  }
  if (operand.unreduced != update.unreduced) {
    throw sharding_type_error(
        "dynamic_update_slice operand and update must be unreduced along the same axes. Got "
        "operand sharding " +
        with_axis_types_text(context, inputs[0]) + " and update sharding " + with_axis_types_text(context, inputs[1]) +
        ".");
  }
  return {operand};
}

std::vector<TypeSpec> gather_rule(const RuleContext& /*context*/, std::span<const Aval> inputs, const Params& params,
                                  std::span<const Aval> outputs) {
  const Aval& operand = inputs[0];
  const Aval& indices = inputs[1];
  refuse_unreduced_generic("gather", inputs);
  const GatherDimensionNumbers n = parse_gather_dimension_numbers(param(params, "dimension_numbers"));
  const Shape slice_sizes = param(params, "slice_sizes").as_ints("slice_sizes");
  const TypeSpec op = spec_of(operand);
  std::vector<DimSpec> idx = spec_of(indices).dims;
  const std::size_t out_rank = outputs[0].rank();
  if (all_none(op.dims) && all_none(idx)) return {TypeSpec{std::vector<DimSpec>(out_rank), {}}};
  auto contains = [](const std::vector<int64_t>& v, std::size_t x) {
    return std::find(v.begin(), v.end(), static_cast<int64_t>(x)) != v.end();
  };
  bool sliced_ok = true;
  for (const int64_t i : n.start_index_map) {
    const auto d = static_cast<std::size_t>(i);
    sliced_ok = sliced_ok && (slice_sizes[d] == operand.shape[d] || op.dims[d].empty());
  }
  bool batching_ok = true;
  for (std::size_t k = 0; k < n.operand_batching_dims.size(); ++k) {
    const DimSpec& o = op.dims[static_cast<std::size_t>(n.operand_batching_dims[k])];
    const DimSpec& x = idx[static_cast<std::size_t>(n.start_indices_batching_dims[k])];
    batching_ok = batching_ok && (o == x || o.empty() || x.empty());
  }
  bool indices_ok = true;
  for (std::size_t i = 0; i < idx.size(); ++i) {
    if (!contains(n.start_indices_batching_dims, i)) indices_ok = indices_ok && idx[i].empty();
  }
  if (!(sliced_ok && batching_ok && indices_ok)) {
    throw sharding_type_error(
        "Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the gather indexing as out sharding "
        "could not be resolved unambiguously (or would require collectives on inputs). Got operand=" +
        typeof_repr(operand) + ", indices=" + typeof_repr(indices));
  }
  for (std::size_t k = 0; k < n.operand_batching_dims.size(); ++k) {
    DimSpec& x = idx[static_cast<std::size_t>(n.start_indices_batching_dims[k])];
    if (x.empty()) x = op.dims[static_cast<std::size_t>(n.operand_batching_dims[k])];
  }
  std::vector<std::size_t> offset_sources;
  for (std::size_t d = 0; d < operand.rank(); ++d) {
    if (!contains(n.collapsed_slice_dims, d) && !contains(n.operand_batching_dims, d)) offset_sources.push_back(d);
  }
  TypeSpec out;
  std::size_t next_offset = 0;
  std::size_t next_index = 0;
  for (std::size_t i = 0; i < out_rank; ++i) {
    if (contains(n.offset_dims, i)) {
      out.dims.push_back(op.dims[offset_sources.at(next_offset++)]);
    } else {
      out.dims.push_back(idx.at(next_index++));
    }
  }
  return {out};
}

std::vector<TypeSpec> creation_rule(const RuleContext& context, std::span<const Aval>, const Params& params,
                                    std::span<const Aval> outputs) {
  std::vector<TypeSpec> out;
  for (const Aval& o : outputs) {
    out.push_back(
        sharding_param(context, params, "sharding", o.rank()).value_or(TypeSpec{std::vector<DimSpec>(o.rank()), {}}));
  }
  return out;
}

// Key data is (batch..., 2): fold_in keeps the keys' batch sharding (JAX broadcasts keys with messages), split
// appends replicated dims for the new keys (JAX: P(*keys_spec, None, ...)); the key word is never sharded.
std::vector<TypeSpec> random_key_rule(const RuleContext&, std::span<const Aval> inputs, const Params&,
                                      std::span<const Aval> outputs) {
  const TypeSpec keys = spec_of(inputs[0]);
  std::vector<DimSpec> dims(outputs[0].rank());
  for (std::size_t d = 0; d + 1 < keys.dims.size() && d < dims.size(); ++d) dims[d] = keys.dims[d];
  return {TypeSpec{dims, {}}};
}

// In a mesh with Auto axes a constraint only steers the compiler: it may name Auto axes alone, and the type stays.
std::vector<TypeSpec> sharding_constraint_rule(const RuleContext& context, std::span<const Aval> inputs,
                                               const Params& params, std::span<const Aval>) {
  const ParamValue* value = find_param(params, "sharding");
  const auto* named = value != nullptr ? value->get_if<NamedSharding>() : nullptr;
  if (named != nullptr) {
    check_constraint_names_auto_axes(*named, context.profile);
  }
  return {spec_of(inputs[0])};
}

// reshard (and mesh_cast): the result type is the destination sharding's, Explicit axes only.
std::vector<TypeSpec> reshard_rule(const RuleContext& context, std::span<const Aval> inputs, const Params& params,
                                   std::span<const Aval>) {
  if (auto given = sharding_param(context, params, "dst_sharding", inputs[0].rank())) return {*given};
  return {spec_of(inputs[0])};
}

// device_put inside a program: a NamedSharding target types the result like reshard; a memory-space target (a
// checkpoint offloading a residual to host memory and back) keeps the operand's type.
std::vector<TypeSpec> device_put_rule(const RuleContext& context, std::span<const Aval> inputs, const Params& params,
                                      std::span<const Aval>) {
  const ParamValue* devices = find_param(params, "devices");
  const auto* targets = devices != nullptr ? devices->get_if<ParamValue::Tuple>() : nullptr;
  if (targets != nullptr && !targets->items.empty()) {
    if (const auto* named = targets->items.front().get_if<NamedSharding>()) {
      return {explicit_spec_of(*named, inputs[0].rank(), context.profile)};
    }
  }
  return {spec_of(inputs[0])};
}

}  // namespace

void check_constraint_names_auto_axes(const NamedSharding& sharding, const JaxProfile& profile) {
  const AbstractMesh mesh = AbstractMesh::from_mesh(sharding.mesh);
  for (const std::string& axis : sharding.spec.mentioned_axes()) {
    if (axis_type_of(mesh, axis) == AxisType::kAuto) continue;
    throw value_error(
        "The spec of NamedSharding passed to with_sharding_constraint can only refer to Auto axes of the mesh. Got "
        "spec=" +
        sharding.spec.repr(profile) + " and mesh=" + abstract_mesh_repr(mesh, profile) +
        ". You probably meant to use `reshard` API?");
  }
}

void assert_sharding_matches(const Aval& aval, const NamedSharding& sharding, const JaxProfile& profile) {
  const TypeSpec have = spec_of(aval);
  std::vector<SpecEntry> user = sharding.spec.entries();
  user.resize(std::max(user.size(), aval.rank()));
  bool equal = true;
  for (std::size_t d = 0; d < user.size(); ++d) {
    if (user[d].kind == SpecEntry::Kind::kUnconstrained) continue;
    equal = equal && d < have.dims.size() && user[d].axes == have.dims[d];
  }
  if (!equal) {
    throw Error("AssertionError",
                "`with_sharding_constraint` acts as an assert when all axes of mesh are of type `Explicit`. The array "
                "sharding: " +
                    partition_spec(TypeSpec{have.dims, {}}).repr(profile) +
                    " did not match the sharding provided: " + PartitionSpec(user).repr(profile) +
                    ". Please use `jax.sharding.reshard` to shard your input to the sharding you want.");
  }
}

bool constraint_is_type_assertion(const AbstractMesh& context, const Aval& aval, const NamedSharding& sharding,
                                  const JaxProfile& profile) {
  const bool all_explicit =
      !is_empty(context) && !has_axis_type(context, AxisType::kAuto) && !has_axis_type(context, AxisType::kManual);
  if (all_explicit && profile.has(JaxFeature::kConstraintAssertsOnExplicitMesh)) {
    assert_sharding_matches(aval, sharding, profile);
    return true;
  }
  check_constraint_names_auto_axes(sharding, profile);
  return false;
}

// lax's conv sharding rule: an out_sharding decides; otherwise a replicated kernel and an unsharded lhs feature
// dim give the lhs's sharding where the result's sizes still divide; anything else must say out_sharding.
std::vector<TypeSpec> conv_rule(const RuleContext& context, std::span<const Aval> inputs, const Params& params,
                                std::span<const Aval> outputs) {
  if (auto given = sharding_param(context, params, "out_sharding", outputs[0].rank())) return {*given};
  const Aval& lhs = inputs[0];
  const Aval& rhs = inputs[1];
  const auto feature_dim = static_cast<std::size_t>(conv_params(params).dims.lhs_spec.at(1));
  const TypeSpec lhs_spec = spec_of(lhs);
  if (all_none(spec_of(rhs).dims) && lhs_spec.dims.at(feature_dim).empty()) {
    return {varying_shape_spec(context, lhs, outputs[0].shape, "conv_general_dilated")};
  }
  throw sharding_type_error(
      "Please specify the output sharding via `out_sharding` parameter of `conv_general_dilated`");
}

void register_structural_rules() {
  add_rule("transpose", transpose_rule);
  add_rule("squeeze", squeeze_rule);
  add_rule("broadcast_in_dim", broadcast_in_dim_rule);
  add_rule("reshape", reshape_rule);
  add_rule("rev", same_as_operand);
  add_rule("copy", same_as_operand);
  add_rule("copy_p", same_as_operand);
  add_rule("concatenate", concatenate_rule);
  add_rule("slice", varying_shape_rule("slicing", true));
  add_rule("pad", varying_shape_rule("padding", true));
  add_rule("split", varying_shape_rule("split", true));
  add_rule("stack", stack_rule);
  add_rule("unstack", unstack_rule);
  add_rule("dynamic_slice", varying_shape_rule("dynamic_slice", false));
  add_rule("dynamic_update_slice", dynamic_update_slice_rule);
  add_rule("gather", gather_rule);
  add_rule("conv_general_dilated", conv_rule);
  // lax's reduce_window_sharding_rule: the operand's sharding where the windowed sizes still divide.
  for (const char* name : {"reduce_window_sum", "reduce_window_max", "reduce_window_min"}) {
    add_rule(name, varying_shape_rule("reduce_window", false));
  }
  add_rule("select_and_gather_add",
           [](const RuleContext& context, std::span<const Aval> inputs, const Params&, std::span<const Aval> outputs) {
             return std::vector<TypeSpec>{varying_shape_spec(context, inputs[1], outputs[0].shape, "reduce_window")};
           });
  add_rule("select_and_scatter_add", [](const RuleContext&, std::span<const Aval> inputs, const Params&,
                                        std::span<const Aval>) { return std::vector<TypeSpec>{spec_of(inputs[1])}; });
  add_rule("iota", creation_rule);
  add_rule("full", creation_rule);
  add_rule("random_bits", creation_rule);
  add_rule("random_fold_in", random_key_rule);
  add_rule("random_split", random_key_rule);
  add_rule("sharding_constraint", sharding_constraint_rule);
  add_rule("reshard", reshard_rule);
  add_rule("mesh_cast", reshard_rule);
  add_rule("device_put", device_put_rule);
}

}  // namespace shardscope::explicit_rules
