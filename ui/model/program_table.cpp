// Program view tables: value names follow the lowered text, collectives read the engine's communication log.
#include "ui/model/program_table.h"

#include <algorithm>
#include <cstdio>

#include "base/python_format.h"

namespace shardscope::ui {
namespace {

std::string spec_text(const Layout& layout, std::size_t rank, const JaxProfile& profile) {
  std::vector<SpecEntry> entries;
  for (std::size_t d = 0; d < rank; ++d) {
    entries.push_back(d < layout.size() ? SpecEntry::of_axes(layout[d]) : SpecEntry::none());
  }
  return PartitionSpec(std::move(entries)).repr(profile);
}

// One device's shard type: each dimension divided (rounding up, as uneven shards pad) by its axes' sizes.
std::string local_type(const Aval& aval, const Layout& layout, const Mesh& mesh) {
  Aval local = Aval::of(aval.shape, aval.dtype);
  for (std::size_t d = 0; d < local.shape.size() && d < layout.size(); ++d) {
    int64_t parts = 1;
    for (const std::string& axis : layout[d]) parts *= mesh.axis_size(axis);
    local.shape[d] = (local.shape[d] + parts - 1) / parts;
  }
  return local.str_short(true);
}

ValueRow value_row(std::string name, std::string op, const Var& var, const LayoutMap& layouts, const Mesh& mesh,
                   const JaxProfile& profile) {
  const auto it = layouts.find(var.id);
  const Layout layout = it != layouts.end() ? it->second.layout : Layout{};
  return {std::move(name),
          std::move(op),
          Aval::of(var.aval.shape, var.aval.dtype).str_short(true),
          spec_text(layout, var.aval.rank(), profile),
          local_type(var.aval, layout, mesh),
          var.id};
}

std::string table_text(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) widths[c] = header[c].size();
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::string out;
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      text += cells[c];
      if (c + 1 < cells.size()) text += std::string(widths[c] - cells[c].size() + 2, ' ');
    }
    out += text + "\n";
  };
  line(header);
  for (const auto& row : rows) line(row);
  return out;
}

}  // namespace

std::string bytes_text(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
  return buffer;
}

std::string per_device_bytes_text(const std::vector<int64_t>& bytes) {
  if (bytes.empty()) return "-";
  const auto [low, high] = std::minmax_element(bytes.begin(), bytes.end());
  return *low == *high ? bytes_text(*low) : bytes_text(*low) + " - " + bytes_text(*high);
}

std::vector<ValueRow> program_value_rows(const Jaxpr& program, const LayoutMap& layouts, const Mesh& mesh,
                                         const JaxProfile& profile) {
  std::vector<ValueRow> rows;
  for (std::size_t i = 0; i < program.invars.size(); ++i) {
    rows.push_back(value_row("%arg" + std::to_string(i), "argument", program.invars[i], layouts, mesh, profile));
  }
  for (std::size_t e = 0; e < program.eqns.size(); ++e) {
    const std::vector<Var>& outputs = program.eqns[e].outputs;
    for (std::size_t r = 0; r < outputs.size(); ++r) {
      std::string name = "%" + std::to_string(e) + (outputs.size() > 1 ? "#" + std::to_string(r) : "");
      rows.push_back(value_row(std::move(name), program.eqns[e].primitive->name, outputs[r], layouts, mesh, profile));
    }
  }
  return rows;
}

ValueRow shard_map_value_row(std::string name, std::string op, const Aval& local, const PartitionSpec& spec,
                             const Mesh& mesh, const JaxProfile& profile) {
  Aval global = Aval::of(local.shape, local.dtype);
  for (std::size_t d = 0; d < global.shape.size() && d < spec.entries().size(); ++d) {
    for (const std::string& axis : spec.entries()[d].axes) global.shape[d] *= mesh.axis_size(axis);
  }
  return {std::move(name),
          std::move(op),
          global.str_short(true),
          spec.repr(profile),
          Aval::of(local.shape, local.dtype).str_short(true),
          -1};
}

std::vector<CollectiveRow> collective_rows(const std::vector<CollectiveRecord>& records) {
  std::vector<CollectiveRow> rows;
  for (const CollectiveRecord& record : records) {
    std::vector<std::string> axes;
    for (const std::string& axis : record.axes) axes.push_back(python_string_repr(axis));
    std::vector<std::string> groups;
    for (const auto& group : record.groups) {
      std::vector<std::string> ids;
      for (const int64_t id : group) ids.push_back(std::to_string(id));
      groups.push_back("{" + join(ids, ",") + "}");
    }
    rows.push_back({collective_name(record.kind), python_tuple(axes), join(groups, " "),
                    per_device_bytes_text(record.bytes_sent), per_device_bytes_text(record.bytes_received),
                    record.origin});
  }
  return rows;
}

std::string value_table_text(const std::vector<ValueRow>& rows) {
  std::vector<std::vector<std::string>> cells;
  for (const ValueRow& row : rows) cells.push_back({row.name, row.op, row.type, row.spec, row.local_type});
  return table_text({"value", "op", "type", "sharding", "per device"}, cells);
}

std::string collective_table_text(const std::vector<CollectiveRow>& rows) {
  std::vector<std::vector<std::string>> cells;
  for (const CollectiveRow& row : rows) {
    cells.push_back({row.kind, row.axes, row.groups, row.sent, row.received, row.origin});
  }
  return table_text({"collective", "axes", "device groups", "sent/device", "received/device", "origin"}, cells);
}

}  // namespace shardscope::ui
