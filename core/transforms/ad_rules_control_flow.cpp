// JVP and transpose rules of scan, while, cond, remat2 and name. The JVP keeps the original equation for the
// primal results and adds a second one computing tangents (from primals and tangents), so that partial
// evaluation leaves the primal loop with the known values and transposes only the tangent one.
#include <algorithm>

#include "base/error.h"
#include "ops/control_flow.h"
#include "transforms/autodiff_internal.h"
#include "transforms/control_flow_rules.h"

namespace shardscope::ad {
namespace {

using Cts = std::vector<std::optional<Atom>>;
using JvpResult = std::pair<std::vector<Atom>, std::vector<std::optional<Atom>>>;

bool float_aval(const Aval& aval) { return has_tangent_space(aval.dtype); }

// The JVP of `body` as a program over (primal invars..., tangents of the invars flagged in `with_tangent`...)
// returning (primal outs..., tangents of the outs flagged in `out_tangent`, zeros instantiated).
JaxprPtr jvp_program(const Jaxpr& body, const std::vector<bool>& with_tangent, const std::vector<bool>& out_tangent,
                     const std::vector<std::size_t>& primal_order, const std::vector<std::size_t>& out_order) {
  JaxprBuilder b;
  std::vector<Atom> primals(body.invars.size());
  std::vector<std::optional<Atom>> tangents(body.invars.size());
  // primal_order lists invar indices as the program takes them; entries >= n are tangents of (entry - n).
  const std::size_t n = body.invars.size();
  for (const std::size_t slot : primal_order) {
    if (slot < n) {
      primals[slot] = b.arg(body.invars[slot].aval);
    } else {
      tangents[slot - n] = b.arg(body.invars[slot - n].aval);
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!with_tangent[i]) tangents[i].reset();
  }
  const JvpOutputs jvp = jvp_jaxpr_into(b, body, primals, tangents);
  std::vector<Atom> outs;
  const std::size_t m = body.outvars.size();
  for (const std::size_t slot : out_order) {
    if (slot < m) {
      outs.push_back(jvp.primals[slot]);
    } else if (out_tangent[slot - m]) {
      outs.push_back(instantiate(b, jvp.tangents[slot - m], atom_aval(body.outvars[slot - m])));
    }
  }
  return b.build(std::move(outs));
}

JvpResult scan_jvp(JaxprBuilder& b, std::span<const Atom> x, std::span<const std::optional<Atom>> t,
                   const Params& params) {
  const ScanLayout layout = scan_layout(params);
  const Jaxpr& body = *nested_jaxpr(params, "jaxpr");
  std::vector<Atom> primal_outs = b.bind("scan", {x.begin(), x.end()}, params);
  const std::size_t n = body.invars.size();
  const std::size_t m = body.outvars.size();
  std::vector<bool> with_tangent(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    const bool is_carry = i >= layout.num_consts && i < layout.num_consts + layout.num_carry;
    // Every float carry gets a tangent: the body may make a zero one nonzero.
    with_tangent[i] = float_aval(body.invars[i].aval) && (t[i].has_value() || is_carry);
  }
  if (std::none_of(t.begin(), t.end(), [](const auto& v) { return v.has_value(); })) {
    return {primal_outs, Cts(primal_outs.size())};
  }
  std::vector<bool> out_tangent(m, false);
  for (std::size_t o = 0; o < m; ++o) out_tangent[o] = float_aval(atom_aval(body.outvars[o]));
  // Operands grouped as (consts, const tangents), (carry, carry tangents), (xs, xs tangents).
  std::vector<std::size_t> in_order;
  const auto group = [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) in_order.push_back(i);
    for (std::size_t i = begin; i < end; ++i) {
      if (with_tangent[i]) in_order.push_back(n + i);
    }
  };
  group(0, layout.num_consts);
  group(layout.num_consts, layout.num_consts + layout.num_carry);
  group(layout.num_consts + layout.num_carry, n);
  std::vector<std::size_t> out_order;
  for (std::size_t o = 0; o < layout.num_carry; ++o) out_order.push_back(o);
  for (std::size_t o = 0; o < layout.num_carry; ++o) out_order.push_back(m + o);
  for (std::size_t o = layout.num_carry; o < m; ++o) out_order.push_back(o);
  for (std::size_t o = layout.num_carry; o < m; ++o) out_order.push_back(m + o);
  const JaxprPtr program = jvp_program(body, with_tangent, out_tangent, in_order, out_order);
  std::vector<Atom> inputs;
  for (const std::size_t slot : in_order) {
    inputs.push_back(slot < n ? x[slot] : instantiate(b, t[slot - n], atom_aval(x[slot - n])));
  }
  ScanLayout jvp_layout = layout;
  const auto count = [&](std::size_t begin, std::size_t end) {
    return static_cast<std::size_t>(std::count(with_tangent.begin() + static_cast<std::ptrdiff_t>(begin),
                                               with_tangent.begin() + static_cast<std::ptrdiff_t>(end), true));
  };
  jvp_layout.num_consts = layout.num_consts + count(0, layout.num_consts);
  jvp_layout.num_carry = layout.num_carry + count(layout.num_consts, layout.num_consts + layout.num_carry);
  jvp_layout.num_xs = layout.num_xs + count(layout.num_consts + layout.num_carry, n);
  const std::vector<Atom> outs = b.bind("scan", std::move(inputs), scan_params(program, jvp_layout));
  Cts tangents(m);
  std::size_t next = 0;
  for (const std::size_t slot : out_order) {
    if (slot < m) {
      ++next;
    } else if (out_tangent[slot - m]) {
      tangents[slot - m] = outs[next++];
    }
  }
  return {primal_outs, tangents};
}

JvpResult while_jvp(JaxprBuilder& b, std::span<const Atom> x, std::span<const std::optional<Atom>> t,
                    const Params& params) {
  const WhileLayout layout = while_layout(params);
  const Jaxpr& body = *nested_jaxpr(params, "body_jaxpr");
  const Jaxpr& cond = *nested_jaxpr(params, "cond_jaxpr");
  if (std::none_of(t.begin(), t.end(), [](const auto& v) { return v.has_value(); })) {
    const std::vector<Atom> outs = b.bind("while", {x.begin(), x.end()}, params);
    return {outs, Cts(outs.size())};
  }
  const std::size_t n = body.invars.size();
  const std::size_t num_carry = n - layout.body_nconsts;
  std::vector<bool> with_tangent(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    const bool is_carry = i >= layout.body_nconsts;
    with_tangent[i] = float_aval(body.invars[i].aval) && (is_carry || t[layout.cond_nconsts + i].has_value());
  }
  std::vector<bool> out_tangent(num_carry);
  for (std::size_t o = 0; o < num_carry; ++o) out_tangent[o] = with_tangent[layout.body_nconsts + o];
  std::vector<std::size_t> in_order;
  for (std::size_t i = 0; i < layout.body_nconsts; ++i) in_order.push_back(i);
  for (std::size_t i = 0; i < layout.body_nconsts; ++i) {
    if (with_tangent[i]) in_order.push_back(n + i);
  }
  for (std::size_t i = layout.body_nconsts; i < n; ++i) in_order.push_back(i);
  for (std::size_t i = layout.body_nconsts; i < n; ++i) {
    if (with_tangent[i]) in_order.push_back(n + i);
  }
  std::vector<std::size_t> out_order;
  for (std::size_t o = 0; o < num_carry; ++o) out_order.push_back(o);
  for (std::size_t o = 0; o < num_carry; ++o) out_order.push_back(num_carry + o);
  const JaxprPtr body_program = jvp_program(body, with_tangent, out_tangent, in_order, out_order);
  // The predicate ignores the tangent carries.
  auto cond_program = std::make_shared<Jaxpr>(cond);
  for (std::size_t o = 0; o < num_carry; ++o) {
    if (out_tangent[o]) cond_program->invars.push_back(new_var(body.invars[layout.body_nconsts + o].aval));
  }
  std::vector<Atom> inputs(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(layout.cond_nconsts));
  std::size_t body_consts = 0;
  for (const std::size_t slot : in_order) {
    const std::size_t operand = layout.cond_nconsts + (slot < n ? slot : slot - n);
    inputs.push_back(slot < n ? x[operand] : instantiate(b, t[operand], atom_aval(x[operand])));
    if ((slot < n ? slot : slot - n) < layout.body_nconsts) ++body_consts;
  }
  // The primal loop on its own keeps the primal results known under partial evaluation.
  std::vector<Atom> primals = b.bind("while", {x.begin(), x.end()}, params);
  const std::vector<Atom> outs =
      b.bind("while", std::move(inputs), while_params(cond_program, body_program, {layout.cond_nconsts, body_consts}));
  Cts tangents(num_carry);
  std::size_t next = num_carry;
  for (std::size_t o = 0; o < num_carry; ++o) {
    if (out_tangent[o]) tangents[o] = outs[next++];
  }
  return {primals, tangents};
}

JvpResult cond_jvp(JaxprBuilder& b, std::span<const Atom> x, std::span<const std::optional<Atom>> t,
                   const Params& params) {
  const std::vector<JaxprPtr> branches = cond_branches(params);
  std::vector<Atom> primal_outs = b.bind("cond", {x.begin(), x.end()}, params);
  if (std::none_of(t.begin() + 1, t.end(), [](const auto& v) { return v.has_value(); })) {
    return {primal_outs, Cts(primal_outs.size())};
  }
  const std::size_t n = branches[0]->invars.size();
  const std::size_t m = branches[0]->outvars.size();
  std::vector<bool> with_tangent(n);
  for (std::size_t i = 0; i < n; ++i) with_tangent[i] = t[i + 1].has_value() && float_aval(atom_aval(x[i + 1]));
  std::vector<bool> out_tangent(m);
  for (std::size_t o = 0; o < m; ++o) out_tangent[o] = float_aval(atom_aval(branches[0]->outvars[o]));
  std::vector<std::size_t> in_order;
  for (std::size_t i = 0; i < n; ++i) in_order.push_back(i);
  for (std::size_t i = 0; i < n; ++i) {
    if (with_tangent[i]) in_order.push_back(n + i);
  }
  std::vector<std::size_t> out_order;
  for (std::size_t o = 0; o < 2 * m; ++o) out_order.push_back(o);
  std::vector<JaxprPtr> programs;
  for (const JaxprPtr& branch : branches) {
    programs.push_back(jvp_program(*branch, with_tangent, out_tangent, in_order, out_order));
  }
  std::vector<Atom> inputs{x[0]};
  for (const std::size_t slot : in_order) {
    inputs.push_back(slot < n ? x[slot + 1] : instantiate(b, t[slot - n + 1], atom_aval(x[slot - n + 1])));
  }
  const std::vector<Atom> outs = b.bind("cond", std::move(inputs), cond_params(programs));
  Cts tangents(m);
  std::size_t next = m;
  for (std::size_t o = 0; o < m; ++o) {
    if (out_tangent[o]) tangents[o] = outs[next++];
  }
  return {primal_outs, tangents};
}

// One remat2 over the body's JVP, as JAX's remat_jvp: partial evaluation later splits it by the policy into the
// values the forward pass saves and the work the backward pass recomputes.
JvpResult remat_jvp(JaxprBuilder& b, std::span<const Atom> x, std::span<const std::optional<Atom>> t,
                    const Params& params) {
  const Jaxpr& body = *nested_jaxpr(params, "jaxpr");
  const std::size_t n = body.invars.size();
  const std::size_t m = body.outvars.size();
  std::vector<bool> with_tangent(n);
  for (std::size_t i = 0; i < n; ++i) with_tangent[i] = t[i].has_value() && float_aval(atom_aval(x[i]));
  if (std::none_of(with_tangent.begin(), with_tangent.end(), [](bool v) { return v; })) {
    return {b.bind("remat2", {x.begin(), x.end()}, params), Cts(m)};
  }
  std::vector<bool> out_tangent(m);
  for (std::size_t o = 0; o < m; ++o) out_tangent[o] = float_aval(atom_aval(body.outvars[o]));
  std::vector<std::size_t> in_order;
  for (std::size_t i = 0; i < n; ++i) in_order.push_back(i);
  for (std::size_t i = 0; i < n; ++i) {
    if (with_tangent[i]) in_order.push_back(n + i);
  }
  std::vector<std::size_t> out_order;
  for (std::size_t o = 0; o < 2 * m; ++o) out_order.push_back(o);
  const JaxprPtr program = jvp_program(body, with_tangent, out_tangent, in_order, out_order);
  std::vector<Atom> inputs;
  for (const std::size_t slot : in_order) inputs.push_back(slot < n ? x[slot] : *t[slot - n]);
  const std::vector<Atom> outs =
      b.bind("remat2", std::move(inputs), replace_param(params, "jaxpr", ParamValue(program)));
  std::vector<Atom> primal_outs(outs.begin(), outs.begin() + static_cast<std::ptrdiff_t>(m));
  Cts tangents(m);
  std::size_t next = m;
  for (std::size_t o = 0; o < m; ++o) {
    if (out_tangent[o]) tangents[o] = outs[next++];
  }
  return {primal_outs, tangents};
}

// A program transposing `body` (whose invars flagged `linear` are linear): (nonlinear invars..., cotangents
// of the outs flagged in `with_ct`...) -> cotangents of the linear invars (zeros instantiated).
JaxprPtr transposed_program(const Jaxpr& body, const std::vector<bool>& linear, const std::vector<bool>& with_ct) {
  Jaxpr reordered = body;
  reordered.invars.clear();
  for (std::size_t i = 0; i < linear.size(); ++i) {
    if (!linear[i]) reordered.invars.push_back(body.invars[i]);
  }
  for (std::size_t i = 0; i < linear.size(); ++i) {
    if (linear[i]) reordered.invars.push_back(body.invars[i]);
  }
  JaxprBuilder b;
  std::vector<Atom> nonlinear;
  std::vector<bool> unknowns;
  for (std::size_t i = 0; i < linear.size(); ++i) {
    if (!linear[i]) {
      nonlinear.emplace_back(b.arg(body.invars[i].aval));
      unknowns.push_back(false);
    }
  }
  unknowns.resize(linear.size(), true);
  Cts cts;
  for (std::size_t o = 0; o < body.outvars.size(); ++o) {
    if (with_ct[o]) {
      cts.emplace_back(Atom{b.arg(atom_aval(body.outvars[o]))});
    } else {
      cts.emplace_back();
    }
  }
  // A jvp body mixes primal and tangent work, and a nested call (a jitted relu) can return both at once: split
  // it as JAX's remat/cond transposes do, running the primal half first and transposing only the linear half.
  const PartialEvalResult split = partial_eval_jaxpr(reordered, unknowns);
  const std::vector<Atom> known_outs = inline_jaxpr(b, *split.known, nonlinear);
  const std::vector<Atom> residuals(known_outs.end() - static_cast<std::ptrdiff_t>(split.num_residuals),
                                    known_outs.end());
  Cts linear_out_cts;
  for (std::size_t o = 0; o < body.outvars.size(); ++o) {
    if (split.out_unknowns[o]) linear_out_cts.push_back(cts[o]);
  }
  const Cts linear_cts = backward_pass(b, *split.unknown, residuals, linear_out_cts);
  std::vector<Atom> outs;
  std::size_t next = 0;
  for (std::size_t i = 0; i < linear.size(); ++i) {
    if (linear[i]) outs.push_back(instantiate(b, linear_cts[next++], body.invars[i].aval));
  }
  return b.build(std::move(outs));
}

Cts cond_transpose(JaxprBuilder& b, std::span<const std::optional<Atom>> cts,
                   std::span<const std::optional<Atom>> primals, std::span<const Aval> avals, const Params& params) {
  const std::vector<JaxprPtr> branches = cond_branches(params);
  if (!primals[0]) throw type_error("cond index cannot be linear");
  std::vector<bool> linear;
  for (std::size_t i = 1; i < primals.size(); ++i) linear.push_back(!primals[i].has_value());
  std::vector<bool> with_ct;
  for (const auto& ct : cts) with_ct.push_back(ct.has_value());
  std::vector<JaxprPtr> programs;
  for (const JaxprPtr& branch : branches) programs.push_back(transposed_program(*branch, linear, with_ct));
  std::vector<Atom> inputs{*primals[0]};
  for (std::size_t i = 1; i < primals.size(); ++i) {
    if (primals[i]) inputs.push_back(*primals[i]);
  }
  for (const auto& ct : cts) {
    if (ct) inputs.push_back(*ct);
  }
  const std::vector<Atom> outs = b.bind("cond", std::move(inputs), cond_params(programs));
  Cts result(avals.size());
  std::size_t next = 0;
  for (std::size_t i = 1; i < primals.size(); ++i) {
    if (!primals[i]) result[i] = outs[next++];
  }
  return result;
}

Cts remat_transpose(JaxprBuilder& b, std::span<const std::optional<Atom>> cts,
                    std::span<const std::optional<Atom>> primals, std::span<const Aval> avals, const Params& params) {
  const Jaxpr& body = *nested_jaxpr(params, "jaxpr");
  std::vector<bool> linear;
  for (const auto& primal : primals) linear.push_back(!primal.has_value());
  std::vector<bool> with_ct;
  for (const auto& ct : cts) with_ct.push_back(ct.has_value());
  const JaxprPtr program = transposed_program(body, linear, with_ct);
  std::vector<Atom> inputs;
  for (const auto& primal : primals) {
    if (primal) inputs.push_back(*primal);
  }
  for (const auto& ct : cts) {
    if (ct) inputs.push_back(*ct);
  }
  const std::vector<Atom> outs =
      b.bind("remat2", std::move(inputs),
             replace_param(replace_param(params, "jaxpr", ParamValue(program)), "differentiated", true));
  Cts result(avals.size());
  std::size_t next = 0;
  for (std::size_t i = 0; i < primals.size(); ++i) {
    if (!primals[i]) result[i] = outs[next++];
  }
  return result;
}

Cts while_transpose(JaxprBuilder&, std::span<const std::optional<Atom>>, std::span<const std::optional<Atom>>,
                    std::span<const Aval>, const Params&) {
  throw value_error(
      "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with dynamic start/stop "
      "values. Try using lax.scan, or using fori_loop with static start/stop.");
}

}  // namespace

Cts scan_transpose(JaxprBuilder& b, std::span<const std::optional<Atom>> cts,
                   std::span<const std::optional<Atom>> primals, std::span<const Aval> avals, const Params& params);

void register_control_flow_ad_rules() {
  register_jvp_rule("scan", scan_jvp);
  register_jvp_rule("while", while_jvp);
  register_jvp_rule("cond", cond_jvp);
  register_jvp_rule("remat2", remat_jvp);
  register_jvp_rule("name", [](JaxprBuilder& b, std::span<const Atom> x, std::span<const std::optional<Atom>> t,
                               const Params& params) {
    return JvpResult{{b.bind1("name", {x[0]}, params)}, {t[0]}};
  });
  register_transpose_rule("scan", scan_transpose);
  register_transpose_rule("while", while_transpose);
  register_transpose_rule("cond", cond_transpose);
  register_transpose_rule("remat2", remat_transpose);
}

}  // namespace shardscope::ad
