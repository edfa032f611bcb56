// A jaxpr as the HLO instructions XLA analyses, with XLA:CPU's loop fusion.
#include "exec/hlo_program.h"

#include <algorithm>
#include <functional>
#include <map>

#include "ir/inline_calls.h"
#include "ir/primitive.h"

namespace shardscope {
namespace {

bool is_reduction(const std::string& name) {
  return name == "reduce_sum" || name == "reduce_max" || name == "reduce_min" || name == "reduce_prod" ||
         name == "reduce_and" || name == "reduce_or" || name == "reduce_xor";
}

HloKind kind_of(const Eqn& eqn) {
  const std::string& name = eqn.primitive->name;
  if (eqn.primitive->elementwise || name == "convert_element_type") return HloKind::kElementwise;
  if (is_reduction(name)) return HloKind::kReduce;
  if (name == "dot_general") return HloKind::kDot;
  if (name == "broadcast_in_dim") return HloKind::kBroadcast;
  return HloKind::kOther;
}

// Whether broadcasting `from` to `to` stretches a size-1 dim (HLO's broadcast cannot: the dim is reshaped away).
bool stretches_unit_dim(const Shape& from, const Shape& to) {
  if (from.size() != to.size()) return false;
  for (std::size_t d = 0; d < from.size(); ++d) {
    if (from[d] == 1 && to[d] != 1) return true;
  }
  return false;
}

Shape without_unit_dims(const Shape& shape) {
  Shape out;
  for (const int64_t size : shape) {
    if (size != 1) out.push_back(size);
  }
  return out;
}

class Lowerer {
 public:
  using LocalFn = std::function<Aval(const Atom&)>;
  Lowerer(HloProgram& program, LocalFn local) : program_(program), local_(std::move(local)) {}

  // A collective moving an operand for one equation: steps of one operand's move chain, keyed by the operand
  // (or by the value when the plan does not say which operand).
  void collective(const PlannedCollective& c, std::map<int64_t, int64_t>& moved) {
    HloInstruction instr;
    instr.kind = HloKind::kCollective;
    instr.collective = &c;
    const int64_t key = move_key(c);
    const auto it = moved.find(key);
    instr.operands.push_back({it != moved.end() ? it->second : current(c.var_id), c.local_operand});
    instr.outputs.push_back({fresh(), c.local_result});
    moved[key] = instr.outputs.back().id;
    program_.instructions.push_back(std::move(instr));
  }

  // Operand positions as non-negative keys, values without one below them.
  static int64_t move_key(const PlannedCollective& c) { return c.operand >= 0 ? c.operand : -2 - c.var_id; }

  void equation(const Eqn& eqn, const std::map<int64_t, int64_t>& moved) {
    HloInstruction instr;
    instr.kind = kind_of(eqn);
    instr.eqn = &eqn;
    for (const Var& out : eqn.outputs) instr.outputs.push_back({out.id, local_(Atom{out})});
    for (std::size_t i = 0; i < eqn.inputs.size(); ++i) {
      const Atom& input = eqn.inputs[i];
      HloValue value{-1, local_(input)};
      if (const auto* var = std::get_if<Var>(&input)) {
        auto it = moved.find(static_cast<int64_t>(i));
        if (it == moved.end()) it = moved.find(-2 - var->id);
        value.id = it != moved.end() ? it->second : current(var->id);
        if (it != moved.end()) value.aval = program_.instructions[producer_of(it->second)].outputs.back().aval;
      }
      instr.operands.push_back(std::move(value));
    }
    const Shape result = instr.outputs.empty() ? Shape{} : instr.outputs.front().aval.shape;
    if (instr.kind == HloKind::kElementwise) {
      // JAX's lowering broadcasts scalar (and size-1) operands to the result's shape before the op.
      for (HloValue& operand : instr.operands) {
        if (operand.aval.shape != result) operand = broadcast(operand, result);
      }
    } else if (instr.kind == HloKind::kBroadcast && !instr.operands.empty() &&
               stretches_unit_dim(instr.operands[0].aval.shape, result)) {
      instr.operands[0] = reshaped(instr.operands[0]);
    } else if (instr.kind == HloKind::kReduce) {
      instr.operands.push_back({-1, Aval::of({}, instr.operands.at(0).aval.dtype)});  // the init value
    }
    program_.instructions.push_back(std::move(instr));
  }

  // The id holding a variable's final value (an all-reduce may have replaced it).
  int64_t final_id(int64_t id) const { return current(id); }

  void reduced(const PlannedCollective& c) {
    std::map<int64_t, int64_t> unused;
    collective(c, unused);
    current_[c.var_id] = program_.instructions.back().outputs.back().id;
  }

 private:
  int64_t fresh() { return next_id_--; }

  std::size_t producer_of(int64_t id) const {
    for (std::size_t i = program_.instructions.size(); i-- > 0;) {
      for (const HloValue& out : program_.instructions[i].outputs) {
        if (out.id == id) return i;
      }
    }
    return 0;
  }

  int64_t current(int64_t id) const {
    const auto it = current_.find(id);
    return it == current_.end() ? id : it->second;
  }

  HloValue reshaped(const HloValue& operand) {
    HloInstruction instr;
    instr.kind = HloKind::kReshape;
    instr.operands.push_back(operand);
    instr.outputs.push_back({fresh(), Aval::of(without_unit_dims(operand.aval.shape), operand.aval.dtype)});
    program_.instructions.push_back(instr);
    return instr.outputs.back();
  }

  HloValue broadcast(const HloValue& operand, const Shape& shape) {
    HloInstruction instr;
    instr.kind = HloKind::kBroadcast;
    instr.operands.push_back(
        operand.aval.rank() > 0 && stretches_unit_dim(operand.aval.shape, shape) ? reshaped(operand) : operand);
    instr.outputs.push_back({fresh(), Aval::of(shape, operand.aval.dtype)});
    program_.instructions.push_back(instr);
    return instr.outputs.back();
  }

  HloProgram& program_;
  LocalFn local_;
  std::map<int64_t, int64_t> current_;  // values an all-reduce replaced
  int64_t next_id_ = -2;
};

void note_boundary(HloProgram& program, const Jaxpr& jaxpr) {
  for (const Var& v : jaxpr.invars) program.parameters.insert(v.id);
  for (const Var& v : jaxpr.constvars) program.parameters.insert(v.id);
  for (const Atom& out : jaxpr.outvars) {
    if (const auto* var = std::get_if<Var>(&out)) program.results.insert(var->id);
  }
}

// Producers a loop fusion computes in place of reading them: elementwise ops and the index maps (broadcasts,
// reshapes) between them.
bool fusible_producer(const HloInstruction& instr) {
  return instr.kind == HloKind::kElementwise || instr.kind == HloKind::kReshape || instr.kind == HloKind::kBroadcast;
}

bool fusing_consumer(const HloInstruction& instr) {
  return instr.kind == HloKind::kElementwise || instr.kind == HloKind::kReduce || instr.kind == HloKind::kBroadcast ||
         instr.kind == HloKind::kReshape;
}

// XLA's instruction fusion, consumers first (reverse program order), producers pulled into them.
void fuse(HloProgram& program) {
  const std::size_t n = program.instructions.size();
  program.fusion.resize(n);
  for (std::size_t i = 0; i < n; ++i) program.fusion[i] = i;
  std::map<int64_t, std::size_t> producer;
  std::map<int64_t, std::vector<std::size_t>> users;
  for (std::size_t i = 0; i < n; ++i) {
    for (const HloValue& out : program.instructions[i].outputs) producer[out.id] = i;
    for (const HloValue& in : program.instructions[i].operands) {
      if (in.id != -1) users[in.id].push_back(i);
    }
  }
  const auto find = [&](std::size_t i) {
    while (program.fusion[i] != i) i = program.fusion[i];
    return i;
  };
  for (std::size_t c = n; c-- > 0;) {
    if (!fusing_consumer(program.instructions[c])) continue;
    for (const HloValue& in : program.instructions[c].operands) {
      const auto p = producer.find(in.id);
      if (in.id == -1 || p == producer.end() || !fusible_producer(program.instructions[p->second])) continue;
      bool only_here = true;
      bool result = false;
      for (const HloValue& out : program.instructions[p->second].outputs) {
        result = result || program.results.count(out.id) != 0;
        for (const std::size_t u : users[out.id]) only_here = only_here && find(u) == find(c);
      }
      // A reduction also takes an elementwise producer that others read, writing it as a second output (XLA's
      // multi-output fusion: softmax's exp is computed once, summed and stored in one pass).
      const bool multi_output = program.instructions[c].kind == HloKind::kReduce &&
                                program.instructions[p->second].kind == HloKind::kElementwise;
      if (!result && (only_here || multi_output)) program.fusion[find(p->second)] = find(c);
    }
  }
  for (std::size_t i = 0; i < n; ++i) program.fusion[i] = find(i);
}

}  // namespace

std::vector<bool> live_equations(const Jaxpr& jaxpr) {
  std::set<int64_t> needed;
  for (const Atom& out : jaxpr.outvars) {
    if (const auto* var = std::get_if<Var>(&out)) needed.insert(var->id);
  }
  std::vector<bool> live(jaxpr.eqns.size(), false);
  for (std::size_t e = jaxpr.eqns.size(); e-- > 0;) {
    const Eqn& eqn = jaxpr.eqns[e];
    live[e] =
        eqn.outputs.empty() ||  // effects (debug callbacks)
        std::any_of(eqn.outputs.begin(), eqn.outputs.end(), [&](const Var& v) { return needed.count(v.id) != 0; });
    if (!live[e]) continue;
    for (const Atom& input : eqn.inputs) {
      if (const auto* var = std::get_if<Var>(&input)) needed.insert(var->id);
    }
  }
  return live;
}

HloProgram lowered_hlo(const Jaxpr& jaxpr) {
  if (rewritten_for_partitioning(jaxpr)) {
    // The inlined program owns its equations: it lives as long as the instructions that point into it.
    auto inlined = std::make_shared<const Jaxpr>(inline_calls(jaxpr).jaxpr);
    HloProgram program = lowered_hlo(*inlined);
    program.owner = std::move(inlined);
    return program;
  }
  HloProgram program;
  note_boundary(program, jaxpr);
  Lowerer lowerer(program, [](const Atom& a) { return atom_aval(a); });
  for (const Eqn& eqn : jaxpr.eqns) lowerer.equation(eqn, {});
  program.fusion.resize(program.instructions.size());
  for (std::size_t i = 0; i < program.fusion.size(); ++i) program.fusion[i] = i;
  return program;
}

HloProgram compiled_hlo(const Jaxpr& jaxpr, const PartitionPlan& plan) {
  HloProgram program;
  note_boundary(program, jaxpr);
  Lowerer lowerer(program, [&plan](const Atom& a) { return plan.local_aval(a); });
  std::map<std::size_t, std::vector<const PlannedCollective*>> before;
  std::map<std::size_t, std::vector<const PlannedCollective*>> after;
  for (const PlannedCollective& c : plan.collectives) {
    (c.kind == CollectiveKind::kAllReduce ? after : before)[c.equation].push_back(&c);
  }
  const std::vector<bool> live = live_equations(jaxpr);
  for (std::size_t e = 0; e < jaxpr.eqns.size(); ++e) {
    if (!live[e]) continue;
    std::map<int64_t, int64_t> moved;  // operands moved for this equation only (Lowerer::move_key)
    for (const PlannedCollective* c : before[e]) lowerer.collective(*c, moved);
    lowerer.equation(jaxpr.eqns[e], moved);
    for (const PlannedCollective* c : after[e]) lowerer.reduced(*c);
  }
  std::set<int64_t> results;
  for (const int64_t id : program.results) results.insert(lowerer.final_id(id));
  program.results = std::move(results);
  fuse(program);
  return program;
}

int64_t hlo_temp_bytes(const HloProgram& program) {
  const std::size_t n = program.instructions.size();
  // A fusion runs where its last instruction is; a value lives from its fusion to the last fusion reading it.
  std::vector<std::size_t> runs_at(n, 0);
  for (std::size_t i = 0; i < n; ++i) runs_at[program.fusion[i]] = std::max(runs_at[program.fusion[i]], i);
  std::map<int64_t, std::pair<std::size_t, int64_t>> made;  // value -> (when, bytes)
  std::map<int64_t, std::size_t> last_read;
  std::map<int64_t, Aval> aval_of;
  for (std::size_t i = 0; i < n; ++i) {
    const HloInstruction& instr = program.instructions[i];
    for (const HloValue& in : instr.operands) {
      if (in.id == -1) continue;
      const auto it = made.find(in.id);
      if (it == made.end() || program.fusion[i] == program.fusion[it->second.first]) continue;
      last_read[in.id] = std::max(last_read[in.id], runs_at[program.fusion[i]]);
    }
    for (const HloValue& out : instr.outputs) {
      if (program.results.count(out.id) == 0 && program.parameters.count(out.id) == 0) {
        made[out.id] = {i, static_cast<int64_t>(aval_bytes(out.aval))};
        aval_of[out.id] = out.aval;
      }
    }
  }
  // A value whose last reader is a fusion writing a result of its own type lives in that result's buffer (XLA
  // lets a fusion write over its operand): it is no temporary. Collectives write buffers of their own.
  std::map<std::size_t, std::vector<Aval>> results_of;
  for (std::size_t i = 0; i < n; ++i) {
    const HloKind kind = program.instructions[i].kind;
    if (kind == HloKind::kCollective || kind == HloKind::kOther) continue;  // these write a buffer of their own
    for (const HloValue& out : program.instructions[i].outputs) {
      if (program.results.count(out.id) != 0) results_of[runs_at[program.fusion[i]]].push_back(out.aval);
    }
  }
  std::map<std::size_t, int64_t> allocated;
  std::map<std::size_t, int64_t> freed;
  for (const auto& [id, read] : last_read) {
    const auto& [where, bytes] = made.at(id);
    const Aval& aval = aval_of.at(id);
    auto& candidates = results_of[read];
    const auto shared = std::find_if(candidates.begin(), candidates.end(),
                                     [&](const Aval& r) { return r.shape == aval.shape && r.dtype == aval.dtype; });
    if (shared != candidates.end()) {
      candidates.erase(shared);
      continue;
    }
    allocated[runs_at[program.fusion[where]]] += bytes;
    freed[read] += bytes;
  }
  int64_t live = 0;
  int64_t peak = 0;
  for (std::size_t t = 0; t < n; ++t) {
    live -= freed[t];
    live += allocated[t];
    peak = std::max(peak, live);
  }
  return peak;
}

}  // namespace shardscope
