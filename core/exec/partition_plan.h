// How the partitioner runs each equation on a mesh, decided from layouts alone: one decision shared by execution
// (exec/jit.cpp) and lowering (exec/lowering.cpp), so the plan that lower() prints is the plan that runs.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "exec/halo_exchange.h"
#include "ir/jaxpr.h"
#include "mesh/mesh.h"
#include "propagation/auto_propagation.h"
#include "sharding/sharding.h"

namespace shardscope {

enum class EquationMode {
  kLayoutMove,  // a constraint, device_put, reshard or mesh_cast: the value moves to its result's layout
  kManual,      // shard_map: operands move to the in_specs, the body runs per device, results come out by out_specs
  kBlocked,     // values that depend on their global position: whole operands, each device computes its block
  kWhole,       // no kernel or nothing to shard by: operands gathered, computed once, cut to the result's layout
  kLocal,       // the kernel runs per device on local blocks; partial results are all-reduced
};

struct EquationPlan {
  EquationMode mode = EquationMode::kLocal;
  // The layout each operand must have when the kernel runs (the operand moves there first, for `reason`).
  std::vector<Layout> operands;
  // The layout each result has as the kernel (and the all-reduce) leaves it; it then moves to its propagated one.
  std::vector<Layout> produced;
  // Mesh axes the kernel's partial results are summed (or max/min-reduced) over.
  std::vector<std::string> reduced_axes;
  // The same axes, one list per reduced dimension: the partitioner all-reduces each dimension on its own (a sum
  // over a [data, model]-sharded matrix takes two all-reduces), in the order of the op's factors.
  std::vector<std::vector<std::string>> reductions;
  // Why operands move: the op that needs them so ("dot_general operand", "shard_map in_specs", ...).
  std::string reason;
  // Per operand: the dims a slice-like kernel needs whole while its result keeps them sharded. The operand
  // still reaches `operands` whole along them, but the partitioner sends only neighbours' elements
  // (collective-permute, or nothing when each device holds what it reads) rather than gathering.
  std::vector<std::vector<HaloExchange>> exchanges;
  // A gather whose operand stays sharded along the dims it indexes (XLA's strategy for a lookup into a sharded
  // table): each device looks up the indices its own block holds, zeros elsewhere, and `reductions` sums the
  // partial results across the group: one all-reduce of the result instead of an all-gather of the operand.
  bool partial_gather = false;
  // A scatter whose operand stays sharded along the dims each update writes one element of (XLA's trivially
  // sliced dims, what `x.at[i].set/add/...` makes): each device applies the updates that land in its own block
  // and drops the rest, as HLO's scatter drops out-of-bounds updates, so neither the operand nor the result moves.
  bool scatter_in_place = false;
  // Per entry of `reductions`: the id of the combined all-reduce XLA's combiner folds it into (the same for every
  // all-reduce of one group), or -1 when it runs alone (exec/all_reduce_combiner).
  std::vector<int64_t> combined;
  // argmax/argmin reduce their operand together with an s32 iota of its shape (a variadic reduce in HLO), and top_k
  // sorts it beside one (XLA's TopK decomposition), made with the operand's sharding: when the operand moves
  // (gathering the reduced dim), the iota takes the same moves.
  bool moves_index_iota = false;
};

// The reason text of the index iota's moves (EquationPlan::moves_index_iota): "argmax index iota (moves as operand 0)".
[[nodiscard]] std::string index_iota_reason(const Eqn& eqn);

// Why an operand exchanges halos: "slice operand 0: neighbours' elements along dim 0, which stays sharded over 'data'";
// for the collective that then makes a result's dropped dim whole: "slice result: blocks along dim 0 made whole over
// 'data'".
[[nodiscard]] std::string halo_exchange_reason(const EquationPlan& plan, const HaloExchange& exchange);

// Pins an argument's layout before propagation: `sharding` came from in_shardings or from the argument itself.
void pin_argument(LayoutMap& known, const Var& arg, const NamedSharding& sharding, std::size_t index,
                  bool from_in_shardings);

// Pins what else is fixed before propagation: each out_shardings entry, and on a mesh with Explicit axes every
// value whose type names its sharding.
void pin_outputs_and_types(LayoutMap& known, const Jaxpr& jaxpr,
                           const std::vector<std::optional<Sharding>>& out_shardings, const Mesh& mesh);

// A layout as a PartitionSpec's text: P('data', None), P(('x', 'y'),), P().
[[nodiscard]] std::string layout_text(const Layout& layout);

// Why operand `operand` moves from `from` to what the plan needs: the op, the operand and both layouts
// ("dot_general operand 1: P(None, 'model') -> P()"). The same text labels the collective in the run's
// communication log and in lower()'s plan.
[[nodiscard]] std::string operand_move_reason(const EquationPlan& plan, std::size_t operand, const Layout& from);

// The layout of a value in `layouts` (a literal or unknown value: unsharded, of its rank).
[[nodiscard]] Layout layout_in(const LayoutMap& layouts, const Atom& atom);

// The decision for one equation given every value's propagated layout on `mesh`.
[[nodiscard]] EquationPlan plan_equation(const Eqn& eqn, const LayoutMap& layouts, const Mesh& mesh);

// Rotations (concat of a value's last and first slices along one dim, jnp.roll's static lowering) whose result
// keeps the value's sharding: the concatenation sends each device its missing elements with one
// collective-permute and the slices move nothing, as XLA partitions the pattern.
// Returns the indices of the concatenations so planned.
[[nodiscard]] std::set<std::size_t> plan_rotations(const Jaxpr& jaxpr, const LayoutMap& layouts, const Mesh& mesh,
                                                   std::vector<EquationPlan>& plans);

// The decisions for every equation of `jaxpr`, in order.
[[nodiscard]] std::vector<EquationPlan> plan_equations(const Jaxpr& jaxpr, const LayoutMap& layouts, const Mesh& mesh);

}  // namespace shardscope
