// Builds the explain rows from the partition plan and the cost report, and renders them as text, Markdown or CSV.
#include "cost/explain.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "base/error.h"
#include "base/python_format.h"
#include "cost/compiled_cost.h"
#include "cost/program_cost.h"
#include "exec/partition_plan.h"
#include "ir/primitive.h"

namespace shardscope {
namespace {

// The mesh axes a layout shards over, in order of first use.
std::vector<std::string> layout_axes(const Layout& layout) {
  std::vector<std::string> axes;
  for (const auto& dim : layout) {
    for (const std::string& axis : dim) {
      if (std::find(axes.begin(), axes.end(), axis) == axes.end()) axes.push_back(axis);
    }
  }
  return axes;
}

std::string quoted_axes(const std::vector<std::string>& axes) {
  std::vector<std::string> quoted;
  for (const std::string& axis : axes) quoted.push_back("'" + axis + "'");
  return join(quoted, ", ");
}

// Why a collective runs, from the plan: the op and the operand layout that required it, and where that layout
// came from (propagation's origin), e.g. "sharding_constraint needs operand 0 as P(None, 'y'); it is
// P('x', None), from dot_general from operand 0".
std::string why(const PlannedCollective& c, const Jaxpr& program, const PartitionPlan& plan,
                const std::vector<EquationPlan>& decided) {
  if (c.equation >= program.eqns.size() || c.equation >= decided.size()) return c.origin;
  const Eqn& eqn = program.eqns[c.equation];
  const std::string& op = eqn.primitive->name;
  if (c.origin.find(" in shard_map body") != std::string::npos || c.origin.find(" body") != std::string::npos) {
    return c.origin;
  }
  const auto origin_of = [&](int64_t id) -> std::string {
    const auto it = plan.layouts.find(id);
    return it == plan.layouts.end() || it->second.origin.empty() ? "" : ", from " + it->second.origin;
  };
  if (c.operand >= 0 && static_cast<std::size_t>(c.operand) < eqn.inputs.size()) {
    const auto operand = static_cast<std::size_t>(c.operand);
    const Layout from = layout_in(plan.layouts, eqn.inputs[operand]);
    const Layout& to = decided[c.equation].operands.at(operand);
    return op + " needs operand " + std::to_string(operand) + " as " + layout_text(to) + "; it is " +
           layout_text(from) + origin_of(c.var_id);
  }
  if (c.kind == CollectiveKind::kAllReduce && c.origin.ends_with("partial results")) {
    if (op == "gather") {
      return "gather indexes a dim sharded over " + quoted_axes(c.axes) +
             ": each device looks up what its block holds (zeros elsewhere), summed across the group";
    }
    return op + (op == "dot_general" ? " contracts" : " reduces") + " a dim sharded over " + quoted_axes(c.axes) +
           ": each device holds a partial result, summed across the group";
  }
  for (std::size_t r = 0; r < eqn.outputs.size(); ++r) {
    if (eqn.outputs[r].id != c.var_id) continue;
    return op + " makes its result as " + layout_text(decided[c.equation].produced.at(r)) + "; it moves to " +
           layout_text(layout_in(plan.layouts, Atom{eqn.outputs[r]})) + origin_of(c.var_id);
  }
  return c.origin;
}

std::string groups_text(const CollectiveRecord& record) {
  if (record.groups.empty()) return "";
  constexpr std::size_t kShown = 2;
  std::vector<std::string> shown;
  for (std::size_t g = 0; g < record.groups.size() && g < kShown; ++g) {
    std::vector<std::string> ids;
    for (const int64_t id : record.groups[g]) ids.push_back(std::to_string(id));
    shown.push_back("{" + join(ids, ",") + "}");
  }
  std::string text = std::to_string(record.groups.size()) + (record.groups.size() == 1 ? " group of " : " groups of ") +
                     std::to_string(record.groups.front().size()) + ": " + join(shown, " ");
  if (record.groups.size() > kShown) text += " ...";
  return text;
}

std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

std::string seconds_text(double seconds) { return seconds <= 0 ? "0" : format_seconds(seconds); }

std::string flops_text(double flops) {
  if (flops <= 0) return "0";
  char buffer[32];
  if (flops >= 1e12) {
    std::snprintf(buffer, sizeof buffer, "%.3gT", flops / 1e12);
  } else if (flops >= 1e9) {
    std::snprintf(buffer, sizeof buffer, "%.3gG", flops / 1e9);
  } else if (flops >= 1e6) {
    std::snprintf(buffer, sizeof buffer, "%.3gM", flops / 1e6);
  } else if (flops >= 1e3) {
    std::snprintf(buffer, sizeof buffer, "%.3gk", flops / 1e3);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.0f", flops);
  }
  return buffer;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string markdown_cell(const std::string& text) {
  std::string out;
  for (const char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out.empty() ? " " : out;
}

std::string pad(std::string text, std::size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

std::string header_line(const ProgramExplanation& p) {
  std::string line = "program " + p.program + ": " + std::to_string(p.device_count) + " x " + p.hardware.name;
  line += p.runs > 0 ? ", ran " + std::to_string(p.runs) + (p.runs == 1 ? " time" : " times") : ", lowered only";
  return line;
}

std::string totals_line(const ProgramExplanation& p) {
  return "totals per device: compute " + seconds_text(p.compute_seconds) + ", memory " +
         seconds_text(p.memory_seconds) + ", communication " + seconds_text(p.communication_seconds) + "; serial " +
         seconds_text(p.serial_seconds) + ", overlapped lower bound " + seconds_text(p.overlapped_seconds) + "; " +
         p.bound + "-bound";
}

std::string memory_line(const ProgramExplanation& p) {
  std::string line = "memory per device: peak " + format_bytes(static_cast<double>(p.peak_memory_bytes));
  if (p.hardware.memory_capacity > 0) {
    line += " of " + format_bytes(p.hardware.memory_capacity) + " HBM: " + p.memory_fit();
  } else {
    line += " (no HBM figure for " + p.hardware.name + ")";
  }
  return line;
}

void render_text(std::ostringstream& out, const ProgramExplanation& p) {
  out << header_line(p) << "\n";
  out << "  figures: " << p.hardware.source << "\n";
  out << "  " << pad("#", 4) << pad("kind", 20) << pad("op", 20) << pad("axes", 12) << pad("sharding", 30)
      << pad("per device", 18) << pad("bytes", 10) << pad("flops", 9) << pad("time", 11) << pad("bound", 11)
      << "reason\n";
  for (std::size_t r = 0; r < p.rows.size(); ++r) {
    const ExplainRow& row = p.rows[r];
    out << "  " << pad(std::to_string(r), 4) << pad(row.kind, 20) << pad(row.op, 20) << pad(row.axes, 12)
        << pad(row.sharding + " ", 30) << pad(row.local_type + " ", 18)
        << pad(format_bytes(static_cast<double>(row.bytes_per_device)), 10) << pad(flops_text(row.flops), 9)
        << pad(seconds_text(row.seconds), 11) << pad(row.bound, 11) << row.reason << "\n";
    if (!row.groups.empty()) out << "  " << pad("", 24) << row.groups << "; " << row.algorithm << "\n";
  }
  out << "  " << totals_line(p) << "\n";
  out << "  " << memory_line(p) << "\n";
}

void render_markdown(std::ostringstream& out, const ProgramExplanation& p) {
  out << "## " << markdown_cell(header_line(p)) << "\n\n";
  out << "Figures: " << p.hardware.source << ".\n\n";
  out << "| # | kind | op | axes | sharding | per device | bytes/device | flops | est. time | bound | reason |\n";
  out << "|---:|---|---|---|---|---|---:|---:|---:|---|---|\n";
  for (std::size_t r = 0; r < p.rows.size(); ++r) {
    const ExplainRow& row = p.rows[r];
    std::string reason = row.reason;
    if (!row.groups.empty()) reason += (reason.empty() ? "" : "; ") + row.groups + "; " + row.algorithm;
    out << "| " << r << " | " << row.kind << " | " << markdown_cell(row.op) << " | " << markdown_cell(row.axes) << " | "
        << "`" << row.sharding << "` | `" << row.local_type << "` | "
        << format_bytes(static_cast<double>(row.bytes_per_device)) << " | " << flops_text(row.flops) << " | "
        << seconds_text(row.seconds) << " | " << row.bound << " | " << markdown_cell(reason) << " |\n";
  }
  out << "\n" << totals_line(p) << ".\n\n" << memory_line(p) << ".\n\n";
}

}  // namespace

std::string format_bytes(double bytes) {
  char buffer[32];
  if (bytes >= 1e9) {
    std::snprintf(buffer, sizeof buffer, "%.3g GB", bytes / 1e9);
  } else if (bytes >= 1e6) {
    std::snprintf(buffer, sizeof buffer, "%.3g MB", bytes / 1e6);
  } else if (bytes >= 1e3) {
    std::snprintf(buffer, sizeof buffer, "%.3g kB", bytes / 1e3);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.0f B", bytes);
  }
  return buffer;
}

std::string ProgramExplanation::memory_fit() const {
  if (hardware.memory_capacity <= 0) return "unknown";
  return static_cast<double>(peak_memory_bytes) <= hardware.memory_capacity ? "fits" : "does not fit";
}

ProgramExplanation explain_compiled(const Compiled& compiled, const std::string& name, const HardwareSpec* hardware) {
  const PartitionPlan& plan = compiled.plan();
  const Jaxpr& program = compiled.program();
  const CommLog log = plan.comm_log();
  const ProgramCostReport report = compiled_cost_report(compiled, hardware, &log);

  ProgramExplanation out;
  out.program = name;
  out.hardware = report.hardware;
  out.device_count = plan.mesh ? static_cast<int64_t>(plan.mesh->devices().size()) : 1;

  const std::vector<EquationPlan> decided =
      plan.mesh ? plan_equations(program, plan.layouts, *plan.mesh) : std::vector<EquationPlan>{};
  // Which equation makes each value, and which equations read it: a collective waits for the first and holds up the
  // second.
  std::map<int64_t, int64_t> producer;
  std::map<int64_t, std::vector<int64_t>> readers;
  for (std::size_t e = 0; e < program.eqns.size(); ++e) {
    for (const Var& v : program.eqns[e].outputs) producer[v.id] = static_cast<int64_t>(e);
    for (const Atom& in : program.eqns[e].inputs) {
      if (const Var* v = std::get_if<Var>(&in)) readers[v->id].push_back(static_cast<int64_t>(e));
    }
  }
  std::map<int64_t, int> combined_sizes;  // all-reduces per combined all-reduce
  for (const PlannedCollective& c : plan.collectives) {
    if (c.combined >= 0) ++combined_sizes[c.combined];
  }
  std::vector<ExplainRow> collective_rows;
  for (std::size_t c = 0; c < plan.collectives.size() && c < report.collectives.size(); ++c) {
    const PlannedCollective& planned = plan.collectives[c];
    const CollectiveEstimate& estimate = report.collectives[c];
    ExplainRow row;
    row.kind = collective_name(planned.kind);
    row.op = planned.equation < program.eqns.size() ? program.eqns[planned.equation].primitive->name : "output";
    row.axes = join(planned.axes, "+");
    row.sharding = planned.local_operand.str_short(true) + " -> " + planned.local_result.str_short(true);
    row.local_type = planned.local_result.str_short(true);
    row.bytes_per_device = estimate.max_bytes_sent;
    row.seconds = estimate.seconds;
    row.bound = estimate.latency_seconds > estimate.bandwidth_seconds ? "latency" : "bandwidth";
    row.reason = why(planned, program, plan, decided);
    if (planned.combined >= 0) {
      const int others = combined_sizes[planned.combined] - 1;
      row.reason += "; combined with " + std::to_string(others) + " independent all-reduce" + (others == 1 ? "" : "s") +
                    " over the same devices into one (all-reduce #" + std::to_string(planned.combined) + ")";
    }
    row.groups = c < log.records().size() ? groups_text(log.records()[c]) : "";
    row.algorithm = estimate.algorithm;
    row.equation = planned.equation;
    if (const auto it = producer.find(planned.var_id); it != producer.end()) row.produced_by = it->second;
    if (row.produced_by != static_cast<int64_t>(planned.equation)) {
      if (planned.equation < program.eqns.size()) row.needed_by = static_cast<int64_t>(planned.equation);
    } else if (const auto it = readers.find(planned.var_id); it != readers.end()) {
      for (const int64_t reader : it->second) {
        if (reader > row.produced_by) {
          row.needed_by = reader;
          break;
        }
      }
    }
    out.communication_seconds += estimate.seconds;
    collective_rows.push_back(std::move(row));
  }

  // Each equation after the collectives that bring its operands into place, and before those that move what it
  // made (the all-reduce of its partial results, the move of its result to its propagated layout): the order the
  // partitioned program runs them in.
  auto flush_collectives = [&](std::size_t equation, bool of_its_result) {
    for (const ExplainRow& row : collective_rows) {
      const bool moves_result = row.produced_by == static_cast<int64_t>(equation);
      if (row.equation == equation && moves_result == of_its_result) out.rows.push_back(row);
    }
  };
  for (const EquationEstimate& e : report.equations) {
    flush_collectives(e.index, false);
    const Eqn& eqn = program.eqns[e.index];
    ExplainRow row;
    row.kind = "equation";
    row.op = e.primitive;
    row.local_type = e.local_result;
    row.bytes_per_device = static_cast<int64_t>(e.cost.bytes_accessed());
    row.flops = e.cost.flops;
    row.seconds = e.seconds;
    row.bound = e.memory_bound() ? "memory" : "compute";
    row.equation = e.index;
    if (!eqn.outputs.empty()) {
      const auto it = plan.layouts.find(eqn.outputs.front().id);
      if (it != plan.layouts.end()) {
        row.sharding = layout_text(it->second.layout);
        row.axes = join(layout_axes(it->second.layout), "+");
        row.reason = it->second.origin;
      }
    }
    (e.memory_bound() ? out.memory_seconds : out.compute_seconds) += e.seconds;
    out.rows.push_back(std::move(row));
    flush_collectives(e.index, true);
  }
  flush_collectives(program.eqns.size(), false);
  flush_collectives(program.eqns.size(), true);

  out.serial_seconds = out.compute_seconds + out.memory_seconds + out.communication_seconds;
  out.overlapped_seconds = std::max(out.compute_seconds + out.memory_seconds, out.communication_seconds);
  out.bound = "compute";
  if (out.memory_seconds > out.compute_seconds) out.bound = "memory";
  if (out.communication_seconds > std::max(out.compute_seconds, out.memory_seconds)) out.bound = "communication";
  const MemoryAnalysis memory = compiled.memory_analysis();
  out.peak_memory_bytes = memory.argument_size_in_bytes + memory.output_size_in_bytes + memory.temp_size_in_bytes -
                          memory.alias_size_in_bytes;
  return out;
}

ExplainFormat parse_explain_format(const std::string& text) {
  if (text == "text") return ExplainFormat::kText;
  if (text == "md" || text == "markdown") return ExplainFormat::kMarkdown;
  if (text == "csv") return ExplainFormat::kCsv;
  throw value_error("unknown explain format '" + text + "' (text, md or csv)");
}

std::string render_explanations(const std::vector<ProgramExplanation>& programs, ExplainFormat format) {
  std::ostringstream out;
  switch (format) {
    case ExplainFormat::kText:
      out << "# shardscope explain: estimates, not JAX output\n";
      if (programs.empty()) out << "no jit program ran or was lowered\n";
      for (const ProgramExplanation& p : programs) render_text(out, p);
      break;
    case ExplainFormat::kMarkdown:
      out << "# shardscope explain\n\n*Estimates by shardscope, not JAX output.*\n\n";
      if (programs.empty()) out << "No jit program ran or was lowered.\n";
      for (const ProgramExplanation& p : programs) render_markdown(out, p);
      break;
    case ExplainFormat::kCsv:
      out << "program,row,kind,op,axes,bytes_per_device,flops,est_time_s,bound,reason,sharding,local_type,groups,"
             "algorithm\n";
      for (const ProgramExplanation& p : programs) {
        for (std::size_t r = 0; r < p.rows.size(); ++r) {
          const ExplainRow& row = p.rows[r];
          out << csv_field(p.program) << "," << r << "," << row.kind << "," << csv_field(row.op) << ","
              << csv_field(row.axes) << "," << row.bytes_per_device << "," << number(row.flops) << ","
              << number(row.seconds) << "," << row.bound << "," << csv_field(row.reason) << ","
              << csv_field(row.sharding) << "," << csv_field(row.local_type) << "," << csv_field(row.groups) << ","
              << csv_field(row.algorithm) << "\n";
        }
      }
      break;
  }
  return out.str();
}

}  // namespace shardscope
