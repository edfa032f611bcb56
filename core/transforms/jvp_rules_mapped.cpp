// JVP rules of mapped programs (shard_map, old pmap's xla_pmap): differentiate the body, map tangents like primals.
#include <algorithm>

#include "base/error.h"
#include "ir/axis_env.h"
#include "mesh/mesh.h"
#include "transforms/autodiff.h"
#include "transforms/autodiff_internal.h"
#include "transforms/mapped_ad.h"

namespace shardscope {
namespace {

// Per-argument and per-output params of a mapped program, which tangents extend like their primals.
struct MappedKeys {
  std::string jaxpr;
  std::vector<std::string> per_input;
  std::vector<std::string> per_output;
};

const Jaxpr& body_of(const Params& params, const std::string& key) {
  const auto* ref = param(params, key).get_if<ParamValue::JaxprRef>();
  if (ref == nullptr || !*ref) throw type_error("mapped program equation without its " + key);
  return **ref;
}

// Appends, to each per-value tuple param, the entries of the values that got a tangent.
ParamValue extended(const ParamValue& value, const std::vector<std::size_t>& with_tangent, const std::string& key) {
  std::vector<ParamValue> items = value.as_items(key);
  const std::vector<ParamValue> primal_items = items;
  for (const std::size_t i : with_tangent) items.push_back(primal_items.at(i));
  return ParamValue::tuple(std::move(items));
}

std::vector<std::pair<std::string, int64_t>> axes_in_scope(const Params& params) {
  std::vector<std::pair<std::string, int64_t>> axes;
  if (const ParamValue* mesh_param = find_param(params, "mesh")) {
    if (const auto* mesh = mesh_param->get_if<Mesh>()) {
      for (const std::string& name : mesh->axis_names()) axes.emplace_back(name, mesh->axis_size(name));
    }
  }
  if (const ParamValue* name = find_param(params, "axis_name")) {
    if (const auto* text = name->get_if<std::string>())
      axes.emplace_back(*text, param(params, "axis_size").as_int("axis_size"));
  }
  return axes;
}

JvpRule mapped_jvp(const std::string& primitive, MappedKeys keys) {
  return [primitive, keys](JaxprBuilder& b, std::span<const Atom> x, std::span<const std::optional<Atom>> t,
                           const Params& params) -> std::pair<std::vector<Atom>, std::vector<std::optional<Atom>>> {
    const Jaxpr& body = body_of(params, keys.jaxpr);
    const AxisEnvScope scope(axes_in_scope(params), ad::mapped_binding(params));
    JaxprBuilder inner;
    std::vector<Atom> primals;
    std::vector<std::optional<Atom>> tangents;
    std::vector<std::size_t> inputs_with_tangent;
    for (const Var& var : body.invars) primals.emplace_back(inner.arg(var.aval));
    for (std::size_t i = 0; i < body.invars.size(); ++i) {
      if (t[i] && ad::has_tangent_space(body.invars[i].aval.dtype)) {
        tangents.emplace_back(inner.arg(body.invars[i].aval));
        inputs_with_tangent.push_back(i);
      } else {
        tangents.emplace_back(std::nullopt);
      }
    }
    const JvpOutputs jvp = jvp_jaxpr_into(inner, body, primals, tangents);
    std::vector<Atom> inner_outs = jvp.primals;
    std::vector<std::size_t> outputs_with_tangent;
    for (std::size_t o = 0; o < jvp.tangents.size(); ++o) {
      if (!jvp.tangents[o]) continue;
      inner_outs.push_back(*jvp.tangents[o]);
      outputs_with_tangent.push_back(o);
    }
    Params new_params;
    for (const auto& [key, value] : params) {
      if (key == keys.jaxpr) {
        new_params.emplace_back(key, ParamValue::JaxprRef(inner.build(inner_outs)));
      } else if (std::find(keys.per_input.begin(), keys.per_input.end(), key) != keys.per_input.end()) {
        new_params.emplace_back(key, extended(value, inputs_with_tangent, key));
      } else if (std::find(keys.per_output.begin(), keys.per_output.end(), key) != keys.per_output.end()) {
        new_params.emplace_back(key, extended(value, outputs_with_tangent, key));
      } else {
        new_params.emplace_back(key, value);
      }
    }
    std::vector<Atom> inputs(x.begin(), x.end());
    for (const std::size_t i : inputs_with_tangent) inputs.push_back(*t[i]);
    const std::vector<Atom> outs = b.bind(primitive, std::move(inputs), std::move(new_params));
    std::vector<Atom> primal_outs(outs.begin(), outs.begin() + static_cast<std::ptrdiff_t>(body.outvars.size()));
    std::vector<std::optional<Atom>> tangent_outs(body.outvars.size());
    std::size_t next = body.outvars.size();
    for (const std::size_t o : outputs_with_tangent) tangent_outs[o] = outs.at(next++);
    return {primal_outs, tangent_outs};
  };
}

}  // namespace

namespace ad {

void register_mapped_jvp_rules() {
  register_jvp_rule("shard_map", mapped_jvp("shard_map", {"jaxpr", {"in_specs"}, {"out_specs"}}));
  register_jvp_rule(
      "xla_pmap",
      mapped_jvp("xla_pmap", {"call_jaxpr", {"in_axes", "donated_invars", "global_arg_shapes"}, {"out_axes"}}));
}

}  // namespace ad
}  // namespace shardscope
