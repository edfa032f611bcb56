// Partial evaluation of mapped programs: a known and an unknown shard_map / xla_pmap, residuals kept per device.
#include <algorithm>

#include "base/error.h"
#include "ir/axis_env.h"
#include "mesh/mesh.h"
#include "transforms/autodiff_internal.h"
#include "transforms/mapped_ad.h"

namespace shardscope::ad {
namespace {

// JAX's aval.nospec for a residual: its leading dim carries the axes it varies over (every manual axis when
// replication is not tracked), so each device gets its own block back.
ParamValue residual_spec(const Aval& local, const Params& params) {
  const auto* mesh = param(params, "mesh").get_if<Mesh>();
  if (mesh == nullptr) throw type_error("shard_map equation without a mesh");
  const bool check_vma = param(params, "check_vma").as_bool("check_vma");
  std::vector<std::string> axes;
  for (const std::string& name : mesh->axis_names()) {
    if (!check_vma || std::find(local.varying.begin(), local.varying.end(), name) != local.varying.end())
      axes.push_back(name);
  }
  if (axes.empty()) return PartitionSpec();
  return PartitionSpec({SpecEntry::of_axes(axes)});
}

MappedStyle shard_map_style() {
  MappedStyle style;
  style.body_key = "jaxpr";
  style.per_input = {"in_specs"};
  style.per_output = {"out_specs"};
  style.input_layout_key = "in_specs";
  style.output_layout_key = "out_specs";
  style.promote_scalar_residuals = true;
  style.residual_entry = [](const std::string&, const Aval& local, const Params& params) {
    return residual_spec(local, params);
  };
  return style;
}

MappedStyle pmap_style() {
  MappedStyle style;
  style.body_key = "call_jaxpr";
  style.per_input = {"in_axes", "donated_invars", "global_arg_shapes"};
  style.per_output = {"out_axes"};
  style.input_layout_key = "in_axes";
  style.output_layout_key = "out_axes";
  style.residual_entry = [](const std::string& key, const Aval&, const Params&) -> ParamValue {
    if (key == "in_axes" || key == "out_axes") return int64_t{0};
    if (key == "donated_invars") return false;
    return ParamValue::None{};
  };
  return style;
}

template <typename T>
std::vector<T> pick(const std::vector<T>& items, const std::vector<std::size_t>& indices) {
  std::vector<T> out;
  for (const std::size_t i : indices) out.push_back(items.at(i));
  return out;
}

// Where a residual of the known body comes from, and how it crosses to the unknown body.
struct Residual {
  Aval local;                                  // per-device type as the unknown body receives it
  std::optional<std::size_t> forwarded_input;  // an operand of the equation, passed straight through
  bool promoted = false;                       // a scalar carried as shape (1,)
};

}  // namespace

const MappedStyle* mapped_style(const std::string& primitive) {
  static const MappedStyle shard_map = shard_map_style();
  static const MappedStyle pmap = pmap_style();
  if (primitive == "shard_map") return &shard_map;
  if (primitive == "xla_pmap") return &pmap;
  return nullptr;
}

const Jaxpr& mapped_body(const Params& params, const MappedStyle& style) {
  const auto* ref = param(params, style.body_key).get_if<ParamValue::JaxprRef>();
  if (ref == nullptr || !*ref) throw type_error("mapped program equation without its " + style.body_key);
  return **ref;
}

std::vector<std::pair<std::string, int64_t>> mapped_axes(const Params& params) {
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

AxisBinding mapped_binding(const Params& params) {
  const ParamValue* check = find_param(params, "check_vma");
  if (check == nullptr || find_param(params, "mesh") == nullptr) return AxisBinding::kMapped;
  return check->as_bool("check_vma") ? AxisBinding::kManualVmaChecked : AxisBinding::kManual;
}

Params mapped_params_with(const Params& params, const MappedStyle& style, JaxprPtr body, const EntriesFn& inputs,
                          const EntriesFn& outputs) {
  Params out;
  for (const auto& [key, value] : params) {
    if (key == style.body_key) {
      out.emplace_back(key, ParamValue::JaxprRef(body));
    } else if (std::find(style.per_input.begin(), style.per_input.end(), key) != style.per_input.end()) {
      out.emplace_back(key, ParamValue::tuple(inputs(key, value.as_items(key))));
    } else if (std::find(style.per_output.begin(), style.per_output.end(), key) != style.per_output.end()) {
      out.emplace_back(key, ParamValue::tuple(outputs(key, value.as_items(key))));
    } else {
      out.emplace_back(key, value);
    }
  }
  return out;
}

std::optional<EqnSplit> split_mapped_eqn(const Eqn& eqn, const std::vector<bool>& unknown_inputs) {
  const MappedStyle* style = mapped_style(eqn.primitive->name);
  if (style == nullptr) return std::nullopt;
  const Params& params = eqn.params;
  const Jaxpr& body = mapped_body(params, *style);
  const AxisEnvScope scope(mapped_axes(params), mapped_binding(params));
  const PartialEvalResult inner = partial_eval_jaxpr(body, unknown_inputs);
  const Jaxpr& known_body = *inner.known;
  const std::size_t num_known_outs = known_body.outvars.size() - inner.num_residuals;

  std::vector<std::size_t> known_inputs;
  std::vector<std::size_t> unknown_operands;
  for (std::size_t i = 0; i < unknown_inputs.size(); ++i) {
    (unknown_inputs[i] ? unknown_operands : known_inputs).push_back(i);
  }
  std::vector<std::size_t> known_outputs;
  std::vector<std::size_t> unknown_outputs;
  for (std::size_t j = 0; j < inner.out_unknowns.size(); ++j) {
    (inner.out_unknowns[j] ? unknown_outputs : known_outputs).push_back(j);
  }

  std::vector<Residual> residuals;
  for (std::size_t r = num_known_outs; r < known_body.outvars.size(); ++r) {
    const Var& var = std::get<Var>(known_body.outvars[r]);
    Residual residual{var.aval, std::nullopt, false};
    const auto invar =
        std::find_if(known_body.invars.begin(), known_body.invars.end(), [&](const Var& v) { return v.id == var.id; });
    if (invar != known_body.invars.end()) {
      residual.forwarded_input = known_inputs.at(static_cast<std::size_t>(invar - known_body.invars.begin()));
    } else if (style->promote_scalar_residuals && var.aval.rank() == 0) {
      residual.promoted = true;
      residual.local.shape = {1};
    }
    residuals.push_back(residual);
  }

  // Known body: the known results, then the residuals that are not operands already.
  JaxprBuilder known_builder;
  std::vector<Atom> known_args;
  for (const Var& var : known_body.invars) known_args.emplace_back(known_builder.arg(var.aval));
  const std::vector<Atom> known_results = inline_jaxpr(known_builder, known_body, known_args);
  std::vector<Atom> known_outs(known_results.begin(),
                               known_results.begin() + static_cast<std::ptrdiff_t>(num_known_outs));
  for (std::size_t r = 0; r < residuals.size(); ++r) {
    if (residuals[r].forwarded_input) continue;
    const Atom& value = known_results[num_known_outs + r];
    known_outs.push_back(residuals[r].promoted ? broadcast_in_dim(known_builder, value, {1}, {}) : value);
  }
  const JaxprPtr new_known_body = known_builder.build(known_outs);

  // Unknown body: residuals (scalars restored), then the unknown operands.
  JaxprBuilder unknown_builder;
  std::vector<Atom> unknown_args;
  for (const Residual& residual : residuals) {
    const Atom arg = unknown_builder.arg(residual.local);
    unknown_args.push_back(residual.promoted ? reshape(unknown_builder, arg, {}) : arg);
  }
  for (std::size_t u = 0; u < unknown_operands.size(); ++u) {
    unknown_args.emplace_back(unknown_builder.arg(inner.unknown->invars[inner.num_residuals + u].aval));
  }
  const JaxprPtr new_unknown_body = unknown_builder.build(inline_jaxpr(unknown_builder, *inner.unknown, unknown_args));

  const Params known_params = mapped_params_with(
      params, *style, new_known_body,
      [&](const std::string&, const std::vector<ParamValue>& items) { return pick(items, known_inputs); },
      [&](const std::string& key, const std::vector<ParamValue>& items) {
        std::vector<ParamValue> entries = pick(items, known_outputs);
        for (const Residual& residual : residuals) {
          if (!residual.forwarded_input) entries.push_back(style->residual_entry(key, residual.local, params));
        }
        return entries;
      });
  const Params unknown_params = mapped_params_with(
      params, *style, new_unknown_body,
      [&](const std::string& key, const std::vector<ParamValue>& items) {
        std::vector<ParamValue> entries;
        for (const Residual& residual : residuals) {
          const bool keeps_layout = residual.forwarded_input && key == style->input_layout_key;
          entries.push_back(keeps_layout ? items.at(*residual.forwarded_input)
                                         : style->residual_entry(key, residual.local, params));
        }
        for (const ParamValue& item : pick(items, unknown_operands)) entries.push_back(item);
        return entries;
      },
      [&](const std::string&, const std::vector<ParamValue>& items) { return pick(items, unknown_outputs); });

  EqnSplit split{std::nullopt, Eqn{eqn.primitive, unknown_params, {}, {}, eqn.source}, inner.out_unknowns};
  Eqn known{eqn.primitive, known_params, pick(eqn.inputs, known_inputs), pick(eqn.outputs, known_outputs), eqn.source};
  std::vector<Aval> known_in_avals;
  for (const Atom& input : known.inputs) known_in_avals.push_back(atom_aval(input));
  const std::vector<Aval> known_out_avals = eqn.primitive->abstract_eval(known_in_avals, known_params);
  std::size_t next_residual = known_outputs.size();
  for (const Residual& residual : residuals) {
    if (residual.forwarded_input) {
      split.unknown.inputs.push_back(eqn.inputs[*residual.forwarded_input]);
      continue;
    }
    const Var carried = new_var(known_out_avals.at(next_residual++));
    known.outputs.push_back(carried);
    split.unknown.inputs.emplace_back(carried);
  }
  for (const Atom& input : pick(eqn.inputs, unknown_operands)) split.unknown.inputs.push_back(input);
  split.unknown.outputs = pick(eqn.outputs, unknown_outputs);
  if (!known.outputs.empty()) split.known = std::move(known);
  return split;
}

}  // namespace shardscope::ad
