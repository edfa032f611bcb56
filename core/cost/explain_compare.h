// Two explanations of the same program side by side: on another hardware preset (the same partition plan, the
// mesh's axes laid on the preset's devices) or with another layout for one argument (propagation re-run), with
// step time, collectives, bytes, memory and bound, their deltas, and which one wins and why.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cost/explain.h"
#include "device/presets.h"
#include "exec/lowering.h"

namespace shardscope {

// `--compare-spec NAME=SPEC`: NAME is an argument's name (LoweringOptions::arg_names), "args[i]" or "i";
// SPEC a PartitionSpec as a user types it ("P('data', None)", "'data', None").
struct ArgumentSpec {
  std::string argument;
  PartitionSpec spec;
};
// ValueError naming the text when it has no '=' or the spec does not parse.
[[nodiscard]] ArgumentSpec parse_argument_spec(const std::string& text);

// The position of `name` among the program's arguments; ValueError listing the names otherwise.
[[nodiscard]] std::size_t argument_position(const std::string& name, std::size_t count,
                                            const std::vector<std::string>& arg_names);

// `args` and `options` with each named argument placed as NamedSharding(mesh, spec) on the mesh it (or, when it
// is unplaced, another argument) already uses; an explicit in_sharding for it is replaced too.
void apply_argument_specs(std::vector<ShapeDtypeStruct>& args, LoweringOptions& options,
                          const std::vector<ArgumentSpec>& specs, const JaxProfile& profile);

// The program's mesh (same axis names, sizes and types) on `preset`'s devices, ordered as jax.make_mesh orders
// them; ValueError when the preset has fewer devices than the mesh.
[[nodiscard]] Mesh mesh_on_preset(const Mesh& mesh, const DevicePreset& preset, const JaxProfile& profile);

// `compiled`'s plan with its mesh replaced by `mesh` (same axes): the same layouts and collectives, priced on the
// new devices' hardware and topology.
[[nodiscard]] Compiled with_mesh(const Compiled& compiled, const Mesh& mesh, const JaxProfile& profile);

// What a comparison's other side runs on: a device preset (the mesh's axes laid on its devices) or a device kind
// (the same devices priced on that kind's figures).
struct CompareTarget {
  std::optional<DevicePreset> preset;
  const HardwareSpec* hardware = nullptr;
};
// ValueError naming the text when it is neither a device preset nor a device kind.
[[nodiscard]] CompareTarget compare_target(const std::string& text);

// The other side of a comparison: `program` with the argument layouts changed by `specs` (propagation re-run), then
// priced on `target` (or on `hardware`, or on the mesh's own devices).
[[nodiscard]] ProgramExplanation explain_variant(const JaxprPtr& program, std::vector<ShapeDtypeStruct> args,
                                                 LoweringOptions options, const std::string& name,
                                                 const std::optional<CompareTarget>& target,
                                                 const std::vector<ArgumentSpec>& specs, const HardwareSpec* hardware,
                                                 const JaxProfile& profile);

struct ExplainComparison {
  std::string base_label;   // e.g. "as run: 2048 x TPU v4"
  std::string other_label;  // e.g. "tpu-v5p-4096" or "w1=P('model', None)"
  ProgramExplanation base;
  ProgramExplanation other;
};

// One compared quantity: both values as text and the change from base to other ("-1.2 ms (-35%)", "same").
struct ComparedQuantity {
  std::string quantity;
  std::string base;
  std::string other;
  std::string delta;
};
[[nodiscard]] std::vector<ComparedQuantity> compared_quantities(const ExplainComparison& comparison);

// A collective (kind, axes, op, per-device operand -> result) present in different numbers or sizes on the two
// sides.
struct CollectiveDifference {
  std::string kind;
  std::string axes;
  std::string op;
  std::string sharding;
  int base_count = 0;
  int other_count = 0;
  int64_t base_bytes = 0;  // per device, summed over its occurrences
  int64_t other_bytes = 0;
  double base_seconds = 0;
  double other_seconds = 0;
};
[[nodiscard]] std::vector<CollectiveDifference> collective_differences(const ExplainComparison& comparison);

// "w1=P('model', None) wins: 1.8x faster (serial step 2.0 ms -> 1.1 ms), mainly communication: 1 all-gather over
// 'model' fewer", or "the same step time".
[[nodiscard]] std::string comparison_verdict(const ExplainComparison& comparison);

// Text, Markdown or CSV (columns program,quantity,base,other,delta; then one row per differing collective with
// quantity "collective kind axes op").
[[nodiscard]] std::string render_comparisons(const std::vector<ExplainComparison>& comparisons, ExplainFormat format);

}  // namespace shardscope
