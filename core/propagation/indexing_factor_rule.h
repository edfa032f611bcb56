// Factor rules of the indexing and ordering primitives: gather, the scatter family, sort and top_k.
#pragma once

#include "propagation/factor_rule.h"

namespace shardscope {

// Batch dims (indices' dims and operand_batching_dims) and whole-slice window dims pass through; the dims the
// indices select from, and the index vector itself, need replication.
[[nodiscard]] FactorRule gather_factor_rule(const Eqn& eqn);
// The operand and result share every dim: whole windows and batch dims pass through (with the updates'), the
// dims updates land in are permutation factors (the kernel needs them whole, the result keeps the operand's).
[[nodiscard]] FactorRule scatter_factor_rule(const Eqn& eqn);
// Every operand and result shares each dim; the sorted dimension needs replication.
[[nodiscard]] FactorRule sort_factor_rule(const Eqn& eqn);
// Like sort along `axis`, whose k-long results take no sharding from the operand.
[[nodiscard]] FactorRule top_k_factor_rule(const Eqn& eqn);

}  // namespace shardscope
