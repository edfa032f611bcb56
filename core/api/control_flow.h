// jax.lax.scan / while_loop / cond / switch and jax.checkpoint over flat user functions: trace the bodies,
// check their types as JAX does, and bind one control-flow equation.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "api/transforms.h"
#include "transforms/saved_residuals.h"

namespace shardscope::api {

// `carry_names[i]` describes init leaf i in errors ("the input carry component c[0]"); the body maps
// (carry..., x...) to (carry..., y...), with as many carry outputs as inputs.
struct LoopSpec {
  std::string what = "scan body";  // "scan body" or "while_loop body" in the carry type error
  std::vector<std::string> carry_names;
};

struct ScanSpec : LoopSpec {
  int64_t length = 0;
  bool reverse = false;
  int64_t unroll = 1;
};
// Returns (final carry..., stacked ys...).
std::vector<Value> scan(const Function& body, const std::vector<Value>& init, const std::vector<Value>& xs,
                        const ScanSpec& spec);

std::vector<Value> while_loop(const Function& cond, const Function& body, const std::vector<Value>& init,
                              const LoopSpec& spec);

struct SwitchSpec {
  std::string api_name = "cond";          // "cond" or "switch"
  std::vector<std::string> branch_names;  // "true_fun"/"false_fun", or "branch 0", "branch1", ...
  std::vector<std::string> branch_infos;  // "f at file.py:3" per branch
  // " at path [0]" per output leaf of the first branch (or ""), known once that branch is traced.
  std::function<std::vector<std::string>()> output_paths;
  // The branch the others are checked against (and traced first): true_fun for cond, branch 0 for switch.
  std::size_t reference = 0;
};
// `index` is an int32 scalar already clamped to the branches; branches are listed in index order.
std::vector<Value> switch_branches(const Value& index, const std::vector<Function>& branches,
                                   const std::vector<Value>& operands, const SwitchSpec& spec);

// jax.checkpoint's two halves: the body traced on the arguments' types (a trace JAX caches per function and
// types, closed-over values included), and the remat2 equation binding a traced body to arguments.
[[nodiscard]] Traced trace_checkpoint(const Function& f, const std::vector<Value>& args);
// Whether a traced body may be bound again later: it closes over no value of a trace.
[[nodiscard]] bool reusable_checkpoint(const Traced& traced);
std::vector<Value> bind_checkpoint(const Traced& traced, const std::vector<Value>& args, bool prevent_cse,
                                   const std::optional<ParamValue::PolicyRef>& policy);
// jax.checkpoint(f, prevent_cse, policy)(*args): one remat2 equation (policy: printed as its text, deciding what
// the backward pass saves; none: nothing_saveable).
std::vector<Value> checkpoint(const Function& f, const std::vector<Value>& args, bool prevent_cse,
                              const std::optional<ParamValue::PolicyRef>& policy);

// The carry type error of scan/while (TypeError text of JAX's _check_carry_type), or nothing when they match.
[[nodiscard]] std::optional<std::string> carry_type_error(const LoopSpec& spec, const std::vector<Aval>& in,
                                                          const std::vector<Aval>& out);

// jax.ad_checkpoint.saved_residuals(f, *args): what jax.vjp(f, *args) keeps for the backward pass, each with
// its source; `arg_names` names the flattened arguments.
[[nodiscard]] std::vector<SavedResidual> saved_residuals(const Function& f, const std::vector<Value>& args,
                                                         const std::vector<std::string>& arg_names);

}  // namespace shardscope::api
