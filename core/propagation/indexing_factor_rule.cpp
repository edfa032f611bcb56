// Factor rules of gather, scatter, sort and top_k, in Shardy's terms (which dims share an index).
#include "propagation/indexing_factor_rule.h"

#include <algorithm>

#include "ops/structural.h"

namespace shardscope {
namespace {

using Dims = std::vector<std::vector<int>>;

bool contains(const std::vector<int64_t>& values, std::size_t value) {
  return std::find(values.begin(), values.end(), static_cast<int64_t>(value)) != values.end();
}

}  // namespace

FactorRule gather_factor_rule(const Eqn& eqn) {
  FactorRule rule;
  const Aval& operand = atom_aval(eqn.inputs.at(0));
  const Aval& indices = atom_aval(eqn.inputs.at(1));
  const Aval& out = eqn.outputs.at(0).aval;
  const GatherDimensionNumbers n = parse_gather_dimension_numbers(param(eqn.params, "dimension_numbers"));
  const std::vector<int64_t> slice_sizes = param(eqn.params, "slice_sizes").as_ints("slice_sizes");
  Dims operand_dims(operand.rank());
  Dims index_dims(indices.rank());
  Dims result(out.rank());
  // The indices' leading dims are the result's batch dims, in order.
  std::size_t next_index_dim = 0;
  for (std::size_t d = 0; d < out.rank(); ++d) {
    if (contains(n.offset_dims, d)) continue;
    const int f = rule.add_factor(out.shape[d], FactorKind::kPassThrough);
    index_dims[next_index_dim++] = {f};
    result[d] = {f};
  }
  if (indices.rank() > 0) {
    index_dims.back() = {rule.add_factor(indices.shape.back(), FactorKind::kNeedReplication)};
  }
  for (std::size_t k = 0; k < n.operand_batching_dims.size(); ++k) {
    operand_dims[static_cast<std::size_t>(n.operand_batching_dims[k])] =
        index_dims.at(static_cast<std::size_t>(n.start_indices_batching_dims[k]));
  }
  std::size_t next_offset = 0;
  for (std::size_t d = 0; d < operand.rank(); ++d) {
    if (contains(n.operand_batching_dims, d)) continue;
    const bool window = !contains(n.collapsed_slice_dims, d);
    const bool whole = window && slice_sizes[d] == operand.shape[d] && !contains(n.start_index_map, d);
    if (whole) {
      const int f = rule.add_factor(operand.shape[d], FactorKind::kPassThrough);
      operand_dims[d] = {f};
      result[static_cast<std::size_t>(n.offset_dims.at(next_offset))] = {f};
    } else {
      operand_dims[d] = {rule.add_factor(operand.shape[d], FactorKind::kNeedReplication)};
    }
    if (window) ++next_offset;
  }
  rule.operands = {operand_dims, index_dims};
  rule.results = {result};
  return rule;
}

FactorRule scatter_factor_rule(const Eqn& eqn) {
  FactorRule rule;
  const Aval& operand = atom_aval(eqn.inputs.at(0));
  const Aval& indices = atom_aval(eqn.inputs.at(1));
  const Aval& updates = atom_aval(eqn.inputs.at(2));
  const auto groups = param(eqn.params, "dimension_numbers").as_items("dimension_numbers");
  const auto group = [&](std::size_t i) {
    return i < groups.size() ? groups[i].as_ints("dimension_numbers") : std::vector<int64_t>{};
  };
  const std::vector<int64_t> update_window_dims = group(0);
  const std::vector<int64_t> inserted_window_dims = group(1);
  const std::vector<int64_t> operand_batching_dims = group(3);
  const std::vector<int64_t> indices_batching_dims = group(4);
  Dims operand_dims(operand.rank());
  Dims index_dims(indices.rank());
  Dims update_dims(updates.rank());
  // The updates' scatter dims are the indices' leading dims, in order: batch dims pass through, the others
  // (queries that may land anywhere) need replication.
  std::size_t next_index_dim = 0;
  for (std::size_t d = 0; d < updates.rank(); ++d) {
    if (contains(update_window_dims, d)) continue;
    const std::size_t i = next_index_dim++;
    const bool batch = contains(indices_batching_dims, i);
    const int f = rule.add_factor(updates.shape[d], batch ? FactorKind::kPassThrough : FactorKind::kNeedReplication);
    index_dims[i] = update_dims[d] = {f};
  }
  if (indices.rank() > 0) {
    index_dims.back() = {rule.add_factor(indices.shape.back(), FactorKind::kNeedReplication)};
  }
  for (std::size_t k = 0; k < operand_batching_dims.size(); ++k) {
    operand_dims[static_cast<std::size_t>(operand_batching_dims[k])] =
        index_dims.at(static_cast<std::size_t>(indices_batching_dims.at(k)));
  }
  std::size_t next_window = 0;
  for (std::size_t d = 0; d < operand.rank(); ++d) {
    if (contains(operand_batching_dims, d)) continue;
    if (contains(inserted_window_dims, d)) {
      operand_dims[d] = {rule.add_factor(operand.shape[d], FactorKind::kPermutation)};
      continue;
    }
    const auto update_dim = static_cast<std::size_t>(update_window_dims.at(next_window++));
    if (updates.shape[update_dim] == operand.shape[d]) {
      operand_dims[d] = update_dims[update_dim] = {rule.add_factor(operand.shape[d], FactorKind::kPassThrough)};
    } else {
      operand_dims[d] = {rule.add_factor(operand.shape[d], FactorKind::kPermutation)};
      update_dims[update_dim] = {rule.add_factor(updates.shape[update_dim], FactorKind::kNeedReplication)};
    }
  }
  rule.operands = {operand_dims, index_dims, update_dims};
  rule.results = {operand_dims};
  return rule;
}

FactorRule sort_factor_rule(const Eqn& eqn) {
  FactorRule rule;
  const Aval& first = atom_aval(eqn.inputs.at(0));
  const int64_t dimension = param(eqn.params, "dimension").as_int("dimension");
  Dims dims(first.rank());
  for (std::size_t d = 0; d < first.rank(); ++d) {
    const bool sorted = static_cast<int64_t>(d) == dimension;
    dims[d] = {rule.add_factor(first.shape[d], sorted ? FactorKind::kNeedReplication : FactorKind::kPassThrough)};
  }
  rule.operands.assign(eqn.inputs.size(), dims);
  rule.results.assign(eqn.outputs.size(), dims);
  return rule;
}

FactorRule top_k_factor_rule(const Eqn& eqn) {
  FactorRule rule;
  const Aval& operand = atom_aval(eqn.inputs.at(0));
  const int64_t axis = find_param(eqn.params, "axis") != nullptr ? param(eqn.params, "axis").as_int("axis")
                                                                 : static_cast<int64_t>(operand.rank()) - 1;
  Dims operand_dims(operand.rank());
  Dims result(operand.rank());
  for (std::size_t d = 0; d < operand.rank(); ++d) {
    if (static_cast<int64_t>(d) == axis) {
      operand_dims[d] = {rule.add_factor(operand.shape[d], FactorKind::kNeedReplication)};
    } else {
      operand_dims[d] = result[d] = {rule.add_factor(operand.shape[d], FactorKind::kPassThrough)};
    }
  }
  rule.operands = {operand_dims};
  rule.results.assign(eqn.outputs.size(), result);
  return rule;
}

}  // namespace shardscope
