// What the explorer window needs from a Python session: cells run asynchronously, snapshots to draw.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "array/array.h"
#include "compat/jax_version.h"
#include "cost/explain.h"
#include "device/device.h"
#include "mesh/mesh.h"
#include "sharding/sharding.h"
#include "spmd/comm_log.h"
#include "ui/model/program_table.h"

namespace shardscope::ui {

// A `visualize_array_sharding` call inside a cell: its text, kept for copying, and what it drew.
struct VisualOutput {
  std::string text;
  Shape shape;
  Sharding sharding;
};

// One piece of a cell's output, in the order it was printed.
struct OutputSegment {
  enum class Kind { kStdout, kStderr, kValue, kError, kVisual };
  Kind kind = Kind::kStdout;
  std::string text;
  std::optional<VisualOutput> visual;  // kVisual only
};

struct CellRecord {
  enum class Status { kOk, kError, kInterrupted, kExit };
  std::uint64_t id = 0;
  std::string source;
  Status status = Status::kOk;
  std::vector<OutputSegment> output;
  double seconds = 0.0;
};

// An array bound to a name in the user's namespace.
struct VariableInfo {
  std::string name;
  ShapedArray aval;
  std::optional<Sharding> sharding;  // absent for values without one (tracers)
  std::string type_text;             // jax.typeof(x) as the session's JAX version prints it
  std::string sharding_text;         // repr(x.sharding)
  std::vector<int64_t> bytes_per_device;
  // Only for an array inside a pytree bound in the namespace (a Flax model's parameters, a TrainState), whose
  // `name` is then the Python expression reaching it:
  std::vector<std::string> tree_path;  // key-path entries as JAX prints them: "['params']", ".opt_state", "[0]"
  std::string annotation;              // the metadata box around it: "Partitioned(names=('data', 'model'))"
};

// A pytree bound to a name, with the arrays it holds in flattening order.
struct TreeInfo {
  std::string name;
  std::string type_name;  // "TrainState", "dict", "FrozenDict"
  std::vector<VariableInfo> leaves;
  std::size_t omitted_leaves = 0;  // arrays past the snapshot's per-tree limit
};

struct MeshInfo {
  std::string name;  // the Python name bound to it; empty when only reachable through an array
  Mesh mesh;
};

// The last program jit or shard_map ran: its text, each value's sharding and the collectives the engine executed.
struct ProgramInfo {
  std::string name;
  std::string kind = "jit";      // "jit" or "shard_map"
  std::string text;              // jaxpr text (a shard_map body is headed by its mesh and specs), result shardings
  std::string lowered;           // jit on a mesh: jit(f).lower(...).as_text() form, mhlo.sharding on every value
  std::vector<ValueRow> values;  // jit: every value with its layout; shard_map: arguments and results
  std::vector<CollectiveRecord> collectives;
  // A program from an attached kernel: its compiled text's collectives counted and its memory_analysis(), in
  // place of the engine's per-collective records, which only the embedded session has.
  std::string compiled_summary;
  std::string explain;  // jit on a mesh: shardscope's estimate, as `shardscope explain` prints it (beyond JAX)
  std::optional<ProgramExplanation> explanation;  // the same estimate's rows, for the Timeline view
  // The compiled program behind the estimate: the Why panel walks its partition plan on demand.
  std::shared_ptr<const Compiled> compiled;
};

// Names the generated Python lines may use: what the namespace binds them to.
struct NamespaceNames {
  std::string named_sharding = "jax.sharding.NamedSharding";
  std::string partition_spec = "jax.sharding.PartitionSpec";
  std::string device_put = "jax.device_put";
};

struct SessionSnapshot {
  std::uint64_t revision = 0;
  JaxProfile profile;
  std::string device_preset;
  std::vector<Device> devices;
  std::vector<VariableInfo> variables;
  std::vector<TreeInfo> trees;
  std::vector<MeshInfo> meshes;
  std::optional<ProgramInfo> program;
  NamespaceNames names;
  // Attached to a Jupyter kernel: what it runs ("Jupyter kernel, JAX 0.11.2"); empty for the embedded session,
  // whose devices a preset chooses.
  std::string kernel;
};

// Implemented by the app over the embedded interpreter. Every method is called from the UI thread;
// none blocks for longer than a lock, except completions, which may wait for an idle interpreter.
class Session {
 public:
  virtual ~Session() = default;
  // Queues a cell; it runs after the ones queued before it. Returns its id.
  virtual std::uint64_t submit(const std::string& source) = 0;
  // The id of the cell running now, if any.
  [[nodiscard]] virtual std::optional<std::uint64_t> running() const = 0;
  [[nodiscard]] virtual std::size_t queued() const = 0;
  // Raises KeyboardInterrupt in the running cell and drops the queued ones.
  virtual void interrupt() = 0;
  // Cells finished since the last call, in order.
  [[nodiscard]] virtual std::vector<CellRecord> take_finished() = 0;
  // The latest snapshot (taken after every cell); never null.
  [[nodiscard]] virtual std::shared_ptr<const SessionSnapshot> snapshot() const = 0;
  // Completions of the identifier or attribute chain ending `text`; empty while a cell runs.
  [[nodiscard]] virtual std::vector<std::string> completions(const std::string& text) = 0;
};

}  // namespace shardscope::ui
