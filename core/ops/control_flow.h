// Control-flow primitives (scan, while, cond, remat2, name): their params and the helpers rules share.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/jaxpr.h"
#include "ir/param.h"

namespace shardscope {

void register_control_flow_primitives();

// scan's operands are (consts..., carry..., xs...); its body maps them to (carry..., ys...).
struct ScanLayout {
  std::size_t num_consts = 0;
  std::size_t num_carry = 0;
  std::size_t num_xs = 0;
  int64_t length = 0;
  bool reverse = false;
  int64_t unroll = 1;
};
[[nodiscard]] ScanLayout scan_layout(const Params& params);
[[nodiscard]] Params scan_params(const JaxprPtr& body, const ScanLayout& layout);

// while's operands are (cond consts..., body consts..., carry...).
struct WhileLayout {
  std::size_t cond_nconsts = 0;
  std::size_t body_nconsts = 0;
};
[[nodiscard]] WhileLayout while_layout(const Params& params);
[[nodiscard]] Params while_params(const JaxprPtr& cond, const JaxprPtr& body, const WhileLayout& layout);

// cond's operands are (index, operands...); `branches` holds one program per index value.
[[nodiscard]] std::vector<JaxprPtr> cond_branches(const Params& params);
[[nodiscard]] Params cond_params(const std::vector<JaxprPtr>& branches);

// The nested program a param holds (scan/remat2 `jaxpr`, while `cond_jaxpr`/`body_jaxpr`).
[[nodiscard]] const JaxprPtr& nested_jaxpr(const Params& params, const std::string& key);
// `params` with one key replaced (or appended).
[[nodiscard]] Params replace_param(Params params, const std::string& key, ParamValue value);

// The body's per-iteration view of one scanned operand: xs without its leading dim.
[[nodiscard]] Aval unstacked_aval(const Aval& stacked);
[[nodiscard]] Aval stacked_aval(const Aval& slice, int64_t length);

// Runs a loop body or branch on one device.
[[nodiscard]] std::vector<BufferPtr> run_nested(const Jaxpr& jaxpr, std::vector<BufferPtr> args);
// Element `index` of dim 0 (the slice a scan iteration reads) and the stacking of slices (what ys become).
[[nodiscard]] BufferPtr leading_slice(const BufferPtr& stacked, int64_t index);
[[nodiscard]] BufferPtr stack_leading(const std::vector<BufferPtr>& slices, const Aval& slice_aval);
// A scalar buffer's value as an integer (loop predicates and branch indices).
[[nodiscard]] int64_t scalar_int(const BufferPtr& buffer);

}  // namespace shardscope
