// Comparing two explanations of one program: the variants (another preset's devices, another argument layout),
// the quantities and their deltas, the collectives that differ, the verdict, and the three document formats.
#include "cost/explain_compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <tuple>

#include "base/error.h"
#include "base/python_format.h"
#include "cost/program_cost.h"

namespace shardscope {
namespace {

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

int64_t collective_bytes(const ProgramExplanation& p) {
  int64_t bytes = 0;
  for (const ExplainRow& row : p.rows) {
    if (row.kind != "equation") bytes += row.bytes_per_device;
  }
  return bytes;
}

int collective_count(const ProgramExplanation& p) {
  return static_cast<int>(
      std::count_if(p.rows.begin(), p.rows.end(), [](const ExplainRow& row) { return row.kind != "equation"; }));
}

std::string percent_change(double base, double other) {
  if (base == 0) return "";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, " (%+.0f%%)", (other - base) / base * 100);
  return buffer;
}

std::string signed_text(double delta, const std::string& magnitude) { return (delta < 0 ? "-" : "+") + magnitude; }

ComparedQuantity seconds_quantity(const std::string& name, double base, double other) {
  const double delta = other - base;
  const std::string change = std::abs(delta) <= 1e-15
                                 ? "same"
                                 : signed_text(delta, format_seconds(std::abs(delta))) + percent_change(base, other);
  return {name, base <= 0 ? "0" : format_seconds(base), other <= 0 ? "0" : format_seconds(other), change};
}

ComparedQuantity bytes_quantity(const std::string& name, int64_t base, int64_t other) {
  const auto delta = static_cast<double>(other - base);
  const std::string change = delta == 0 ? "same"
                                        : signed_text(delta, format_bytes(std::abs(delta))) +
                                              percent_change(static_cast<double>(base), static_cast<double>(other));
  return {name, format_bytes(static_cast<double>(base)), format_bytes(static_cast<double>(other)), change};
}

ComparedQuantity text_quantity(const std::string& name, const std::string& base, const std::string& other) {
  return {name, base, other, base == other ? "same" : "changed"};
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string pad(std::string text, std::size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

std::string difference_name(const CollectiveDifference& d) {
  return d.kind + " over '" + d.axes + "' for " + d.op + " (" + d.sharding + ")";
}

}  // namespace

ArgumentSpec parse_argument_spec(const std::string& text) {
  const auto equals = text.find('=');
  if (equals == std::string::npos || trimmed(text.substr(0, equals)).empty()) {
    throw value_error("--compare-spec wants NAME=SPEC (e.g. w1=\"P('model', None)\"), not '" + text + "'");
  }
  return {trimmed(text.substr(0, equals)), parse_partition_spec(trimmed(text.substr(equals + 1)))};
}

std::size_t argument_position(const std::string& name, std::size_t count, const std::vector<std::string>& arg_names) {
  for (std::size_t i = 0; i < arg_names.size() && i < count; ++i) {
    if (arg_names[i] == name) return i;
  }
  std::string index = name;
  if (index.starts_with("args[") && index.ends_with("]")) index = index.substr(5, index.size() - 6);
  if (!index.empty() && std::all_of(index.begin(), index.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    const std::size_t position = std::stoul(index);
    if (position < count) return position;
  }
  std::vector<std::string> names;
  for (std::size_t i = 0; i < count; ++i) {
    names.push_back(i < arg_names.size() && !arg_names[i].empty() ? arg_names[i] : "args[" + std::to_string(i) + "]");
  }
  throw value_error("the program has no argument '" + name + "' (its arguments: " + join(names, ", ") + ")");
}

void apply_argument_specs(std::vector<ShapeDtypeStruct>& args, LoweringOptions& options,
                          const std::vector<ArgumentSpec>& specs, const JaxProfile& profile) {
  const auto mesh_of = [](const std::optional<Sharding>& sharding) -> std::optional<Mesh> {
    if (sharding && std::holds_alternative<NamedSharding>(*sharding)) return std::get<NamedSharding>(*sharding).mesh;
    return std::nullopt;
  };
  for (const ArgumentSpec& change : specs) {
    const std::size_t i = argument_position(change.argument, args.size(), options.arg_names);
    std::optional<Mesh> mesh = mesh_of(args[i].sharding);
    if (!mesh && i < options.in_shardings.size()) mesh = mesh_of(options.in_shardings[i]);
    for (std::size_t j = 0; !mesh && j < args.size(); ++j) mesh = mesh_of(args[j].sharding);
    for (std::size_t j = 0; !mesh && j < options.in_shardings.size(); ++j) mesh = mesh_of(options.in_shardings[j]);
    if (!mesh) throw value_error("--compare-spec " + change.argument + ": no argument of the program is on a mesh");
    const Sharding placed = make_named_sharding(*mesh, change.spec, profile);
    args[i].sharding = placed;
    if (i < options.in_shardings.size() && options.in_shardings[i]) options.in_shardings[i] = placed;
  }
}

Mesh mesh_on_preset(const Mesh& mesh, const DevicePreset& preset, const JaxProfile& profile) {
  if (static_cast<int64_t>(preset.devices.size()) < mesh.size()) {
    throw value_error("preset " + preset.name + " has " + std::to_string(preset.devices.size()) +
                      " devices; the program's mesh needs " + std::to_string(mesh.size()));
  }
  return make_mesh(mesh.axis_sizes(), mesh.axis_names(), preset.devices, profile, mesh.axis_types());
}

Compiled with_mesh(const Compiled& compiled, const Mesh& mesh, const JaxProfile& profile) {
  PartitionPlan plan = compiled.plan();
  if (plan.mesh) {
    if (plan.mesh->axis_sizes() != mesh.axis_sizes() || plan.mesh->axis_names() != mesh.axis_names()) {
      throw value_error("the new mesh's axes differ from the program's");
    }
    plan.mesh = mesh;
  } else {
    plan.device = mesh.devices().front();
  }
  return {std::make_shared<const Jaxpr>(compiled.program()), {}, {}, std::move(plan), profile};
}

CompareTarget compare_target(const std::string& text) {
  try {
    return {make_device_preset(text), nullptr};
  } catch (const Error&) {
  }
  try {
    return {std::nullopt, &hardware_for_kind(text)};
  } catch (const Error&) {
  }
  throw value_error("'" + text + "' is neither a device preset (" + join(example_preset_names(), ", ") +
                    ", ...) nor a device kind");
}

ProgramExplanation explain_variant(const JaxprPtr& program, std::vector<ShapeDtypeStruct> args, LoweringOptions options,
                                   const std::string& name, const std::optional<CompareTarget>& target,
                                   const std::vector<ArgumentSpec>& specs, const HardwareSpec* hardware,
                                   const JaxProfile& profile) {
  apply_argument_specs(args, options, specs, profile);
  Compiled compiled = Lowered(program, std::move(args), std::move(options), profile).compile();
  if (target && target->preset) {
    const PartitionPlan& plan = compiled.plan();
    const Mesh mesh = plan.mesh ? mesh_on_preset(*plan.mesh, *target->preset, profile)
                                : make_mesh({1}, {"_"}, target->preset->devices, profile);
    compiled = with_mesh(compiled, mesh, profile);
    hardware = nullptr;
  } else if (target) {
    hardware = target->hardware;
  }
  return explain_compiled(compiled, name, hardware);
}

std::vector<ComparedQuantity> compared_quantities(const ExplainComparison& c) {
  const ProgramExplanation& a = c.base;
  const ProgramExplanation& b = c.other;
  return {
      text_quantity("hardware", std::to_string(a.device_count) + " x " + a.hardware.name,
                    std::to_string(b.device_count) + " x " + b.hardware.name),
      seconds_quantity("serial step", a.serial_seconds, b.serial_seconds),
      seconds_quantity("overlapped lower bound", a.overlapped_seconds, b.overlapped_seconds),
      seconds_quantity("compute", a.compute_seconds, b.compute_seconds),
      seconds_quantity("memory", a.memory_seconds, b.memory_seconds),
      seconds_quantity("communication", a.communication_seconds, b.communication_seconds),
      text_quantity("collectives", std::to_string(collective_count(a)), std::to_string(collective_count(b))),
      bytes_quantity("bytes sent per device", collective_bytes(a), collective_bytes(b)),
      bytes_quantity("peak memory per device", a.peak_memory_bytes, b.peak_memory_bytes),
      text_quantity("memory fit", a.memory_fit(), b.memory_fit()),
      text_quantity("bound", a.bound, b.bound),
  };
}

std::vector<CollectiveDifference> collective_differences(const ExplainComparison& c) {
  using Key = std::tuple<std::string, std::string, std::string, std::string>;
  std::map<Key, CollectiveDifference> by_key;
  std::vector<Key> order;
  const auto add = [&](const ProgramExplanation& p, bool base) {
    for (const ExplainRow& row : p.rows) {
      if (row.kind == "equation") continue;
      const Key key{row.kind, row.axes, row.op, row.sharding};
      auto [it, inserted] = by_key.try_emplace(key);
      if (inserted) {
        order.push_back(key);
        it->second = CollectiveDifference{row.kind, row.axes, row.op, row.sharding};
      }
      CollectiveDifference& d = it->second;
      (base ? d.base_count : d.other_count) += 1;
      (base ? d.base_bytes : d.other_bytes) += row.bytes_per_device;
      (base ? d.base_seconds : d.other_seconds) += row.seconds;
    }
  };
  add(c.base, true);
  add(c.other, false);
  std::vector<CollectiveDifference> out;
  for (const Key& key : order) {
    const CollectiveDifference& d = by_key.at(key);
    if (d.base_count != d.other_count || d.base_bytes != d.other_bytes ||
        std::abs(d.base_seconds - d.other_seconds) > 1e-3 * std::max(d.base_seconds, d.other_seconds)) {
      out.push_back(d);
    }
  }
  return out;
}

std::string comparison_verdict(const ExplainComparison& c) {
  const double a = c.base.serial_seconds;
  const double b = c.other.serial_seconds;
  if (std::abs(a - b) <= 1e-3 * std::max(a, b)) return "the same serial step time (" + format_seconds(a) + ")";
  const bool other_wins = b < a;
  const ProgramExplanation& winner = other_wins ? c.other : c.base;
  const ProgramExplanation& loser = other_wins ? c.base : c.other;
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.2gx", loser.serial_seconds / std::max(winner.serial_seconds, 1e-30));
  std::string text = (other_wins ? c.other_label : c.base_label) + " wins: " + ratio + " faster (serial step " +
                     format_seconds(loser.serial_seconds) + " -> " + format_seconds(winner.serial_seconds) + ")";
  // The part of the step that changed most explains the difference.
  const std::vector<std::pair<std::string, double>> parts = {
      {"compute", loser.compute_seconds - winner.compute_seconds},
      {"memory traffic", loser.memory_seconds - winner.memory_seconds},
      {"communication", loser.communication_seconds - winner.communication_seconds}};
  const auto main = std::max_element(
      parts.begin(), parts.end(), [](const auto& x, const auto& y) { return std::abs(x.second) < std::abs(y.second); });
  text += ", mainly " + main->first + " (" + format_seconds(std::abs(main->second)) +
          (main->second >= 0 ? " less" : " more") + ")";
  if (main->first == "communication") {
    std::vector<std::string> changes;
    for (const CollectiveDifference& d : collective_differences(c)) {
      const int fewer = other_wins ? d.base_count - d.other_count : d.other_count - d.base_count;
      if (fewer > 0) changes.push_back(std::to_string(fewer) + " " + difference_name(d) + " fewer");
      if (fewer < 0) changes.push_back(std::to_string(-fewer) + " " + difference_name(d) + " more");
      if (changes.size() == 2) break;
    }
    if (!changes.empty()) text += ": " + join(changes, "; ");
  } else if (winner.hardware.name != loser.hardware.name) {
    text += " on " + winner.hardware.name + "'s figures";
  }
  return text;
}

std::string render_comparisons(const std::vector<ExplainComparison>& comparisons, ExplainFormat format) {
  std::ostringstream out;
  if (format == ExplainFormat::kCsv) out << "program,quantity,base,other,delta\n";
  if (format == ExplainFormat::kText) out << "# shardscope explain --compare: estimates, not JAX output\n";
  if (format == ExplainFormat::kMarkdown)
    out << "# shardscope explain: compared\n\n*Estimates by shardscope, not JAX output.*\n\n";
  if (comparisons.empty() && format != ExplainFormat::kCsv) out << "no jit program ran or was lowered\n";
  for (const ExplainComparison& c : comparisons) {
    const std::vector<ComparedQuantity> quantities = compared_quantities(c);
    const std::vector<CollectiveDifference> differences = collective_differences(c);
    const std::string verdict = comparison_verdict(c);
    switch (format) {
      case ExplainFormat::kText:
        out << "program " << c.base.program << ": " << c.base_label << " vs " << c.other_label << "\n";
        out << "  " << pad("", 26) << pad(c.base_label, 28) << pad(c.other_label, 28) << "delta\n";
        for (const ComparedQuantity& q : quantities) {
          out << "  " << pad(q.quantity, 26) << pad(q.base, 28) << pad(q.other, 28) << q.delta << "\n";
        }
        if (!differences.empty()) out << "  collectives that differ:\n";
        for (const CollectiveDifference& d : differences) {
          out << "    " << difference_name(d) << ": " << d.base_count << " x, "
              << format_bytes(static_cast<double>(d.base_bytes)) << ", " << format_seconds(d.base_seconds) << " -> "
              << d.other_count << " x, " << format_bytes(static_cast<double>(d.other_bytes)) << ", "
              << format_seconds(d.other_seconds) << "\n";
        }
        out << "  " << verdict << "\n";
        break;
      case ExplainFormat::kMarkdown:
        out << "## program " << c.base.program << ": " << c.base_label << " vs " << c.other_label << "\n\n";
        out << "| | " << c.base_label << " | " << c.other_label << " | delta |\n|---|---:|---:|---:|\n";
        for (const ComparedQuantity& q : quantities) {
          out << "| " << q.quantity << " | " << q.base << " | " << q.other << " | " << q.delta << " |\n";
        }
        if (!differences.empty()) {
          out << "\n| collective | " << c.base_label << " | " << c.other_label << " |\n|---|---:|---:|\n";
          for (const CollectiveDifference& d : differences) {
            out << "| `" << difference_name(d) << "` | " << d.base_count << " x, "
                << format_bytes(static_cast<double>(d.base_bytes)) << " | " << d.other_count << " x, "
                << format_bytes(static_cast<double>(d.other_bytes)) << " |\n";
          }
        }
        out << "\n" << verdict << ".\n\n";
        break;
      case ExplainFormat::kCsv:
        for (const ComparedQuantity& q : quantities) {
          out << csv_field(c.base.program) << "," << csv_field(q.quantity) << "," << csv_field(q.base) << ","
              << csv_field(q.other) << "," << csv_field(q.delta) << "\n";
        }
        for (const CollectiveDifference& d : differences) {
          out << csv_field(c.base.program) << "," << csv_field("collective " + difference_name(d)) << ","
              << d.base_count << " x " << d.base_bytes << " B," << d.other_count << " x " << d.other_bytes << " B,"
              << (d.other_count - d.base_count) << "\n";
        }
        out << csv_field(c.base.program) << ",verdict,,," << csv_field(verdict) << "\n";
        break;
    }
  }
  return out.str();
}

}  // namespace shardscope
