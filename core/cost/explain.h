// `shardscope explain`: one compiled program as rows of equations and collectives, each with its sharding, bytes,
// FLOPs, estimated time, bound and reason, then totals and the memory fit; as text, Markdown or CSV.
// Everything here is shardscope's estimate (marked so in every format), not JAX output.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cost/hardware.h"
#include "exec/lowering.h"

namespace shardscope {

struct ExplainRow {
  std::string kind;      // "equation", or the collective's HLO name ("all-gather", "all-reduce", ...)
  std::string op;        // the equation's primitive; for a collective, the primitive it serves ("output" for results)
  std::string axes;      // mesh axes joined by '+': a collective's axes, or those an equation's result is sharded over
  std::string sharding;  // an equation's first result as a PartitionSpec; a collective's per-device operand -> result
  std::string local_type;  // the first result's per-device type, e.g. "f32[256,512]"
  // An equation's HBM bytes per device (operands read, results written); what each device sends for a collective,
  // counted as the scaling book counts a ring of n devices with shard s and buffer b: all-gather (n-1)s,
  // reduce-scatter (n-1)/n b, all-reduce 2(n-1)/n b, all-to-all (n-1)/n b, collective-permute s.
  int64_t bytes_per_device = 0;
  double flops = 0;    // per device
  double seconds = 0;  // estimated
  std::string bound;   // "compute" or "memory" for an equation; "bandwidth" or "latency" for a collective
  // An equation: where its result's sharding came from ("dot_general from operand 0", "argument 1", ...).
  // A collective: the op and the operand layout that required it.
  std::string reason;
  std::string groups;     // a collective's device groups, e.g. "2 groups of 4: {0,1,2,3} {4,5,6,7}"
  std::string algorithm;  // a collective's algorithm and formula on this topology
  std::size_t equation = 0;
  // A collective's dependencies, for schedules: the equation whose result it moves (-1: an argument) and the first
  // equation that reads what it delivers (-1: only the program's results).
  int64_t produced_by = -1;
  int64_t needed_by = -1;
};

struct ProgramExplanation {
  std::string program;  // the jitted function's name
  HardwareSpec hardware;
  int64_t device_count = 1;
  int64_t runs = 0;  // times the script ran it (0: only lowered)
  std::vector<ExplainRow> rows;
  double compute_seconds = 0;        // equations bound by arithmetic
  double memory_seconds = 0;         // equations bound by HBM bandwidth
  double communication_seconds = 0;  // collectives, one after another
  double serial_seconds = 0;         // everything one after another: an upper estimate of the step
  double overlapped_seconds = 0;     // communication hidden behind the equations: a lower bound
  std::string bound;                 // the largest of "compute", "memory" and "communication"
  int64_t peak_memory_bytes = 0;     // per device: arguments, results and temporaries (memory_analysis)
  // "fits", "does not fit", or "unknown" where the hardware has no memory of its own.
  [[nodiscard]] std::string memory_fit() const;
};

// Explains `compiled` on its mesh's hardware, or on `hardware` when given.
[[nodiscard]] ProgramExplanation explain_compiled(const Compiled& compiled, const std::string& name,
                                                  const HardwareSpec* hardware = nullptr);

enum class ExplainFormat { kText, kMarkdown, kCsv };
// "text", "md" (or "markdown") and "csv"; ValueError naming the text otherwise.
[[nodiscard]] ExplainFormat parse_explain_format(const std::string& text);

// All programs in one document. The CSV has one header line, then one row per equation and per collective:
// program,row,kind,op,axes,bytes_per_device,flops,est_time_s,bound,reason,sharding,local_type,groups,algorithm.
[[nodiscard]] std::string render_explanations(const std::vector<ProgramExplanation>& programs, ExplainFormat format);

// "12.0 MB", "3.50 GB": bytes for people (decimal units, as the hardware figures are given).
[[nodiscard]] std::string format_bytes(double bytes);

}  // namespace shardscope
