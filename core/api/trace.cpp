// Tracing and eager dispatch: binds go to the innermost trace among their inputs, or run as one-equation jits.
#include "api/trace.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "api/session.h"
#include "base/error.h"
#include "exec/interpreter.h"
#include "exec/jit.h"
#include "explicit/sharding_rules.h"

namespace shardscope::api {
namespace {

thread_local Trace* innermost = nullptr;

// The one-equation program an eager operation runs, cached by primitive, params and input types so repeated
// eager calls reuse the propagated and partitioned program.
struct EagerProgram {
  JaxprPtr jaxpr;
};

std::string eager_key(const std::string& primitive, const std::vector<Value>& inputs, const Params& params) {
  const JaxProfile& profile = session().profile;
  std::string key = primitive + "[";
  for (const auto& [name, value] : params) {
    // Nested programs are keyed by identity: equal text need not mean the same variables.
    if (const auto* ref = value.get_if<ParamValue::JaxprRef>()) {
      key += name + "=@" + std::to_string(reinterpret_cast<std::uintptr_t>(ref->get())) + " ";
      continue;
    }
    key += name + "=" + value.str(profile) + " ";
  }
  key += "]";
  for (const Value& input : inputs) {
    key += " " + argument_aval(input).str_short(false);
    if (input.is_scalar_literal()) {
      key += "=" + std::visit([](auto v) { return std::to_string(v); }, std::get<Literal>(input.atom()).value);
    }
  }
  return key;
}

JaxprPtr eager_program(const std::string& primitive, const std::vector<Value>& inputs, const Params& params) {
  static std::mutex mutex;
  static std::map<std::string, JaxprPtr> cache;
  const std::string key = eager_key(primitive, inputs, params);
  {
    const std::lock_guard lock(mutex);
    if (const auto it = cache.find(key); it != cache.end()) return it->second;
  }
  JaxprBuilder builder;
  std::vector<Atom> atoms;
  for (const Value& input : inputs) {
    if (input.is_scalar_literal()) {
      atoms.push_back(input.atom());
    } else {
      atoms.emplace_back(builder.arg(argument_aval(input)));
    }
  }
  JaxprPtr program = builder.build(builder.bind(primitive, std::move(atoms), params));
  const std::lock_guard lock(mutex);
  if (cache.size() > 4096) cache.clear();
  cache.emplace(key, program);
  return program;
}

std::vector<Value> run_eagerly(const std::string& primitive, const std::vector<Value>& inputs, const Params& params) {
  const JaxprPtr program = eager_program(primitive, inputs, params);
  std::vector<Array> arrays;
  for (const Value& input : inputs) {
    if (!input.is_scalar_literal()) arrays.push_back(input.array());
  }
  JitOptions options;
  options.name = primitive;
  options.default_device = default_device();
  JitRun run = run_jit(*program, arrays, options, session().profile);
  std::vector<Value> outputs;
  for (Array& out : run.outputs) outputs.push_back(Value::concrete(std::move(out)));
  return outputs;
}

}  // namespace

Aval argument_aval(const Value& value) {
  const Aval& aval = value.aval();
  if (!value.is_concrete()) return aval;
  const auto* named = std::get_if<NamedSharding>(&value.array().sharding());
  if (named == nullptr) return aval;
  const auto& types = named->mesh.axis_types();
  if (std::find(types.begin(), types.end(), AxisType::kExplicit) == types.end()) return aval;
  return typed_aval(aval, *named, session().profile);
}

namespace {

Aval aval_of(const Array& array) { return Aval::of(array.shape(), array.dtype(), array.aval().weak_type); }

}  // namespace

Value Value::concrete(Array array) {
  Value value;
  value.aval_ = aval_of(array);
  value.array_ = std::move(array);
  return value;
}

Value Value::scalar(Literal literal) {
  Value value;
  value.aval_ = literal.aval;
  value.atom_ = std::move(literal);
  return value;
}

Value Value::traced(Atom atom, Trace* trace) {
  Value value;
  value.aval_ = atom_aval(atom);
  value.atom_ = std::move(atom);
  value.trace_ = trace;
  return value;
}

const Array& Value::array() const {
  if (!array_) throw type_error("a traced value has no concrete array: " + aval_.str_short(false));
  return *array_;
}

Trace::Trace(std::string name) : name_(std::move(name)), previous_(innermost) {
  level_ = previous_ != nullptr ? previous_->level_ + 1 : 1;
  innermost = this;
}

Trace::~Trace() { innermost = previous_; }

Value Trace::arg(Aval aval) { return Value::traced(builder_.arg(std::move(aval)), this); }

Atom Trace::lift(const Value& value) {
  if (value.trace() == this) return value.atom();
  if (value.is_scalar_literal()) return value.atom();
  for (const auto& [captured, var] : captured_) {
    const bool same_array = captured.is_concrete() && value.is_concrete() &&
                            captured.array().shards().size() == value.array().shards().size() &&
                            !captured.array().shards().empty() &&
                            captured.array().shards()[0].data == value.array().shards()[0].data &&
                            captured.array().sharding() == value.array().sharding();
    const bool same_tracer = captured.is_traced() && value.is_traced() && captured.trace() == value.trace() &&
                             std::holds_alternative<Var>(captured.atom()) &&
                             std::holds_alternative<Var>(value.atom()) &&
                             std::get<Var>(captured.atom()) == std::get<Var>(value.atom());
    if (same_array || same_tracer) return var;
  }
  Aval aval = value.aval();
  const Var var = builder_.constant(aval);
  captured_.emplace_back(value, var);
  return var;
}

Trace::Closed Trace::finish(const std::vector<Value>& outputs) {
  std::vector<Atom> atoms;
  for (const Value& output : outputs) atoms.push_back(lift(output));
  Closed closed;
  closed.jaxpr = builder_.build(std::move(atoms));
  for (const auto& [value, var] : captured_) closed.captured.push_back(value);
  return closed;
}

Trace* current_trace() { return innermost; }

std::vector<Value> bind(const std::string& primitive, const std::vector<Value>& inputs, Params params) {
  Trace* target = nullptr;
  for (const Value& input : inputs) {
    if (input.is_traced() && (target == nullptr || input.trace()->level() > target->level())) target = input.trace();
  }
  // Operations with no traced input still belong to the current trace when one is active (e.g. jnp.zeros
  // inside a jitted function), as JAX stages everything under jit.
  if (target == nullptr) target = current_trace();
  if (target == nullptr) return run_eagerly(primitive, inputs, params);
  std::vector<Atom> atoms;
  for (const Value& input : inputs) atoms.push_back(target->lift(input));
  std::vector<Value> outputs;
  for (Atom& atom : target->builder().bind(primitive, std::move(atoms), std::move(params))) {
    outputs.push_back(Value::traced(std::move(atom), target));
  }
  return outputs;
}

Value bind1(const std::string& primitive, const std::vector<Value>& inputs, Params params) {
  std::vector<Value> outputs = api::bind(primitive, inputs, std::move(params));
  if (outputs.size() != 1) {
    throw value_error(primitive + " has " + std::to_string(outputs.size()) + " results, not one");
  }
  return outputs[0];
}

std::vector<Value> apply_jaxpr(const Jaxpr& jaxpr, const std::vector<Value>& inputs) {
  if (inputs.size() != jaxpr.constvars.size() + jaxpr.invars.size()) {
    throw type_error("program takes " + std::to_string(jaxpr.constvars.size() + jaxpr.invars.size()) + " values, got " +
                     std::to_string(inputs.size()));
  }
  std::map<int64_t, Value> env;
  std::size_t next = 0;
  for (const Var& var : jaxpr.constvars) env.insert_or_assign(var.id, inputs[next++]);
  for (const Var& var : jaxpr.invars) env.insert_or_assign(var.id, inputs[next++]);
  const auto read = [&](const Atom& atom) -> Value {
    if (const auto* literal = std::get_if<Literal>(&atom)) return Value::scalar(*literal);
    return env.at(std::get<Var>(atom).id);
  };
  for (const Eqn& eqn : jaxpr.eqns) {
    std::vector<Value> args;
    for (const Atom& input : eqn.inputs) args.push_back(read(input));
    const std::vector<Value> outs = api::bind(eqn.primitive->name, args, eqn.params);
    for (std::size_t i = 0; i < eqn.outputs.size(); ++i) env.insert_or_assign(eqn.outputs[i].id, outs.at(i));
  }
  std::vector<Value> results;
  for (const Atom& out : jaxpr.outvars) results.push_back(read(out));
  return results;
}

JaxprPtr consts_as_args(const Jaxpr& jaxpr) {
  auto converted = std::make_shared<Jaxpr>(jaxpr);
  converted->invars.insert(converted->invars.begin(), jaxpr.constvars.begin(), jaxpr.constvars.end());
  converted->constvars.clear();
  return converted;
}

}  // namespace shardscope::api
