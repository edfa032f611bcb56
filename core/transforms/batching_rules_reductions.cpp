// Batching rules of reductions, cumulative reductions and dot_general (JAX's reducer and dot batchers).
#include <algorithm>

#include "base/error.h"
#include "ops/structural.h"
#include "transforms/batching.h"

namespace shardscope::batching {
namespace {

std::vector<int64_t> bumped(const std::vector<int64_t>& dims, int64_t bdim) {
  std::vector<int64_t> out;
  out.reserve(dims.size());
  for (const int64_t d : dims) out.push_back(d >= bdim ? d + 1 : d);
  return out;
}

bool contains(const std::vector<int64_t>& dims, int64_t d) {
  return std::find(dims.begin(), dims.end(), d) != dims.end();
}

// batching.reducer_batcher: reduced axes skip the batch dim, which lands where the surviving dims put it.
std::vector<BatchedValue> reducer_rule(const std::string& name, JaxprBuilder& builder,
                                       std::span<const BatchedValue> args, const Params& params) {
  const int64_t bdim = *args[0].batch_dim;
  const std::vector<int64_t> axes = bumped(param(params, "axes").as_ints("axes"), bdim);
  int64_t bdim_out = 0;
  for (int64_t d = 0; d < bdim; ++d) {
    if (!contains(axes, d)) ++bdim_out;
  }
  return all_at(builder.bind(name, {args[0].value}, with_param(params, "axes", ParamValue::int_tuple(axes))), bdim_out);
}

// loops._cumred_batch_rule.
std::vector<BatchedValue> cumulative_rule(const std::string& name, JaxprBuilder& builder,
                                          std::span<const BatchedValue> args, const Params& params) {
  const int64_t bdim = *args[0].batch_dim;
  const int64_t axis = param(params, "axis").as_int("axis");
  return all_at(builder.bind(name, {args[0].value}, with_param(params, "axis", axis < bdim ? axis : axis + 1)), bdim);
}

struct DotNumbers {
  std::vector<int64_t> lhs_contract, rhs_contract, lhs_batch, rhs_batch;
};

DotNumbers dot_numbers(const Params& params) {
  const auto* outer = param(params, "dimension_numbers").get_if<ParamValue::Tuple>();
  if (outer == nullptr || outer->items.size() != 2) throw type_error("dot_general dimension_numbers must be a pair");
  const auto pair = [](const ParamValue& value) {
    const auto* tuple = value.get_if<ParamValue::Tuple>();
    if (tuple == nullptr || tuple->items.size() != 2) throw type_error("dot_general dimension_numbers must be pairs");
    return std::pair{tuple->items[0].as_ints("dimension_numbers"), tuple->items[1].as_ints("dimension_numbers")};
  };
  auto [lhs_contract, rhs_contract] = pair(outer->items[0]);
  auto [lhs_batch, rhs_batch] = pair(outer->items[1]);
  return {lhs_contract, rhs_contract, lhs_batch, rhs_batch};
}

// lax._dot_general_batch_dim_nums: both mapped, the vmapped dims become a leading dot batch dim; one
// mapped, its vmapped dim stays a free (tensor) dim of that side.
std::vector<BatchedValue> dot_general_rule(JaxprBuilder& builder, std::span<const BatchedValue> args,
                                           const Params& params) {
  const BatchedValue& lhs = args[0];
  const BatchedValue& rhs = args[1];
  DotNumbers n = dot_numbers(params);
  int64_t result_dim = 0;
  if (lhs.batch_dim && rhs.batch_dim) {
    const int64_t lbd = *lhs.batch_dim;
    const int64_t rbd = *rhs.batch_dim;
    n.lhs_batch = bumped(n.lhs_batch, lbd);
    n.lhs_batch.insert(n.lhs_batch.begin(), lbd);
    n.rhs_batch = bumped(n.rhs_batch, rbd);
    n.rhs_batch.insert(n.rhs_batch.begin(), rbd);
    n.lhs_contract = bumped(n.lhs_contract, lbd);
    n.rhs_contract = bumped(n.rhs_contract, rbd);
  } else if (lhs.batch_dim) {
    const int64_t lbd = *lhs.batch_dim;
    const int64_t lhs_rank = rank_of(lhs.value) - 1;
    int64_t tensor_before = 0;
    for (int64_t d = 0; d < lhs_rank; ++d) {
      if (!contains(n.lhs_batch, d) && !contains(n.lhs_contract, d) && d < lbd) ++tensor_before;
    }
    result_dim = static_cast<int64_t>(n.lhs_batch.size()) + tensor_before;
    n.lhs_batch = bumped(n.lhs_batch, lbd);
    n.lhs_contract = bumped(n.lhs_contract, lbd);
  } else {
    const int64_t rbd = *rhs.batch_dim;
    const int64_t rhs_rank = rank_of(rhs.value) - 1;
    int64_t tensor_before = 0;
    for (int64_t d = 0; d < rhs_rank; ++d) {
      if (!contains(n.rhs_batch, d) && !contains(n.rhs_contract, d) && d < rbd) ++tensor_before;
    }
    result_dim = rank_of(lhs.value) - static_cast<int64_t>(n.lhs_contract.size()) + tensor_before;
    n.rhs_batch = bumped(n.rhs_batch, rbd);
    n.rhs_contract = bumped(n.rhs_contract, rbd);
  }
  const Params out = with_param(params, "dimension_numbers",
                                dot_dimension_numbers_param(n.lhs_contract, n.rhs_contract, n.lhs_batch, n.rhs_batch));
  return all_at(builder.bind("dot_general", {lhs.value, rhs.value}, out), result_dim);
}

void add_named(const std::string& name,
               std::vector<BatchedValue> (*rule)(const std::string&, JaxprBuilder&, std::span<const BatchedValue>,
                                                 const Params&)) {
  register_batch_rule(name,
                      [name, rule](JaxprBuilder& builder, std::span<const BatchedValue> args, const Params& params,
                                   const BatchAxis&) { return rule(name, builder, args, params); });
}

}  // namespace

void register_reduction_batch_rules() {
  for (const char* name : {"reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or",
                           "reduce_xor", "argmax", "argmin"}) {
    add_named(name, reducer_rule);
  }
  for (const char* name : {"cumsum", "cumprod", "cummax", "cummin"}) add_named(name, cumulative_rule);
  register_batch_rule("dot_general", [](JaxprBuilder& builder, std::span<const BatchedValue> args, const Params& params,
                                        const BatchAxis&) { return dot_general_rule(builder, args, params); });
}

}  // namespace shardscope::batching
