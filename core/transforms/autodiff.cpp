// Forward mode: the rule registries and the JVP interpreter that rewrites a jaxpr equation by equation.
#include "transforms/autodiff.h"

#include <map>
#include <mutex>
#include <unordered_map>

#include "base/error.h"
#include "ops/ops.h"
#include "transforms/autodiff_internal.h"
#include "transforms/control_flow_rules.h"
#include "transforms/conv_rules.h"
#include "transforms/mapped_ad.h"
#include "transforms/window_rules.h"

namespace shardscope {
namespace {

struct RuleRegistry {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<JvpRule>> jvp;
  std::map<std::string, std::unique_ptr<TransposeRule>> transpose;
};

RuleRegistry& rules() {
  static RuleRegistry instance;
  return instance;
}

// Values of a jaxpr's variables while it is re-emitted into another builder.
class Env {
 public:
  void bind(const Var& var, Atom value) { values_[var.id] = std::move(value); }
  [[nodiscard]] Atom read(const Atom& atom) const {
    if (const auto* var = std::get_if<Var>(&atom)) {
      const auto it = values_.find(var->id);
      if (it == values_.end()) throw runtime_error("jaxpr variable used before it is defined");
      return it->second;
    }
    return atom;
  }

 private:
  std::unordered_map<int64_t, Atom> values_;
};

}  // namespace

void register_jvp_rule(const std::string& primitive, JvpRule rule) {
  RuleRegistry& r = rules();
  const std::lock_guard lock(r.mutex);
  auto& slot = r.jvp[primitive];
  if (slot) {
    *slot = std::move(rule);  // the address stays valid for callers holding it
  } else {
    slot = std::make_unique<JvpRule>(std::move(rule));
  }
}

const JvpRule* find_jvp_rule(const std::string& primitive) {
  ensure_autodiff_rules();
  RuleRegistry& r = rules();
  const std::lock_guard lock(r.mutex);
  const auto it = r.jvp.find(primitive);
  return it == r.jvp.end() ? nullptr : it->second.get();
}

void register_transpose_rule(const std::string& primitive, TransposeRule rule) {
  RuleRegistry& r = rules();
  const std::lock_guard lock(r.mutex);
  auto& slot = r.transpose[primitive];
  if (slot) {
    *slot = std::move(rule);
  } else {
    slot = std::make_unique<TransposeRule>(std::move(rule));
  }
}

const TransposeRule* find_transpose_rule(const std::string& primitive) {
  ensure_autodiff_rules();
  RuleRegistry& r = rules();
  const std::lock_guard lock(r.mutex);
  const auto it = r.transpose.find(primitive);
  return it == r.transpose.end() ? nullptr : it->second.get();
}

std::vector<std::string> transposable_primitives() {
  ensure_autodiff_rules();
  RuleRegistry& r = rules();
  const std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& [name, rule] : r.transpose) names.push_back(name);
  return names;
}

void ensure_autodiff_rules() {
  static std::once_flag once;
  std::call_once(once, [] {
    ensure_core_primitives();
    ad::register_elementwise_jvp_rules();
    ad::register_structural_jvp_rules();
    ad::register_program_jvp_rules();
    ad::register_mapped_jvp_rules();
    ad::register_elementwise_transpose_rules();
    ad::register_structural_transpose_rules();
    ad::register_program_transpose_rules();
    ad::register_mapped_transpose_rules();
    ad::register_control_flow_ad_rules();
    register_conv_ad_rules();
    register_window_ad_rules();
  });
}

JvpOutputs jvp_jaxpr_into(JaxprBuilder& builder, const Jaxpr& jaxpr, std::span<const Atom> primals,
                          std::span<const std::optional<Atom>> tangents) {
  ensure_autodiff_rules();
  if (primals.size() != jaxpr.invars.size() || tangents.size() != primals.size()) {
    throw value_error("jvp: expected " + std::to_string(jaxpr.invars.size()) + " primals and as many tangents");
  }
  Env primal_env;
  std::unordered_map<int64_t, Atom> tangent_env;  // absent: symbolic zero
  auto read_tangent = [&](const Atom& atom) -> std::optional<Atom> {
    const auto* var = std::get_if<Var>(&atom);
    if (var == nullptr) return std::nullopt;
    const auto it = tangent_env.find(var->id);
    return it == tangent_env.end() ? std::nullopt : std::optional<Atom>(it->second);
  };
  for (const Var& var : jaxpr.constvars) primal_env.bind(var, builder.constant(var.aval));
  for (std::size_t i = 0; i < primals.size(); ++i) {
    primal_env.bind(jaxpr.invars[i], primals[i]);
    if (tangents[i] && ad::has_tangent_space(jaxpr.invars[i].aval.dtype)) {
      tangent_env.insert_or_assign(jaxpr.invars[i].id, *tangents[i]);
    }
  }
  for (const Eqn& eqn : jaxpr.eqns) {
    const SourceScope source(source_or_current(eqn.source));
    std::vector<Atom> inputs;
    std::vector<std::optional<Atom>> input_tangents;
    for (const Atom& input : eqn.inputs) {
      inputs.push_back(primal_env.read(input));
      input_tangents.push_back(read_tangent(input));
    }
    std::vector<Atom> outs;
    std::vector<std::optional<Atom>> out_tangents;
    if (ad::all_zero(input_tangents)) {
      outs = builder.bind(eqn.primitive->name, std::move(inputs), eqn.params);
      out_tangents.resize(outs.size());
    } else {
      const JvpRule* rule = find_jvp_rule(eqn.primitive->name);
      if (rule == nullptr) {
        throw not_implemented_error("Differentiation rule for '" + eqn.primitive->name + "' not implemented");
      }
      std::tie(outs, out_tangents) = (*rule)(builder, inputs, input_tangents, eqn.params);
    }
    for (std::size_t i = 0; i < eqn.outputs.size(); ++i) {
      primal_env.bind(eqn.outputs[i], outs[i]);
      if (out_tangents[i] && ad::has_tangent_space(eqn.outputs[i].aval.dtype)) {
        tangent_env.insert_or_assign(eqn.outputs[i].id, *out_tangents[i]);
      }
    }
  }
  JvpOutputs result;
  for (const Atom& out : jaxpr.outvars) {
    result.primals.push_back(primal_env.read(out));
    result.tangents.push_back(read_tangent(out));
  }
  return result;
}

JaxprPtr jvp_jaxpr(const Jaxpr& jaxpr) {
  ensure_autodiff_rules();
  JaxprBuilder builder;
  std::vector<Atom> primals;
  std::vector<std::optional<Atom>> tangents;
  for (const Var& var : jaxpr.invars) primals.emplace_back(builder.arg(var.aval));
  for (const Var& var : jaxpr.invars) tangents.emplace_back(builder.arg(var.aval));
  JvpOutputs outs = jvp_jaxpr_into(builder, jaxpr, primals, tangents);
  std::vector<Atom> results = outs.primals;
  for (std::size_t i = 0; i < outs.tangents.size(); ++i) {
    results.push_back(ad::instantiate(builder, outs.tangents[i], atom_aval(outs.primals[i])));
  }
  return builder.build(std::move(results));
}

}  // namespace shardscope
