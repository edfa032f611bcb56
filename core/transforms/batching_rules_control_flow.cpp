// vmap of scan, cond, while, remat2 and name. A cond with a batched index becomes a select of every branch's
// result, as JAX's batching rule does; a while loop maps one batch element at a time.
#include <algorithm>

#include "base/error.h"
#include "ops/control_flow.h"
#include "transforms/batching.h"
#include "transforms/control_flow_rules.h"

namespace shardscope::batching {
namespace {

Aval with_leading(const Aval& aval, int64_t size) { return stacked_aval(aval, size); }

// Batches `jaxpr` as its own program: invars flagged in `batched` take a leading batch dim; outputs flagged in
// `force` come out batched at 0. Returns the program and which outputs are batched.
std::pair<JaxprPtr, std::vector<bool>> batch_program(const Jaxpr& jaxpr, const std::vector<bool>& batched,
                                                     const std::vector<bool>& force, const BatchAxis& axis) {
  JaxprBuilder inner;
  std::vector<BatchedValue> args;
  for (std::size_t i = 0; i < jaxpr.invars.size(); ++i) {
    const Aval& aval = jaxpr.invars[i].aval;
    if (batched[i]) {
      args.push_back({inner.arg(with_leading(aval, axis.size)), 0});
    } else {
      args.push_back({inner.arg(aval), std::nullopt});
    }
  }
  const std::vector<BatchedValue> results = batch_jaxpr_into(inner, jaxpr, args, axis);
  std::vector<Atom> outs;
  std::vector<bool> out_batched;
  for (std::size_t o = 0; o < results.size(); ++o) {
    const bool batch = results[o].batch_dim.has_value() || (o < force.size() && force[o]);
    outs.push_back(batch ? bdim_at_front(inner, results[o], axis.size) : results[o].value);
    out_batched.push_back(batch);
  }
  return {inner.build(std::move(outs)), out_batched};
}

std::vector<BatchedValue> scan_rule(JaxprBuilder& builder, std::span<const BatchedValue> args, const Params& params,
                                    const BatchAxis& axis) {
  const ScanLayout layout = scan_layout(params);
  const Jaxpr& body = *nested_jaxpr(params, "jaxpr");
  const std::size_t carry_end = layout.num_consts + layout.num_carry;
  std::vector<bool> batched(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) batched[i] = args[i].batch_dim.has_value();
  // Carries become batched when the body makes them so: iterate to a fixpoint.
  JaxprPtr program;
  std::vector<bool> out_batched;
  for (std::size_t round = 0; round <= layout.num_carry; ++round) {
    std::vector<bool> force(body.outvars.size(), false);
    for (std::size_t c = 0; c < layout.num_carry; ++c) force[c] = batched[layout.num_consts + c];
    std::tie(program, out_batched) = batch_program(body, batched, force, axis);
    bool changed = false;
    for (std::size_t c = 0; c < layout.num_carry; ++c) {
      if (out_batched[c] && !batched[layout.num_consts + c]) {
        batched[layout.num_consts + c] = true;
        changed = true;
      }
    }
    if (!changed) break;
  }
  std::vector<Atom> inputs;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!batched[i]) {
      inputs.push_back(args[i].value);
    } else if (i < carry_end) {
      inputs.push_back(bdim_at_front(builder, args[i], axis.size));
    } else {
      inputs.push_back(move_axis(builder, args[i].value, *args[i].batch_dim, 1));
    }
  }
  const std::vector<Atom> outs = builder.bind("scan", std::move(inputs), scan_params(program, layout));
  std::vector<BatchedValue> results;
  for (std::size_t o = 0; o < outs.size(); ++o) {
    std::optional<int64_t> dim;
    if (out_batched[o]) dim = o < layout.num_carry ? 0 : 1;
    results.push_back({outs[o], dim});
  }
  return results;
}

std::vector<BatchedValue> cond_rule(JaxprBuilder& builder, std::span<const BatchedValue> args, const Params& params,
                                    const BatchAxis& axis) {
  const std::vector<JaxprPtr> branches = cond_branches(params);
  std::vector<bool> batched;
  for (std::size_t i = 1; i < args.size(); ++i) batched.push_back(args[i].batch_dim.has_value());
  const std::size_t m = branches[0]->outvars.size();
  if (args[0].batch_dim) {
    // Every branch runs on the whole batch; each element keeps its own branch's result.
    std::vector<std::vector<Atom>> branch_outs;
    for (const JaxprPtr& branch : branches) {
      const std::vector<BatchedValue> outs = batch_jaxpr_into(builder, *branch, args.subspan(1), axis);
      std::vector<Atom> fronted;
      for (const BatchedValue& out : outs) fronted.push_back(bdim_at_front(builder, out, axis.size));
      branch_outs.push_back(std::move(fronted));
    }
    const Atom index = bdim_at_front(builder, args[0], axis.size);
    std::vector<BatchedValue> results;
    for (std::size_t o = 0; o < m; ++o) {
      std::vector<Atom> cases;
      for (const auto& outs : branch_outs) cases.push_back(outs[o]);
      const Shape& shape = shape_of(cases[0]);
      const Atom which = shape.size() == 1 ? index : broadcast_in_dim(builder, index, shape, {0});
      results.push_back({builder.bind1("select_n",
                                       [&] {
                                         std::vector<Atom> operands{which};
                                         operands.insert(operands.end(), cases.begin(), cases.end());
                                         return operands;
                                       }()),
                         0});
    }
    return results;
  }
  std::vector<bool> force(m, false);
  for (const JaxprPtr& branch : branches) {
    const std::vector<bool> out_batched = batch_program(*branch, batched, force, axis).second;
    for (std::size_t o = 0; o < m; ++o) force[o] = force[o] || out_batched[o];
  }
  std::vector<JaxprPtr> programs;
  for (const JaxprPtr& branch : branches) programs.push_back(batch_program(*branch, batched, force, axis).first);
  std::vector<Atom> inputs{args[0].value};
  for (std::size_t i = 1; i < args.size(); ++i) {
    inputs.push_back(batched[i - 1] ? bdim_at_front(builder, args[i], axis.size) : args[i].value);
  }
  const std::vector<Atom> outs = builder.bind("cond", std::move(inputs), cond_params(programs));
  std::vector<BatchedValue> results;
  for (std::size_t o = 0; o < outs.size(); ++o) {
    results.push_back({outs[o], force[o] ? std::optional<int64_t>(0) : std::nullopt});
  }
  return results;
}

std::vector<BatchedValue> remat_rule(JaxprBuilder& builder, std::span<const BatchedValue> args, const Params& params,
                                     const BatchAxis& axis) {
  const Jaxpr& body = *nested_jaxpr(params, "jaxpr");
  std::vector<bool> batched;
  for (const BatchedValue& arg : args) batched.push_back(arg.batch_dim.has_value());
  const auto [program, out_batched] = batch_program(body, batched, {}, axis);
  std::vector<Atom> inputs;
  for (const BatchedValue& arg : args) {
    inputs.push_back(arg.batch_dim ? bdim_at_front(builder, arg, axis.size) : arg.value);
  }
  const std::vector<Atom> outs =
      builder.bind("remat2", std::move(inputs), with_param(params, "jaxpr", ParamValue(program)));
  std::vector<BatchedValue> results;
  for (std::size_t o = 0; o < outs.size(); ++o) {
    results.push_back({outs[o], out_batched[o] ? std::optional<int64_t>(0) : std::nullopt});
  }
  return results;
}

}  // namespace

void register_control_flow_batch_rules() {
  register_batch_rule("scan", scan_rule);
  register_batch_rule("cond", cond_rule);
  register_batch_rule("remat2", remat_rule);
  register_batch_rule("while",
                      [](JaxprBuilder& builder, std::span<const BatchedValue> args, const Params& params,
                         const BatchAxis& axis) { return batch_by_unrolling(builder, "while", args, params, axis); });
  register_batch_rule(
      "name", [](JaxprBuilder& builder, std::span<const BatchedValue> args, const Params& params, const BatchAxis&) {
        return std::vector<BatchedValue>{{builder.bind1("name", {args[0].value}, params), args[0].batch_dim}};
      });
}

}  // namespace shardscope::batching
