// Reverse mode through mapped programs (shard_map, xla_pmap): what partial evaluation and transposition share.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/axis_env.h"
#include "ir/jaxpr.h"

namespace shardscope::ad {

// How one mapped primitive keeps its body and its per-value params, so one split and one transpose serve both.
struct MappedStyle {
  std::string body_key;                 // "jaxpr" or "call_jaxpr"
  std::vector<std::string> per_input;   // tuple params with one entry per operand
  std::vector<std::string> per_output;  // tuple params with one entry per result
  std::string input_layout_key;         // how an operand is split over devices ("in_specs", "in_axes")
  std::string output_layout_key;        // how a result is assembled ("out_specs", "out_axes")
  // shard_map can only lay a residual out along a leading dim, so scalar residuals travel as shape (1,).
  bool promote_scalar_residuals = false;
  // The entry of per-value param `key` for a residual whose per-device type is `local`: residuals stay
  // per device, stacked along their leading dim.
  std::function<ParamValue(const std::string& key, const Aval& local, const Params& params)> residual_entry;
};

[[nodiscard]] const MappedStyle* mapped_style(const std::string& primitive);
[[nodiscard]] const Jaxpr& mapped_body(const Params& params, const MappedStyle& style);
// The named axes the body's collectives refer to (the mesh's, or the pmap axis).
[[nodiscard]] std::vector<std::pair<std::string, int64_t>> mapped_axes(const Params& params);
// How those axes are bound: a shard_map's check_vma decides whether its body's values carry varying axes.
[[nodiscard]] AxisBinding mapped_binding(const Params& params);
// `params` with the body replaced and each per-operand (per-result) tuple param rebuilt from its old items.
using EntriesFn = std::function<std::vector<ParamValue>(const std::string& key, const std::vector<ParamValue>& items)>;
[[nodiscard]] Params mapped_params_with(const Params& params, const MappedStyle& style, JaxprPtr body,
                                        const EntriesFn& inputs, const EntriesFn& outputs);

// One equation split by partial evaluation: `known` (absent when it has nothing to compute) yields the
// known results and the residuals, `unknown` consumes the residuals and the unknown operands.
struct EqnSplit {
  std::optional<Eqn> known;
  Eqn unknown;
  std::vector<bool> out_unknowns;
};
// Splits a shard_map or xla_pmap equation; nullopt for other primitives.
[[nodiscard]] std::optional<EqnSplit> split_mapped_eqn(const Eqn& eqn, const std::vector<bool>& unknown_inputs);

void register_mapped_transpose_rules();

}  // namespace shardscope::ad
