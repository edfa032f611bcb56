// Factor rules per primitive family (elementwise, reductions, contractions, layout changes).
#include "propagation/factor_rule.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <string>

#include "ir/primitive.h"
#include "ops/convolution.h"
#include "ops/windowed.h"
#include "propagation/control_flow_factor_rule.h"
#include "propagation/indexing_factor_rule.h"

namespace shardscope {
namespace {

FactorRule elementwise_rule(const Eqn& eqn) {
  FactorRule rule;
  rule.elementwise = true;
  const Aval& out = eqn.outputs.at(0).aval;
  for (const int64_t size : out.shape) rule.add_factor(size, FactorKind::kPassThrough);
  for (const Atom& input : eqn.inputs) {
    const Aval& aval = atom_aval(input);
    std::vector<std::vector<int>> dims(aval.rank());
    // Scalars broadcast; same-rank operands share the factor of every dim they do not stretch. A size-1
    // dim broadcast against a larger one has no factor: its single element is every device's.
    if (aval.rank() == out.rank()) {
      for (std::size_t d = 0; d < dims.size(); ++d) {
        if (aval.shape[d] == out.shape[d]) dims[d] = {static_cast<int>(d)};
      }
    }
    rule.operands.push_back(dims);
  }
  for (std::size_t o = 0; o < eqn.outputs.size(); ++o) {
    std::vector<std::vector<int>> dims(out.rank());
    for (std::size_t d = 0; d < dims.size(); ++d) dims[d] = {static_cast<int>(d)};
    rule.results.push_back(dims);
  }
  return rule;
}

std::vector<int64_t> int_param(const Eqn& eqn, const std::string& key) { return param(eqn.params, key).as_ints(key); }

FactorRule reduce_rule(const Eqn& eqn, FactorKind reduced_kind) {
  FactorRule rule;
  const Aval& in = atom_aval(eqn.inputs.at(0));
  const std::vector<int64_t> axes = int_param(eqn, "axes");
  std::vector<std::vector<int>> operand(in.rank());
  std::vector<std::vector<int>> result;
  for (std::size_t d = 0; d < in.rank(); ++d) {
    const bool reduced = std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) != axes.end();
    const int f = rule.add_factor(in.shape[d], reduced ? reduced_kind : FactorKind::kPassThrough);
    operand[d] = {f};
    if (!reduced) result.push_back({f});
  }
  rule.operands.push_back(operand);
  rule.results.assign(eqn.outputs.size(), result);
  return rule;
}

FactorRule dot_general_rule(const Eqn& eqn) {
  FactorRule rule;
  const Aval& lhs = atom_aval(eqn.inputs.at(0));
  const Aval& rhs = atom_aval(eqn.inputs.at(1));
  const auto& numbers = param(eqn.params, "dimension_numbers").as_items("dimension_numbers");
  const auto dims_of = [&](std::size_t group, std::size_t side) {
    return numbers.at(group).as_items("dimension_numbers").at(side).as_ints("dimension_numbers");
  };
  const std::vector<int64_t> lhs_contract = dims_of(0, 0);
  const std::vector<int64_t> rhs_contract = dims_of(0, 1);
  const std::vector<int64_t> lhs_batch = dims_of(1, 0);
  const std::vector<int64_t> rhs_batch = dims_of(1, 1);
  std::vector<std::vector<int>> l(lhs.rank());
  std::vector<std::vector<int>> r(rhs.rank());
  std::vector<std::vector<int>> out;
  for (std::size_t i = 0; i < lhs_batch.size(); ++i) {
    const int f = rule.add_factor(lhs.shape[static_cast<std::size_t>(lhs_batch[i])], FactorKind::kPassThrough);
    l[static_cast<std::size_t>(lhs_batch[i])] = {f};
    r[static_cast<std::size_t>(rhs_batch[i])] = {f};
    out.push_back({f});
  }
  for (std::size_t d = 0; d < lhs.rank(); ++d) {
    const auto dim = static_cast<int64_t>(d);
    if (std::count(lhs_batch.begin(), lhs_batch.end(), dim) + std::count(lhs_contract.begin(), lhs_contract.end(), dim))
      continue;
    const int f = rule.add_factor(lhs.shape[d], FactorKind::kPassThrough);
    l[d] = {f};
    out.push_back({f});
  }
  for (std::size_t d = 0; d < rhs.rank(); ++d) {
    const auto dim = static_cast<int64_t>(d);
    if (std::count(rhs_batch.begin(), rhs_batch.end(), dim) + std::count(rhs_contract.begin(), rhs_contract.end(), dim))
      continue;
    const int f = rule.add_factor(rhs.shape[d], FactorKind::kPassThrough);
    r[d] = {f};
    out.push_back({f});
  }
  for (std::size_t i = 0; i < lhs_contract.size(); ++i) {
    const int f = rule.add_factor(lhs.shape[static_cast<std::size_t>(lhs_contract[i])], FactorKind::kReduction);
    l[static_cast<std::size_t>(lhs_contract[i])] = {f};
    r[static_cast<std::size_t>(rhs_contract[i])] = {f};
  }
  rule.operands = {l, r};
  rule.results = {out};
  return rule;
}

FactorRule transpose_rule(const Eqn& eqn) {
  FactorRule rule;
  const Aval& in = atom_aval(eqn.inputs.at(0));
  const std::vector<int64_t> permutation = int_param(eqn, "permutation");
  std::vector<std::vector<int>> operand(in.rank());
  for (std::size_t d = 0; d < in.rank(); ++d) operand[d] = {rule.add_factor(in.shape[d], FactorKind::kPassThrough)};
  std::vector<std::vector<int>> result;
  for (const int64_t p : permutation) result.push_back(operand[static_cast<std::size_t>(p)]);
  rule.operands = {operand};
  rule.results = {result};
  return rule;
}

FactorRule broadcast_rule(const Eqn& eqn) {
  FactorRule rule;
  const Aval& in = atom_aval(eqn.inputs.at(0));
  const Aval& out = eqn.outputs.at(0).aval;
  const std::vector<int64_t> mapping = int_param(eqn, "broadcast_dimensions");
  std::vector<std::vector<int>> result(out.rank());
  std::vector<std::vector<int>> operand(in.rank());
  for (std::size_t d = 0; d < out.rank(); ++d) result[d] = {rule.add_factor(out.shape[d], FactorKind::kPassThrough)};
  for (std::size_t i = 0; i < in.rank() && i < mapping.size(); ++i) {
    const auto target = static_cast<std::size_t>(mapping[i]);
    // A size-1 dim stretched to N is a new index, not the operand's.
    if (in.shape[i] == out.shape[target]) operand[i] = result[target];
  }
  rule.operands.push_back(operand);
  for (std::size_t k = 1; k < eqn.inputs.size(); ++k) rule.operands.emplace_back(atom_aval(eqn.inputs[k]).rank());
  rule.results = {result};
  return rule;
}

// Reshape: walk both shapes, grouping dims into equal-product runs; a run of one dim on each side is a
// pass-through factor, merges and splits share factors major to minor.
FactorRule reshape_rule(const Eqn& eqn) {
  FactorRule rule;
  const Shape& in = atom_aval(eqn.inputs.at(0)).shape;
  const Shape& out = eqn.outputs.at(0).aval.shape;
  std::vector<std::vector<int>> operand(in.size());
  std::vector<std::vector<int>> result(out.size());
  std::size_t i = 0;
  std::size_t o = 0;
  while (i < in.size() || o < out.size()) {
    if (i < in.size() && in[i] == 1) {
      ++i;
      continue;
    }
    if (o < out.size() && out[o] == 1) {
      ++o;
      continue;
    }
    if (i >= in.size() || o >= out.size()) break;
    if (in[i] == out[o]) {
      const int f = rule.add_factor(in[i], FactorKind::kPassThrough);
      operand[i++] = {f};
      result[o++] = {f};
      continue;
    }
    // One side's dim is made of several of the other's: factors are the finer side's dims.
    if (in[i] < out[o] && out[o] % in[i] == 0) {
      int64_t remaining = out[o];
      while (i < in.size() && remaining % in[i] == 0 && remaining > 1) {
        const int f = rule.add_factor(in[i], FactorKind::kPassThrough);
        operand[i] = {f};
        result[o].push_back(f);
        remaining /= in[i++];
      }
      ++o;
      if (remaining != 1) break;
    } else if (out[o] < in[i] && in[i] % out[o] == 0) {
      int64_t remaining = in[i];
      while (o < out.size() && remaining % out[o] == 0 && remaining > 1) {
        const int f = rule.add_factor(out[o], FactorKind::kPassThrough);
        result[o] = {f};
        operand[i].push_back(f);
        remaining /= out[o++];
      }
      ++i;
      if (remaining != 1) break;
    } else {
      break;  // no clean correspondence: leave the rest unmapped (need replication)
    }
  }
  rule.operands = {operand};
  rule.results = {result};
  return rule;
}

// Every dim of every tensor must be replicated.
FactorRule replicated_rule(const Eqn& eqn) {
  FactorRule rule;
  for (const Atom& input : eqn.inputs) {
    const Aval& aval = atom_aval(input);
    std::vector<std::vector<int>> dims;
    for (const int64_t size : aval.shape) dims.push_back({rule.add_factor(size, FactorKind::kNeedReplication)});
    rule.operands.push_back(dims);
  }
  for (const Var& output : eqn.outputs) {
    std::vector<std::vector<int>> dims;
    for (const int64_t size : output.aval.shape) dims.push_back({rule.add_factor(size, FactorKind::kNeedReplication)});
    rule.results.push_back(dims);
  }
  return rule;
}

// Ops that keep every dim but one (cumulative ops along `axis`): that dim needs replication.
FactorRule along_axis_rule(const Eqn& eqn, int64_t axis) {
  FactorRule rule;
  const Aval& in = atom_aval(eqn.inputs.at(0));
  std::vector<std::vector<int>> dims(in.rank());
  for (std::size_t d = 0; d < in.rank(); ++d) {
    dims[d] = {rule.add_factor(
        in.shape[d], static_cast<int64_t>(d) == axis ? FactorKind::kNeedReplication : FactorKind::kPassThrough)};
  }
  rule.operands = {dims};
  rule.results.assign(eqn.outputs.size(), dims);
  return rule;
}

bool name_is_update(const Eqn& eqn, std::size_t operand) {
  return eqn.primitive->name == "dynamic_update_slice" && operand == 1;
}

// Whether dim `d` of a slice-like op's operand is left as is (so each device can keep its block of it).
// Sizes alone do not tell: negative low padding with positive high padding keeps the size but shifts
// the elements, and dynamic_update_slice keeps the operand's shape while writing into part of it.
bool dim_untouched(const Eqn& eqn, std::size_t d, const Aval& in, const Aval& out) {
  const std::string& name = eqn.primitive->name;
  if (name == "rev") {
    const std::vector<int64_t> reversed = int_param(eqn, "dimensions");
    return std::find(reversed.begin(), reversed.end(), static_cast<int64_t>(d)) == reversed.end();
  }
  if (name == "pad") {
    const auto& config = param(eqn.params, "padding_config").as_items("padding_config");
    const std::vector<int64_t> low_high_interior = config.at(d).as_ints("padding_config");
    return std::all_of(low_high_interior.begin(), low_high_interior.end(), [](int64_t p) { return p == 0; });
  }
  if (name == "dynamic_update_slice") return atom_aval(eqn.inputs.at(1)).shape[d] == in.shape[d];
  return in.shape[d] == out.shape[d];
}

// Untouched dims pass through; a sliced, padded or reversed dim is one permutation factor of operand and result
// (the partitioner shuffles elements between devices along it, and the result may keep the operand's sharding
// there when its own size divides evenly).
FactorRule same_rank_rule(const Eqn& eqn) {
  FactorRule rule;
  const Aval& in = atom_aval(eqn.inputs.at(0));
  const Aval& out = eqn.outputs.at(0).aval;
  if (in.rank() != out.rank()) return replicated_rule(eqn);
  std::vector<std::vector<int>> operand(in.rank());
  std::vector<std::vector<int>> result(out.rank());
  for (std::size_t d = 0; d < in.rank(); ++d) {
    if (dim_untouched(eqn, d, in, out)) {
      operand[d] = result[d] = {rule.add_factor(in.shape[d], FactorKind::kPassThrough)};
    } else {
      operand[d] = result[d] = {rule.add_factor(in.shape[d], FactorKind::kPermutation)};
    }
  }
  rule.operands.push_back(operand);
  for (std::size_t k = 1; k < eqn.inputs.size(); ++k) {
    std::vector<std::vector<int>> dims;
    const Shape& shape = atom_aval(eqn.inputs[k]).shape;
    for (std::size_t d = 0; d < shape.size(); ++d) {
      // dynamic_update_slice's update covering a whole dim is cut like the operand there.
      const bool shared = name_is_update(eqn, k) && shape.size() == in.rank() && dim_untouched(eqn, d, in, out);
      dims.push_back(shared ? operand[d] : std::vector<int>{rule.add_factor(shape[d], FactorKind::kNeedReplication)});
    }
    rule.operands.push_back(dims);
  }
  rule.results = {result};
  return rule;
}

// squeeze drops size-1 dims: the others keep their factors.
FactorRule squeeze_rule(const Eqn& eqn) {
  FactorRule rule;
  const Aval& in = atom_aval(eqn.inputs.at(0));
  const std::vector<int64_t> removed = int_param(eqn, "dimensions");
  std::vector<std::vector<int>> operand(in.rank());
  std::vector<std::vector<int>> result;
  for (std::size_t d = 0; d < in.rank(); ++d) {
    if (std::find(removed.begin(), removed.end(), static_cast<int64_t>(d)) != removed.end()) continue;
    operand[d] = {rule.add_factor(in.shape[d], FactorKind::kPassThrough)};
    result.push_back(operand[d]);
  }
  rule.operands = {operand};
  rule.results = {result};
  return rule;
}

// Values made from nothing (iota, constants): sharded however their users want them.
FactorRule nullary_rule(const Eqn& eqn) {
  FactorRule rule;
  for (const Var& output : eqn.outputs) {
    std::vector<std::vector<int>> dims;
    for (const int64_t size : output.aval.shape) dims.push_back({rule.add_factor(size, FactorKind::kPassThrough)});
    rule.results.push_back(dims);
  }
  return rule;
}

// PRNG ops: the key batch dims (and, for fold_in and threefry, every broadcast operand dim) line up with
// the result's leading dims and pass through; generated dims are free; a key's two words stay together.
FactorRule random_rule(const Eqn& eqn) {
  FactorRule rule;
  const std::string& name = eqn.primitive->name;
  const bool keyed = name != "threefry2x32";  // operand 0 is key data, shape (batch..., 2)
  const bool result_is_key = name == "random_split" || name == "random_fold_in";
  const Aval& out = eqn.outputs.at(0).aval;
  const std::size_t batch_rank = (name == "random_bits" || name == "random_split")
                                     ? atom_aval(eqn.inputs.at(0)).rank() - 1
                                     : out.rank() - (result_is_key ? 1 : 0);
  std::vector<std::vector<int>> result(out.rank());
  for (std::size_t d = 0; d < out.rank(); ++d) {
    const bool key_word = result_is_key && d + 1 == out.rank();
    result[d] = {rule.add_factor(out.shape[d], key_word ? FactorKind::kNeedReplication : FactorKind::kPassThrough)};
  }
  rule.results.assign(eqn.outputs.size(), result);
  for (std::size_t k = 0; k < eqn.inputs.size(); ++k) {
    const Aval& in = atom_aval(eqn.inputs[k]);
    const bool has_word = keyed && k == 0 && in.rank() > 0;
    const std::size_t batch = in.rank() - (has_word ? 1 : 0);
    std::vector<std::vector<int>> dims(in.rank());
    for (std::size_t d = 0; d < batch; ++d) {
      const std::size_t rd = batch_rank + d - batch;  // numpy broadcasting aligns trailing dims
      const bool shared = batch <= batch_rank && in.shape[d] == out.shape[rd];
      dims[d] = shared ? result[rd] : std::vector<int>{rule.add_factor(in.shape[d], FactorKind::kPassThrough)};
    }
    // A key's two words are one value (JAX's key<fry> type has no such dim): each tensor's word dim is a factor
    // of its own, so no sharding ever travels along it.
    if (has_word) dims.back() = {rule.add_factor(in.shape.back(), FactorKind::kNeedReplication)};
    rule.operands.push_back(dims);
  }
  return rule;
}

}  // namespace

bool needs_whole_dims(FactorKind kind) {
  return kind == FactorKind::kNeedReplication || kind == FactorKind::kPermutation;
}

int FactorRule::add_factor(int64_t size, FactorKind kind) {
  factor_sizes.push_back(size);
  kinds.push_back(kind);
  return static_cast<int>(factor_sizes.size() - 1);
}

namespace {

// Concatenation and splitting along `dimension`: every other dim maps one to one; that dim is one permutation
// factor of every operand and result.
FactorRule along_dimension_rule(const Eqn& eqn) {
  const int64_t dimension = find_param(eqn.params, "dimension") != nullptr
                                ? param(eqn.params, "dimension").as_int("dimension")
                                : param(eqn.params, "axis").as_int("axis");
  const Aval& first = atom_aval(eqn.inputs.at(0));
  FactorRule rule;
  std::vector<int> shared(first.rank(), -1);
  for (std::size_t d = 0; d < first.rank(); ++d) {
    const bool joined = static_cast<int64_t>(d) == dimension;
    // The joined factor is as large as the largest tensor along it (the concatenation, or split's operand).
    int64_t size = first.shape[d];
    for (const Var& output : eqn.outputs) size = std::max(size, output.aval.shape.at(d));
    shared[d] = rule.add_factor(size, joined ? FactorKind::kPermutation : FactorKind::kPassThrough);
  }
  const auto dims_of = [&](const Aval& aval) {
    std::vector<std::vector<int>> dims(aval.rank());
    for (std::size_t d = 0; d < aval.rank() && d < shared.size(); ++d) dims[d] = {shared[d]};
    return dims;
  };
  for (const Atom& input : eqn.inputs) rule.operands.push_back(dims_of(atom_aval(input)));
  for (const Var& output : eqn.outputs) rule.results.push_back(dims_of(output.aval));
  return rule;
}

// stack and unstack: the operands' (stack) or result's (unstack) dims keep their factors; the stacked axis holds
// one whole operand per index, so it is a factor of its own that is never sharded.
FactorRule stack_axis_rule(const Eqn& eqn) {
  const auto axis = static_cast<std::size_t>(param(eqn.params, "axis").as_int("axis"));
  const bool stacking = eqn.primitive->name == "stack";
  const Aval& stacked = stacking ? eqn.outputs.at(0).aval : atom_aval(eqn.inputs.at(0));
  FactorRule rule;
  std::vector<std::vector<int>> whole(stacked.rank());
  std::vector<std::vector<int>> piece;
  for (std::size_t d = 0; d < stacked.rank(); ++d) {
    const bool joined = d == axis;
    whole[d] = {rule.add_factor(stacked.shape[d], joined ? FactorKind::kNeedReplication : FactorKind::kPassThrough)};
    if (!joined) piece.push_back(whole[d]);
  }
  if (stacking) {
    rule.operands.assign(eqn.inputs.size(), piece);
    rule.results = {whole};
  } else {
    rule.operands = {whole};
    rule.results.assign(eqn.outputs.size(), piece);
  }
  return rule;
}

// conv_general_dilated as Shardy states it: the batch dim is shared by lhs and result (after any batch-group factor
// that also splits the kernel's output features), the input features are a reduction shared by lhs and kernel
// (after any feature-group factor), the output features are shared by kernel and result, and each lhs spatial dim
// may carry its sharding to the result's (a permutation: windows read across shard edges). Kernel spatial dims
// are kept whole, and so are the group factors: the kernel's group counts are params, not read from the shards.
FactorRule conv_rule(const Eqn& eqn) {
  FactorRule rule;
  const Aval& lhs = atom_aval(eqn.inputs.at(0));
  const Aval& rhs = atom_aval(eqn.inputs.at(1));
  const Aval& out = eqn.outputs.at(0).aval;
  const ConvParams conv = conv_params(eqn.params);
  const ConvDims& d = conv.dims;
  const auto at = [](std::vector<std::vector<int>>& dims, int64_t dim) -> std::vector<int>& {
    return dims[static_cast<std::size_t>(dim)];
  };
  const auto size = [](const Aval& aval, int64_t dim) { return aval.shape[static_cast<std::size_t>(dim)]; };
  std::vector<std::vector<int>> l(lhs.rank());
  std::vector<std::vector<int>> r(rhs.rank());
  std::vector<std::vector<int>> o(out.rank());
  if (conv.batch_group_count > 1) {
    const int groups = rule.add_factor(conv.batch_group_count, FactorKind::kNeedReplication);
    at(l, d.lhs_spec[0]).push_back(groups);
    at(r, d.rhs_spec[0]).push_back(groups);
    at(o, d.out_spec[1]).push_back(groups);
  }
  const int batch = rule.add_factor(size(out, d.out_spec[0]), FactorKind::kPassThrough);
  at(l, d.lhs_spec[0]).push_back(batch);
  at(o, d.out_spec[0]).push_back(batch);
  for (std::size_t i = 2; i < d.lhs_spec.size(); ++i) {
    const int windows = rule.add_factor(size(lhs, d.lhs_spec[i]), FactorKind::kPermutation);
    at(l, d.lhs_spec[i]).push_back(windows);
    at(o, d.out_spec[i]).push_back(windows);
    at(r, d.rhs_spec[i]).push_back(rule.add_factor(size(rhs, d.rhs_spec[i]), FactorKind::kNeedReplication));
  }
  if (conv.feature_group_count > 1) {
    const int groups = rule.add_factor(conv.feature_group_count, FactorKind::kNeedReplication);
    at(l, d.lhs_spec[1]).push_back(groups);
    at(r, d.rhs_spec[0]).push_back(groups);
    at(o, d.out_spec[1]).push_back(groups);
  }
  // Behind a group factor the input features are a minor factor of the lhs feature dim, which a dim sharding
  // cannot split off alone: kept whole there too.
  const int in_features = rule.add_factor(
      size(rhs, d.rhs_spec[1]), conv.feature_group_count > 1 ? FactorKind::kNeedReplication : FactorKind::kReduction);
  at(l, d.lhs_spec[1]).push_back(in_features);
  at(r, d.rhs_spec[1]).push_back(in_features);
  const int64_t groups = conv.batch_group_count * conv.feature_group_count;
  const int out_features = rule.add_factor(size(out, d.out_spec[1]) / groups, FactorKind::kPassThrough);
  at(r, d.rhs_spec[0]).push_back(out_features);
  at(o, d.out_spec[1]).push_back(out_features);
  rule.operands = {l, r};
  rule.results = {o};
  return rule;
}

// Windowed reductions (pools and their derivatives), as Shardy's reduce_window rule: a dim whose window is the
// identity passes through; a windowed dim may keep its sharding in the result (a permutation: windows read across
// shard edges). Every operand shares the dims of the windowed operand.
FactorRule window_rule(const Eqn& eqn) {
  FactorRule rule;
  const WindowParams window = window_params(eqn.params);
  const Aval& operand = atom_aval(eqn.inputs.back());
  std::vector<std::vector<int>> dims(operand.rank());
  for (std::size_t d = 0; d < operand.rank(); ++d) {
    dims[d] = {rule.add_factor(operand.shape[d],
                               window_dim_untouched(window, d) ? FactorKind::kPassThrough : FactorKind::kPermutation)};
  }
  rule.operands.assign(eqn.inputs.size(), dims);
  rule.results = {dims};
  return rule;
}

using RuleBuilder = FactorRule (*)(const Eqn&);

// Every primitive with a sharding rule, by name (elementwise primitives share one rule and are not listed).
const std::map<std::string, RuleBuilder>& rules_by_name() {
  static const std::map<std::string, RuleBuilder> rules = [] {
    std::map<std::string, RuleBuilder> table;
    for (const char* name : {"reduce_sum", "reduce_max", "reduce_min"}) {
      table[name] = [](const Eqn& eqn) { return reduce_rule(eqn, FactorKind::kReduction); };
    }
    for (const char* name : {"reduce_prod", "reduce_and", "reduce_or", "reduce_xor", "argmax", "argmin"}) {
      table[name] = [](const Eqn& eqn) { return reduce_rule(eqn, FactorKind::kNeedReplication); };
    }
    table["dot_general"] = dot_general_rule;
    table["conv_general_dilated"] = conv_rule;
    for (const char* name : {"reduce_window_sum", "reduce_window_max", "reduce_window_min", "select_and_gather_add",
                             "select_and_scatter_add"}) {
      table[name] = window_rule;
    }
    table["transpose"] = transpose_rule;
    table["broadcast_in_dim"] = broadcast_rule;
    table["squeeze"] = squeeze_rule;
    for (const char* name : {"random_bits", "random_split", "random_fold_in", "threefry2x32"}) {
      table[name] = random_rule;
    }
    table["iota"] = nullary_rule;
    table["reshape"] = reshape_rule;
    for (const char* name : {"cumsum", "cumprod", "cummax", "cummin"}) {
      table[name] = [](const Eqn& eqn) { return along_axis_rule(eqn, param(eqn.params, "axis").as_int("axis")); };
    }
    for (const char* name : {"slice", "pad", "rev", "dynamic_slice", "dynamic_update_slice"}) {
      table[name] = same_rank_rule;
    }
    table["concatenate"] = along_dimension_rule;
    for (const char* name : {"scan", "while", "cond"}) table[name] = control_flow_factor_rule;
    table["split"] = along_dimension_rule;
    for (const char* name : {"stack", "unstack"}) table[name] = stack_axis_rule;
    // Computed whole by design: the partitioner gathers their operands, and the plan says so with the op's
    // name as the reason.
    for (const char* name : {"xla_pmap", "random_seed", "pure_callback", "io_callback"}) table[name] = replicated_rule;
    table["gather"] = gather_factor_rule;
    for (const char* name : {"scatter", "scatter-add", "scatter-sub", "scatter-mul", "scatter-min", "scatter-max"}) {
      table[name] = scatter_factor_rule;
    }
    table["sort"] = sort_factor_rule;
    table["top_k"] = top_k_factor_rule;
    return table;
  }();
  return rules;
}

// Primitives the partitioner handles without a factor rule: layout moves, manual computations and calls
// inlined into their caller (exec/partition_plan.cpp, ir/inline_calls.cpp), shard_map-only collectives.
bool partitioned_elsewhere(const std::string& name) {
  static const std::set<std::string> names = {"sharding_constraint",
                                              "device_put",
                                              "reshard",
                                              "mesh_cast",
                                              "shard_map",
                                              "jit",
                                              "pjit",
                                              "remat2",
                                              "checkpoint",
                                              "custom_jvp_call",
                                              "custom_vjp_call",
                                              "pvary",
                                              "vary_unreduced_cast_p",
                                              "reduced_vary_cast_p"};
  return names.count(name) != 0;
}

}  // namespace

bool has_factor_rule(const Primitive& primitive) {
  return primitive.elementwise || static_cast<bool>(primitive.collective_impl) ||
         rules_by_name().count(primitive.name) != 0 || partitioned_elsewhere(primitive.name);
}

FactorRule factor_rule_for(const Eqn& eqn) {
  const std::string& name = eqn.primitive->name;
  if (eqn.primitive->elementwise && !eqn.outputs.empty()) return elementwise_rule(eqn);
  const auto& rules = rules_by_name();
  if (const auto it = rules.find(name); it != rules.end()) return it->second(eqn);
  if (eqn.inputs.empty()) return nullary_rule(eqn);
  // Unknown to the partitioner (has_factor_rule is false; a registry test fails for it): computed whole.
  return replicated_rule(eqn);
}

}  // namespace shardscope
