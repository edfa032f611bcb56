// Walks the partition plan's provenance back from a value or a collective to the pins that decided it.
#include "cost/why.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "base/error.h"
#include "exec/partition_plan.h"
#include "ir/primitive.h"

namespace shardscope {
namespace {

std::string quoted_axes(const std::vector<std::string>& axes) {
  std::vector<std::string> quoted;
  for (const std::string& axis : axes) quoted.push_back("'" + axis + "'");
  return join(quoted, ", ");
}

bool replicated(const Layout& layout) {
  return std::all_of(layout.begin(), layout.end(), [](const auto& axes) { return axes.empty(); });
}

// A layout as its spec; an unsharded one as P(), the way JAX prints a replicated value's spec.
std::string spec_text(const Layout& layout) { return replicated(layout) ? "P()" : layout_text(layout); }

class Explainer {
 public:
  explicit Explainer(const Compiled& compiled) : program_(compiled.program()), plan_(compiled.plan()) {
    for (std::size_t e = 0; e < program_.eqns.size(); ++e) {
      for (const Var& v : program_.eqns[e].outputs) producer_[v.id] = static_cast<int64_t>(e);
      for (const Atom& in : program_.eqns[e].inputs) {
        if (const Var* v = std::get_if<Var>(&in)) readers_[v->id].push_back(static_cast<int64_t>(e));
      }
    }
    for (std::size_t i = 0; i < program_.invars.size(); ++i) argument_[program_.invars[i].id] = i;
    for (std::size_t i = 0; i < program_.constvars.size(); ++i) constant_[program_.constvars[i].id] = i;
    if (plan_.mesh) decided_ = plan_equations(program_, plan_.layouts, *plan_.mesh);
  }

  // "%arg0 f32[8,16]", "%3 (tanh) f32[8,4]", "%5#1 (sort) ...": how a step names a value, as the Program tab's
  // values table does (%N is the result of equation N).
  std::string name(int64_t var_id) const {
    if (const auto it = argument_.find(var_id); it != argument_.end()) {
      return "%arg" + std::to_string(it->second) + " " + program_.invars[it->second].aval.str_short(true);
    }
    if (const auto it = constant_.find(var_id); it != constant_.end()) {
      return "captured constant " + std::to_string(it->second) + " " +
             program_.constvars[it->second].aval.str_short(true);
    }
    if (const auto it = producer_.find(var_id); it != producer_.end()) {
      const Eqn& eqn = program_.eqns[static_cast<std::size_t>(it->second)];
      for (std::size_t r = 0; r < eqn.outputs.size(); ++r) {
        if (eqn.outputs[r].id != var_id) continue;
        std::string text = "%" + std::to_string(it->second);
        if (eqn.outputs.size() > 1) text += "#" + std::to_string(r);
        return text + " (" + eqn.primitive->name + ") " + eqn.outputs[r].aval.str_short(true);
      }
    }
    return "a value";
  }

  int64_t producer(int64_t var_id) const {
    const auto it = producer_.find(var_id);
    return it == producer_.end() ? -1 : it->second;
  }

  Layout layout(int64_t var_id) const {
    const auto it = plan_.layouts.find(var_id);
    return it == plan_.layouts.end() ? Layout{} : it->second.layout;
  }

  // Why `var_id` is laid out as it is, at `depth`: one step for the value, then one per source it took axes from.
  void value(int64_t var_id, int depth, std::vector<WhyStep>& steps) {
    const auto it = plan_.layouts.find(var_id);
    const Layout here = layout(var_id);
    const std::string subject = name(var_id) + " is " + spec_text(here);
    if (!visited_.insert(var_id).second) {
      steps.push_back({subject + " (as above)", producer(var_id), depth});
      return;
    }
    if (it == plan_.layouts.end() || replicated(here)) {
      steps.push_back({subject + ": no argument, constraint or operand shards it, so every device holds all of it",
                       producer(var_id), depth});
      return;
    }
    const TensorLayoutState& state = it->second;
    const bool propagated = std::any_of(state.dim_sources.begin(), state.dim_sources.end(),
                                        [](const TensorLayoutState::DimSource& s) { return s.from_var >= 0; });
    if (!propagated) {
      steps.push_back({subject + ": " + pinned(var_id, state.origin), pin_equation(var_id, state.origin), depth});
      return;
    }
    steps.push_back({subject, producer(var_id), depth});
    // One step per source value; a source that shards several dims is named once.
    std::vector<int64_t> sources;
    std::map<int64_t, std::vector<std::size_t>> dims_of;
    for (std::size_t d = 0; d < state.dim_sources.size() && d < here.size(); ++d) {
      const TensorLayoutState::DimSource& source = state.dim_sources[d];
      if (here[d].empty() || source.from_var < 0) continue;
      if (dims_of[source.from_var].empty()) sources.push_back(source.from_var);
      dims_of[source.from_var].push_back(d);
    }
    for (const int64_t from : sources) {
      const std::vector<std::size_t>& dims = dims_of[from];
      const TensorLayoutState::DimSource& source = state.dim_sources[dims.front()];
      std::vector<std::string> parts;
      for (const std::size_t d : dims) parts.push_back("dim " + std::to_string(d) + " over " + quoted_axes(here[d]));
      // Forward: the equation that makes this value passed its operand's axes on. Backward: this value is an
      // operand of the equation that makes `from`, and took the axes back from that result.
      const bool backward = source.origin.ends_with("from its result");
      const int64_t through = backward ? producer(from) : producer(var_id);
      const std::string op = through >= 0 ? program_.eqns[static_cast<std::size_t>(through)].primitive->name : "";
      std::string how = backward
                            ? op + " (eq " + std::to_string(through) + ") takes the sharding back from its result"
                            : op + " (eq " + std::to_string(through) + ") passes on the sharding of its " +
                                  source.origin.substr(std::min(source.origin.find("operand"), source.origin.size()));
      steps.push_back({join(parts, ", ") + ": " + how, through, depth + 1});
      value(from, depth + 2, steps);
    }
    // Dims pinned on the value itself (none propagated into them) fall back to the value's own origin.
  }

  // The words for a value's whole-layout pin.
  std::string pinned(int64_t var_id, const std::string& origin) const {
    const int64_t eq = producer(var_id);
    const std::string at = eq >= 0 ? " (eq " + std::to_string(eq) + ")" : "";
    if (origin.starts_with("argument ")) return "the caller passed " + origin + " laid out so (committed)";
    if (origin.starts_with("in_shardings[")) return "jit's " + origin + " asks for it";
    if (origin.starts_with("out_shardings[")) return "jit's " + origin + " asks for it";
    if (origin == "with_sharding_constraint") return "the sharding constraint" + at + " asks for it";
    if (origin == "device_put") return "device_put" + at + " places it so";
    if (origin == "shard_map out_specs") return "the shard_map's out_specs" + at + " lay it out so";
    if (origin.starts_with("shard_map in_specs")) {
      const auto readers = readers_.find(var_id);
      const std::string user = readers == readers_.end() || readers->second.empty()
                                   ? ""
                                   : " (eq " + std::to_string(readers->second[0]) + ")";
      return "the shard_map" + user + " wants it so by its in_specs";
    }
    if (origin == "sharding in types") return "its type names the sharding (Explicit mesh axes)";
    return origin.empty() ? "it is laid out so" : origin;
  }

  int64_t pin_equation(int64_t var_id, const std::string& origin) const {
    if (origin.starts_with("shard_map in_specs")) {
      const auto readers = readers_.find(var_id);
      return readers == readers_.end() || readers->second.empty() ? -1 : readers->second[0];
    }
    return producer(var_id);
  }

  WhyAnswer collective(std::size_t index) {
    if (index >= plan_.collectives.size()) {
      throw value_error("the program has " + std::to_string(plan_.collectives.size()) + " collectives; got index " +
                        std::to_string(index));
    }
    const PlannedCollective& c = plan_.collectives[index];
    WhyAnswer answer;
    const bool in_program = c.equation < program_.eqns.size();
    const std::string op = in_program ? program_.eqns[c.equation].primitive->name : "the program's results";
    answer.subject = collective_name(c.kind) + " over " + quoted_axes(c.axes) + " for eq " +
                     std::to_string(c.equation) + " (" + op + ")";
    if (c.var_id >= 0) answer.subject += " of " + name(c.var_id).substr(0, name(c.var_id).find(' '));
    std::vector<WhyStep>& steps = answer.steps;
    const auto eq = static_cast<int64_t>(c.equation);
    if (!in_program || c.equation >= decided_.size() || c.origin.find(" body") != std::string::npos) {
      steps.push_back({c.origin, in_program ? eq : -1, 0});
      return answer;
    }
    const Eqn& eqn = program_.eqns[c.equation];
    const EquationPlan& decided = decided_[c.equation];
    if (c.operand >= 0 && static_cast<std::size_t>(c.operand) < eqn.inputs.size()) {
      const auto operand = static_cast<std::size_t>(c.operand);
      const Layout from = layout_in(plan_.layouts, eqn.inputs[operand]);
      const Layout& to = decided.operands.at(operand);
      steps.push_back(
          {op + " needs operand " + std::to_string(operand) + " as " + spec_text(to) + ", but it is " + spec_text(from),
           eq, 0});
      steps.push_back({needs(eqn, decided, to), eq, 1});
      if (decided.mode == EquationMode::kLocal && !eqn.outputs.empty()) value(eqn.outputs.front().id, 2, steps);
      if (const auto* var = std::get_if<Var>(&eqn.inputs[operand])) {
        steps.push_back({"where the operand's layout comes from:", eq, 1});
        value(var->id, 2, steps);
      }
      return answer;
    }
    if (c.kind == CollectiveKind::kAllReduce && c.origin.ends_with("partial results")) {
      const std::string what = op == "gather" ? " indexes a dim sharded over " + quoted_axes(c.axes) +
                                                    ": each device looks up the indices its own block holds (zeros "
                                                    "elsewhere), and the partial results are summed across the group"
                                              : std::string(op == "dot_general" ? " contracts" : " reduces") +
                                                    " a dim sharded over " + quoted_axes(c.axes) +
                                                    ": each device computes a partial result from its own blocks, "
                                                    "and the partial results are summed across the group";
      steps.push_back({op + what, eq, 0});
      for (std::size_t i = 0; i < eqn.inputs.size(); ++i) {
        const auto* var = std::get_if<Var>(&eqn.inputs[i]);
        if (var == nullptr || !uses_axes(layout(var->id), c.axes)) continue;
        steps.push_back(
            {"operand " + std::to_string(i) + " carries " + quoted_axes(c.axes) + " on the reduced dim:", eq, 1});
        value(var->id, 2, steps);
      }
      return answer;
    }
    for (std::size_t r = 0; r < eqn.outputs.size(); ++r) {
      if (eqn.outputs[r].id != c.var_id) continue;
      steps.push_back({op + " makes its result " + std::to_string(r) + " as " + spec_text(decided.produced.at(r)) +
                           "; it must move to " + spec_text(layout(c.var_id)),
                       eq, 0});
      value(c.var_id, 1, steps);
      return answer;
    }
    steps.push_back({c.origin, eq, 0});
    return answer;
  }

 private:
  // Why an equation wants an operand laid out as `to`, by how the partitioner runs it.
  static std::string needs(const Eqn& eqn, const EquationPlan& decided, const Layout& to) {
    const std::string& op = eqn.primitive->name;
    switch (decided.mode) {
      case EquationMode::kLayoutMove: return "the target " + spec_text(to) + " is the layout " + op + " asks for";
      case EquationMode::kManual: return "the shard_map's in_specs ask for " + spec_text(to);
      case EquationMode::kBlocked:
        return op + "'s values depend on their global position: each device computes its block from whole operands";
      case EquationMode::kWhole: return op + " has no partitioned kernel: its operands are gathered and it runs once";
      case EquationMode::kLocal: break;
    }
    return op + " runs on each device's blocks, laid out to match its result's sharding:";
  }

  static bool uses_axes(const Layout& layout, const std::vector<std::string>& axes) {
    for (const auto& dim : layout) {
      for (const std::string& axis : dim) {
        if (std::find(axes.begin(), axes.end(), axis) != axes.end()) return true;
      }
    }
    return false;
  }

  const Jaxpr& program_;
  const PartitionPlan& plan_;
  std::vector<EquationPlan> decided_;
  std::map<int64_t, int64_t> producer_;
  std::map<int64_t, std::vector<int64_t>> readers_;
  std::map<int64_t, std::size_t> argument_;
  std::map<int64_t, std::size_t> constant_;
  std::set<int64_t> visited_;
};

}  // namespace

std::string WhyAnswer::text() const {
  std::ostringstream out;
  out << "why " << subject << "\n";
  for (const WhyStep& step : steps)
    out << std::string(static_cast<std::size_t>(2 + 2 * step.depth), ' ') << step.text << "\n";
  return out.str();
}

WhyAnswer why_value(const Compiled& compiled, int64_t var_id) {
  Explainer explainer(compiled);
  WhyAnswer answer;
  answer.subject = explainer.name(var_id) + " is " + spec_text(explainer.layout(var_id));
  explainer.value(var_id, 0, answer.steps);
  return answer;
}

WhyAnswer why_output(const Compiled& compiled, std::size_t output) {
  const Jaxpr& program = compiled.program();
  if (output >= program.outvars.size()) {
    throw value_error("the program has " + std::to_string(program.outvars.size()) + " results; got index " +
                      std::to_string(output));
  }
  const auto* var = std::get_if<Var>(&program.outvars[output]);
  if (var == nullptr) {
    WhyAnswer answer;
    answer.subject = "result " + std::to_string(output) + " is P()";
    answer.steps.push_back({"it is a literal: every device holds it", -1, 0});
    return answer;
  }
  WhyAnswer answer = why_value(compiled, var->id);
  answer.subject = "result " + std::to_string(output) + ", " + answer.subject;
  return answer;
}

WhyAnswer why_collective(const Compiled& compiled, std::size_t index) { return Explainer(compiled).collective(index); }

std::string why_program_text(const Compiled& compiled, const std::string& name) {
  std::string text = "program " + name + ": why each collective runs and each result is laid out so\n";
  const std::size_t collectives = compiled.plan().collectives.size();
  if (collectives == 0) text += "  no collectives: every device computes on its own blocks\n";
  for (std::size_t c = 0; c < collectives; ++c) text += why_collective(compiled, c).text();
  for (std::size_t o = 0; o < compiled.program().outvars.size(); ++o) text += why_output(compiled, o).text();
  return text;
}

}  // namespace shardscope
