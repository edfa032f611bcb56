// Runs the builder-level explicit-sharding operations on values through a short trace of their own.
#include "api/explicit_axes.h"

#include <functional>

#include "api/trace.h"
#include "trace/explicit_reshard.h"

namespace shardscope::api {
namespace {

using BuilderOp = std::function<std::vector<Atom>(Trace&, const std::vector<Atom>&)>;

// Traces `op` on fresh arguments shaped like `inputs`, then applies the program to them: inside an
// enclosing trace its equations are recorded there, otherwise they run now.
std::vector<Value> apply_builder_op(const std::string& name, const BuilderOp& op, const std::vector<Value>& inputs) {
  std::vector<Aval> avals;
  avals.reserve(inputs.size());
  for (const Value& input : inputs) avals.push_back(argument_aval(input));
  const Traced traced = trace_function(
      [&op](const std::vector<Value>& args) {
        Trace& trace = *current_trace();
        std::vector<Atom> atoms;
        atoms.reserve(args.size());
        for (const Value& arg : args) atoms.push_back(arg.atom());
        std::vector<Value> outputs;
        for (const Atom& atom : op(trace, atoms)) outputs.push_back(Value::traced(atom, &trace));
        return outputs;
      },
      avals, name);
  std::vector<Value> operands = traced.captured;
  operands.insert(operands.end(), inputs.begin(), inputs.end());
  return apply_jaxpr(*traced.jaxpr, operands);
}

// The user's function as the builder-level code sees it: atoms of `trace` in, atoms of `trace` out.
TracedFunction in_trace(const Function& fun, Trace& trace) {
  return [&fun, &trace](JaxprBuilder&, const std::vector<Atom>& atoms) {
    std::vector<Value> values;
    values.reserve(atoms.size());
    for (const Atom& atom : atoms) values.push_back(Value::traced(atom, &trace));
    std::vector<Atom> outs;
    for (const Value& out : fun(values)) outs.push_back(trace.lift(out));
    return outs;
  };
}

}  // namespace

Value reshard(const Value& x, const ReshardTarget& target) {
  return apply_builder_op(
             "reshard",
             [&target](Trace& trace, const std::vector<Atom>& atoms) {
               return std::visit(
                   [&](const auto& destination) {
                     return std::vector<Atom>{shardscope::reshard(trace.builder(), atoms.at(0), destination)};
                   },
                   target);
             },
             {x})
      .at(0);
}

std::vector<Value> auto_axes(const Function& fun, const std::vector<Value>& args,
                             const std::optional<std::vector<PartitionSpec>>& out_shardings,
                             const std::vector<std::string>& axes) {
  return apply_builder_op(
      "auto_axes",
      [&](Trace& trace, const std::vector<Atom>& atoms) {
        return shardscope::auto_axes(trace.builder(), in_trace(fun, trace), atoms, out_shardings, axes);
      },
      args);
}

std::vector<Value> explicit_axes(const Function& fun, const std::vector<Value>& args,
                                 const std::optional<std::vector<PartitionSpec>>& in_shardings,
                                 const std::vector<std::string>& axes) {
  return apply_builder_op(
      "explicit_axes",
      [&](Trace& trace, const std::vector<Atom>& atoms) {
        return shardscope::explicit_axes(trace.builder(), in_trace(fun, trace), atoms, in_shardings, axes);
      },
      args);
}

}  // namespace shardscope::api
