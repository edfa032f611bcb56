// jit(f).lower(*args) and .compile(), decided abstractly: shardings, the collectives the partitioner
// would insert, program text in shardscope's own StableHLO-like format, cost and memory analyses.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "exec/eval_shape.h"
#include "exec/jit.h"

namespace shardscope {

struct LoweringOptions {
  std::string name = "f";
  std::vector<std::optional<Sharding>> in_shardings;   // per argument; nullopt = unspecified
  std::vector<std::optional<Sharding>> out_shardings;  // per output; nullopt = unspecified
  std::vector<std::string> arg_names;                  // for error messages; default "args[i]"
};

// A collective the partitioned program runs, with its per-device operand and result types.
struct PlannedCollective {
  std::size_t equation = 0;  // the equation it serves (jaxpr.eqns.size() for argument/output moves)
  CollectiveKind kind = CollectiveKind::kAllGather;
  std::vector<std::string> axes;
  int64_t dimension = -1;         // gathered / split dimension
  int64_t concat_dimension = -1;  // all-to-all only
  Aval local_operand;
  Aval local_result;
  std::string origin;
  int64_t var_id = -1;    // the value it moves (an operand of `equation`, or its result for all-reduces)
  int64_t operand = -1;   // which operand of `equation` it moves (one value may be several operands, moved apart)
  int64_t combined = -1;  // all-reduces run as one combined all-reduce share this id (EquationPlan::combined)
};

// Every partitioning decision, made without data.
struct PartitionPlan {
  std::optional<Mesh> mesh;  // absent for single-device programs
  std::optional<Device> device;
  LayoutMap layouts;
  std::vector<Sharding> input_shardings;   // as Compiled.input_shardings reports them
  std::vector<Sharding> output_shardings;  // same readback as run_jit
  std::vector<PlannedCollective> collectives;

  [[nodiscard]] Aval local_aval(const Atom& atom) const;
  // The collectives as a communication log (bytes per device by the same ring accounting the engine logs).
  [[nodiscard]] CommLog comm_log() const;
};

// JAX's errors for wrong argument counts; ValueError for shardings on other devices than the mesh.
[[nodiscard]] PartitionPlan plan_partitioning(const Jaxpr& jaxpr, const std::vector<ShapeDtypeStruct>& args,
                                              const LoweringOptions& options, const JaxProfile& profile);

// HloSharding's text for a layout on a mesh: "{replicated}", "{devices=[2,1]0,1}",
// "{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}". Device numbers are positions in the mesh's
// device list (the executable's device assignment), not device ids.
[[nodiscard]] std::string hlo_sharding_text(const Mesh& mesh, const Layout& layout);

// compiled.memory_analysis(): per-device sizes, in the order jaxlib's CompiledMemoryStats prints them.
struct MemoryAnalysis {
  int64_t generated_code_size_in_bytes = 0;
  int64_t argument_size_in_bytes = 0;
  int64_t output_size_in_bytes = 0;
  int64_t alias_size_in_bytes = 0;
  int64_t temp_size_in_bytes = 0;  // peak bytes of values crossing fusions (exec/hlo_program's estimate)
  int64_t host_generated_code_size_in_bytes = 0;
  int64_t host_argument_size_in_bytes = 0;
  int64_t host_output_size_in_bytes = 0;
  int64_t host_alias_size_in_bytes = 0;
  int64_t host_temp_size_in_bytes = 0;
};

class Compiled {
 public:
  Compiled(JaxprPtr jaxpr, std::vector<ShapeDtypeStruct> args, LoweringOptions options, PartitionPlan plan,
           JaxProfile profile);

  [[nodiscard]] const std::vector<Sharding>& input_shardings() const { return plan_.input_shardings; }
  [[nodiscard]] const std::vector<Sharding>& output_shardings() const { return plan_.output_shardings; }
  [[nodiscard]] MemoryAnalysis memory_analysis() const;
  // shardscope's per-device program text (marked as such): local shapes and the inserted collectives
  // under their HLO names ("all-gather", "all-reduce", "collective-permute", ...).
  [[nodiscard]] std::string as_text() const;
  // TypeError with JAX's texts when the arguments' count, shapes or dtypes differ from the compiled ones.
  void check_call_args(const std::vector<Aval>& args) const;
  // compiled(*args): checks the arguments, then runs the program.
  [[nodiscard]] JitRun call(const std::vector<Array>& args) const;
  [[nodiscard]] const PartitionPlan& plan() const { return plan_; }
  // The program the plan partitions (nested calls inlined).
  [[nodiscard]] const Jaxpr& program() const { return *jaxpr_; }

 private:
  JaxprPtr jaxpr_;
  std::vector<ShapeDtypeStruct> args_;
  LoweringOptions options_;
  PartitionPlan plan_;
  JaxProfile profile_;
};

class Lowered {
 public:
  // jit(f).lower(*args): the argument count must match the program's (TypeError otherwise).
  Lowered(JaxprPtr jaxpr, std::vector<ShapeDtypeStruct> args, LoweringOptions options, const JaxProfile& profile);

  // "# shardscope lowering" header, then a StableHLO-like module whose values carry
  // mhlo.sharding = "{...}" annotations in XLA's HloSharding text.
  [[nodiscard]] std::string as_text() const;
  [[nodiscard]] Compiled compile() const;
  [[nodiscard]] const std::vector<ShapeDtypeStruct>& args_info() const { return args_; }
  [[nodiscard]] std::vector<ShapeDtypeStruct> out_info() const;
  [[nodiscard]] const PartitionPlan& plan() const { return plan_; }
  // The program as traced (nested calls not yet inlined).
  [[nodiscard]] const Jaxpr& program() const { return *jaxpr_; }
  [[nodiscard]] const JaxprPtr& program_ptr() const { return jaxpr_; }
  [[nodiscard]] const LoweringOptions& options() const { return options_; }

 private:
  JaxprPtr jaxpr_;
  std::vector<ShapeDtypeStruct> args_;
  LoweringOptions options_;
  PartitionPlan plan_;
  JaxProfile profile_;
};

// Program texts (lowering_text.cpp).
[[nodiscard]] std::string lowered_text(const Jaxpr& jaxpr, const PartitionPlan& plan, const std::string& name,
                                       const JaxProfile& profile);
[[nodiscard]] std::string compiled_text(const Jaxpr& jaxpr, const PartitionPlan& plan, const std::string& name,
                                        const JaxProfile& profile);

}  // namespace shardscope
