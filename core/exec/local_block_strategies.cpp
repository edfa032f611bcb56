// XLA's partitioning strategies that keep an operand sharded where a plain factor rule would gather it: lookups,
// one-element slices and scatters into local blocks, and contractions kept split across operands.
#include "exec/local_block_strategies.h"

#include <algorithm>
#include <initializer_list>
#include <optional>

#include "ir/param.h"
#include "ir/primitive.h"
#include "ops/structural.h"
#include "propagation/auto_propagation.h"

namespace shardscope {

// Whether any dim of any of `layouts` is sharded over `axis`.
bool uses_axis(std::initializer_list<const Layout*> layouts, const std::string& axis) {
  for (const Layout* layout : layouts) {
    for (const auto& axes : *layout) {
      if (std::find(axes.begin(), axes.end(), axis) != axes.end()) return true;
    }
  }
  return false;
}

// XLA gathers from an operand sharded along an indexed dim without gathering the operand: each device takes the
// rows its own block holds and the partial results are summed over those axes. It does so where a slice of that dim
// is one element (a row of a table), the indices and the result do not use the axes, and nothing else reduces.
void gather_from_local_blocks(const Eqn& eqn, const LayoutMap& layouts, EquationPlan& plan) {
  if (eqn.primitive->name != "gather" || eqn.inputs.size() != 2 || eqn.outputs.size() != 1 ||
      !plan.reductions.empty() || plan.operands.size() != 2 || plan.produced.size() != 1) {
    return;
  }
  const DType dtype = eqn.outputs[0].aval.dtype;
  if (!is_floating(dtype) && !is_integral(dtype)) return;
  const GatherDimensionNumbers numbers = parse_gather_dimension_numbers(param(eqn.params, "dimension_numbers"));
  const std::vector<int64_t> slice_sizes = param(eqn.params, "slice_sizes").as_ints("slice_sizes");
  const Layout held = layout_in(layouts, eqn.inputs[0]);
  const auto used_elsewhere = [&](const std::string& axis) {
    return uses_axis({&plan.operands[0], &plan.operands[1], &plan.produced[0]}, axis);
  };
  std::vector<std::string> summed;
  for (const int64_t dim : numbers.start_index_map) {
    const auto d = static_cast<std::size_t>(dim);
    if (d >= held.size() || d >= slice_sizes.size() || slice_sizes[d] != 1 || held[d].empty() ||
        !plan.operands[0][d].empty()) {
      continue;
    }
    if (std::any_of(held[d].begin(), held[d].end(), used_elsewhere)) continue;
    plan.operands[0][d] = held[d];
    summed.insert(summed.end(), held[d].begin(), held[d].end());
  }
  if (summed.empty()) return;
  plan.reduced_axes = summed;
  plan.reductions.push_back(std::move(summed));
  plan.partial_gather = true;
}

// XLA slices one element out of the first block of a sharded dim without gathering the operand: the window's
// only useful block is device 0's, so the slice is local and the element is broadcast to the group by a masked
// all-reduce (ReplicatePartial's select + all-reduce for a dim of size 1). Elsewhere in the dim a halo exchange
// comes first: exec/halo_exchange plans those slices.
void slice_from_local_blocks(const Eqn& eqn, const LayoutMap& layouts, const Mesh& mesh, EquationPlan& plan) {
  if (eqn.primitive->name != "slice" || eqn.inputs.size() != 1 || eqn.outputs.size() != 1 || !plan.reductions.empty() ||
      plan.operands.size() != 1 || plan.produced.size() != 1) {
    return;
  }
  const DType dtype = eqn.outputs[0].aval.dtype;
  if (!is_floating(dtype) && !is_integral(dtype)) return;
  const std::vector<int64_t> starts = param(eqn.params, "start_indices").as_ints("start_indices");
  const Shape& in_shape = atom_aval(eqn.inputs[0]).shape;
  const Shape& out_shape = eqn.outputs[0].aval.shape;
  const Layout held = layout_in(layouts, eqn.inputs[0]);
  const auto used_elsewhere = [&](const std::string& axis) {
    return uses_axis({&plan.operands[0], &plan.produced[0]}, axis);
  };
  std::vector<std::string> summed;
  for (std::size_t d = 0; d < held.size() && d < starts.size() && d < out_shape.size(); ++d) {
    if (held[d].empty() || !plan.operands[0][d].empty() || out_shape[d] != 1) continue;
    const int64_t block = in_shape[d] / mesh.axes_size(held[d]);
    if (starts[d] + 1 > block) continue;  // not in the first block
    if (std::any_of(held[d].begin(), held[d].end(), used_elsewhere)) continue;
    plan.operands[0][d] = held[d];
    summed.insert(summed.end(), held[d].begin(), held[d].end());
  }
  if (summed.empty()) return;
  plan.exchanges.clear();
  plan.reduced_axes = summed;
  plan.reductions.push_back(std::move(summed));
  plan.partial_gather = true;
}

// XLA scatters into an operand sharded along the dims where each update is one element wide (inserted window
// dims) without moving it: each device offsets the indices by its block's start, and updates outside its block
// fall out of bounds and are dropped. The axes must not shard the indices or the updates, which stay whole.
void scatter_into_local_blocks(const Eqn& eqn, const LayoutMap& layouts, EquationPlan& plan) {
  if (!eqn.primitive->name.starts_with("scatter") || eqn.inputs.size() != 3 || eqn.outputs.size() != 1 ||
      plan.operands.size() != 3 || plan.produced.size() != 1 || !plan.reductions.empty()) {
    return;
  }
  const auto groups = param(eqn.params, "dimension_numbers").as_items("dimension_numbers");
  if (groups.size() < 2) return;
  const std::vector<int64_t> inserted = groups[1].as_ints("dimension_numbers");
  const Layout held = layout_in(layouts, eqn.inputs[0]);
  const auto used = [&](const std::string& axis) {
    return uses_axis({&plan.operands[0], &plan.operands[1], &plan.operands[2]}, axis);
  };
  for (const int64_t dim : inserted) {
    const auto d = static_cast<std::size_t>(dim);
    if (d >= held.size() || held[d].empty() || !plan.operands[0][d].empty() || !plan.produced[0][d].empty()) continue;
    if (std::any_of(held[d].begin(), held[d].end(), used)) continue;
    plan.operands[0][d] = held[d];
    plan.produced[0][d] = held[d];
    plan.scatter_in_place = true;
  }
}

// XLA's dot partitioner keeps a contraction sharded where one operand splits it over axes the other operand is
// replicated along, and the sharded operand (per group of devices that share the output's block) has more
// elements than the output's block: the replicated operand is sliced locally, and the partial products are
// all-reduced, instead of all-gathering the sharded operand. Returns those axes, or nothing when the rule does
// not apply (the operands then agree on whole dims).
std::vector<std::string> contraction_kept_sharded(const Eqn& eqn, const LayoutMap& layouts, const FactorRule& rule,
                                                  int factor, const Mesh& mesh) {
  if (eqn.primitive->name != "dot_general" || eqn.outputs.size() != 1) return {};
  std::optional<std::size_t> sharded_operand;
  std::vector<std::string> split;
  for (std::size_t o = 0; o < rule.operands.size() && o < eqn.inputs.size(); ++o) {
    const auto from_operand = factor_axes(rule.operands[o], layout_in(layouts, eqn.inputs[o]), rule, mesh);
    const auto it = from_operand.find(factor);
    if (it == from_operand.end() || it->second.empty()) continue;
    if (sharded_operand) return {};  // both operands split it (differently): not this case
    sharded_operand = o;
    split = it->second;
  }
  if (!sharded_operand) return {};
  const auto axes_of = [](const Layout& layout) {
    std::vector<std::string> out;
    for (const auto& dim : layout) out.insert(out.end(), dim.begin(), dim.end());
    return out;
  };
  const auto uses_split = [&](const std::vector<std::string>& axes) {
    return std::any_of(axes.begin(), axes.end(),
                       [&](const std::string& a) { return std::find(split.begin(), split.end(), a) != split.end(); });
  };
  for (std::size_t o = 0; o < eqn.inputs.size(); ++o) {
    if (o != *sharded_operand && uses_split(axes_of(layout_in(layouts, eqn.inputs[o])))) return {};
  }
  const std::vector<std::string> result_axes = axes_of(layout_in(layouts, Atom{eqn.outputs[0]}));
  if (uses_split(result_axes)) return {};
  std::vector<std::string> operand_axes;
  for (const std::string& axis : axes_of(layout_in(layouts, eqn.inputs[*sharded_operand]))) {
    if (std::find(split.begin(), split.end(), axis) == split.end()) operand_axes.push_back(axis);
  }
  const int64_t operand_block = product(atom_aval(eqn.inputs[*sharded_operand]).shape) / mesh.axes_size(operand_axes);
  const int64_t result_block = product(eqn.outputs[0].aval.shape) / mesh.axes_size(result_axes);
  return operand_block > result_block ? split : std::vector<std::string>{};
}

}  // namespace shardscope
