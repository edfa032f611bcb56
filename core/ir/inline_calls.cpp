// Call inlining: a body's variables are renamed per call site and its results substituted into the caller; a split
// becomes the slices JAX lowers it to.
#include "ir/inline_calls.h"

#include <algorithm>
#include <array>
#include <set>
#include <string_view>

#include "ir/param.h"
#include "ir/primitive.h"

namespace shardscope {
namespace {

// A call's body, under the name its primitive keeps it (null when the equation holds none).
const Jaxpr* call_body(const Eqn& eqn) {
  for (const char* key : {"jaxpr", "call_jaxpr", "fun_jaxpr"}) {
    if (const ParamValue* value = find_param(eqn.params, key)) {
      if (const auto* ref = value->get_if<ParamValue::JaxprRef>(); ref != nullptr && *ref) return ref->get();
    }
  }
  return nullptr;
}

class Inliner {
 public:
  explicit Inliner(InlinedProgram& out) : out_(out) {}

  // Copies `body`'s equations into the output with `bound` giving the atoms its invars stand for; returns the
  // atoms its outvars became.
  std::vector<Atom> splice(const Jaxpr& body, std::map<int64_t, Atom> bound, bool rename) {
    for (const Eqn& eqn : body.eqns) {
      std::vector<Atom> inputs;
      inputs.reserve(eqn.inputs.size());
      for (const Atom& input : eqn.inputs) inputs.push_back(substituted(input, bound));
      if (is_inlinable_call(eqn)) {
        const Jaxpr& callee = *call_body(eqn);
        std::map<int64_t, Atom> callee_bound;
        for (std::size_t i = 0; i < callee.constvars.size(); ++i) {
          // Bodies here have their constants as arguments already; a stray constvar keeps its own identity.
          callee_bound.emplace(callee.constvars[i].id, Atom{callee.constvars[i]});
        }
        for (std::size_t i = 0; i < callee.invars.size(); ++i) {
          callee_bound.emplace(callee.invars[i].id, pinned(inputs[i], eqn, "in_shardings", i));
        }
        std::vector<Atom> results = splice(callee, std::move(callee_bound), true);
        for (std::size_t r = 0; r < results.size(); ++r) results[r] = pinned(results[r], eqn, "out_shardings", r);
        for (std::size_t r = 0; r < eqn.outputs.size(); ++r) {
          bound[eqn.outputs[r].id] = results[r];
          if (!rename) out_.replaced.emplace(eqn.outputs[r].id, results[r]);
        }
        continue;
      }
      if (eqn.primitive->name == "split" && split_into_slices(eqn, inputs, bound, rename)) continue;
      Eqn copy;
      copy.primitive = eqn.primitive;
      copy.params = eqn.params;
      copy.inputs = std::move(inputs);
      for (const Var& output : eqn.outputs) copy.outputs.push_back(result_var(output, bound, rename));
      out_.jaxpr.eqns.push_back(std::move(copy));
    }
    std::vector<Atom> results;
    results.reserve(body.outvars.size());
    for (const Atom& out : body.outvars) results.push_back(substituted(out, bound));
    return results;
  }

 private:
  // The variable an equation's result gets in the output: a fresh one bound to it inside a body called per call
  // site, the caller's own otherwise.
  static Var result_var(const Var& output, std::map<int64_t, Atom>& bound, bool rename) {
    if (!rename) return output;
    Var fresh = new_var(output.aval);
    bound[output.id] = Atom{fresh};
    return fresh;
  }

  // JAX lowers `split` to one slice per result, and the partitioner plans each slice on its own (halos for the
  // part a device's result block reads from its neighbours). Results nothing reads are left out, as XLA removes
  // their dead slices. False (the split stays) when the slice primitive is not registered.
  bool split_into_slices(const Eqn& eqn, const std::vector<Atom>& inputs, std::map<int64_t, Atom>& bound, bool rename) {
    const Primitive* slice = find_primitive("slice");
    if (slice == nullptr || inputs.size() != 1) return false;
    const Aval& operand = atom_aval(inputs[0]);
    const auto axis = static_cast<std::size_t>(param(eqn.params, "axis").as_int("axis"));
    int64_t offset = 0;
    for (const Var& output : eqn.outputs) {
      std::vector<int64_t> start(operand.rank(), 0);
      std::vector<int64_t> limit = operand.shape;
      start.at(axis) = offset;
      limit.at(axis) = offset + output.aval.shape.at(axis);
      offset = limit[axis];
      Eqn piece;
      piece.primitive = slice;
      piece.params = {{"limit_indices", ParamValue::int_tuple(limit)},
                      {"start_indices", ParamValue::int_tuple(start)},
                      {"strides", ParamValue(ParamValue::None{})}};
      piece.inputs = inputs;
      piece.outputs.push_back(result_var(output, bound, rename));
      split_slices_.push_back(out_.jaxpr.eqns.size());
      out_.jaxpr.eqns.push_back(std::move(piece));
    }
    return true;
  }

 public:
  // Drops the split's slices whose results nothing reads.
  void drop_unread_slices() {
    if (split_slices_.empty()) return;
    std::set<int64_t> read;
    for (const Eqn& eqn : out_.jaxpr.eqns) {
      for (const Atom& input : eqn.inputs) {
        if (const auto* var = std::get_if<Var>(&input)) read.insert(var->id);
      }
    }
    for (const Atom& out : out_.jaxpr.outvars) {
      if (const auto* var = std::get_if<Var>(&out)) read.insert(var->id);
    }
    std::set<std::size_t> dead;
    for (const std::size_t index : split_slices_) {
      if (!read.contains(out_.jaxpr.eqns[index].outputs.at(0).id)) dead.insert(index);
    }
    std::vector<Eqn> kept;
    kept.reserve(out_.jaxpr.eqns.size() - dead.size());
    for (std::size_t e = 0; e < out_.jaxpr.eqns.size(); ++e) {
      if (!dead.contains(e)) kept.push_back(std::move(out_.jaxpr.eqns[e]));
    }
    out_.jaxpr.eqns = std::move(kept);
  }

 private:
  // A call's own in_shardings/out_shardings entry `index` becomes a sharding constraint on the value that
  // crosses the call boundary, as the partitioner treats a nested jit's shardings.
  Atom pinned(const Atom& value, const Eqn& call, const char* key, std::size_t index) {
    const ParamValue* shardings = find_param(call.params, key);
    const auto* items = shardings == nullptr ? nullptr : shardings->get_if<ParamValue::Tuple>();
    if (items == nullptr || index >= items->items.size()) return value;
    const auto* named = items->items[index].get_if<NamedSharding>();
    const Primitive* constraint = find_primitive("sharding_constraint");
    if (named == nullptr || constraint == nullptr) return value;
    Eqn eqn;
    eqn.primitive = constraint;
    eqn.params = {{"sharding", *named}};
    eqn.inputs = {value};
    const Var fresh = new_var(atom_aval(value));
    eqn.outputs = {fresh};
    out_.jaxpr.eqns.push_back(std::move(eqn));
    return Atom{fresh};
  }

  static Atom substituted(const Atom& atom, const std::map<int64_t, Atom>& bound) {
    if (const auto* var = std::get_if<Var>(&atom)) {
      const auto it = bound.find(var->id);
      if (it != bound.end()) return it->second;
    }
    return atom;
  }

  InlinedProgram& out_;
  std::vector<std::size_t> split_slices_;  // indices of the equations that split_into_slices made
};

// Equations the partitioner may not drop although nothing reads their results: callbacks and prints run for
// their effects (an equation with no results is one too).
bool has_effect(const Eqn& eqn) {
  const std::string& name = eqn.primitive->name;
  return eqn.outputs.empty() || name.find("callback") != std::string::npos || name.find("print") != std::string::npos ||
         name.find("breakpoint") != std::string::npos;
}

bool all_read(const Eqn& eqn, const std::set<int64_t>& live) {
  return std::all_of(eqn.outputs.begin(), eqn.outputs.end(), [&](const Var& v) { return live.count(v.id) != 0; });
}

bool any_read(const Eqn& eqn, const std::set<int64_t>& live) {
  return std::any_of(eqn.outputs.begin(), eqn.outputs.end(), [&](const Var& v) { return live.count(v.id) != 0; });
}

std::set<int64_t> read_by_outputs(const Jaxpr& jaxpr) {
  std::set<int64_t> live;
  for (const Atom& out : jaxpr.outvars) {
    if (const auto* var = std::get_if<Var>(&out)) live.insert(var->id);
  }
  return live;
}

// A shard_map whose body can lose the results nobody reads (its out_specs are a tuple, one per result).
bool prunable_manual_call(const Eqn& eqn) {
  if (eqn.primitive->name != "shard_map") return false;
  const ParamValue* body = find_param(eqn.params, "jaxpr");
  const ParamValue* specs = find_param(eqn.params, "out_specs");
  const auto* ref = body == nullptr ? nullptr : body->get_if<ParamValue::JaxprRef>();
  const auto* items = specs == nullptr ? nullptr : specs->get_if<ParamValue::Tuple>();
  return ref != nullptr && *ref != nullptr && items != nullptr && items->items.size() == eqn.outputs.size() &&
         (*ref)->outvars.size() == eqn.outputs.size();
}

void drop_dead_code(Jaxpr& jaxpr);

// The shard_map with only the results `live` reads: its body yields those alone, and loses what fed the rest.
Eqn pruned_manual_call(const Eqn& eqn, const std::set<int64_t>& live) {
  const auto& body = *param(eqn.params, "jaxpr").get_if<ParamValue::JaxprRef>();
  const auto& specs = param(eqn.params, "out_specs").get_if<ParamValue::Tuple>()->items;
  auto pruned_body = std::make_shared<Jaxpr>(*body);
  pruned_body->outvars.clear();
  std::vector<ParamValue> kept_specs;
  Eqn out;
  out.primitive = eqn.primitive;
  for (std::size_t r = 0; r < eqn.outputs.size(); ++r) {
    if (live.count(eqn.outputs[r].id) == 0) continue;
    pruned_body->outvars.push_back(body->outvars[r]);
    kept_specs.push_back(specs[r]);
    out.outputs.push_back(eqn.outputs[r]);
  }
  drop_dead_code(*pruned_body);
  out.inputs = eqn.inputs;
  for (const auto& [key, value] : eqn.params) {
    if (key == "jaxpr") {
      out.params.emplace_back(key, ParamValue(ParamValue::JaxprRef(std::move(pruned_body))));
    } else if (key == "out_specs") {
      out.params.emplace_back(key, ParamValue::tuple(std::move(kept_specs)));
    } else {
      out.params.emplace_back(key, value);
    }
  }
  return out;
}

// Drops equations whose results nothing reads, as XLA removes dead code before it partitions: the psum of a
// shard_map result that grad discards runs no all-reduce. Effects stay.
void drop_dead_code(Jaxpr& jaxpr) {
  std::set<int64_t> live = read_by_outputs(jaxpr);
  std::vector<Eqn> kept;
  for (auto it = jaxpr.eqns.rbegin(); it != jaxpr.eqns.rend(); ++it) {
    if (!has_effect(*it) && !any_read(*it, live)) continue;
    kept.push_back(!all_read(*it, live) && prunable_manual_call(*it) ? pruned_manual_call(*it, live) : *it);
    for (const Atom& input : kept.back().inputs) {
      if (const auto* var = std::get_if<Var>(&input)) live.insert(var->id);
    }
  }
  jaxpr.eqns.assign(std::make_move_iterator(kept.rbegin()), std::make_move_iterator(kept.rend()));
}

bool has_dead_code(const Jaxpr& jaxpr) {
  std::set<int64_t> live = read_by_outputs(jaxpr);
  for (auto it = jaxpr.eqns.rbegin(); it != jaxpr.eqns.rend(); ++it) {
    if (!has_effect(*it) && !any_read(*it, live)) return true;
    if (!all_read(*it, live) && prunable_manual_call(*it)) return true;
    for (const Atom& input : it->inputs) {
      if (const auto* var = std::get_if<Var>(&input)) live.insert(var->id);
    }
  }
  return false;
}

}  // namespace

bool is_inlinable_call(const Eqn& eqn) {
  static constexpr std::array<std::string_view, 10> kCalls = {
      "jit",   "pjit",   "closed_call",     "core_call",       "checkpoint",
      "remat", "remat2", "custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr"};
  const std::string& name = eqn.primitive->name;
  if (std::find(kCalls.begin(), kCalls.end(), name) == kCalls.end()) return false;
  const Jaxpr* body = call_body(eqn);
  // A call whose operands do not line up one to one with its body's arguments is left alone.
  return body != nullptr && body->invars.size() == eqn.inputs.size() && body->outvars.size() == eqn.outputs.size();
}

bool rewritten_for_partitioning(const Jaxpr& jaxpr) {
  return std::any_of(jaxpr.eqns.begin(), jaxpr.eqns.end(),
                     [](const Eqn& eqn) { return is_inlinable_call(eqn) || eqn.primitive->name == "split"; }) ||
         has_dead_code(jaxpr);
}

InlinedProgram inline_calls(const Jaxpr& jaxpr) {
  InlinedProgram out;
  out.jaxpr.constvars = jaxpr.constvars;
  out.jaxpr.invars = jaxpr.invars;
  Inliner inliner(out);
  // The caller's own variables keep their ids: layouts and the program view refer to them.
  out.jaxpr.outvars = inliner.splice(jaxpr, {}, false);
  inliner.drop_unread_slices();
  drop_dead_code(out.jaxpr);
  return out;
}

std::vector<bool> arguments_read(const Jaxpr& jaxpr) {
  std::set<int64_t> read;
  const auto note = [&](const Atom& atom) {
    if (const auto* var = std::get_if<Var>(&atom)) read.insert(var->id);
  };
  for (const Atom& out : jaxpr.outvars) note(out);
  for (const Eqn& eqn : jaxpr.eqns) {
    for (const Atom& input : eqn.inputs) note(input);
  }
  std::vector<bool> result;
  result.reserve(jaxpr.invars.size());
  for (const Var& var : jaxpr.invars) result.push_back(read.count(var.id) != 0);
  return result;
}

}  // namespace shardscope
