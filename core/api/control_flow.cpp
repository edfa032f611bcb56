// Control flow over user functions: bodies traced once into nested programs, JAX's type checks and the
// forwarding it does before binding (carries the body returns unchanged become constants).
#include "api/control_flow.h"

#include <algorithm>

#include "api/lax.h"
#include "api/numpy.h"
#include "base/error.h"
#include "ops/control_flow.h"

namespace shardscope::api {
namespace {

bool typematch(const Aval& a, const Aval& b) {
  return a.shape == b.shape && a.dtype == b.dtype && a.varying == b.varying;
}

std::string mismatch_extra(const Aval& a, const Aval& b) {
  std::vector<std::string> parts;
  if (a.dtype != b.dtype) parts.emplace_back("the dtypes do not match");
  if (a.shape != b.shape) parts.emplace_back("the shapes do not match");
  if (a.varying != b.varying) parts.emplace_back("the manual axis types do not match");
  if (parts.empty()) return "";
  if (parts.size() == 1) return ", so " + parts[0];
  std::string out = ", so ";
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) out += (i == 0 ? "" : ", ") + parts[i];
  return out + ", and " + parts.back();
}

std::string capitalized(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s;
}

// JAX lists one difference as a sentence, several as bullets.
std::string differences_text(const std::vector<std::string>& diffs, bool blank_line_between) {
  if (diffs.size() == 1) return capitalized(diffs[0]) + ".\n";
  std::string out;
  for (std::size_t i = 0; i + 1 < diffs.size(); ++i) {
    if (i > 0 && blank_line_between) out += "\n";
    out += "  * " + diffs[i] + ";\n";
  }
  return out + "  * " + diffs.back() + ".\n";
}

// JAX's _promote_weak_typed_input: a weakly typed initial carry takes the type the body gives it back.
bool promote_weak_carries(std::vector<Value>& init, const std::vector<Aval>& carry_out) {
  bool changed = false;
  for (std::size_t i = 0; i < init.size() && i < carry_out.size(); ++i) {
    const Aval& in = init[i].aval();
    if (!in.weak_type || typematch(in, carry_out[i])) continue;
    const Value out_like = Value::scalar(Literal{int64_t{0}, carry_out[i]});
    init[i] = lax::convert_element_type(init[i], jnp::result_type({init[i], out_like}).dtype);
    changed = true;
  }
  return changed;
}

// Which invar (index) an output returns unchanged, per output.
std::vector<std::optional<std::size_t>> forwarding(const Jaxpr& jaxpr) {
  std::vector<std::optional<std::size_t>> out;
  for (const Atom& atom : jaxpr.outvars) {
    std::optional<std::size_t> source;
    if (const auto* var = std::get_if<Var>(&atom)) {
      for (std::size_t i = 0; i < jaxpr.invars.size(); ++i) {
        if (jaxpr.invars[i] == *var) source = i;
      }
    }
    out.push_back(source);
  }
  return out;
}

bool uses_var(const Jaxpr& jaxpr, const Var& var) {
  const auto is = [&](const Atom& atom) {
    const auto* v = std::get_if<Var>(&atom);
    return v != nullptr && *v == var;
  };
  for (const Eqn& eqn : jaxpr.eqns) {
    if (std::any_of(eqn.inputs.begin(), eqn.inputs.end(), is)) return true;
  }
  return std::any_of(jaxpr.outvars.begin(), jaxpr.outvars.end(), is);
}

Traced trace_body(const Function& f, const std::vector<Aval>& avals, const std::string& name) {
  Traced traced = trace_function(f, avals, name);
  traced.jaxpr = consts_as_args(*traced.jaxpr);
  return traced;
}

}  // namespace

std::optional<std::string> carry_type_error(const LoopSpec& spec, const std::vector<Aval>& in,
                                            const std::vector<Aval>& out) {
  std::vector<std::string> diffs;
  for (std::size_t i = 0; i < in.size() && i < out.size(); ++i) {
    if (typematch(in[i], out[i])) continue;
    const std::string name = i < spec.carry_names.size() ? spec.carry_names[i] : "the input carry";
    diffs.push_back(name + " has type " + in[i].str_short(false) +
                    " but the corresponding output carry component has type " + out[i].str_short(false) +
                    mismatch_extra(in[i], out[i]));
  }
  if (diffs.empty()) return std::nullopt;
  return spec.what + " function carry input and carry output must have equal types, but they differ:\n\n" +
         differences_text(diffs, true) + "\nRevise the function so that all output types match the corresponding " +
         "input types.";
}

std::vector<Value> scan(const Function& body, const std::vector<Value>& init_values, const std::vector<Value>& xs,
                        const ScanSpec& spec) {
  std::vector<Value> init = init_values;
  std::vector<Aval> x_avals;
  for (const Value& x : xs) x_avals.push_back(unstacked_aval(argument_aval(x)));
  const std::size_t num_carry = init.size();
  const auto trace = [&] {
    std::vector<Aval> avals = argument_avals(init);
    avals.insert(avals.end(), x_avals.begin(), x_avals.end());
    return trace_body(body, avals, "scan");
  };
  Traced traced = trace();
  const auto carry_outs = [&](const Jaxpr& jaxpr) {
    std::vector<Aval> all = outvar_avals(jaxpr);
    if (all.size() < num_carry) throw type_error("scan body output must be a pair with one carry per input carry");
    return std::vector<Aval>(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(num_carry));
  };
  if (promote_weak_carries(init, carry_outs(*traced.jaxpr))) traced = trace();
  if (auto error = carry_type_error(spec, argument_avals(init), carry_outs(*traced.jaxpr))) throw type_error(*error);

  // Carries the body returns unchanged are read-only: they move to the front of the constants.
  auto jaxpr = std::make_shared<Jaxpr>(*traced.jaxpr);
  const std::size_t num_consts = traced.captured.size();
  const std::vector<std::optional<std::size_t>> fwd = forwarding(*jaxpr);
  std::vector<bool> moved(num_carry, false);
  for (std::size_t c = 0; c < num_carry; ++c) moved[c] = fwd[c] == num_consts + c;
  std::vector<Value> consts;
  std::vector<Var> invars;
  std::vector<Value> carry;
  for (std::size_t c = 0; c < num_carry; ++c) {
    if (moved[c]) {
      consts.push_back(init[c]);
      invars.push_back(jaxpr->invars[num_consts + c]);
    }
  }
  consts.insert(consts.end(), traced.captured.begin(), traced.captured.end());
  invars.insert(invars.end(), jaxpr->invars.begin(), jaxpr->invars.begin() + static_cast<std::ptrdiff_t>(num_consts));
  for (std::size_t c = 0; c < num_carry; ++c) {
    if (moved[c]) continue;
    carry.push_back(init[c]);
    invars.push_back(jaxpr->invars[num_consts + c]);
  }
  invars.insert(invars.end(), jaxpr->invars.begin() + static_cast<std::ptrdiff_t>(num_consts + num_carry),
                jaxpr->invars.end());
  // ys that are an xs slice unchanged are the xs themselves.
  std::vector<std::optional<std::size_t>> y_from_xs;
  std::vector<Atom> outvars;
  for (std::size_t o = 0; o < jaxpr->outvars.size(); ++o) {
    if (o < num_carry) {
      if (!moved[o]) outvars.push_back(jaxpr->outvars[o]);
      continue;
    }
    if (fwd[o] && *fwd[o] >= num_consts + num_carry) {
      y_from_xs.emplace_back(*fwd[o] - num_consts - num_carry);
    } else {
      y_from_xs.emplace_back(std::nullopt);
      outvars.push_back(jaxpr->outvars[o]);
    }
  }
  jaxpr->invars = std::move(invars);
  jaxpr->outvars = std::move(outvars);
  ScanLayout layout;
  layout.num_consts = consts.size();
  layout.num_carry = carry.size();
  layout.num_xs = xs.size();
  layout.length = spec.length;
  layout.reverse = spec.reverse;
  layout.unroll = spec.unroll;
  std::vector<Value> inputs = consts;
  inputs.insert(inputs.end(), carry.begin(), carry.end());
  inputs.insert(inputs.end(), xs.begin(), xs.end());
  const std::vector<Value> outs = api::bind("scan", inputs, scan_params(jaxpr, layout));
  std::vector<Value> results;
  std::size_t next = 0;
  std::size_t next_moved = 0;
  for (std::size_t c = 0; c < num_carry; ++c) results.push_back(moved[c] ? consts[next_moved++] : outs[next++]);
  for (const auto& source : y_from_xs) results.push_back(source ? xs[*source] : outs[next++]);
  return results;
}

std::vector<Value> while_loop(const Function& cond, const Function& body, const std::vector<Value>& init_values,
                              const LoopSpec& spec) {
  std::vector<Value> init = init_values;
  Traced cond_traced;
  Traced body_traced;
  const auto trace = [&] {
    const std::vector<Aval> avals = argument_avals(init);
    cond_traced = trace_body(cond, avals, "while_cond");
    const Jaxpr& c = *cond_traced.jaxpr;
    if (c.outvars.size() != 1 || !atom_aval(c.outvars[0]).shape.empty() ||
        atom_aval(c.outvars[0]).dtype != DType::kBool) {
      std::string types = "[";
      for (std::size_t i = 0; i < c.outvars.size(); ++i) {
        const Aval& aval = atom_aval(c.outvars[i]);
        types += (i == 0 ? "" : ", ") + std::string("ShapedArray(") + aval.str_short(false) +
                 (aval.weak_type ? ", weak_type=True)" : ")");
      }
      throw type_error("cond_fun must return a boolean scalar, but got output type(s) " + types + "].");
    }
    body_traced = trace_body(body, avals, "while_body");
  };
  trace();
  if (body_traced.jaxpr->outvars.size() != init.size()) {
    throw type_error(spec.what + " function carry input and carry output must have the same pytree structure");
  }
  if (promote_weak_carries(init, outvar_avals(*body_traced.jaxpr))) trace();
  if (auto error = carry_type_error(spec, argument_avals(init), outvar_avals(*body_traced.jaxpr)))
    throw type_error(*error);

  // Carries the body forwards and the predicate never reads become body constants.
  auto body_jaxpr = std::make_shared<Jaxpr>(*body_traced.jaxpr);
  auto cond_jaxpr = std::make_shared<Jaxpr>(*cond_traced.jaxpr);
  const std::size_t body_consts = body_traced.captured.size();
  const std::size_t cond_consts = cond_traced.captured.size();
  const std::vector<std::optional<std::size_t>> fwd = forwarding(*body_jaxpr);
  std::vector<bool> moved(init.size(), false);
  for (std::size_t c = 0; c < init.size(); ++c) {
    moved[c] = fwd[c] == body_consts + c && !uses_var(*cond_jaxpr, cond_jaxpr->invars[cond_consts + c]);
  }
  std::vector<Value> new_body_consts;
  std::vector<Var> body_invars;
  std::vector<Var> cond_invars(cond_jaxpr->invars.begin(),
                               cond_jaxpr->invars.begin() + static_cast<std::ptrdiff_t>(cond_consts));
  std::vector<Value> carry;
  std::vector<Atom> body_outvars;
  for (std::size_t c = 0; c < init.size(); ++c) {
    if (moved[c]) {
      new_body_consts.push_back(init[c]);
      body_invars.push_back(body_jaxpr->invars[body_consts + c]);
    }
  }
  body_invars.insert(body_invars.end(), body_jaxpr->invars.begin(),
                     body_jaxpr->invars.begin() + static_cast<std::ptrdiff_t>(body_consts));
  for (std::size_t c = 0; c < init.size(); ++c) {
    if (moved[c]) continue;
    carry.push_back(init[c]);
    body_invars.push_back(body_jaxpr->invars[body_consts + c]);
    cond_invars.push_back(cond_jaxpr->invars[cond_consts + c]);
    body_outvars.push_back(body_jaxpr->outvars[c]);
  }
  body_jaxpr->invars = std::move(body_invars);
  body_jaxpr->outvars = std::move(body_outvars);
  cond_jaxpr->invars = std::move(cond_invars);
  std::vector<Value> inputs = cond_traced.captured;
  inputs.insert(inputs.end(), new_body_consts.begin(), new_body_consts.end());
  inputs.insert(inputs.end(), body_traced.captured.begin(), body_traced.captured.end());
  inputs.insert(inputs.end(), carry.begin(), carry.end());
  const WhileLayout layout{cond_consts, new_body_consts.size() + body_consts};
  const std::vector<Value> outs = api::bind("while", inputs, while_params(cond_jaxpr, body_jaxpr, layout));
  std::vector<Value> results;
  std::size_t next = 0;
  std::size_t next_moved = 0;
  for (std::size_t c = 0; c < init.size(); ++c)
    results.push_back(moved[c] ? new_body_consts[next_moved++] : outs[next++]);
  return results;
}

std::vector<Value> switch_branches(const Value& index, const std::vector<Function>& branches,
                                   const std::vector<Value>& operands, const SwitchSpec& spec) {
  const std::vector<Aval> avals = argument_avals(operands);
  const std::size_t ref = spec.reference;
  std::vector<Traced> traced(branches.size());
  traced[ref] = trace_body(branches[ref], avals, spec.api_name);
  for (std::size_t b = 0; b < branches.size(); ++b) {
    if (b != ref) traced[b] = trace_body(branches[b], avals, spec.api_name);
  }
  const std::vector<Aval> first = outvar_avals(*traced[ref].jaxpr);
  const std::vector<std::string> output_paths = spec.output_paths ? spec.output_paths() : std::vector<std::string>{};
  for (std::size_t b = 0; b < traced.size(); ++b) {
    if (b == ref) continue;
    const std::vector<Aval> other = outvar_avals(*traced[b].jaxpr);
    const std::string& name1 = spec.branch_names.at(ref);
    const std::string& name2 = spec.branch_names.at(b);
    const std::string header = spec.api_name + " branches must have equal output types but they differ.\n\n" + name1 +
                               " is " + spec.branch_infos.at(ref) + "\n" + name2 + " is " + spec.branch_infos.at(b) +
                               "\n\n";
    if (other.size() != first.size()) {
      throw type_error(spec.api_name + " branch outputs must have the same pytree structure, but they differ");
    }
    std::vector<std::string> diffs;
    for (std::size_t o = 0; o < first.size(); ++o) {
      if (typematch(first[o], other[o])) continue;
      const std::string path = o < output_paths.size() ? output_paths[o] : "";
      diffs.push_back("the output of " + name1 + path + " has type " + first[o].str_short(false) +
                      " but the corresponding output of " + name2 + " has type " + other[o].str_short(false) +
                      mismatch_extra(first[o], other[o]));
    }
    if (diffs.empty()) continue;
    std::string differences;
    if (diffs.size() == 1) {
      differences = capitalized(diffs[0]) + ".\n";
    } else {
      for (std::size_t i = 0; i + 1 < diffs.size(); ++i)
        differences += (i == 0 ? "" : "\n") + ("  * " + diffs[i] + ";");
      differences += "\n  * " + diffs.back() + ".\n";
    }
    throw type_error(header + differences + "\nRevise " + name1 + " and/or " + name2 +
                     " so that all output types match.");
  }
  // Constants of all branches, shared ones once: every branch takes all of them.
  std::vector<Value> consts;
  std::vector<std::vector<std::size_t>> const_slot(traced.size());
  const auto same_value = [](const Value& a, const Value& b) {
    if (a.is_traced() && b.is_traced()) {
      return a.trace() == b.trace() && std::holds_alternative<Var>(a.atom()) && std::holds_alternative<Var>(b.atom()) &&
             std::get<Var>(a.atom()) == std::get<Var>(b.atom());
    }
    if (a.is_concrete() && b.is_concrete()) {
      return !a.array().shards().empty() && !b.array().shards().empty() &&
             a.array().shards()[0].data == b.array().shards()[0].data && a.array().sharding() == b.array().sharding();
    }
    return false;
  };
  for (std::size_t b = 0; b < traced.size(); ++b) {
    for (const Value& value : traced[b].captured) {
      std::size_t slot = consts.size();
      for (std::size_t k = 0; k < consts.size(); ++k) {
        if (same_value(consts[k], value)) slot = k;
      }
      if (slot == consts.size()) consts.push_back(value);
      const_slot[b].push_back(slot);
    }
  }
  std::vector<std::shared_ptr<Jaxpr>> jaxprs;
  for (std::size_t b = 0; b < traced.size(); ++b) {
    auto jaxpr = std::make_shared<Jaxpr>(*traced[b].jaxpr);
    std::vector<Var> invars;
    for (const Value& value : consts) invars.push_back(new_var(value.aval()));
    for (std::size_t k = 0; k < const_slot[b].size(); ++k) invars[const_slot[b][k]] = jaxpr->invars[k];
    invars.insert(invars.end(), jaxpr->invars.begin() + static_cast<std::ptrdiff_t>(const_slot[b].size()),
                  jaxpr->invars.end());
    jaxpr->invars = std::move(invars);
    jaxprs.push_back(std::move(jaxpr));
  }
  // Outputs every branch forwards from the same operand are that operand.
  std::vector<std::optional<std::size_t>> in_fwd;
  for (std::size_t o = 0; o < first.size(); ++o) {
    std::optional<std::size_t> common = forwarding(*jaxprs[0])[o];
    for (std::size_t b = 1; b < jaxprs.size() && common; ++b) {
      if (forwarding(*jaxprs[b])[o] != common) common.reset();
    }
    in_fwd.push_back(common);
  }
  std::vector<JaxprPtr> programs;
  for (auto& jaxpr : jaxprs) {
    std::vector<Atom> kept;
    for (std::size_t o = 0; o < jaxpr->outvars.size(); ++o) {
      if (!in_fwd[o]) kept.push_back(jaxpr->outvars[o]);
    }
    jaxpr->outvars = std::move(kept);
    programs.push_back(jaxpr);
  }
  std::vector<Value> inputs{index};
  inputs.insert(inputs.end(), consts.begin(), consts.end());
  inputs.insert(inputs.end(), operands.begin(), operands.end());
  const std::vector<Value> outs = api::bind("cond", inputs, cond_params(programs));
  std::vector<Value> results;
  std::size_t next = 0;
  for (const auto& source : in_fwd) results.push_back(source ? inputs[1 + *source] : outs[next++]);
  return results;
}

Traced trace_checkpoint(const Function& f, const std::vector<Value>& args) {
  return trace_body(f, argument_avals(args), "checkpoint");
}

bool reusable_checkpoint(const Traced& traced) {
  return std::none_of(traced.captured.begin(), traced.captured.end(), [](const Value& v) { return v.is_traced(); });
}

std::vector<Value> checkpoint(const Function& f, const std::vector<Value>& args, bool prevent_cse,
                              const std::optional<ParamValue::PolicyRef>& policy) {
  return bind_checkpoint(trace_checkpoint(f, args), args, prevent_cse, policy);
}

std::vector<Value> bind_checkpoint(const Traced& traced, const std::vector<Value>& args, bool prevent_cse,
                                   const std::optional<ParamValue::PolicyRef>& policy) {
  std::vector<Value> inputs = traced.captured;
  inputs.insert(inputs.end(), args.begin(), args.end());
  Params params{{"differentiated", false},
                {"jaxpr", ParamValue(traced.jaxpr)},
                {"policy", policy ? ParamValue(*policy) : ParamValue(ParamValue::None{})},
                {"prevent_cse", prevent_cse}};
  return api::bind("remat2", inputs, std::move(params));
}

std::vector<SavedResidual> saved_residuals(const Function& f, const std::vector<Value>& args,
                                           const std::vector<std::string>& arg_names) {
  const Traced traced = trace_function(f, argument_avals(args), "saved_residuals");
  return shardscope::saved_residuals(*traced.jaxpr, arg_names);
}

}  // namespace shardscope::api
