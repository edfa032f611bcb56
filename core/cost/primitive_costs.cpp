// Cost rules of the core primitives, following how XLA's HloCostAnalysis prices the HLO JAX lowers
// each primitive to: elementwise ops one flop (or one transcendental) per result element, dots 2*M*N*K,
// reductions one combine per input element beyond the first of each output, data movement bytes only.
#include <bit>
#include <cmath>

#include "cost/cost_rules.h"
#include "ir/primitive.h"
#include "ops/convolution.h"
#include "ops/ops.h"

namespace shardscope {
namespace {

// XLA prices these opcodes as transcendentals rather than flops. The special functions JAX expands
// into several HLO ops (asin, lgamma, erf_inv, ...) are priced the same way: one opaque function
// evaluation per element.
constexpr const char* kTranscendental[] = {
    "exp",   "exp2", "log",  "log1p",   "expm1",  "logistic", "pow",       "sqrt",   "rsqrt",   "cbrt",  "tanh",
    "sin",   "cos",  "tan",  "atan2",   "asin",   "acos",     "atan",      "sinh",   "cosh",    "asinh", "acosh",
    "atanh", "erf",  "erfc", "erf_inv", "lgamma", "digamma",  "polygamma", "igamma", "igammac", "zeta",
};

// One flop per result element (XLA's HandleElementwiseOp, compare, convert, clamp, select).
constexpr const char* kArithmetic[] = {
    "neg",
    "sign",
    "abs",
    "floor",
    "ceil",
    "round",
    "is_finite",
    "not",
    "population_count",
    "clz",
    "square",
    "add",
    "sub",
    "mul",
    "div",
    "rem",
    "max",
    "min",
    "and",
    "or",
    "xor",
    "nextafter",
    "shift_left",
    "shift_right_logical",
    "shift_right_arithmetic",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "convert_element_type",
    "clamp",
    "real",
    "imag",
    "conj",
    "add_any",
};

// No arithmetic: each operand read once and the result written once (XLA's default accounting).
constexpr const char* kDataMovement[] = {
    "broadcast_in_dim",
    "reshape",
    "transpose",
    "squeeze",
    "expand_dims",
    "rev",
    "concatenate",
    "stack",
    "pad",
    "copy",
    "copy_p",
    "iota",
    "all_gather",
    "all_gather_invariant",
    "all_to_all",
    "reduce_scatter",
    "ppermute",
    "axis_index",
};

// Reductions whose combiner is one HLO op.
constexpr const char* kSimpleReductions[] = {"reduce_sum", "reduce_prod", "reduce_max", "reduce_min",
                                             "reduce_and", "reduce_or",   "reduce_xor"};

// Cross-replica reductions: XLA's HandleAllReduce counts one flop per result element.
constexpr const char* kAllReduces[] = {"psum", "psum2", "psum_invariant", "pmax", "pmin"};

// Values that vanish in lowering (identity casts, sharding annotations the partitioner consumes).
constexpr const char* kFree[] = {"pvary",
                                 "sharding_constraint",
                                 "device_put",
                                 "reshard",
                                 "mesh_cast",
                                 "optimization_barrier",
                                 "vary_unreduced_cast_p",
                                 "reduced_vary_cast_p"};

double result_elements(const CostInputs& in) { return in.results.empty() ? 0.0 : aval_elements(in.results[0]); }

OpCost per_element(const CostInputs& in, double flops, double transcendentals) {
  OpCost cost = memory_traffic(in);
  cost.flops = flops * result_elements(in);
  cost.transcendentals = transcendentals * result_elements(in);
  return cost;
}

// lax.integer_pow lowers to square-and-multiply: one multiply per squaring and per extra set bit,
// plus a division for negative exponents.
double integer_pow_multiplies(int64_t y) {
  if (y == 0) return 0;
  const auto magnitude = static_cast<uint64_t>(y < 0 ? -y : y);
  const int squarings = static_cast<int>(std::bit_width(magnitude)) - 1;
  const int accumulations = std::popcount(magnitude) - 1;
  return static_cast<double>(squarings + accumulations) + (y < 0 ? 1.0 : 0.0);
}

// dot_general: 2 flops (one FMA) per result element per contracted element.
OpCost dot_general_cost(const CostInputs& in) {
  OpCost cost = memory_traffic(in);
  const auto& numbers = param(in.params, "dimension_numbers").as_items("dimension_numbers");
  const std::vector<int64_t> lhs_contracting = numbers.at(0).as_items("contracting").at(0).as_ints("contracting");
  double width = 1;
  for (const int64_t d : lhs_contracting)
    width *= static_cast<double>(in.operands[0].shape.at(static_cast<std::size_t>(d)));
  cost.flops = 2.0 * result_elements(in) * width;
  return cost;
}

// conv_general_dilated: 2 flops per result element per kernel tap and input feature of its group (XLA counts
// padded taps too).
OpCost conv_cost(const CostInputs& in) {
  OpCost cost = memory_traffic(in);
  const Shape& kernel = in.operands[1].shape;
  const double kernel_elements = static_cast<double>(product(kernel));
  const ConvParams conv = conv_params(in.params);
  const double out_features = static_cast<double>(kernel.at(static_cast<std::size_t>(conv.dims.rhs_spec.at(0))));
  cost.flops = out_features == 0 ? 0 : 2.0 * result_elements(in) * kernel_elements / out_features;
  return cost;
}

// Windowed reductions combine each window's elements: window size - 1 combines per result element; the select
// ops compare as many and move one value.
OpCost window_cost(const CostInputs& in) {
  OpCost cost = memory_traffic(in);
  const auto& window = param(in.params, "window_dimensions").as_ints("window_dimensions");
  double size = 1;
  for (const int64_t w : window) size *= static_cast<double>(w);
  const bool scatter = in.results[0].shape == in.operands.back().shape && in.operands.size() == 2 &&
                       param(in.params, "window_dimensions").as_ints("window_dimensions").size() > 0 &&
                       find_param(in.params, "base_dilation") == nullptr;
  const double outputs = scatter ? aval_elements(in.operands[0]) : result_elements(in);
  cost.flops = (size > 1 ? size - 1 : 0) * outputs;
  return cost;
}

// Reductions apply their combiner once per input element beyond the first of each output.
OpCost reduction_cost(const CostInputs& in, double combiner_flops) {
  OpCost cost = memory_traffic(in);
  cost.flops = combiner_flops * (aval_elements(in.operands[0]) - result_elements(in));
  return cost;
}

// Cumulative reductions lower to a reduce-window whose window spans the whole axis, padded low; XLA
// prices window_size - 1 combines for every result element.
OpCost cumulative_cost(const CostInputs& in) {
  OpCost cost = memory_traffic(in);
  const auto axis = static_cast<std::size_t>(param(in.params, "axis").as_int("axis"));
  const double window = in.operands[0].rank() == 0 ? 1.0 : static_cast<double>(in.operands[0].shape.at(axis));
  cost.flops = (window - 1) * result_elements(in);
  return cost;
}

// Slices read only what they keep (XLA's HandleSlice/HandleGather): the result's bytes from the operand.
OpCost sliced_read_cost(const CostInputs& in) {
  OpCost cost = memory_traffic(in);
  double written = 0;
  for (const Aval& r : in.results) written += aval_bytes(r);
  cost.operand_bytes.at(0) = written;
  return cost;
}

// dynamic_update_slice writes into its operand in place: the update is read and written, the operand
// not touched beyond that.
OpCost update_slice_cost(const CostInputs& in) {
  OpCost cost = memory_traffic(in);
  const double update = aval_bytes(in.operands[1]);
  cost.operand_bytes.at(0) = 0;
  cost.output_bytes = update;
  return cost;
}

// Scatter with a combiner (XLA's HandleScatter): operand, output and updates are each touched for the
// updates' extent, plus the indices; one combine per update element.
OpCost scatter_cost(const CostInputs& in, double combiner_flops) {
  OpCost cost = memory_traffic(in);
  const Aval& updates = in.operands[in.operands.size() - 1];
  const double update_bytes = aval_bytes(updates);
  cost.operand_bytes.front() = update_bytes;
  cost.operand_bytes.back() = update_bytes;
  cost.output_bytes = update_bytes;
  cost.flops = combiner_flops * aval_elements(updates);
  return cost;
}

// Nested programs cost what their equations cost (XLA's HandleCall).
OpCost nested_program_cost(const CostInputs& in) {
  const ParamValue* ref = find_param(in.params, "jaxpr");
  if (ref == nullptr) ref = find_param(in.params, "call_jaxpr");
  const auto* jaxpr = ref == nullptr ? nullptr : ref->get_if<ParamValue::JaxprRef>();
  if (jaxpr == nullptr || !*jaxpr) return memory_traffic(in);
  OpCost cost = jaxpr_cost(**jaxpr);
  return cost;
}

OpCost free_cost(const CostInputs& in) {
  OpCost cost;
  cost.operand_bytes.assign(in.operands.size(), 0.0);
  return cost;
}

}  // namespace

void register_control_flow_cost_rules();  // cost/control_flow_costs.cpp

void register_core_cost_rules() {
  ensure_core_primitives();
  for (const char* name : kTranscendental) {
    register_cost_rule(name, [](const CostInputs& in) { return per_element(in, 0, 1); });
  }
  for (const char* name : kArithmetic) {
    register_cost_rule(name, [](const CostInputs& in) { return per_element(in, 1, 0); });
  }
  for (const char* name : kDataMovement) register_cost_rule(name, memory_traffic);
  for (const char* name : kSimpleReductions) {
    register_cost_rule(name, [](const CostInputs& in) { return reduction_cost(in, 1); });
  }
  for (const char* name : kAllReduces)
    register_cost_rule(name, [](const CostInputs& in) { return per_element(in, 1, 0); });
  for (const char* name : kFree) register_cost_rule(name, free_cost);
  for (const char* name : {"cumsum", "cumprod", "cummax", "cummin"}) register_cost_rule(name, cumulative_cost);
  // JAX's argmin/argmax reducer: compare, NaN test, two ors, eq, index lt, and, two selects.
  for (const char* name : {"argmax", "argmin"}) {
    register_cost_rule(name, [](const CostInputs& in) { return reduction_cost(in, 9); });
  }
  register_cost_rule("dot_general", dot_general_cost);
  register_cost_rule("conv_general_dilated", conv_cost);
  for (const char* name : {"reduce_window_sum", "reduce_window_max", "reduce_window_min", "select_and_gather_add",
                           "select_and_scatter_add"}) {
    register_cost_rule(name, window_cost);
  }
  register_cost_rule("integer_pow", [](const CostInputs& in) {
    return per_element(in, integer_pow_multiplies(param(in.params, "y").as_int("y")), 0);
  });
  // select_n with k cases lowers to a chain of k-1 selects.
  register_cost_rule("select_n", [](const CostInputs& in) {
    return per_element(in, static_cast<double>(in.operands.size() >= 2 ? in.operands.size() - 2 : 0), 0);
  });
  register_cost_rule("slice", sliced_read_cost);
  register_cost_rule("split", memory_traffic);
  register_cost_rule("unstack", memory_traffic);
  register_cost_rule("dynamic_slice", sliced_read_cost);
  register_cost_rule("gather", sliced_read_cost);
  register_cost_rule("dynamic_update_slice", update_slice_cost);
  // Threefry-2x32 on a pair of u32 words: 20 rounds of add, rotate (two shifts and an or) and xor, plus
  // the key injections' two adds every fourth round and the initial two: 112 u32 ops per pair.
  register_cost_rule("threefry2x32", [](const CostInputs& in) { return per_element(in, 112, 0); });
  register_cost_rule("random_bits", [](const CostInputs& in) {
    OpCost cost = memory_traffic(in);
    const double bits = result_elements(in) * static_cast<double>(dtype_bits(in.results[0].dtype));
    cost.flops = 112 * bits / 64;
    return cost;
  });
  register_cost_rule("random_split", [](const CostInputs& in) { return per_element(in, 56, 0); });
  register_cost_rule("random_fold_in", [](const CostInputs& in) { return per_element(in, 56, 0); });
  for (const char* name : {"random_seed", "random_wrap", "random_unwrap", "random_key_data"}) {
    register_cost_rule(name, memory_traffic);
  }
  register_cost_rule("scatter-add", [](const CostInputs& in) { return scatter_cost(in, 1); });
  register_cost_rule("scatter_add", [](const CostInputs& in) { return scatter_cost(in, 1); });
  register_cost_rule("scatter", [](const CostInputs& in) { return scatter_cost(in, 0); });
  // The combining scatters apply their combiner once per update element, as scatter-add does.
  for (const char* name : {"scatter-sub", "scatter-mul", "scatter-min", "scatter-max"}) {
    register_cost_rule(name, [](const CostInputs& in) { return scatter_cost(in, 1); });
  }
  // A comparison sort: about n log2 n comparisons over the sorted operand, plus reading and writing it.
  for (const char* name : {"sort", "top_k"}) {
    register_cost_rule(name, [](const CostInputs& in) {
      OpCost cost = memory_traffic(in);
      if (!in.operands.empty()) {
        const auto n = static_cast<double>(product(in.operands[0].shape));
        cost.flops = n * std::max(1.0, std::log2(std::max(n, 2.0)));
      }
      return cost;
    });
  }
  register_cost_rule("stop_gradient", memory_traffic);
  register_cost_rule("jit", nested_program_cost);
  register_cost_rule("pjit", nested_program_cost);
  // Mapped programs: the body is traced on per-device types, so its cost is what each device runs.
  for (const char* name : {"shard_map", "xla_pmap", "closed_call", "core_call", "remat", "checkpoint",
                           "custom_jvp_call", "custom_vjp_call"}) {
    register_cost_rule(name, nested_program_cost);
  }
  register_control_flow_cost_rules();
}

}  // namespace shardscope
