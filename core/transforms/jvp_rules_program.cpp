// JVP rules of program-level primitives: nested jit, sharding constraints, collectives and AD's own ops.
#include "base/error.h"
#include "transforms/autodiff_internal.h"
#include "transforms/call_params.h"

namespace shardscope::ad {
namespace {

const Aval& av(const Atom& atom) { return atom_aval(atom); }

JvpRule linear_multi(const std::string& name) {
  return [name](JaxprBuilder& b, std::span<const Atom> x, std::span<const std::optional<Atom>> t,
                const Params& params) {
    std::vector<Atom> outs = b.bind(name, {x.begin(), x.end()}, params);
    std::vector<Atom> tangent_ins;
    for (std::size_t i = 0; i < x.size(); ++i) tangent_ins.push_back(instantiate(b, t[i], av(x[i])));
    std::vector<Atom> tangent_outs = b.bind(name, std::move(tangent_ins), params);
    std::vector<std::optional<Atom>> tangents;
    for (std::size_t i = 0; i < outs.size(); ++i) {
      tangents.push_back(has_tangent_space(av(outs[i]).dtype) ? std::optional<Atom>(tangent_outs[i]) : std::nullopt);
    }
    return std::pair{outs, tangents};
  };
}

// Primitives JAX gives no derivative: differentiating through them raises JAX's error.
JvpRule unsupported_jvp(const std::string& name) {
  return [name](JaxprBuilder&, std::span<const Atom>, std::span<const std::optional<Atom>>,
                const Params&) -> std::pair<std::vector<Atom>, std::vector<std::optional<Atom>>> {
    throw not_implemented_error("Differentiation rule for '" + name + "' not implemented");
  };
}

const Jaxpr& inner_jaxpr(const Params& params) {
  const auto* ref = param(params, "jaxpr").get_if<ParamValue::JaxprRef>();
  if (ref == nullptr || !*ref) throw type_error("jit equation without a jaxpr");
  return **ref;
}

// pjit's JVP: differentiate the inner program for the nonzero tangents only and bind jit again on
// (primals..., nonzero tangents...) -> (primal outs..., nonzero tangent outs...).
std::pair<std::vector<Atom>, std::vector<std::optional<Atom>>> jit_jvp(JaxprBuilder& b, std::span<const Atom> x,
                                                                       std::span<const std::optional<Atom>> t,
                                                                       const Params& params) {
  const Jaxpr& inner = inner_jaxpr(params);
  JaxprBuilder inner_builder;
  std::vector<Atom> primals;
  std::vector<std::optional<Atom>> tangents;
  for (const Var& var : inner.invars) primals.emplace_back(inner_builder.arg(var.aval));
  for (std::size_t i = 0; i < inner.invars.size(); ++i) {
    if (t[i] && has_tangent_space(inner.invars[i].aval.dtype)) {
      tangents.emplace_back(inner_builder.arg(inner.invars[i].aval));
    } else {
      tangents.emplace_back(std::nullopt);
    }
  }
  const JvpOutputs jvp = jvp_jaxpr_into(inner_builder, inner, primals, tangents);
  std::vector<Atom> inner_outs = jvp.primals;
  for (const auto& tangent : jvp.tangents) {
    if (tangent) inner_outs.push_back(*tangent);
  }
  const JaxprPtr jvp_program = inner_builder.build(inner_outs);
  std::vector<Atom> inputs(x.begin(), x.end());
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (tangents[i]) inputs.push_back(*t[i]);
  }
  const std::vector<Atom> outs = b.bind("jit", std::move(inputs), call_params_with_body(params, jvp_program));
  std::vector<Atom> primal_outs(outs.begin(), outs.begin() + static_cast<std::ptrdiff_t>(inner.outvars.size()));
  std::vector<std::optional<Atom>> tangent_outs;
  std::size_t next = inner.outvars.size();
  for (const auto& tangent : jvp.tangents)
    tangent_outs.push_back(tangent ? std::optional<Atom>(outs[next++]) : std::nullopt);
  return {primal_outs, tangent_outs};
}

}  // namespace

void register_program_jvp_rules() {
  register_jvp_rule("jit", jit_jvp);
  for (const char* name : {"sharding_constraint", "psum", "psum_invariant", "psum2", "all_gather",
                           "all_gather_invariant", "reduce_scatter", "ppermute", "all_to_all", "pvary", "add_any"}) {
    register_jvp_rule(name, linear_multi(name));
  }
  register_jvp_rule("axis_index", zero_jvp("axis_index"));
  // Sharding casts move values without changing them; PRNG primitives produce keys and bits.
  for (const char* name : {"mesh_cast", "reshard", "device_put", "vary_unreduced_cast_p", "reduced_vary_cast_p"}) {
    register_jvp_rule(name, linear_multi(name));
  }
  for (const char* name : {"random_bits", "random_fold_in", "random_seed", "random_split", "random_unwrap",
                           "random_wrap", "threefry2x32"}) {
    register_jvp_rule(name, zero_jvp(name));
  }
  for (const char* name : {"pmax", "pmin", "nextafter"}) register_jvp_rule(name, unsupported_jvp(name));
  // polygamma(m, x): m is a piecewise-constant order; d/dx polygamma(m, x) = polygamma(m + 1, x).
  register_jvp_rule("polygamma", single_output_jvp("polygamma",
                                                   [](JaxprBuilder& b, std::span<const Atom> x,
                                                      std::span<const std::optional<Atom>> t, const Atom&,
                                                      const Params&) -> std::optional<Atom> {
                                                     if (!t[1]) return std::nullopt;
                                                     const Atom order = add(b, x[0], const_like(av(x[0]), 1));
                                                     return mul(b, *t[1], b.bind1("polygamma", {order, x[1]}));
                                                   }));
  register_jvp_rule("scatter-add", [](JaxprBuilder& b, std::span<const Atom> x, std::span<const std::optional<Atom>> t,
                                      const Params& params) {
    const Atom out = b.bind1("scatter-add", {x.begin(), x.end()}, params);
    const Atom tangent =
        b.bind1("scatter-add", {instantiate(b, t[0], av(x[0])), x[1], instantiate(b, t[2], av(x[2]))}, params);
    return std::pair{std::vector<Atom>{out}, std::vector<std::optional<Atom>>{tangent}};
  });
}

}  // namespace shardscope::ad
