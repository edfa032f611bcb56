// Explicit sharding rules of the scatter family, sort and top_k (slicing._scatter_sharding_rule,
// lax._sort_abstract_eval, lax._top_k_abstract_eval).
#include <algorithm>

#include "explicit/rules_internal.h"
#include "ops/structural.h"

namespace shardscope::explicit_rules {
namespace {

bool contains(const std::vector<int64_t>& values, std::size_t value) {
  return std::find(values.begin(), values.end(), static_cast<int64_t>(value)) != values.end();
}

// slicing._is_resolvable: at most one distinct named entry among them.
bool resolvable(const std::vector<DimSpec>& entries) {
  std::vector<DimSpec> named;
  for (const DimSpec& e : entries) {
    if (!e.empty() && std::find(named.begin(), named.end(), e) == named.end()) named.push_back(e);
  }
  return named.size() <= 1;
}

// slicing._scatter_spec_computation: the operand's spec, with batch and window dims filled from the indices and
// updates; ShardingTypeError when that would need collectives on the inputs.
std::vector<TypeSpec> scatter_rule(const RuleContext& context, std::span<const Aval> inputs, const Params& params,
                                   std::span<const Aval>) {
  const Aval& operand = inputs[0];
  const Aval& indices = inputs[1];
  const Aval& updates = inputs[2];
  if (!indices.unreduced.empty()) {
    throw sharding_type_error("scatter indices cannot be unreduced. Got indices sharding " +
                              aval_text(indices, context.profile) + ".");
  }
  const std::vector<DimSpec> op = spec_of(operand).dims;
  const std::vector<DimSpec> idx = spec_of(indices).dims;
  const std::vector<DimSpec> upd = spec_of(updates).dims;
  if (all_none(op) && all_none(idx) && all_none(upd)) return {TypeSpec{std::vector<DimSpec>(operand.rank()), {}}};
  const auto groups = param(params, "dimension_numbers").as_items("dimension_numbers");
  const auto group = [&](std::size_t i) {
    return i < groups.size() ? groups[i].as_ints("dimension_numbers") : std::vector<int64_t>{};
  };
  const std::vector<int64_t> update_window_dims = group(0);
  const std::vector<int64_t> inserted_window_dims = group(1);
  const std::vector<int64_t> operand_batching_dims = group(3);
  const std::vector<int64_t> indices_batching_dims = group(4);
  const std::size_t index_vector_dim = indices.rank() - 1;
  // slicing._get_updates_batching_dims: where each indices batching dim sits among the updates' dims.
  std::vector<int64_t> scatter_dim_in_updates;
  for (std::size_t i = 0; i < index_vector_dim; ++i) scatter_dim_in_updates.push_back(static_cast<int64_t>(i));
  for (const int64_t w : update_window_dims) {
    scatter_dim_in_updates.insert(scatter_dim_in_updates.begin() + w, -1);
  }
  std::vector<int64_t> updates_batching_dims;
  for (const int64_t i : indices_batching_dims) {
    updates_batching_dims.push_back(std::find(scatter_dim_in_updates.begin(), scatter_dim_in_updates.end(), i) -
                                    scatter_dim_in_updates.begin());
  }
  std::vector<std::size_t> operand_window_dims;
  for (std::size_t d = 0; d < operand.rank(); ++d) {
    if (!contains(inserted_window_dims, d) && !contains(operand_batching_dims, d)) operand_window_dims.push_back(d);
  }
  bool ok = true;
  for (std::size_t k = 0; k < operand_batching_dims.size(); ++k) {
    ok = ok && resolvable({op[static_cast<std::size_t>(operand_batching_dims[k])],
                           idx[static_cast<std::size_t>(indices_batching_dims[k])],
                           upd[static_cast<std::size_t>(updates_batching_dims[k])]});
  }
  for (std::size_t i = 0; i < update_window_dims.size() && i < operand_window_dims.size(); ++i) {
    const auto u = static_cast<std::size_t>(update_window_dims[i]);
    const std::size_t o = operand_window_dims[i];
    ok = ok && ((updates.shape[u] == operand.shape[o] && upd[u] == op[o]) || (upd[u].empty() && op[o].empty()));
  }
  for (std::size_t d = 0; d < op.size(); ++d) ok = ok && (!contains(inserted_window_dims, d) || op[d].empty());
  for (std::size_t d = 0; d < upd.size(); ++d) {
    ok = ok && (contains(updates_batching_dims, d) || contains(update_window_dims, d) || upd[d].empty());
  }
  for (std::size_t d = 0; d < index_vector_dim; ++d) ok = ok && (contains(indices_batching_dims, d) || idx[d].empty());
  ok = ok && idx[index_vector_dim].empty();
  if (!ok) {
    throw sharding_type_error(
        "Use `.at[...].set/add/mul/...(out_sharding=)` to provide output PartitionSpec for the scatter update as out "
        "sharding could not be resolved unambiguously (or would require collectives on inputs). Got operand=" +
        typeof_repr(operand) + ", indices=" + typeof_repr(indices) + ", updates=" + typeof_repr(updates));
  }
  TypeSpec out{op, operand.unreduced};
  for (std::size_t k = 0; k < operand_batching_dims.size(); ++k) {
    DimSpec& o = out.dims[static_cast<std::size_t>(operand_batching_dims[k])];
    if (o.empty()) {
      const DimSpec& i = idx[static_cast<std::size_t>(indices_batching_dims[k])];
      o = !i.empty() ? i : upd[static_cast<std::size_t>(updates_batching_dims[k])];
    }
  }
  for (std::size_t i = 0; i < update_window_dims.size() && i < operand_window_dims.size(); ++i) {
    DimSpec& o = out.dims[operand_window_dims[i]];
    if (o.empty()) o = upd[static_cast<std::size_t>(update_window_dims[i])];
  }
  return {out};
}

// Every argument unsharded along the sorted dimension and all with one sharding; results keep it.
std::vector<TypeSpec> sort_rule(const RuleContext& context, std::span<const Aval> inputs, const Params& params,
                                std::span<const Aval> outputs) {
  const auto dimension = static_cast<std::size_t>(param(params, "dimension").as_int("dimension"));
  std::optional<TypeSpec> first;
  std::string shardings;
  for (const Aval& input : inputs) {
    const TypeSpec spec = spec_of(input);
    if (all_none(spec.dims) && spec.unreduced.empty()) continue;
    if (!spec.dims.at(dimension).empty()) {
      throw sharding_type_error("Arguments to sort must be unsharded over the sorting dimension. Got arg sharding=" +
                                sharding_text(context, spec) + " and sorting dimension=" + std::to_string(dimension));
    }
    shardings += (shardings.empty() ? "" : " ") + sharding_text(context, spec);
    if (!first) {
      first = spec;
    } else if (first->dims != spec.dims) {
      throw sharding_type_error("Arguments to sort must have equal shardings, got: " + shardings);
    }
  }
  std::vector<TypeSpec> out;
  for (std::size_t i = 0; i < outputs.size(); ++i) out.push_back(spec_of(inputs[i]));
  return out;
}

std::vector<TypeSpec> top_k_rule(const RuleContext& context, std::span<const Aval> inputs, const Params& params,
                                 std::span<const Aval> outputs) {
  const Aval& operand = inputs[0];
  const auto axis = static_cast<std::size_t>(param(params, "axis").as_int("axis"));
  const TypeSpec spec = spec_of(operand);
  if (!spec.dims.at(axis).empty()) {
    throw sharding_type_error(
        "The input should be unsharded over the axis along which to compute the top_k values. Got input type=" +
        aval_text(operand, context.profile) + " and axis=" + std::to_string(axis));
  }
  return std::vector<TypeSpec>(outputs.size(), spec);
}

}  // namespace

void register_indexing_rules() {
  for (const char* name : {"scatter", "scatter-add", "scatter-sub", "scatter-mul", "scatter-min", "scatter-max"}) {
    add_rule(name, scatter_rule);
  }
  add_rule("sort", sort_rule);
  add_rule("top_k", top_k_rule);
}

}  // namespace shardscope::explicit_rules
