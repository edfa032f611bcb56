// Shared pieces of the explicit sharding rules (internal to core/explicit).
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/error.h"
#include "explicit/mesh_context.h"
#include "explicit/sharding_rules.h"
#include "ir/aval.h"
#include "ir/param.h"

namespace shardscope::explicit_rules {

using DimSpec = std::vector<std::string>;  // mesh axes of one dimension, major to minor; empty: None

// A result type's sharding: the partitions, the unreduced axes and the reduced ones.
struct TypeSpec {
  std::vector<DimSpec> dims;
  std::vector<std::string> unreduced;
  std::vector<std::string> reduced = {};
};

struct RuleContext {
  std::string name;                  // the primitive
  std::optional<AbstractMesh> mesh;  // the context mesh, if any
  JaxProfile profile;

  // Size of a context mesh axis; ValueError when the axis is unknown (no mesh set).
  [[nodiscard]] int64_t axis_size(const std::string& axis) const;
  [[nodiscard]] int64_t axes_size(const DimSpec& axes) const;
};

using Rule = std::function<std::vector<TypeSpec>(const RuleContext&, std::span<const Aval> inputs, const Params&,
                                                 std::span<const Aval> outputs)>;

// The per-primitive rules, by name (filled by the register_* functions below).
void add_rule(const std::string& name, Rule rule);
void register_value_rules();       // elementwise, dot_general, reductions, cumulative ops
void register_structural_rules();  // shapes, slicing, gather, creation, constraints, reshard
void register_indexing_rules();    // the scatter family, sort, top_k

[[nodiscard]] inline Error sharding_type_error(const std::string& message) { return {"ShardingTypeError", message}; }

// The input's spec padded to its rank.
[[nodiscard]] TypeSpec spec_of(const Aval& aval);
[[nodiscard]] bool all_none(const std::vector<DimSpec>& dims);
// Python text: None, 'x', ('x', 'y') for one entry; ('x', None) or ('x',) for a tuple of entries.
[[nodiscard]] std::string entry_repr(const DimSpec& entry);
[[nodiscard]] std::string entries_tuple_repr(const std::vector<DimSpec>& entries);
// str() of one entry as an f-string shows it: x, ('x', 'y'), None.
[[nodiscard]] std::string entry_str(const DimSpec& entry);
// frozenset({'x', 'y'})
[[nodiscard]] std::string frozenset_repr(const std::vector<std::string>& names);
// str(ShapedArray) per profile; str_short(short_dtypes=True).
[[nodiscard]] std::string aval_text(const Aval& aval, const JaxProfile& profile);
[[nodiscard]] std::string aval_short(const Aval& aval);
// The PartitionSpec of a type and str(NamedSharding) over the context's abstract mesh.
[[nodiscard]] PartitionSpec partition_spec(const TypeSpec& spec);
[[nodiscard]] std::string sharding_text(const RuleContext& context, const TypeSpec& spec);

// A NamedSharding (or bare PartitionSpec) in params[key] as a result type of `rank`: non-Explicit axes dropped,
// padded with None. nullopt when the param is absent or None.
[[nodiscard]] std::optional<TypeSpec> sharding_param(const RuleContext& context, const Params& params,
                                                     const std::string& key, std::size_t rank);
// A NamedSharding's spec restricted to the Explicit axes of its mesh, padded to `rank` (ValueError if longer).
[[nodiscard]] TypeSpec explicit_spec_of(const NamedSharding& sharding, std::size_t rank, const JaxProfile& profile);

// The reduced axes of an op's result (JAX's default_nary_reduced_rule, with reshard and dot_general's own).
[[nodiscard]] std::vector<std::string> result_reduced(const std::string& name, std::span<const Aval> inputs,
                                                      const TypeSpec& spec);

// JAX's default unreduced rules: unreduced operands are refused by ops that have no rule of their own.
void refuse_unreduced_unary(const std::string& name, std::span<const Aval> inputs);
void refuse_unreduced_generic(const std::string& name, std::span<const Aval> inputs);

// with_sharding_constraint on an all-Explicit mesh: AssertionError unless the type already has the sharding.
void assert_sharding_matches(const Aval& aval, const NamedSharding& sharding, const JaxProfile& profile);
// with_sharding_constraint(x, sharding) under the context mesh `context`: from 0.7.1 an all-Explicit context makes
// it an assertion on x's type (true: bind nothing); otherwise it steers the partitioner, and its spec may name Auto
// axes only (ValueError), and false is returned.
[[nodiscard]] bool constraint_is_type_assertion(const AbstractMesh& context, const Aval& aval,
                                                const NamedSharding& sharding, const JaxProfile& profile);
// with_sharding_constraint outside an all-Explicit mesh context: its spec may name Auto axes only (ValueError).
void check_constraint_names_auto_axes(const NamedSharding& sharding, const JaxProfile& profile);

}  // namespace shardscope::explicit_rules
