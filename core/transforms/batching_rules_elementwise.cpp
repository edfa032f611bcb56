// Batching rules of elementwise primitives: JAX's vectorized and broadcasting batchers, select_n, clamp, add_any.
#include <algorithm>
#include <exception>

#include "ir/primitive.h"
#include "transforms/batching.h"

namespace shardscope::batching {
namespace {

// batching.vectorized_batcher: a one-operand elementwise op maps its batch dim straight through.
std::vector<BatchedValue> vectorized_rule(const std::string& name, JaxprBuilder& builder,
                                          std::span<const BatchedValue> args, const Params& params) {
  return all_at(builder.bind(name, values(args), params), args[0].batch_dim);
}

// The avals broadcast_batcher would bind, computed without emitting anything.
std::vector<Aval> front_avals(std::span<const BatchedValue> args) {
  std::vector<Aval> avals;
  std::size_t max_rank = 0;
  for (const BatchedValue& arg : args) {
    Aval aval = atom_aval(arg.value);
    if (aval.rank() > 0) {
      const std::size_t from = arg.batch_dim ? static_cast<std::size_t>(*arg.batch_dim) : aval.rank();
      Shape shape(1, arg.batch_dim ? aval.shape[from] : 1);
      for (std::size_t d = 0; d < aval.rank(); ++d) {
        if (d != from) shape.push_back(aval.shape[d]);
      }
      aval.shape = std::move(shape);
    }
    aval.dim_axes.clear();
    max_rank = std::max(max_rank, aval.rank());
    avals.push_back(std::move(aval));
  }
  for (std::size_t i = 0; i < avals.size(); ++i) {
    if (args[i].batch_dim) avals[i].shape.resize(max_rank, 1);
  }
  return avals;
}

// Whether the primitive's shape rule takes size-1 dims against full ones (lax's n-ary ops do; a few
// engine primitives insist on equal shapes).
bool accepts_size_one_broadcasting(const std::string& name, std::span<const BatchedValue> args, const Params& params) {
  const Primitive* primitive = find_primitive(name);
  try {
    (void)primitive->abstract_eval(front_avals(args), params);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// Every operand brought to the full batched shape with the batch dim in front.
std::vector<BatchedValue> materialized_rule(const std::string& name, JaxprBuilder& builder,
                                            std::span<const BatchedValue> args, const Params& params) {
  const int64_t size = mapped_size(args);
  std::vector<Atom> operands;
  Shape full;
  for (const BatchedValue& arg : args) {
    operands.push_back(rank_of(arg.value) > 0 || arg.batch_dim ? bdim_at_front(builder, arg, size) : arg.value);
    if (shape_of(operands.back()).size() > full.size()) full = shape_of(operands.back());
  }
  for (Atom& operand : operands) {
    const int64_t rank = rank_of(operand);
    if (rank == 0 || rank == static_cast<int64_t>(full.size())) continue;
    std::vector<int64_t> dims(static_cast<std::size_t>(rank));
    for (std::size_t d = 0; d < dims.size(); ++d) dims[d] = static_cast<int64_t>(d);
    operand = broadcast_in_dim(builder, operand, full, dims);
  }
  return all_at(builder.bind(name, operands, params), 0);
}

// batching.broadcast_batcher: agreeing batch dims bind directly; otherwise every operand gets its batch
// dim in front (size 1 when unmapped) and relies on the op's size-1 broadcasting.
std::vector<BatchedValue> broadcasting_rule(const std::string& name, JaxprBuilder& builder,
                                            std::span<const BatchedValue> args, const Params& params) {
  const auto first = std::find_if(args.begin(), args.end(), [](const BatchedValue& a) { return a.batch_dim; });
  const Shape& shape = shape_of(first->value);
  const bool agree = std::all_of(args.begin(), args.end(), [&](const BatchedValue& a) {
    return rank_of(a.value) == 0 || (shape_of(a.value) == shape && a.batch_dim == first->batch_dim);
  });
  if (agree) return all_at(builder.bind(name, values(args), params), first->batch_dim);
  if (!accepts_size_one_broadcasting(name, args, params)) return materialized_rule(name, builder, args, params);
  std::vector<Atom> operands;
  int64_t max_rank = 0;
  for (const BatchedValue& arg : args) {
    operands.push_back(rank_of(arg.value) > 0 ? bdim_at_front(builder, arg, 1) : arg.value);
    max_rank = std::max(max_rank, rank_of(operands.back()));
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    const int64_t rank = rank_of(operands[i]);
    if (!args[i].batch_dim || rank == max_rank) continue;
    std::vector<int64_t> dims;
    for (int64_t d = rank; d < max_rank; ++d) dims.push_back(d);
    operands[i] = expand_dims(builder, operands[i], dims);
  }
  return all_at(builder.bind(name, operands, params), 0);
}

std::vector<BatchedValue> elementwise_rule(const std::string& name, JaxprBuilder& builder,
                                           std::span<const BatchedValue> args, const Params& params) {
  if (args.size() == 1) return vectorized_rule(name, builder, args, params);
  return broadcasting_rule(name, builder, args, params);
}

// lax._select_batch_rule.
std::vector<BatchedValue> select_n_rule(JaxprBuilder& builder, std::span<const BatchedValue> args,
                                        const Params& params) {
  const int64_t size = mapped_size(args);
  const BatchedValue& which = args[0];
  const std::span<const BatchedValue> cases = args.subspan(1);
  auto bind = [&](Atom predicate, std::vector<Atom> case_values, std::optional<int64_t> dim) {
    case_values.insert(case_values.begin(), std::move(predicate));
    return all_at(builder.bind("select_n", std::move(case_values), params), dim);
  };
  const bool same_dims =
      std::all_of(cases.begin(), cases.end(), [&](const BatchedValue& c) { return c.batch_dim == which.batch_dim; });
  if (same_dims) {
    if (shape_of(which.value) == shape_of(cases[0].value)) return bind(which.value, values(cases), which.batch_dim);
    const Atom predicate =
        broadcast_in_dim(builder, which.value, shape_of(cases[0].value), {which.batch_dim.value_or(0)});
    return bind(predicate, values(cases), which.batch_dim);
  }
  const bool cases_mapped = std::all_of(cases.begin(), cases.end(), [](const BatchedValue& c) { return c.batch_dim; });
  if (rank_of(which.value) == 0 && cases_mapped) {
    const bool cases_agree = std::all_of(cases.begin(), cases.end(),
                                         [&](const BatchedValue& c) { return c.batch_dim == cases[0].batch_dim; });
    if (cases_agree) return bind(which.value, values(cases), cases[0].batch_dim);
    const bool same_shapes = std::all_of(cases.begin(), cases.end(), [&](const BatchedValue& c) {
      return shape_of(c.value) == shape_of(cases[0].value);
    });
    if (same_shapes) {
      std::vector<Atom> moved{cases[0].value};
      for (std::size_t i = 1; i < cases.size(); ++i)
        moved.push_back(move_axis(builder, cases[i].value, *cases[i].batch_dim, *cases[0].batch_dim));
      return bind(which.value, moved, cases[0].batch_dim);
    }
  }
  Atom predicate = rank_of(which.value) > 0 ? bdim_at_front(builder, which, size) : which.value;
  std::vector<Atom> case_values = values(cases);
  const bool all_scalar_cases =
      std::all_of(cases.begin(), cases.end(), [](const BatchedValue& c) { return rank_of(c.value) == 0; });
  if (!all_scalar_cases) {
    for (std::size_t i = 0; i < cases.size(); ++i) case_values[i] = bdim_at_front(builder, cases[i], size);
  }
  const int64_t case_rank = rank_of(case_values[0]);
  if (rank_of(predicate) > 0 && rank_of(predicate) < case_rank) {
    predicate = broadcast_in_dim(builder, predicate, shape_of(case_values[0]), {0});
  }
  if (rank_of(predicate) > case_rank) {
    for (Atom& c : case_values) c = broadcast_in_dim(builder, c, shape_of(predicate), {});
  }
  return bind(predicate, case_values, 0);
}

// lax._clamp_batch_rule.
std::vector<BatchedValue> clamp_rule(JaxprBuilder& builder, std::span<const BatchedValue> args, const Params& params) {
  const int64_t size = mapped_size(args);
  const BatchedValue& low = args[0];
  const BatchedValue& x = args[1];
  const BatchedValue& high = args[2];
  auto bind = [&](Atom a, Atom b, Atom c, std::optional<int64_t> dim) {
    return all_at(builder.bind("clamp", {std::move(a), std::move(b), std::move(c)}, params), dim);
  };
  if (low.batch_dim == x.batch_dim && x.batch_dim == high.batch_dim) {
    if (shape_of(low.value) == shape_of(x.value) && shape_of(x.value) == shape_of(high.value))
      return bind(low.value, x.value, high.value, x.batch_dim);
    if (rank_of(low.value) == 0 && rank_of(high.value) == 0) return bind(low.value, x.value, high.value, x.batch_dim);
    if (rank_of(low.value) == 1 && rank_of(high.value) == 1) {
      const Atom lo = broadcast_in_dim(builder, low.value, shape_of(x.value), {*low.batch_dim});
      const Atom hi = broadcast_in_dim(builder, high.value, shape_of(x.value), {*high.batch_dim});
      return bind(lo, x.value, hi, x.batch_dim);
    }
  } else if (rank_of(low.value) == 0 && rank_of(high.value) == 0 && x.batch_dim) {
    return bind(low.value, x.value, high.value, x.batch_dim);
  }
  Atom lo = rank_of(low.value) > 0 ? bdim_at_front(builder, low, size) : low.value;
  Atom hi = rank_of(high.value) > 0 ? bdim_at_front(builder, high, size) : high.value;
  Atom operand = rank_of(x.value) > 0 ? bdim_at_front(builder, x, size) : x.value;
  if (rank_of(lo) == 0 && rank_of(operand) > 0) lo = broadcast_leading(builder, lo, shape_of(operand));
  if (rank_of(hi) == 0 && rank_of(operand) > 0) hi = broadcast_leading(builder, hi, shape_of(operand));
  if (rank_of(lo) > 0 && rank_of(lo) < rank_of(operand)) lo = broadcast_in_dim(builder, lo, shape_of(operand), {0});
  if (rank_of(hi) > 0 && rank_of(hi) < rank_of(operand)) hi = broadcast_in_dim(builder, hi, shape_of(operand), {0});
  if (rank_of(lo) > rank_of(operand)) operand = broadcast_leading(builder, operand, shape_of(lo));
  return bind(lo, operand, hi, 0);
}

// batching.add_batched: the unmapped side is broadcast to the mapped side's batch dim.
std::vector<BatchedValue> add_any_rule(JaxprBuilder& builder, std::span<const BatchedValue> args,
                                       const Params& params) {
  const BatchedValue& x = args[0];
  const BatchedValue& y = args[1];
  if (x.batch_dim == y.batch_dim) return all_at(builder.bind("add_any", {x.value, y.value}, params), x.batch_dim);
  if (!x.batch_dim) {
    const int64_t size = shape_of(y.value)[static_cast<std::size_t>(*y.batch_dim)];
    return all_at(builder.bind("add_any", {broadcast_axis(builder, x.value, size, *y.batch_dim), y.value}, params),
                  y.batch_dim);
  }
  if (!y.batch_dim) {
    const int64_t size = shape_of(x.value)[static_cast<std::size_t>(*x.batch_dim)];
    return all_at(builder.bind("add_any", {x.value, broadcast_axis(builder, y.value, size, *x.batch_dim)}, params),
                  x.batch_dim);
  }
  const Atom moved = move_axis(builder, x.value, *x.batch_dim, *y.batch_dim);
  return all_at(builder.bind("add_any", {moved, y.value}, params), y.batch_dim);
}

}  // namespace

void register_elementwise_batch_rules() {
  for (const Primitive* primitive : all_primitives()) {
    if (!primitive->elementwise) continue;
    const std::string name = primitive->name;
    register_batch_rule(name, [name](JaxprBuilder& builder, std::span<const BatchedValue> args, const Params& params,
                                     const BatchAxis&) { return elementwise_rule(name, builder, args, params); });
  }
  // Special functions JAX batches with the broadcasting batcher although they are not flagged elementwise.
  for (const char* name : {"polygamma"}) {
    if (find_primitive(name) == nullptr) continue;
    const std::string primitive = name;
    register_batch_rule(primitive,
                        [primitive](JaxprBuilder& builder, std::span<const BatchedValue> args, const Params& params,
                                    const BatchAxis&) { return elementwise_rule(primitive, builder, args, params); });
  }
  register_batch_rule("select_n", [](JaxprBuilder& builder, std::span<const BatchedValue> args, const Params& params,
                                     const BatchAxis&) { return select_n_rule(builder, args, params); });
  register_batch_rule("clamp", [](JaxprBuilder& builder, std::span<const BatchedValue> args, const Params& params,
                                  const BatchAxis&) { return clamp_rule(builder, args, params); });
  register_batch_rule("add_any", [](JaxprBuilder& builder, std::span<const BatchedValue> args, const Params& params,
                                    const BatchAxis&) { return add_any_rule(builder, args, params); });
}

}  // namespace shardscope::batching
