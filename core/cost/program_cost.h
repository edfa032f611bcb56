// shardscope's cost estimate of a partitioned program: per-device roofline compute time per equation and
// alpha-beta time per logged collective, on a device kind's public figures. An estimate, not JAX output.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cost/collective_time.h"
#include "cost/cost_rules.h"
#include "cost/hardware.h"
#include "exec/jit.h"
#include "spmd/comm_log.h"

namespace shardscope {

struct EquationEstimate {
  std::size_t index = 0;  // position in the program
  std::string primitive;
  std::string local_result;    // the first result's per-device type, e.g. "f32[4,8]"
  OpCost cost;                 // on one device
  double compute_seconds = 0;  // arithmetic at peak rates
  double memory_seconds = 0;   // bytes at memory bandwidth
  double seconds = 0;          // roofline: the larger of the two
  [[nodiscard]] bool memory_bound() const { return memory_seconds > compute_seconds; }
};

struct CollectiveEstimate {
  std::size_t index = 0;  // position in the communication log
  CollectiveKind kind = CollectiveKind::kAllReduce;
  std::vector<std::string> axes;
  int64_t group_size = 0;
  int64_t max_bytes_sent = 0;   // per device, as logged
  std::string algorithm;        // e.g. "bidirectional ring over ICI (1 torus axis): V / (W_bidi * axes)"
  CollectiveTopology topology;  // where its first group runs
  double latency_seconds = 0;   // alpha * steps
  double bandwidth_seconds = 0;
  double seconds = 0;  // slowest participant
  std::string origin;
};

struct DeviceEstimate {
  int64_t device_id = 0;
  double compute_seconds = 0;
  double communication_seconds = 0;
  int64_t bytes_sent = 0;
  [[nodiscard]] double total_seconds() const { return compute_seconds + communication_seconds; }
};

struct ProgramCostReport {
  HardwareSpec hardware;
  std::vector<EquationEstimate> equations;
  std::vector<CollectiveEstimate> collectives;
  std::vector<DeviceEstimate> devices;  // mesh order
  OpCost per_device;                    // summed over equations, one device
  double compute_seconds = 0;           // slowest device, no overlap of compute and communication
  double communication_seconds = 0;
  double total_seconds = 0;

  // A text table headed "# shardscope estimate (not JAX output)".
  [[nodiscard]] std::string to_text() const;
};

// The time of one collective on the topology its groups occupy among `devices` (the mesh's); without devices, on
// one ring with its wraparound link.
[[nodiscard]] CollectiveEstimate estimate_collective(const CollectiveRecord& record, const HardwareSpec& hardware,
                                                     const std::vector<Device>& devices = {});

using LocalAvalFn = std::function<Aval(const Atom&)>;

// The general estimator: `local_aval` gives each value's per-device type.
[[nodiscard]] ProgramCostReport estimate_program_cost(const Jaxpr& jaxpr, const LocalAvalFn& local_aval,
                                                      const std::vector<Device>& devices, const CommLog& log,
                                                      const HardwareSpec& hardware);
// A jit run: local types from its layouts; hardware from the mesh's device kind unless given.
[[nodiscard]] ProgramCostReport estimate_jit_cost(const Jaxpr& jaxpr, const JitRun& run,
                                                  const HardwareSpec* hardware = nullptr);
// A shard_map run: the body's types are already per device.
[[nodiscard]] ProgramCostReport estimate_shard_map_cost(const Jaxpr& body, const Mesh& mesh, const CommLog& log,
                                                        const HardwareSpec* hardware = nullptr);

// "1.5 ms", "12.0 us", "3.2 s": seconds for people.
[[nodiscard]] std::string format_seconds(double seconds);

}  // namespace shardscope
