// Cell-by-cell comparison of two inspected runs: printed text, shardings, collective sets, values.
#include "io/snapshot_diff.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <set>
#include <sstream>

namespace shardscope {

namespace {

using nlohmann::json;

std::string last_line(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  const std::size_t newline = text.rfind('\n');
  return newline == std::string::npos ? text : text.substr(newline + 1);
}

std::string string_field(const json& record, const char* key) {
  const auto it = record.find(key);
  return it != record.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string shown(const json& value) { return value.is_null() ? "(none)" : value.dump(); }

// The first differing line of two printed texts, as "line N: TEXT" on each side.
void compare_printed(int cell, const json& left, const json& right, std::vector<CellDifference>& out) {
  const std::string a = printed_text(left);
  const std::string b = printed_text(right);
  if (a == b) return;
  const std::vector<std::string> la = lines_of(a);
  const std::vector<std::string> lb = lines_of(b);
  std::size_t i = 0;
  while (i < la.size() && i < lb.size() && la[i] == lb[i]) ++i;
  const auto line = [i](const std::vector<std::string>& lines) {
    return "line " + std::to_string(i + 1) + ": " + (i < lines.size() ? "'" + lines[i] + "'" : "(end of output)");
  };
  out.push_back({cell, CellDifference::Kind::kOutput, "", line(la), line(lb)});
}

// A sharding: the array's type and, per device, its block; the spec and mesh name it.
void compare_sharding(int cell, const std::string& name, const json& a, const json& b,
                      std::vector<CellDifference>& out) {
  for (const char* key : {"type", "spec", "mesh", "blocks"}) {
    const json none;
    const json& va = a.contains(key) ? a.at(key) : none;
    const json& vb = b.contains(key) ? b.at(key) : none;
    if (va != vb) {
      out.push_back({cell, CellDifference::Kind::kSharding, name, std::string(key) + " " + shown(va),
                     std::string(key) + " " + shown(vb)});
      return;
    }
  }
}

bool close(const json& a, const json& b, const ValueTolerance& tolerance) {
  if (a.is_number() && b.is_number()) {
    const double x = a.get<double>();
    const double y = b.get<double>();
    return std::fabs(x - y) <= tolerance.atol + tolerance.rtol * std::fabs(y);
  }
  return a == b;  // "nan", "inf", "-inf", booleans
}

void compare_values(int cell, const std::string& name, const json& a, const json& b, const ValueTolerance& tolerance,
                    std::vector<CellDifference>& out) {
  if (a.value("shape", json()) != b.value("shape", json()) || a.value("dtype", "") != b.value("dtype", "")) {
    out.push_back({cell, CellDifference::Kind::kValues, name, a.value("dtype", "") + shown(a.value("shape", json())),
                   b.value("dtype", "") + shown(b.value("shape", json()))});
    return;
  }
  if (!a.contains("values") || !b.contains("values")) return;  // too large, or not numbers on one side
  const json& va = a.at("values");
  const json& vb = b.at("values");
  for (std::size_t i = 0; i < va.size() && i < vb.size(); ++i) {
    if (!close(va[i], vb[i], tolerance)) {
      std::ostringstream where;
      where << "element " << i << " (flat) ";
      out.push_back(
          {cell, CellDifference::Kind::kValues, name, where.str() + va[i].dump(), where.str() + vb[i].dump()});
      return;
    }
  }
}

std::string kinds_text(const json& program) {
  std::string text = "{";
  if (program.contains("collectives")) {
    for (const auto& [kind, count] : program.at("collectives").items()) {
      (void)count;
      text += (text.size() > 1 ? ", " : "") + kind;
    }
  }
  return text + "}";
}

void compare_programs(int cell, const json& left, const json& right, std::vector<CellDifference>& out) {
  const json empty = json::array();
  const json& pa = left.contains("programs") ? left.at("programs") : empty;
  const json& pb = right.contains("programs") ? right.at("programs") : empty;
  for (std::size_t i = 0; i < std::max(pa.size(), pb.size()); ++i) {
    const std::string a = i < pa.size() ? kinds_text(pa[i]) : "(not compiled)";
    const std::string b = i < pb.size() ? kinds_text(pb[i]) : "(not compiled)";
    if (a != b) {
      const json& named = i < pa.size() ? pa[i] : pb[i];
      out.push_back({cell, CellDifference::Kind::kCollectives, named.value("name", "jit"), a, b});
    }
  }
}

const char* kind_name(CellDifference::Kind kind) {
  switch (kind) {
    case CellDifference::Kind::kOutput: return "printed output differs";
    case CellDifference::Kind::kSharding: return "sharding differs";
    case CellDifference::Kind::kCollectives: return "collectives differ";
    case CellDifference::Kind::kValues: return "values differ";
  }
  return "";
}

}  // namespace

std::string printed_text(const json& cell) {
  std::string text = string_field(cell, "stdout");
  if (!text.empty() && text.back() != '\n') text += '\n';
  if (cell.contains("output") && cell.at("output").is_string()) text += cell.at("output").get<std::string>() + "\n";
  const std::string error = string_field(cell, "error");
  if (!error.empty()) text += last_line(error) + "\n";
  return text;
}

std::vector<CellDifference> diff_runs(const std::vector<json>& left, const std::vector<json>& right,
                                      const ValueTolerance& tolerance) {
  std::vector<CellDifference> out;
  const json missing = json::object();
  for (std::size_t i = 0; i < std::max(left.size(), right.size()); ++i) {
    const int cell = static_cast<int>(i) + 1;
    const json& a = i < left.size() ? left[i] : missing;
    const json& b = i < right.size() ? right[i] : missing;
    if (i >= left.size() || i >= right.size()) {
      out.push_back({cell, CellDifference::Kind::kOutput, "", i < left.size() ? "ran" : "(did not run)",
                     i < right.size() ? "ran" : "(did not run)"});
      continue;
    }
    compare_printed(cell, a, b, out);
    const json& va = a.contains("variables") ? a.at("variables") : missing;
    const json& vb = b.contains("variables") ? b.at("variables") : missing;
    std::set<std::string> names;
    for (const auto& [name, record] : va.items()) names.insert(name);
    for (const auto& [name, record] : vb.items()) names.insert(name);
    for (const std::string& name : names) {
      if (!va.contains(name) || !vb.contains(name)) {
        out.push_back({cell, CellDifference::Kind::kValues, name, va.contains(name) ? "an array" : "(no array)",
                       vb.contains(name) ? "an array" : "(no array)"});
        continue;
      }
      compare_sharding(cell, name, va.at(name), vb.at(name), out);
      compare_values(cell, name, va.at(name), vb.at(name), tolerance, out);
    }
    compare_programs(cell, a, b, out);
  }
  return out;
}

std::string diff_report(const std::vector<CellDifference>& differences, const std::string& left_name,
                        const std::string& right_name, std::size_t cells) {
  std::ostringstream out;
  const std::size_t width = std::max(left_name.size(), right_name.size());
  std::set<int> cells_differing;
  for (const CellDifference& d : differences) {
    cells_differing.insert(d.cell);
    out << "cell " << d.cell << ": " << (d.subject.empty() ? "" : d.subject + ": ") << kind_name(d.kind) << "\n";
    out << "  " << std::left << std::setw(static_cast<int>(width)) << left_name << "  " << d.left << "\n";
    out << "  " << std::left << std::setw(static_cast<int>(width)) << right_name << "  " << d.right << "\n";
  }
  if (differences.empty()) {
    out << cells << " cells compared: no differences\n";
  } else {
    out << cells << " cells compared: " << differences.size() << " difference" << (differences.size() == 1 ? "" : "s")
        << " in " << cells_differing.size() << " cell" << (cells_differing.size() == 1 ? "" : "s") << "\n";
  }
  return out.str();
}

}  // namespace shardscope
