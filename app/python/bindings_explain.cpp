// shardscope's own module functions beside the simulated jax: explain, compare, why and sharding notations, as
// plain data for the `shardscope` Python package to present. Everything here goes beyond what JAX reports.
#include <pybind11/stl.h>

#include "api/session.h"
#include "base/error.h"
#include "base/python_format.h"
#include "cost/explain.h"
#include "cost/explain_compare.h"
#include "cost/why.h"
#include "python/bindings.h"
#include "python/lowered_objects.h"
#include "sharding/notation.h"
#include "sharding/sharding.h"

namespace py = pybind11;

namespace shardscope::python {

void bind_explain(py::module_& m) {
  // shardscope.explain(...): beyond JAX, so its results are plain data for the `shardscope` module to present.
  m.def("explain_lowered", [](const PyLowered& l, const std::string& name, const std::optional<std::string>& kind) {
    const HardwareSpec* hardware = kind ? &hardware_for_kind(*kind) : nullptr;
    const Compiled compiled = l.lowered.compile();
    const ProgramExplanation explanation = explain_compiled(compiled, name, hardware);
    py::list rows;
    for (const ExplainRow& row : explanation.rows) {
      py::dict item;
      item["kind"] = row.kind;
      item["op"] = row.op;
      item["axes"] = row.axes;
      item["sharding"] = row.sharding;
      item["local_type"] = row.local_type;
      item["bytes_per_device"] = row.bytes_per_device;
      item["flops"] = row.flops;
      item["est_time_s"] = row.seconds;
      item["bound"] = row.bound;
      item["reason"] = row.reason;
      item["groups"] = row.groups;
      item["algorithm"] = row.algorithm;
      rows.append(item);
    }
    py::dict out;
    out["rows"] = rows;
    out["hardware"] = explanation.hardware.name;
    out["compute_s"] = explanation.compute_seconds;
    out["memory_s"] = explanation.memory_seconds;
    out["communication_s"] = explanation.communication_seconds;
    out["serial_s"] = explanation.serial_seconds;
    out["overlapped_s"] = explanation.overlapped_seconds;
    out["bound"] = explanation.bound;
    out["peak_memory_bytes"] = explanation.peak_memory_bytes;
    out["memory_capacity_bytes"] = explanation.hardware.memory_capacity;
    out["memory_fit"] = explanation.memory_fit();
    out["text"] = render_explanations({explanation}, ExplainFormat::kText);
    out["markdown"] = render_explanations({explanation}, ExplainFormat::kMarkdown);
    out["csv"] = render_explanations({explanation}, ExplainFormat::kCsv);
    // Why: each collective's and each result's chain of layout origins, in the order of the rows above.
    py::list why_collectives;
    for (std::size_t c = 0; c < compiled.plan().collectives.size(); ++c) {
      why_collectives.append(why_collective(compiled, c).text());
    }
    py::list why_results;
    for (std::size_t o = 0; o < compiled.program().outvars.size(); ++o)
      why_results.append(why_output(compiled, o).text());
    out["why_collectives"] = why_collectives;
    out["why_results"] = why_results;
    return out;
  });
  // shardscope.compare: the same lowered program on another preset or device kind, and/or with some arguments laid
  // out otherwise, side by side with it as lowered.
  m.def("compare_lowered", [](const PyLowered& l, const std::string& name, const std::optional<std::string>& other,
                              const std::vector<std::pair<std::string, PartitionSpec>>& spec_pairs,
                              const std::optional<std::string>& kind, const std::optional<std::string>& label) {
    const JaxProfile& profile = api::session().profile;
    const HardwareSpec* hardware = kind ? &hardware_for_kind(*kind) : nullptr;
    std::optional<CompareTarget> target;
    if (other) target = compare_target(*other);
    std::vector<ArgumentSpec> specs;
    std::vector<std::string> labels;
    if (other) labels.push_back(*other);
    for (const auto& [argument, spec] : spec_pairs) {
      specs.push_back({argument, spec});
      labels.push_back(argument + "=" + spec.repr(profile));
    }
    if (!target && specs.empty()) throw value_error("compare needs another preset or device kind, or specs");
    ExplainComparison comparison;
    comparison.base = explain_compiled(l.lowered.compile(), name, hardware);
    comparison.base_label = specs.empty()
                                ? std::to_string(comparison.base.device_count) + " x " + comparison.base.hardware.name
                                : "as lowered";
    comparison.other_label = label.value_or(join(labels, ", "));
    comparison.other = explain_variant(l.lowered.program_ptr(), l.lowered.args_info(), l.lowered.options(), name,
                                       target, specs, hardware, profile);
    py::list quantities;
    for (const ComparedQuantity& q : compared_quantities(comparison)) {
      py::dict item;
      item["quantity"] = q.quantity;
      item["base"] = q.base;
      item["other"] = q.other;
      item["delta"] = q.delta;
      quantities.append(item);
    }
    py::list differences;
    for (const CollectiveDifference& d : collective_differences(comparison)) {
      py::dict item;
      item["kind"] = d.kind;
      item["axes"] = d.axes;
      item["op"] = d.op;
      item["sharding"] = d.sharding;
      item["base_count"] = d.base_count;
      item["other_count"] = d.other_count;
      item["base_bytes"] = d.base_bytes;
      item["other_bytes"] = d.other_bytes;
      differences.append(item);
    }
    py::dict out;
    out["base_label"] = comparison.base_label;
    out["other_label"] = comparison.other_label;
    out["base_serial_s"] = comparison.base.serial_seconds;
    out["other_serial_s"] = comparison.other.serial_seconds;
    out["verdict"] = comparison_verdict(comparison);
    out["quantities"] = quantities;
    out["differences"] = differences;
    out["text"] = render_comparisons({comparison}, ExplainFormat::kText);
    out["markdown"] = render_comparisons({comparison}, ExplainFormat::kMarkdown);
    out["csv"] = render_comparisons({comparison}, ExplainFormat::kCsv);
    return out;
  });
  m.def("sharding_notations", [](const NamedSharding& sharding, std::size_t rank) {
    const ShardingNotations n = sharding_notations(sharding, rank, api::session().profile);
    py::dict out;
    out["spec"] = n.spec;
    out["book"] = n.book;
    out["shardy"] = n.shardy;
    out["shardy_mesh"] = n.shardy_mesh;
    out["hlo"] = n.hlo;
    out["text"] = notations_text(n);
    return out;
  });
}

}  // namespace shardscope::python
