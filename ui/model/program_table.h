// The program view's tables as text: each value of the last program with its sharding, and its collectives.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compat/jax_version.h"
#include "ir/jaxpr.h"
#include "mesh/mesh.h"
#include "propagation/auto_propagation.h"
#include "sharding/partition_spec.h"
#include "spmd/comm_log.h"

namespace shardscope::ui {

// Bytes for people: "96 B", "1.5 KiB", "2.0 MiB", up to TiB.
[[nodiscard]] std::string bytes_text(int64_t bytes);
// One number when every device has the same count, else the range: "64 B", "0 B - 96 B"; "-" when empty.
[[nodiscard]] std::string per_device_bytes_text(const std::vector<int64_t>& bytes);

// A value of a partitioned program: named as the lowered text names it (%arg0, %3, %4#1).
struct ValueRow {
  std::string name;
  std::string op;          // the primitive computing it ("dot_general"), or "argument" / "result"
  std::string type;        // global type, "f32[8,16]"
  std::string spec;        // its sharding on the program's mesh, "P('x', None)"
  std::string local_type;  // one device's shard, "f32[4,16]"
  int64_t var_id = -1;     // the program's value (for the Why panel); -1 for a shard_map body's values
};

// Every argument and equation result of `program` with the layout the partitioner chose (replicated when it
// chose none). Nested programs' values are not listed: the partitioner lays out the outer program only.
[[nodiscard]] std::vector<ValueRow> program_value_rows(const Jaxpr& program, const LayoutMap& layouts, const Mesh& mesh,
                                                       const JaxProfile& profile);

// A shard_map argument or result: `local` is the body's per-device type, `spec` its in_spec or out_spec.
[[nodiscard]] ValueRow shard_map_value_row(std::string name, std::string op, const Aval& local,
                                           const PartitionSpec& spec, const Mesh& mesh, const JaxProfile& profile);

struct CollectiveRow {
  std::string kind;      // HLO name: "all-reduce"
  std::string axes;      // the mesh axes as a Python tuple: "('y',)"
  std::string groups;    // participating device ids by group: "{0,1,2,3} {4,5,6,7}"
  std::string sent;      // bytes each device sends
  std::string received;  // bytes each device receives
  std::string origin;    // what asked for it
};

[[nodiscard]] std::vector<CollectiveRow> collective_rows(const std::vector<CollectiveRecord>& records);

// Both tables as aligned plain text (copying, --stats and tests).
[[nodiscard]] std::string value_table_text(const std::vector<ValueRow>& rows);
[[nodiscard]] std::string collective_table_text(const std::vector<CollectiveRow>& rows);

}  // namespace shardscope::ui
