// scan's transpose: a forward scan of the body's non-linear part saves per-iteration residuals, then a scan in
// the opposite direction runs the transposed linear part, accumulating the constants' cotangents in its carry.
#include "base/error.h"
#include "ops/control_flow.h"
#include "transforms/autodiff_internal.h"

namespace shardscope::ad {

using Cts = std::vector<std::optional<Atom>>;

Cts scan_transpose(JaxprBuilder& b, std::span<const std::optional<Atom>> cts,
                   std::span<const std::optional<Atom>> primals, std::span<const Aval> avals, const Params& params) {
  const ScanLayout layout = scan_layout(params);
  const Jaxpr& body = *nested_jaxpr(params, "jaxpr");
  const std::size_t n = body.invars.size();
  const std::size_t m = body.outvars.size();
  const std::size_t carry_end = layout.num_consts + layout.num_carry;
  std::vector<bool> linear(n);
  for (std::size_t i = 0; i < n; ++i) linear[i] = !primals[i].has_value();
  // A carry whose initial value is known but whose update depends on a linear value is linear too: a tangent
  // carry that starts from instantiated zeros (the tangent of a constant init). Its init gets no cotangent.
  PartialEvalResult split = partial_eval_jaxpr(body, linear);
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t c = 0; c < layout.num_carry; ++c) {
      if (!linear[layout.num_consts + c] && split.out_unknowns[c]) {
        linear[layout.num_consts + c] = true;
        changed = true;
      }
    }
    if (changed) split = partial_eval_jaxpr(body, linear);
  }
  // Forward: the known part over the non-linear operands, its residuals stacked per iteration.
  std::vector<std::size_t> known_position(m);
  std::size_t next_known = 0;
  for (std::size_t o = 0; o < m; ++o) {
    if (!split.out_unknowns[o]) known_position[o] = next_known++;
  }
  auto forward = std::make_shared<Jaxpr>(*split.known);
  forward->outvars.clear();
  for (std::size_t c = 0; c < layout.num_carry; ++c) {
    if (!linear[layout.num_consts + c]) forward->outvars.push_back(split.known->outvars[known_position[c]]);
  }
  const std::size_t first_residual = split.known->outvars.size() - split.num_residuals;
  std::vector<Aval> residual_avals;
  for (std::size_t r = first_residual; r < split.known->outvars.size(); ++r) {
    forward->outvars.push_back(split.known->outvars[r]);
    residual_avals.push_back(atom_aval(split.known->outvars[r]));
  }
  ScanLayout forward_layout = layout;
  forward_layout.num_consts = forward_layout.num_carry = forward_layout.num_xs = 0;
  std::vector<Atom> forward_inputs;
  for (std::size_t i = 0; i < n; ++i) {
    if (linear[i]) continue;
    forward_inputs.push_back(*primals[i]);
    if (i < layout.num_consts) {
      ++forward_layout.num_consts;
    } else if (i < carry_end) {
      ++forward_layout.num_carry;
    } else {
      ++forward_layout.num_xs;
    }
  }
  const std::vector<Atom> forward_outs = b.bind("scan", forward_inputs, scan_params(forward, forward_layout));
  const std::vector<Atom> residuals(forward_outs.begin() + static_cast<std::ptrdiff_t>(forward_layout.num_carry),
                                    forward_outs.end());

  // Backward: carry (const cotangent sums..., carry cotangents...), xs (residuals..., ys cotangents...).
  JaxprBuilder tb;
  std::vector<Atom> const_acc;
  std::vector<Atom> carry_ct;
  for (std::size_t i = 0; i < carry_end; ++i) {
    if (!linear[i]) continue;
    (i < layout.num_consts ? const_acc : carry_ct).emplace_back(tb.arg(body.invars[i].aval));
  }
  std::vector<Atom> residual_args;
  for (const Aval& aval : residual_avals) residual_args.emplace_back(tb.arg(aval));
  std::vector<std::size_t> unknown_ys;
  Cts body_cts;
  std::size_t next_carry_ct = 0;
  std::vector<std::optional<std::size_t>> carry_ct_slot(layout.num_carry);
  for (std::size_t c = 0; c < layout.num_carry; ++c) {
    if (linear[layout.num_consts + c]) carry_ct_slot[c] = next_carry_ct++;
  }
  for (std::size_t o = 0; o < m; ++o) {
    if (!split.out_unknowns[o]) continue;
    if (o < layout.num_carry) {
      body_cts.emplace_back(carry_ct[*carry_ct_slot[o]]);
    } else {
      unknown_ys.push_back(o);
      body_cts.emplace_back(tb.arg(atom_aval(body.outvars[o])));
    }
  }
  const Cts linear_cts = backward_pass(tb, *split.unknown, residual_args, body_cts);
  std::vector<Atom> backward_outs;
  std::size_t next = 0;
  std::size_t next_acc = 0;
  std::vector<Atom> xs_cts;
  for (std::size_t i = 0; i < n; ++i) {
    if (!linear[i]) continue;
    const Atom ct = instantiate(tb, linear_cts[next++], body.invars[i].aval);
    if (i < layout.num_consts) {
      backward_outs.push_back(tb.bind1("add_any", {const_acc[next_acc++], ct}));
    } else if (i < carry_end) {
      backward_outs.push_back(ct);
    } else {
      xs_cts.push_back(ct);
    }
  }
  backward_outs.insert(backward_outs.end(), xs_cts.begin(), xs_cts.end());
  const JaxprPtr backward = tb.build(std::move(backward_outs));
  ScanLayout backward_layout = layout;
  backward_layout.reverse = !layout.reverse;
  backward_layout.num_consts = 0;
  backward_layout.num_carry = const_acc.size() + carry_ct.size();
  backward_layout.num_xs = residuals.size() + unknown_ys.size();
  std::vector<Atom> inputs;
  for (std::size_t i = 0; i < layout.num_consts; ++i) {
    if (linear[i]) inputs.push_back(zeros_like(b, avals[i]));
  }
  for (std::size_t c = 0; c < layout.num_carry; ++c) {
    if (linear[layout.num_consts + c]) inputs.push_back(instantiate(b, cts[c], atom_aval(body.outvars[c])));
  }
  inputs.insert(inputs.end(), residuals.begin(), residuals.end());
  for (const std::size_t o : unknown_ys) {
    inputs.push_back(instantiate(b, cts[o], stacked_aval(atom_aval(body.outvars[o]), layout.length)));
  }
  const std::vector<Atom> outs = b.bind("scan", std::move(inputs), scan_params(backward, backward_layout));
  Cts result(n);
  std::size_t k = 0;
  for (std::size_t i = 0; i < carry_end; ++i) {
    if (linear[i]) result[i] = outs[k++];
  }
  for (std::size_t i = carry_end; i < n; ++i) {
    if (linear[i]) result[i] = outs[k++];
  }
  return result;
}

}  // namespace shardscope::ad
