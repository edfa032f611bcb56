// Explicit sharding rules of value computations: elementwise ops, dot_general, reductions, cumulative ops.
#include <algorithm>
#include <set>

#include "base/python_format.h"
#include "explicit/rules_internal.h"
#include "ops/dot_dims.h"

namespace shardscope::explicit_rules {
namespace {

std::vector<int64_t> ints_or_empty(const Params& params, const std::string& key) {
  const ParamValue* value = find_param(params, key);
  if (value == nullptr || value->is_none()) return {};
  return value->as_ints(key);
}

std::vector<TypeSpec> unary_rule(const RuleContext& context, std::span<const Aval> inputs, const Params&,
                                 std::span<const Aval>) {
  refuse_unreduced_unary(context.name, inputs);
  TypeSpec spec = spec_of(inputs[0]);
  spec.unreduced.clear();
  return {spec};
}

// Operands of equal rank broadcast dim by dim: equal entries pass; else None on a size-1 dim yields to the others,
// and two different non-None entries conflict.
std::vector<DimSpec> broadcast_dims(const std::string& name, std::span<const Aval> inputs) {
  std::vector<const Aval*> shaped;
  for (const Aval& a : inputs) {
    if (a.rank() > 0) shaped.push_back(&a);
  }
  if (shaped.empty()) return {};
  const std::size_t rank = shaped[0]->rank();
  std::vector<std::vector<DimSpec>> specs;
  for (const Aval* a : shaped) {
    if (a->rank() != rank) {
      std::vector<std::string> shapes;
      for (const Aval* s : shaped) shapes.push_back(python_int_tuple(s->shape));
      throw type_error(name + ": arrays must have same number of dimensions, got " + join(shapes, ", ") + ".");
    }
    specs.push_back(spec_of(*a).dims);
  }
  std::vector<DimSpec> result(rank);
  for (std::size_t d = 0; d < rank; ++d) {
    const bool same = std::all_of(specs.begin(), specs.end(), [&](const auto& s) { return s[d] == specs[0][d]; });
    if (same) {
      result[d] = specs[0][d];
      continue;
    }
    std::vector<DimSpec> non_trivial;
    for (std::size_t i = 0; i < specs.size(); ++i) {
      if (!(shaped[i]->shape[d] == 1 && specs[i][d].empty())) non_trivial.push_back(specs[i][d]);
    }
    if (non_trivial.empty()) continue;
    if (std::all_of(non_trivial.begin(), non_trivial.end(), [&](const DimSpec& s) { return s == non_trivial[0]; })) {
      result[d] = non_trivial[0];
      continue;
    }
    for (const auto& s : specs) {
      if (s[d].empty()) continue;
      if (result[d].empty()) {
        result[d] = s[d];
      } else if (result[d] != s[d]) {
        std::vector<std::string> shown;
        for (const auto& spec : specs) shown.push_back(entries_tuple_repr(spec));
        throw sharding_type_error(name + " got incompatible shardings for broadcasting: " + join(shown, ", ") + ".");
      }
    }
  }
  return result;
}

std::vector<TypeSpec> nary_rule(const RuleContext& context, std::span<const Aval> inputs, const Params&,
                                std::span<const Aval>) {
  TypeSpec spec{broadcast_dims(context.name, inputs), {}};
  refuse_unreduced_unary(context.name, inputs);
  return {spec};
}

// add lets two partial sums over the same axes add up without communication.
std::vector<TypeSpec> add_op_rule(const RuleContext& context, std::span<const Aval> inputs, const Params&,
                                  std::span<const Aval>) {
  TypeSpec spec{broadcast_dims(context.name, inputs), {}};
  const std::vector<std::string>& x = inputs[0].unreduced;
  const std::vector<std::string>& y = inputs.size() > 1 ? inputs[1].unreduced : x;
  if (!x.empty() && !y.empty()) {
    if (std::set<std::string>(x.begin(), x.end()) != std::set<std::string>(y.begin(), y.end())) {
      throw sharding_type_error("lhs and rhs to `add` must be unreduced along the same mesh axes. Got lhs=" +
                                frozenset_repr(x) + ", rhs=" + frozenset_repr(y));
    }
    spec.unreduced = x;
  } else if (!x.empty() || !y.empty()) {
    const std::string lhs = !x.empty() ? "lhs" : "rhs";
    const std::string rhs = !x.empty() ? "rhs" : "lhs";
    throw sharding_type_error(lhs + " is unreduced while " + rhs +
                              " is not. `add` operation does not allow this because there will be implicit "
                              "communication. Please reduce " +
                              lhs + " via `reshard` before calling `add`.");
  }
  return {spec};
}

std::vector<TypeSpec> select_n_rule(const RuleContext& context, std::span<const Aval> inputs, const Params&,
                                    std::span<const Aval>) {
  const Aval& which = inputs[0];
  const std::span<const Aval> cases = inputs.subspan(1);
  // Outside any mesh context a constant broadcast beside an array typed by its own Explicit mesh has no sharding in
  // its type; JAX broadcasts it with the array's sharding (broadcast_shardings), so it takes the others' type here.
  const auto untyped = [](const Aval& a) { return a.rank() > 0 && a.dim_axes.empty() && a.unreduced.empty(); };
  const auto typed_case = std::find_if(cases.begin(), cases.end(), [&](const Aval& c) { return !untyped(c); });
  const bool which_typed = which.rank() > 0 && !untyped(which);
  const TypeSpec first = spec_of(typed_case != cases.end() ? *typed_case : which_typed ? which : cases[0]);
  for (const Aval& c : cases) {
    if (untyped(c)) continue;
    if (spec_of(c).dims != first.dims || spec_of(c).unreduced != first.unreduced) {
      std::vector<std::string> shown;
      for (const Aval& each : cases) shown.push_back(sharding_text(context, spec_of(each)));
      throw sharding_type_error("select cases must have the same shardings, got [" + join(shown, ", ") + "].");
    }
  }
  if (which.rank() > 0 && !untyped(which) && spec_of(which).dims != first.dims) {
    throw sharding_type_error(
        "select `which` must be scalar or have the same sharding as cases, got `which` "
        "sharding " +
        sharding_text(context, spec_of(which)) + " but case sharding " + sharding_text(context, first) + ".");
  }
  refuse_unreduced_generic(context.name, inputs);
  return {first};
}

std::vector<TypeSpec> clamp_rule(const RuleContext& context, std::span<const Aval> inputs, const Params&,
                                 std::span<const Aval>) {
  refuse_unreduced_generic(context.name, inputs);
  return {spec_of(inputs[1])};
}

std::vector<TypeSpec> convert_element_type_rule(const RuleContext& context, std::span<const Aval> inputs,
                                                const Params& params, std::span<const Aval>) {
  TypeSpec spec = spec_of(inputs[0]);
  if (auto given = sharding_param(context, params, "sharding", inputs[0].rank())) {
    if (given->unreduced.empty()) given->unreduced = spec.unreduced;
    return {*given};
  }
  return {spec};
}

std::vector<DimSpec> pick(const TypeSpec& spec, const std::vector<int64_t>& dims) {
  std::vector<DimSpec> out;
  for (const int64_t d : dims) out.push_back(spec.dims.at(static_cast<std::size_t>(d)));
  return out;
}

std::vector<TypeSpec> dot_general_rule(const RuleContext& context, std::span<const Aval> inputs, const Params& params,
                                       std::span<const Aval> outputs) {
  const Aval& lhs = inputs[0];
  const Aval& rhs = inputs[1];
  const auto* outer = param(params, "dimension_numbers").get_if<ParamValue::Tuple>();
  if (outer == nullptr || outer->items.size() != 2) throw type_error("dot_general: bad dimension_numbers");
  const auto& contract = outer->items[0].as_items("dimension_numbers");
  const auto& batch = outer->items[1].as_items("dimension_numbers");
  const std::vector<int64_t> lhs_contract = contract.at(0).as_ints("dimension_numbers");
  const std::vector<int64_t> rhs_contract = contract.at(1).as_ints("dimension_numbers");
  const std::vector<int64_t> lhs_batch = batch.at(0).as_ints("dimension_numbers");
  const std::vector<int64_t> rhs_batch = batch.at(1).as_ints("dimension_numbers");
  const TypeSpec lhs_spec = spec_of(lhs);
  const TypeSpec rhs_spec = spec_of(rhs);
  const std::vector<DimSpec> lhs_contracting = pick(lhs_spec, lhs_contract);
  const std::vector<DimSpec> rhs_contracting = pick(rhs_spec, rhs_contract);

  if (!lhs.unreduced.empty() || !rhs.unreduced.empty()) {
    throw sharding_type_error("lhs or rhs passed to dot_general cannot be unreduced. Got lhs=" + typeof_repr(lhs) +
                              " and rhs=" + typeof_repr(rhs));
  }
  if (auto given = sharding_param(context, params, "out_sharding", outputs[0].rank())) {
    if (!given->unreduced.empty()) {
      // An unreduced result keeps one partial sum per shard of the contraction: both sides must agree on it.
      if (lhs_contracting != rhs_contracting) {
        throw sharding_type_error(
            "lhs and rhs contracting dims should be sharded identically when out_sharding provided to dot_general "
            "mentions unreduced_axes. Got lhs_contracting_spec=" +
            entries_tuple_repr(lhs_contracting) + ", rhs_contracting_spec=" + entries_tuple_repr(rhs_contracting));
      }
      std::set<std::string> flat;
      for (const DimSpec& d : lhs_contracting) flat.insert(d.begin(), d.end());
      if (std::set<std::string>(given->unreduced.begin(), given->unreduced.end()) != flat) {
        throw sharding_type_error(
            "out_sharding's unreduced axes should be equal to the contracting specs. Got "
            "unreduced axes=" +
            frozenset_repr(given->unreduced) + " and contracting spec=" + entries_tuple_repr(lhs_contracting));
      }
    }
    return {*given};
  }
  const std::vector<DimSpec> lhs_batching = pick(lhs_spec, lhs_batch);
  const std::vector<DimSpec> rhs_batching = pick(rhs_spec, rhs_batch);
  if (lhs_batching != rhs_batching) {
    throw sharding_type_error(
        "dot_general requires lhs batch dimensions and rhs batch dimensions to have the same sharding, got " +
        entries_tuple_repr(lhs_batching) + " and " + entries_tuple_repr(rhs_batching) + ".");
  }
  for (std::size_t i = 0; i < lhs_contracting.size() && i < rhs_contracting.size(); ++i) {
    if (!lhs_contracting[i].empty() && !rhs_contracting[i].empty()) {
      throw sharding_type_error(
          "Contracting dimensions are sharded and it is ambiguous how the output should be sharded. Please specify "
          "the output sharding via the `out_sharding` parameter. Got lhs_contracting_spec=" +
          entries_tuple_repr(lhs_contracting) + " and rhs_contracting_spec=" + entries_tuple_repr(rhs_contracting));
    }
  }
  TypeSpec out{lhs_batching, {}};
  for (const DimSpec& d : pick(lhs_spec, dot_free_dims(lhs.rank(), lhs_contract, lhs_batch))) out.dims.push_back(d);
  for (const DimSpec& d : pick(rhs_spec, dot_free_dims(rhs.rank(), rhs_contract, rhs_batch))) out.dims.push_back(d);
  return {out};
}

std::string int_frozenset(const std::vector<int64_t>& values) {
  if (values.empty()) return "frozenset()";
  std::vector<int64_t> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::string> items;
  for (const int64_t v : sorted) items.push_back(std::to_string(v));
  return "frozenset({" + join(items, ", ") + "})";
}

TypeSpec without_dims(const TypeSpec& spec, const std::vector<int64_t>& axes) {
  TypeSpec out;
  for (std::size_t d = 0; d < spec.dims.size(); ++d) {
    if (std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) == axes.end()) out.dims.push_back(spec.dims[d]);
  }
  return out;
}

// reduce_sum / reduce_max / reduce_min: reduced dims leave the type (an all-reduce), unless out_sharding says.
Rule reduction_rule(bool takes_out_sharding) {
  return [takes_out_sharding](const RuleContext& context, std::span<const Aval> inputs, const Params& params,
                              std::span<const Aval> outputs) -> std::vector<TypeSpec> {
    const Aval& operand = inputs[0];
    const std::vector<int64_t> axes = ints_or_empty(params, "axes");
    const TypeSpec spec = spec_of(operand);
    std::optional<TypeSpec> given;
    if (takes_out_sharding) given = sharding_param(context, params, "out_sharding", outputs[0].rank());
    if (given && !given->unreduced.empty()) {
      std::set<std::string> used(operand.unreduced.begin(), operand.unreduced.end());
      for (const int64_t a : axes) {
        const DimSpec& d = spec.dims.at(static_cast<std::size_t>(a));
        used.insert(d.begin(), d.end());
      }
      for (const std::string& u : given->unreduced) {
        if (!used.contains(u)) {
          throw sharding_type_error("out_sharding's unreduced axes should be in operand's specs that were " +
                                    context.name + " over. Got operand=" + typeof_repr(operand) + ", axes=" +
                                    int_frozenset(axes) + ", unreduced_spec=" + frozenset_repr(given->unreduced));
        }
      }
      return {*given};
    }
    if (!takes_out_sharding) refuse_unreduced_generic(context.name, inputs);
    TypeSpec out = given ? *given : without_dims(spec, axes);
    out.unreduced = operand.unreduced;
    return {out};
  };
}

std::vector<TypeSpec> cumulative_rule(const RuleContext& context, std::span<const Aval> inputs, const Params& params,
                                      std::span<const Aval>) {
  const Aval& operand = inputs[0];
  const int64_t axis = param(params, "axis").as_int("axis");
  const TypeSpec spec = spec_of(operand);
  if (axis >= 0 && static_cast<std::size_t>(axis) < spec.dims.size() &&
      !spec.dims[static_cast<std::size_t>(axis)].empty()) {
    throw sharding_type_error("Input should be unsharded over the axis being reduced. Got input type=" +
                              aval_text(operand, context.profile) + " and axis=" + std::to_string(axis));
  }
  refuse_unreduced_generic(context.name, inputs);
  return {spec};
}

}  // namespace

// mul is bilinear: an unreduced partial sum may only be scaled by a value reduced over the same axes (the same on
// every device of the group), and the product stays unreduced (JAX's _mul_ur_rule).
std::vector<TypeSpec> mul_rule(const RuleContext& context, std::span<const Aval> inputs, const Params&,
                               std::span<const Aval>) {
  TypeSpec spec{broadcast_dims(context.name, inputs), {}};
  const Aval& x = inputs[0];
  const Aval& y = inputs.size() > 1 ? inputs[1] : inputs[0];
  const auto same = [](std::vector<std::string> a, std::vector<std::string> b) {
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    return a == b;
  };
  if (!x.unreduced.empty() && !y.unreduced.empty()) {
    throw sharding_type_error("lhs and rhs to `mul` cannot be unreduced since mul is bilinear. Got lhs=" +
                              frozenset_repr(x.unreduced) + ", rhs=" + frozenset_repr(y.unreduced));
  }
  if (!x.unreduced.empty() || !y.unreduced.empty()) {
    const bool lhs_unreduced = !x.unreduced.empty();
    const Aval& partial = lhs_unreduced ? x : y;
    const Aval& scale = lhs_unreduced ? y : x;
    if (!same(partial.unreduced, scale.reduced)) {
      throw sharding_type_error(std::string(lhs_unreduced ? "RHS" : "LHS") + " should be reduced along the same axes " +
                                (lhs_unreduced ? "LHS" : "RHS") + " is unreduced on. Got lhs=" +
                                aval_text(x, context.profile) + " and rhs=" + aval_text(y, context.profile));
    }
    spec.unreduced = partial.unreduced;
    spec.reduced = {};
  }
  return {spec};
}

void register_value_rules() {
  add_rule("mul", mul_rule);
  add_rule("%unary", unary_rule);
  add_rule("%nary", nary_rule);
  add_rule("add", add_op_rule);
  // add_any (cotangent accumulation) types its result as its first operand, unreduced partial sums included.
  add_rule("add_any", [](const RuleContext&, std::span<const Aval> inputs, const Params&, std::span<const Aval>) {
    return std::vector<TypeSpec>{spec_of(inputs[0])};
  });
  add_rule("select_n", select_n_rule);
  add_rule("clamp", clamp_rule);
  add_rule("convert_element_type", convert_element_type_rule);
  add_rule("dot_general", dot_general_rule);
  for (const char* name : {"reduce_sum", "reduce_max", "reduce_min"}) add_rule(name, reduction_rule(true));
  for (const char* name : {"reduce_prod", "reduce_and", "reduce_or", "reduce_xor", "argmax", "argmin"}) {
    add_rule(name, reduction_rule(false));
  }
  for (const char* name : {"cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"}) add_rule(name, cumulative_rule);
}

}  // namespace shardscope::explicit_rules
