// Transpose rules of program-level primitives: nested jit, sharding constraints and the collectives.
#include <algorithm>

#include "base/error.h"
#include "transforms/autodiff_internal.h"
#include "transforms/call_params.h"

namespace shardscope::ad {
namespace {

using Cts = std::vector<std::optional<Atom>>;

Params replaced(const Params& params, const Params& changes, const std::vector<std::string>& dropped = {}) {
  Params out;
  for (const auto& [key, value] : params) {
    if (std::find(dropped.begin(), dropped.end(), key) != dropped.end()) continue;
    const auto change = std::find_if(changes.begin(), changes.end(), [&](const auto& c) { return c.first == key; });
    out.emplace_back(key, change != changes.end() ? change->second : value);
  }
  for (const auto& change : changes) {
    if (find_param(out, change.first) == nullptr) out.push_back(change);
  }
  return out;
}

// A collective whose transpose is another collective applied to each cotangent.
TransposeRule collective_transpose(std::string target, std::function<Params(const Params&)> params_for) {
  return [target, params_for](JaxprBuilder& b, std::span<const std::optional<Atom>> cts,
                              std::span<const std::optional<Atom>> primals, std::span<const Aval> avals,
                              const Params& params) {
    Cts out(primals.size());
    for (std::size_t i = 0; i < primals.size() && i < cts.size(); ++i) {
      if (primals[i] || !cts[i] || !has_tangent_space(avals[i].dtype)) continue;
      out[i] = b.bind(target, {*cts[i]}, params_for(params))[0];
    }
    return out;
  };
}

// pjit's transpose: the inner linear program transposed into its own program, bound with jit again
// on (non-linear operands..., nonzero cotangents...).
Cts jit_transpose(JaxprBuilder& b, std::span<const std::optional<Atom>> cts,
                  std::span<const std::optional<Atom>> primals, std::span<const Aval> avals, const Params& params) {
  const auto* ref = param(params, "jaxpr").get_if<ParamValue::JaxprRef>();
  if (ref == nullptr || !*ref) throw type_error("jit equation without a jaxpr");
  const Jaxpr& inner = **ref;
  Jaxpr reordered = inner;
  reordered.invars.clear();
  for (std::size_t i = 0; i < primals.size(); ++i) {
    if (primals[i]) reordered.invars.push_back(inner.invars[i]);
  }
  for (std::size_t i = 0; i < primals.size(); ++i) {
    if (!primals[i]) reordered.invars.push_back(inner.invars[i]);
  }
  JaxprBuilder inner_builder;
  std::vector<Atom> nonlinear;
  std::vector<Atom> outer_inputs;
  for (std::size_t i = 0; i < primals.size(); ++i) {
    if (!primals[i]) continue;
    nonlinear.emplace_back(inner_builder.arg(avals[i]));
    outer_inputs.push_back(*primals[i]);
  }
  std::vector<std::optional<Atom>> inner_cts;
  for (std::size_t j = 0; j < cts.size(); ++j) {
    if (cts[j]) {
      inner_cts.emplace_back(inner_builder.arg(atom_aval(*cts[j])));
      outer_inputs.push_back(*cts[j]);
    } else {
      inner_cts.emplace_back(std::nullopt);
    }
  }
  const std::vector<std::optional<Atom>> linear_cts = backward_pass(inner_builder, reordered, nonlinear, inner_cts);
  std::vector<Atom> inner_outs;
  std::size_t next = 0;
  for (std::size_t i = 0; i < primals.size(); ++i) {
    if (!primals[i]) {
      inner_outs.push_back(instantiate(inner_builder, linear_cts[next++], avals[i]));
    }
  }
  const JaxprPtr transposed = inner_builder.build(inner_outs);
  const std::vector<Atom> outs = b.bind("jit", std::move(outer_inputs), call_params_with_body(params, transposed));
  Cts result(primals.size());
  next = 0;
  for (std::size_t i = 0; i < primals.size(); ++i) {
    if (!primals[i]) result[i] = outs[next++];
  }
  return result;
}

// reshard's transpose moves the cotangent to its operand's type in cotangent space (JAX's
// _reshard_transpose_fancy): a reduced operand's cotangent arrives unreduced and the other way round.
Cts reshard_transpose(JaxprBuilder& b, std::span<const std::optional<Atom>> cts,
                      std::span<const std::optional<Atom>> primals, std::span<const Aval> avals, const Params& params) {
  Cts out(primals.size());
  if (primals.empty() || primals[0] || cts.empty() || !cts[0] || !has_tangent_space(avals[0].dtype)) return out;
  const auto* target = param(params, "dst_sharding").get_if<NamedSharding>();
  if (target == nullptr) throw type_error("reshard equation without a NamedSharding dst_sharding");
  NamedSharding back = *target;
  back.spec = cotangent_spec(avals[0]);
  out[0] = b.bind1("reshard", {*cts[0]}, replaced(params, {{"dst_sharding", back}}));
  return out;
}

}  // namespace

void register_program_transpose_rules() {
  register_transpose_rule("reshard", reshard_transpose);
  // Casting a varying value to an unreduced partial sum transposes to taking a reduced cotangent as varying.
  register_transpose_rule("vary_unreduced_cast_p",
                          collective_transpose("reduced_vary_cast_p", [](const Params& p) { return p; }));
  register_transpose_rule("reduced_vary_cast_p",
                          collective_transpose("vary_unreduced_cast_p", [](const Params& p) { return p; }));
  register_transpose_rule("mesh_cast", reshard_transpose);
  register_transpose_rule("jit", jit_transpose);
  register_transpose_rule("sharding_constraint",
                          collective_transpose("sharding_constraint", [](const Params& p) { return p; }));
  // The cotangent goes back where the primal came from: targets and sources swap, as in JAX.
  register_transpose_rule("device_put", collective_transpose("device_put", [](const Params& p) {
                            return replaced(p, {{"devices", param(p, "srcs")}, {"srcs", param(p, "devices")}}, {});
                          }));
  // psum is psum + pbroadcast, so its transpose reduces over the axes again.
  register_transpose_rule("psum", collective_transpose("psum", [](const Params& p) { return p; }));
  // psum2 (a checked body's sum before varying types) transposes to a no-op broadcast: each device keeps its
  // cotangent once.
  register_transpose_rule("psum2", collective_transpose("pvary", [](const Params& p) {
                            return Params{{"axes", param(p, "axes")}};
                          }));
  register_transpose_rule("psum_invariant", collective_transpose("pvary", [](const Params& p) {
                            return Params{{"axes", param(p, "axes")}};
                          }));
  register_transpose_rule("pvary", collective_transpose("psum_invariant", [](const Params& p) {
                            return Params{{"axes", param(p, "axes")}};
                          }));
  register_transpose_rule(
      "all_gather", collective_transpose("reduce_scatter", [](const Params& p) {
        return replaced(p, {{"scatter_dimension", param(p, "all_gather_dimension")}}, {"all_gather_dimension"});
      }));
  register_transpose_rule(
      "reduce_scatter", collective_transpose("all_gather", [](const Params& p) {
        return replaced(p, {{"all_gather_dimension", param(p, "scatter_dimension")}}, {"scatter_dimension"});
      }));
  register_transpose_rule("ppermute", collective_transpose("ppermute", [](const Params& p) {
                            std::vector<ParamValue> inverse;
                            for (const ParamValue& pair : param(p, "perm").as_items("perm")) {
                              const std::vector<int64_t> ends = pair.as_ints("perm");
                              inverse.push_back(ParamValue::int_tuple({ends.at(1), ends.at(0)}));
                            }
                            return replaced(p, {{"perm", ParamValue::tuple(inverse)}});
                          }));
  register_transpose_rule(
      "all_to_all", collective_transpose("all_to_all", [](const Params& p) {
        return replaced(p, {{"split_axis", param(p, "concat_axis")}, {"concat_axis", param(p, "split_axis")}});
      }));
}

}  // namespace shardscope::ad
