// Transpose rules of mapped programs: the linear body runs backwards on every device, inside the same map.
#include <algorithm>

#include "base/error.h"
#include "exec/shard_map.h"
#include "ir/axis_env.h"
#include "mesh/mesh.h"
#include "transforms/autodiff_internal.h"
#include "transforms/mapped_ad.h"

namespace shardscope::ad {
namespace {

using Cts = std::vector<std::optional<Atom>>;

// Mesh axes a spec does not shard over: the value is replicated along them.
std::vector<std::string> unmentioned_axes(const Mesh& mesh, const PartitionSpec& spec) {
  const std::vector<std::string> mentioned = spec.mentioned_axes();
  std::vector<std::string> out;
  for (const std::string& name : mesh.axis_names()) {
    if (std::find(mentioned.begin(), mentioned.end(), name) == mentioned.end()) out.push_back(name);
  }
  return out;
}

std::vector<std::string> extra_axes(const std::vector<std::string>& have, const std::vector<std::string>& allowed) {
  std::vector<std::string> out;
  for (const std::string& axis : have) {
    if (std::find(allowed.begin(), allowed.end(), axis) == allowed.end()) out.push_back(axis);
  }
  return out;
}

// A cotangent varying over axes its primal is invariant over is the transpose of an implicit pvary:
// summing over those axes gives the primal's (invariant) cotangent.
Atom sum_extra_variance(JaxprBuilder& b, const Atom& ct, const std::vector<std::string>& primal_varying) {
  const std::vector<std::string> extra = extra_axes(atom_aval(ct).varying, primal_varying);
  if (extra.empty()) return ct;
  return b.bind("psum_invariant", {ct}, {{"axes", ParamValue::name_tuple(extra)}})[0];
}

Atom psum_over(JaxprBuilder& b, const Atom& x, const std::vector<std::string>& axes) {
  return b.bind("psum", {x}, {{"axes", ParamValue::name_tuple(axes)}, {"axis_index_groups", ParamValue::None{}}})[0];
}

struct Layout {
  const MappedStyle* style;
  bool is_shard_map;
  Mesh mesh;
  bool check_vma = false;
  std::vector<PartitionSpec> in_specs;
  std::vector<PartitionSpec> out_specs;
};

ParamValue cotangent_layout(const ParamValue& entry) {
  const auto* spec = entry.get_if<PartitionSpec>();
  return spec == nullptr ? entry : ParamValue(cotangent_spec(*spec));
}

Layout layout_of(const std::string& primitive, const Params& params) {
  Layout layout{mapped_style(primitive), primitive == "shard_map", Mesh(), false, {}, {}};
  if (layout.is_shard_map) {
    const auto* mesh = param(params, "mesh").get_if<Mesh>();
    if (mesh == nullptr) throw type_error("shard_map equation without a mesh");
    layout.mesh = *mesh;
    layout.check_vma = param(params, "check_vma").as_bool("check_vma");
    layout.in_specs = shard_map_specs(params, "in_specs");
    layout.out_specs = shard_map_specs(params, "out_specs");
  }
  return layout;
}

// Per-device cotangent of result `j` as the transposed body receives it, made to match the result's type.
Atom body_cotangent(JaxprBuilder& tb, const Layout& layout, const Jaxpr& body, std::size_t j, const Aval& global) {
  const Aval& primal = atom_aval(body.outvars[j]);
  if (!layout.is_shard_map) return tb.arg(primal);
  const PartitionSpec& spec = layout.out_specs.at(j);
  Aval local = shard_map_local_aval(global, cotangent_spec(spec), layout.mesh, layout.check_vma);
  local.weak_type = primal.weak_type;
  const Atom ct = tb.arg(local);
  if (layout.check_vma) return sum_extra_variance(tb, ct, primal.varying);
  // Unchecked replication: every replica of the result receives the whole cotangent, so split it evenly.
  const int64_t replicas = axes_size(unmentioned_axes(layout.mesh, spec));
  if (replicas == 1) return ct;
  return div(tb, ct, full_like(tb, local, static_cast<double>(replicas)));
}

// Per-device cotangent of operand `i`, reduced to what the operand's in_spec can carry back.
Atom operand_cotangent(JaxprBuilder& tb, const Layout& layout, const Jaxpr& body, std::size_t i,
                       const std::optional<Atom>& ct) {
  const Aval& primal = body.invars[i].aval;
  const Atom value = instantiate(tb, ct, primal);
  if (!layout.is_shard_map) return value;
  if (layout.check_vma) return sum_extra_variance(tb, value, primal.varying);
  const std::vector<std::string> replicated = unmentioned_axes(layout.mesh, layout.in_specs.at(i));
  return replicated.empty() ? value : psum_over(tb, value, replicated);
}

TransposeRule mapped_transpose(const std::string& primitive) {
  return [primitive](JaxprBuilder& b, std::span<const std::optional<Atom>> cts,
                     std::span<const std::optional<Atom>> primals, std::span<const Aval>, const Params& params) -> Cts {
    const Layout layout = layout_of(primitive, params);
    const MappedStyle& style = *layout.style;
    const Jaxpr& body = mapped_body(params, style);
    if (!layout.is_shard_map) {
      for (const ParamValue& axis : param(params, "out_axes").as_items("out_axes")) {
        if (axis.is_none()) {
          throw not_implemented_error(
              "autodiff of pmap functions with out_axes=None is not supported. Consider using shard_map instead.");
        }
      }
    }
    const AxisEnvScope scope(mapped_axes(params), mapped_binding(params));
    std::vector<std::size_t> nonlinear_inputs;
    std::vector<std::size_t> linear_inputs;
    for (std::size_t i = 0; i < primals.size(); ++i) (primals[i] ? nonlinear_inputs : linear_inputs).push_back(i);
    std::vector<std::size_t> nonzero_cts;
    for (std::size_t j = 0; j < cts.size(); ++j) {
      if (cts[j]) nonzero_cts.push_back(j);
    }

    Jaxpr reordered = body;
    reordered.invars.clear();
    for (const std::size_t i : nonlinear_inputs) reordered.invars.push_back(body.invars[i]);
    for (const std::size_t i : linear_inputs) reordered.invars.push_back(body.invars[i]);
    // JAX's shard_map transpose binds the cotangents, then the residuals; pmap's map_transpose the reverse.
    const bool cts_first = layout.is_shard_map;
    JaxprBuilder tb;
    std::vector<Atom> nonlinear;
    std::vector<Atom> outer_inputs;
    Cts body_cts(cts.size());
    const auto add_residuals = [&] {
      for (const std::size_t i : nonlinear_inputs) {
        nonlinear.emplace_back(tb.arg(body.invars[i].aval));
        outer_inputs.push_back(*primals[i]);
      }
    };
    const auto add_cotangents = [&] {
      for (const std::size_t j : nonzero_cts) {
        body_cts[j] = body_cotangent(tb, layout, body, j, atom_aval(*cts[j]));
        outer_inputs.push_back(*cts[j]);
      }
    };
    if (cts_first) add_cotangents();
    add_residuals();
    if (!cts_first) add_cotangents();
    const Cts linear_cts = backward_pass(tb, reordered, nonlinear, body_cts);
    std::vector<Atom> body_outs;
    for (std::size_t k = 0; k < linear_inputs.size(); ++k) {
      body_outs.push_back(operand_cotangent(tb, layout, body, linear_inputs[k], linear_cts[k]));
    }
    const JaxprPtr transposed = tb.build(body_outs);

    const std::vector<ParamValue> in_layouts = param(params, style.input_layout_key).as_items(style.input_layout_key);
    const std::vector<ParamValue> out_layouts =
        param(params, style.output_layout_key).as_items(style.output_layout_key);
    Params new_params = mapped_params_with(
        params, style, transposed,
        [&](const std::string& key, const std::vector<ParamValue>& items) {
          std::vector<ParamValue> residuals;
          for (const std::size_t i : nonlinear_inputs) residuals.push_back(items.at(i));
          std::vector<ParamValue> entries;
          for (const std::size_t j : nonzero_cts) {
            entries.push_back(key == style.input_layout_key ? cotangent_layout(out_layouts.at(j))
                                                            : style.residual_entry(key, atom_aval(*cts[j]), params));
          }
          entries.insert(cts_first ? entries.end() : entries.begin(), residuals.begin(), residuals.end());
          return entries;
        },
        [&](const std::string&, const std::vector<ParamValue>&) {
          // A broadcast operand's cotangent comes back stacked per instance and is summed below.
          std::vector<ParamValue> entries;
          for (const std::size_t i : linear_inputs) {
            entries.push_back(in_layouts.at(i).is_none() ? ParamValue(int64_t{0}) : cotangent_layout(in_layouts.at(i)));
          }
          return entries;
        });
    for (auto& [key, value] : new_params) {
      if (key == "name" && !layout.is_shard_map) {
        if (const auto* name = value.get_if<std::string>()) value = "transpose(" + *name + ")";
      }
    }
    const std::vector<Atom> outs = b.bind(primitive, std::move(outer_inputs), std::move(new_params));
    Cts result(primals.size());
    for (std::size_t k = 0; k < linear_inputs.size(); ++k) {
      const std::size_t i = linear_inputs[k];
      const bool broadcast = !layout.is_shard_map && in_layouts.at(i).is_none();
      result[i] = broadcast ? reduce_sum(b, outs[k], {0}) : outs[k];
    }
    return result;
  };
}

}  // namespace

void register_mapped_transpose_rules() {
  register_transpose_rule("shard_map", mapped_transpose("shard_map"));
  register_transpose_rule("xla_pmap", mapped_transpose("xla_pmap"));
}

}  // namespace shardscope::ad
