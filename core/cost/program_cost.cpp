// Roofline per equation and alpha-beta per collective; totals per device assume no overlap.
#include "cost/program_cost.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "base/python_format.h"
#include "ir/primitive.h"

namespace shardscope {
namespace {

double compute_time(const EquationEstimate& e, const HardwareSpec& hw) {
  const double rate = e.primitive == "dot_general" ? hw.matmul_flops : hw.vector_flops;
  return e.cost.flops / rate + e.cost.transcendentals / hw.transcendentals_per_second;
}

std::string short_aval(const Aval& aval) {
  Aval plain = Aval::of(aval.shape, aval.dtype);
  return plain.str_short(true);
}

std::string format_count(double value) {
  char buffer[32];
  if (value >= 1e9) {
    std::snprintf(buffer, sizeof buffer, "%.3gG", value / 1e9);
  } else if (value >= 1e6) {
    std::snprintf(buffer, sizeof buffer, "%.3gM", value / 1e6);
  } else if (value >= 1e3) {
    std::snprintf(buffer, sizeof buffer, "%.3gk", value / 1e3);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.0f", value);
  }
  return buffer;
}

std::string axes_tuple(const std::vector<std::string>& axes) {
  std::vector<std::string> quoted;
  for (const std::string& axis : axes) quoted.push_back(python_string_repr(axis));
  return python_tuple(quoted);
}

std::string pad_right(std::string text, std::size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

}  // namespace

std::string format_seconds(double seconds) {
  char buffer[32];
  if (seconds >= 1) {
    std::snprintf(buffer, sizeof buffer, "%.3g s", seconds);
  } else if (seconds >= 1e-3) {
    std::snprintf(buffer, sizeof buffer, "%.3g ms", seconds * 1e3);
  } else if (seconds >= 1e-6) {
    std::snprintf(buffer, sizeof buffer, "%.3g us", seconds * 1e6);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.3g ns", seconds * 1e9);
  }
  return buffer;
}

namespace {

using DevicesById = std::unordered_map<int64_t, const Device*>;

DevicesById index_devices(const std::vector<Device>& devices) {
  DevicesById by_id;
  by_id.reserve(devices.size());
  for (const Device& device : devices) by_id.emplace(device.id, &device);
  return by_id;
}

// `by_id` indexes `devices`: built once per program, not per collective (a 2048-chip slice has 2048 entries).
CollectiveEstimate estimate_collective_on(const CollectiveRecord& record, const HardwareSpec& hardware,
                                          const std::vector<Device>& devices, const DevicesById& by_id) {
  CollectiveEstimate e;
  e.kind = record.kind;
  e.axes = record.axes;
  e.origin = record.origin;
  e.group_size = record.groups.empty() ? 1 : static_cast<int64_t>(record.groups.front().size());
  e.max_bytes_sent =
      record.bytes_sent.empty() ? 0 : *std::max_element(record.bytes_sent.begin(), record.bytes_sent.end());
  // Every group of an SPMD collective has the same shape on the mesh; the first one stands for all.
  std::vector<const Device*> group;
  if (!record.groups.empty() && !devices.empty()) {
    for (const int64_t id : record.groups.front()) {
      if (const auto it = by_id.find(id); it != by_id.end()) group.push_back(it->second);
    }
  }
  if (group.size() == static_cast<std::size_t>(e.group_size) && !group.empty()) {
    e.topology = collective_topology(group, devices, hardware);
  } else {
    // No devices given: a torus ring with its wraparound link, or a switched ring (GPUs, CPUs).
    e.topology.extents = {static_cast<int>(e.group_size)};
    e.topology.switched = !hardware.multi_axis_links;
    e.topology.link = e.topology.switched ? "an assumed switch" : "an assumed ICI ring";
  }
  const CollectiveTime time =
      collective_time(record.kind, e.group_size, static_cast<double>(e.max_bytes_sent), e.topology, hardware);
  e.algorithm = time.algorithm;
  e.latency_seconds = time.latency_seconds;
  e.bandwidth_seconds = time.bandwidth_seconds;
  e.seconds = time.seconds;
  return e;
}

// Whether every participant of `record` is in a group of more than one device (the usual SPMD case), so no set of
// communicating devices needs building.
bool every_participant_communicates(const CollectiveRecord& record) {
  std::size_t members = 0;
  for (const auto& group : record.groups) {
    if (group.size() <= 1) return false;
    members += group.size();
  }
  return members == record.device_ids.size();
}

}  // namespace

CollectiveEstimate estimate_collective(const CollectiveRecord& record, const HardwareSpec& hardware,
                                       const std::vector<Device>& devices) {
  return estimate_collective_on(record, hardware, devices, index_devices(devices));
}

namespace {

// All-reduces XLA's combiner runs as one take one collective's time: its latency once, then the members' bytes
// back to back. The group's first record carries the latency (and whatever the latency hides of the bandwidth);
// the others only their own bandwidth time. Each participating device's communication time drops accordingly.
void charge_combined_latency_once(const CommLog& log, ProgramCostReport& report) {
  std::map<int64_t, std::vector<std::size_t>> groups;
  for (std::size_t r = 0; r < log.records().size() && r < report.collectives.size(); ++r) {
    if (log.records()[r].combined >= 0) groups[log.records()[r].combined].push_back(r);
  }
  std::unordered_map<int64_t, std::size_t> row_of;
  for (std::size_t d = 0; d < report.devices.size(); ++d) row_of.emplace(report.devices[d].device_id, d);
  for (const auto& [id, members] : groups) {
    double latency = 0;
    double bandwidth = 0;
    for (const std::size_t r : members) {
      latency = std::max(latency, report.collectives[r].latency_seconds);
      bandwidth += report.collectives[r].bandwidth_seconds;
    }
    for (std::size_t m = 0; m < members.size(); ++m) {
      CollectiveEstimate& e = report.collectives[members[m]];
      const double before = e.seconds;
      if (m == 0) {
        e.latency_seconds = latency;
        e.seconds = std::max(latency, bandwidth) - (bandwidth - e.bandwidth_seconds);
      } else {
        e.latency_seconds = 0;
        e.seconds = e.bandwidth_seconds;
      }
      const CollectiveRecord& record = log.records()[members[m]];
      for (const int64_t device : record.device_ids) {
        const auto row = row_of.find(device);
        if (row != row_of.end()) report.devices[row->second].communication_seconds += e.seconds - before;
      }
    }
  }
}

}  // namespace

ProgramCostReport estimate_program_cost(const Jaxpr& jaxpr, const LocalAvalFn& local_aval,
                                        const std::vector<Device>& devices, const CommLog& log,
                                        const HardwareSpec& hardware) {
  ProgramCostReport report;
  report.hardware = hardware;
  double compute = 0;
  for (std::size_t i = 0; i < jaxpr.eqns.size(); ++i) {
    const Eqn& eqn = jaxpr.eqns[i];
    std::vector<Aval> operands;
    for (const Atom& input : eqn.inputs) operands.push_back(local_aval(input));
    std::vector<Aval> results;
    for (const Var& output : eqn.outputs) results.push_back(local_aval(Atom{output}));
    EquationEstimate e;
    e.index = i;
    e.primitive = eqn.primitive->name;
    e.local_result = results.empty() ? "()" : short_aval(results.front());
    e.cost = equation_cost(eqn, operands, results);
    e.compute_seconds = compute_time(e, hardware);
    e.memory_seconds = e.cost.bytes_accessed() / hardware.memory_bandwidth;
    e.seconds = std::max(e.compute_seconds, e.memory_seconds);
    compute += e.seconds;
    report.per_device.flops += e.cost.flops;
    report.per_device.transcendentals += e.cost.transcendentals;
    report.per_device.output_bytes += e.cost.output_bytes;
    if (report.per_device.operand_bytes.empty()) report.per_device.operand_bytes.push_back(0.0);
    report.per_device.operand_bytes[0] += e.cost.bytes_accessed() - e.cost.output_bytes;
    report.equations.push_back(std::move(e));
  }
  // Device ids to their rows, so pricing a collective is linear in the devices it involves (a 2048-chip slice
  // logs 2048 participants per collective).
  std::unordered_map<int64_t, std::size_t> row_of;
  for (const Device& device : devices) {
    row_of.emplace(device.id, report.devices.size());
    report.devices.push_back({device.id, compute, 0.0, 0});
  }
  const DevicesById by_id = index_devices(devices);
  // Collectives of the same kind and size over the same group take the same time: priced once (a 100-layer
  // program repeats a handful of them hundreds of times).
  std::map<std::tuple<CollectiveKind, int64_t, std::vector<int64_t>>, CollectiveEstimate> priced;
  for (std::size_t r = 0; r < log.records().size(); ++r) {
    const CollectiveRecord& record = log.records()[r];
    const int64_t max_sent =
        record.bytes_sent.empty() ? 0 : *std::max_element(record.bytes_sent.begin(), record.bytes_sent.end());
    auto key =
        std::make_tuple(record.kind, max_sent, record.groups.empty() ? std::vector<int64_t>{} : record.groups.front());
    auto it = priced.find(key);
    if (it == priced.end()) {
      it = priced.emplace(std::move(key), estimate_collective_on(record, hardware, devices, by_id)).first;
    }
    CollectiveEstimate e = it->second;
    e.index = r;
    e.axes = record.axes;
    e.origin = record.origin;
    std::unordered_set<int64_t> communicating;  // devices in a group of more than one
    const bool all_communicate = every_participant_communicates(record);
    if (!all_communicate) {
      for (const auto& group : record.groups) {
        if (group.size() > 1) communicating.insert(group.begin(), group.end());
      }
    }
    for (std::size_t p = 0; p < record.device_ids.size(); ++p) {
      const int64_t sent = p < record.bytes_sent.size() ? record.bytes_sent[p] : 0;
      const auto row = row_of.find(record.device_ids[p]);
      if (row == row_of.end()) continue;
      DeviceEstimate& d = report.devices[row->second];
      d.bytes_sent += sent;
      if (all_communicate || communicating.count(record.device_ids[p]) != 0) d.communication_seconds += e.seconds;
    }
    report.collectives.push_back(std::move(e));
  }
  charge_combined_latency_once(log, report);
  for (const DeviceEstimate& d : report.devices) {
    if (d.total_seconds() >= report.total_seconds) {
      report.total_seconds = d.total_seconds();
      report.compute_seconds = d.compute_seconds;
      report.communication_seconds = d.communication_seconds;
    }
  }
  if (report.devices.empty()) report.compute_seconds = report.total_seconds = compute;
  return report;
}

ProgramCostReport estimate_jit_cost(const Jaxpr& jaxpr, const JitRun& run, const HardwareSpec* hardware) {
  if (!run.mesh) {
    const HardwareSpec& spec = hardware != nullptr ? *hardware : hardware_for_kind("cpu");
    return estimate_program_cost(
        jaxpr, [](const Atom& a) { return atom_aval(a); }, {}, run.log, spec);
  }
  const Mesh& mesh = *run.mesh;
  const LocalAvalFn local = [&](const Atom& atom) {
    Aval aval = atom_aval(atom);
    const auto* var = std::get_if<Var>(&atom);
    if (var == nullptr) return aval;
    const auto it = run.layouts->find(var->id);
    if (it == run.layouts->end()) return aval;
    const Layout& layout = it->second.layout;
    for (std::size_t d = 0; d < layout.size() && d < aval.rank(); ++d) {
      int64_t ways = 1;
      for (const std::string& axis : layout[d]) ways *= mesh.axis_size(axis);
      aval.shape[d] = (aval.shape[d] + ways - 1) / ways;
    }
    return aval;
  };
  const HardwareSpec& spec = hardware != nullptr ? *hardware : hardware_for(mesh.devices().front());
  return estimate_program_cost(jaxpr, local, mesh.devices(), run.log, spec);
}

ProgramCostReport estimate_shard_map_cost(const Jaxpr& body, const Mesh& mesh, const CommLog& log,
                                          const HardwareSpec* hardware) {
  const HardwareSpec& spec = hardware != nullptr ? *hardware : hardware_for(mesh.devices().front());
  return estimate_program_cost(
      body, [](const Atom& a) { return atom_aval(a); }, mesh.devices(), log, spec);
}

std::string ProgramCostReport::to_text() const {
  std::ostringstream out;
  out << "# shardscope estimate (not JAX output): " << hardware.name << ", " << devices.size()
      << " device(s); roofline compute per device, alpha-beta collectives\n";
  out << pad_right("#", 4) << pad_right("primitive", 22) << pad_right("per-device result", 22) << pad_right("flops", 10)
      << pad_right("transc.", 10) << pad_right("bytes", 10) << pad_right("time", 12) << "bound\n";
  for (const EquationEstimate& e : equations) {
    out << pad_right(std::to_string(e.index), 4) << pad_right(e.primitive, 22) << pad_right(e.local_result, 22)
        << pad_right(format_count(e.cost.flops), 10) << pad_right(format_count(e.cost.transcendentals), 10)
        << pad_right(format_count(e.cost.bytes_accessed()), 10) << pad_right(format_seconds(e.seconds), 12)
        << (e.memory_bound() ? "memory" : "compute") << "\n";
  }
  if (!collectives.empty()) {
    out << "collectives:\n";
    for (const CollectiveEstimate& c : collectives) {
      out << pad_right(std::to_string(c.index), 4) << pad_right(collective_name(c.kind), 20)
          << pad_right("over " + axes_tuple(c.axes) + " n=" + std::to_string(c.group_size), 24)
          << pad_right(format_count(static_cast<double>(c.max_bytes_sent)) + "B/dev", 12)
          << pad_right(format_seconds(c.seconds), 12) << c.algorithm;
      if (!c.origin.empty()) out << " (" << c.origin << ")";
      out << "\n";
    }
  }
  out << "total per device: " << format_count(per_device.flops) << " flops, "
      << format_count(per_device.transcendentals) << " transcendentals, " << format_count(per_device.bytes_accessed())
      << "B accessed; compute " << format_seconds(compute_seconds) << " + communication "
      << format_seconds(communication_seconds) << " = " << format_seconds(total_seconds) << "\n";
  return out.str();
}

}  // namespace shardscope
