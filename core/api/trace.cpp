// Tracing and eager dispatch: binds go to the innermost trace among their inputs, or run as one-equation jits.
#include "api/trace.h"

#include <algorithm>
#include <bit>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "api/debug_nans.h"
#include "api/session.h"
#include "base/error.h"
#include "exec/interpreter.h"
#include "exec/jit.h"
#include "explicit/mesh_context.h"
#include "explicit/sharding_rules.h"
#include "ir/jaxpr_printer.h"

namespace shardscope::api {
namespace {

thread_local Trace* innermost = nullptr;

// Parameters equal for caching: like ==, but floats compare by bits so -0.0 and 0.0 (or two NaNs with
// the same payload) never share, or fail to share, a program.
bool same_param(const ParamValue& a, const ParamValue& b) {
  const auto* da = a.get_if<double>();
  const auto* db = b.get_if<double>();
  if (da != nullptr || db != nullptr) {
    return da != nullptr && db != nullptr && std::bit_cast<uint64_t>(*da) == std::bit_cast<uint64_t>(*db);
  }
  const auto* ta = a.get_if<ParamValue::Tuple>();
  const auto* tb = b.get_if<ParamValue::Tuple>();
  if (ta != nullptr || tb != nullptr) {
    if (ta == nullptr || tb == nullptr || ta->is_list != tb->is_list || ta->items.size() != tb->items.size()) {
      return false;
    }
    return std::equal(ta->items.begin(), ta->items.end(), tb->items.begin(), same_param);
  }
  // Nested programs compare by identity (shared_ptr ==): equal text need not mean the same variables.
  return a == b;
}

// A scalar literal operand is part of the program, so its exact value (bits, type) is part of the key.
std::optional<std::pair<std::size_t, uint64_t>> literal_bits(const Value& input) {
  if (!input.is_scalar_literal()) return std::nullopt;
  const auto& value = std::get<Literal>(input.atom()).value;
  const uint64_t bits = std::visit(
      [](auto v) -> uint64_t {
        if constexpr (std::is_same_v<decltype(v), double>) {
          return std::bit_cast<uint64_t>(v);
        } else {
          return static_cast<uint64_t>(v);
        }
      },
      value);
  return std::pair{value.index(), bits};
}

// What an eager operation's one-equation program depends on: built per call from cheap parts (no text),
// compared in full on a hash match. Lookups borrow the call's primitive and params; only a miss copies them.
struct EagerKey {
  const std::string* primitive;
  const Params* params;
  std::vector<Aval> avals;
  std::vector<std::optional<std::pair<std::size_t, uint64_t>>> literals;
  JaxVersion version;

  [[nodiscard]] bool matches(const EagerKey& other) const {
    if (*primitive != *other.primitive || avals != other.avals || literals != other.literals ||
        version != other.version || params->size() != other.params->size()) {
      return false;
    }
    for (std::size_t i = 0; i < params->size(); ++i) {
      const auto& [name, value] = (*params)[i];
      const auto& [other_name, other_value] = (*other.params)[i];
      if (name != other_name || !same_param(value, other_value)) return false;
    }
    return true;
  }

  [[nodiscard]] std::size_t hash() const {
    std::size_t h = std::hash<std::string>{}(*primitive);
    const auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
    for (const Aval& aval : avals) {
      mix(static_cast<std::size_t>(aval.dtype));
      mix(aval.weak_type ? 1 : 0);
      for (const int64_t d : aval.shape) mix(static_cast<std::size_t>(d));
      mix(aval.dim_axes.size());
    }
    for (const auto& literal : literals) mix(literal ? literal->second : 0x5a5a);
    mix(params->size());
    return h;
  }
};

// A cached program with the primitive name and params its key points to.
struct EagerEntry {
  std::unique_ptr<const std::string> primitive;
  std::unique_ptr<const Params> params;
  EagerKey key;
  JaxprPtr program;
};

JaxprPtr eager_program(const std::string& primitive, const std::vector<Value>& inputs, const Params& params) {
  static std::mutex mutex;
  static std::unordered_multimap<std::size_t, EagerEntry> cache;
  EagerKey key{&primitive, &params, {}, {}, session().profile.version()};
  key.avals.reserve(inputs.size());
  key.literals.reserve(inputs.size());
  for (const Value& input : inputs) {
    key.avals.push_back(argument_aval(input));
    key.literals.push_back(literal_bits(input));
  }
  const std::size_t hash = key.hash();
  {
    const std::lock_guard lock(mutex);
    const auto [first, last] = cache.equal_range(hash);
    for (auto it = first; it != last; ++it) {
      if (it->second.key.matches(key)) return it->second.program;
    }
  }
  // An eager op on arrays typed by an Explicit mesh, outside jax.set_mesh, is typed on their mesh, as JAX takes
  // the mesh from the arguments' types.
  std::optional<AbstractMeshScope> arguments_mesh;
  if (is_empty(get_abstract_mesh())) {
    for (const Value& input : inputs) {
      if (!input.is_concrete()) continue;
      const auto* named = std::get_if<NamedSharding>(&input.array().sharding());
      if (named == nullptr) continue;
      const auto& types = named->mesh.axis_types();
      if (std::find(types.begin(), types.end(), AxisType::kExplicit) == types.end()) continue;
      arguments_mesh.emplace(AbstractMesh::from_mesh(named->mesh));
      break;
    }
  }
  JaxprBuilder builder;
  std::vector<Atom> atoms;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].is_scalar_literal()) {
      atoms.push_back(inputs[i].atom());
    } else {
      atoms.emplace_back(builder.arg(key.avals[i]));
    }
  }
  JaxprPtr program = builder.build(builder.bind(primitive, std::move(atoms), params));
  EagerEntry entry{std::make_unique<const std::string>(primitive), std::make_unique<const Params>(params),
                   std::move(key), program};
  entry.key.primitive = entry.primitive.get();
  entry.key.params = entry.params.get();
  const std::lock_guard lock(mutex);
  if (cache.size() > 4096) cache.clear();
  cache.emplace(hash, std::move(entry));
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
  // An op on literals alone whose result the Explicit mesh in effect types (a zero broadcast with a sharding, as
  // AD instantiates symbolic zeros) lands on that mesh, as JAX places it; with no array operand nothing else
  // would say where.
  if (arrays.empty()) {
    if (const std::optional<Mesh> mesh = get_concrete_mesh()) {
      for (const Atom& out : program->outvars) {
        const Aval& aval = atom_aval(out);
        std::optional<Sharding> sharding;
        if (std::any_of(aval.dim_axes.begin(), aval.dim_axes.end(), [](const auto& axes) { return !axes.empty(); })) {
          std::vector<SpecEntry> entries;
          for (const auto& axes : aval.dim_axes) entries.push_back(SpecEntry::of_axes(axes));
          sharding = make_named_sharding(*mesh, PartitionSpec(std::move(entries)), session().profile);
        }
        options.out_shardings.push_back(std::move(sharding));
      }
    }
  }
  JitRun run = run_jit(*program, arrays, options, session().profile);
  check_special_values(primitive, run.outputs);
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
  remember_typed_mesh(named->mesh);
  return placed_array_aval(aval, *named, session().profile);
}

std::vector<Aval> argument_avals(const std::vector<Value>& values) {
  std::vector<Aval> out;
  out.reserve(values.size());
  for (const Value& value : values) out.push_back(argument_aval(value));
  return out;
}

namespace {

Aval aval_of(const Array& array) { return Aval::of(array.shape(), array.dtype(), array.aval().weak_type); }

}  // namespace

Value Value::concrete(Array array) {
  Value value;
  Aval aval = aval_of(array);
  value.state_ =
      std::make_shared<const State>(State{std::move(array), Atom{}, nullptr, std::move(aval), nullptr, nullptr});
  return value;
}

Value Value::scalar(Literal literal) {
  Value value;
  Aval aval = literal.aval;
  value.state_ = std::make_shared<const State>(
      State{std::nullopt, std::move(literal), nullptr, std::move(aval), nullptr, nullptr});
  return value;
}

Value realized(Value value) {
  if (!value.is_scalar_literal() || current_trace() != nullptr) return value;
  const auto& literal = std::get<Literal>(value.atom());
  return Value::concrete(Array::from_host(literal_buffer(literal),
                                          make_single_device_sharding(default_device(), session().profile),
                                          session().profile, literal.aval.weak_type));
}

Value Value::traced(Atom atom, Trace* trace) {
  Value value;
  Aval aval = atom_aval(atom);
  value.state_ =
      std::make_shared<const State>(State{std::nullopt, std::move(atom), trace, std::move(aval), nullptr, nullptr});
  return value;
}

Value Value::traced_known(Atom atom, Trace* trace, Value known) {
  Value value;
  Aval aval = atom_aval(atom);
  value.state_ = std::make_shared<const State>(State{std::nullopt, std::move(atom), trace, std::move(aval),
                                                     std::make_shared<const Value>(std::move(known)), nullptr});
  return value;
}

Value Value::traced_blocks(Atom atom, Trace* trace, std::vector<BufferPtr> blocks) {
  Value value;
  Aval aval = atom_aval(atom);
  value.state_ =
      std::make_shared<const State>(State{std::nullopt, std::move(atom), trace, std::move(aval), nullptr,
                                          std::make_shared<const std::vector<BufferPtr>>(std::move(blocks))});
  return value;
}

const Value::State& Value::state() const {
  static const State empty;
  return state_ ? *state_ : empty;
}

const Array& Value::array() const {
  if (!state().array) throw type_error("a traced value has no concrete array: " + aval().str_short(false));
  return *state().array;
}

Trace::Trace(std::string name) : name_(std::move(name)), previous_(innermost) {
  level_ = previous_ != nullptr ? previous_->level_ + 1 : 1;
  innermost = this;
}

Trace::~Trace() { innermost = previous_; }

void Trace::set_vmap_axis_size(std::optional<int64_t> size) {
  vmap_axis_size_ = size;
  vmap_call_site_ = size ? capture_source_info() : SourceInfo();
}

namespace {

// The inputs a traced value depends on: the trace's invars and constants it reads, through every equation
// between them (JAX's find_progenitors walks the trace's equations backwards the same way).
std::unordered_set<int64_t> source_variables(const Jaxpr& jaxpr, const Var& value) {
  std::unordered_set<int64_t> active{value.id};
  for (auto eqn = jaxpr.eqns.rbegin(); eqn != jaxpr.eqns.rend(); ++eqn) {
    bool produced = false;
    for (const Var& out : eqn->outputs) produced = active.erase(out.id) > 0 || produced;
    if (!produced) continue;
    for (const Atom& in : eqn->inputs) {
      if (const Var* var = std::get_if<Var>(&in)) active.insert(var->id);
    }
  }
  return active;
}

}  // namespace

std::optional<std::vector<std::size_t>> argument_progenitors(const Value& value) {
  if (!value.is_traced() || !std::holds_alternative<Var>(value.atom())) return std::nullopt;
  const Jaxpr& jaxpr = value.trace()->builder().so_far();
  const std::unordered_set<int64_t> active = source_variables(jaxpr, std::get<Var>(value.atom()));
  std::vector<std::size_t> positions;
  for (std::size_t i = 0; i < jaxpr.invars.size(); ++i) {
    if (active.contains(jaxpr.invars[i].id)) positions.push_back(i);
  }
  return positions;
}

std::optional<std::string> batch_tracer_origin(const Value& value) {
  if (!value.is_traced() || !std::holds_alternative<Var>(value.atom())) return std::nullopt;
  Trace& trace = *value.trace();
  if (!trace.vmap_axis_size()) return std::nullopt;
  const int64_t id = std::get<Var>(value.atom()).id;
  const Jaxpr& jaxpr = trace.builder().so_far();
  SourceInfo source = trace.vmap_call_site();
  for (const Eqn& eqn : jaxpr.eqns) {
    if (std::any_of(eqn.outputs.begin(), eqn.outputs.end(), [&](const Var& out) { return out.id == id; })) {
      source = eqn.source;
      break;
    }
  }
  if (!source) return std::nullopt;
  return summarize(source);
}

std::vector<std::string> tracer_origin_operations(const Value& value) {
  if (!value.is_traced() || !std::holds_alternative<Var>(value.atom())) return {};
  const Jaxpr& jaxpr = value.trace()->builder().so_far();
  const std::unordered_set<int64_t> active = source_variables(jaxpr, std::get<Var>(value.atom()));
  std::unordered_set<int64_t> constants;
  for (const Var& var : jaxpr.constvars) {
    if (active.contains(var.id)) constants.insert(var.id);
  }
  // As JAX's find_progenitors: every equation of the trace reading one of those constants, or any literal.
  std::vector<std::string> operations;
  for (const Eqn& eqn : jaxpr.eqns) {
    const bool from_constant = std::any_of(eqn.inputs.begin(), eqn.inputs.end(), [&](const Atom& in) {
      const Var* var = std::get_if<Var>(&in);
      return var == nullptr || constants.contains(var->id);
    });
    if (!from_constant) continue;
    // The equation alone, its variables named afresh as they appear (outputs first), on one line.
    Jaxpr alone;
    alone.eqns = {eqn};
    alone.outvars.assign(eqn.outputs.begin(), eqn.outputs.end());
    const std::string text = print_jaxpr(alone, session().profile, 1 << 20);
    const std::size_t begin = text.find(" let ");
    const std::size_t end = text.rfind(" in (");
    if (begin == std::string::npos || end == std::string::npos || end <= begin) continue;
    operations.push_back(text.substr(begin + 5, end - begin - 5) + "\n    from line " + summarize(eqn.source));
  }
  return operations;
}

Value Trace::arg(Aval aval) { return Value::traced(builder_.arg(std::move(aval)), this); }

Value Trace::arg_blocks(Aval aval, std::vector<BufferPtr> blocks) {
  return Value::traced_blocks(builder_.arg(std::move(aval)), this, std::move(blocks));
}

Value Trace::arg_known(Aval aval, const Value& known) {
  return Value::traced_known(builder_.arg(std::move(aval)), this, known);
}

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
  // A captured array placed on an Explicit mesh is typed by its sharding, as an argument is (JAX's constvars keep
  // typeof(value)), so operations mixing it with sharded arguments type-check.
  Aval aval = argument_aval(value);
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

namespace {

// An eager shard_map body's operation on every device's blocks: collectives across them, other kernels per device.
// Operands from outside the body (captured arrays, Python numbers) are the same whole value on every device. None
// when an operand has no blocks or the kernel cannot run them (the program runs after tracing either way).
std::optional<std::vector<DeviceBuffers>> blocks_of(const Trace& trace, const std::string& name,
                                                    const std::vector<Value>& inputs, const Params& params) {
  // Host effects and callbacks run once, when the program does, not while it is traced.
  const Primitive* primitive = find_primitive(name);
  if (primitive == nullptr || (!primitive->collective_impl && !primitive->impl) ||
      primitive->host_call != HostCall::kNone) {
    return std::nullopt;
  }
  const auto devices = static_cast<std::size_t>(trace.per_device_mesh()->size());
  std::vector<DeviceBuffers> operands;
  std::vector<Aval> avals;
  for (const Value& input : inputs) {
    if (const std::vector<BufferPtr>* blocks = input.blocks(); blocks != nullptr && input.trace() == &trace) {
      operands.push_back(*blocks);
    } else if (input.is_scalar_literal()) {
      operands.emplace_back(devices, literal_buffer(std::get<Literal>(input.atom())));
    } else if (input.is_concrete()) {
      operands.emplace_back(devices, input.array().gather());
    } else {
      return std::nullopt;
    }
    avals.push_back(input.aval());
  }
  try {
    if (primitive->collective_impl) {
      return primitive->collective_impl(SpmdContext{trace.per_device_mesh(), nullptr}, operands, avals, params);
    }
    std::vector<DeviceBuffers> outputs;
    for (std::size_t d = 0; d < devices; ++d) {
      std::vector<BufferPtr> local;
      for (const DeviceBuffers& operand : operands) local.push_back(operand[d]);
      const std::vector<BufferPtr> results = primitive->impl(local, avals, params);
      if (outputs.empty()) outputs.assign(results.size(), DeviceBuffers(devices));
      for (std::size_t o = 0; o < results.size(); ++o) outputs[o][d] = results[o];
    }
    return outputs;
  } catch (const Error&) {
    return std::nullopt;  // the values print as tracers; the run itself reports any error
  }
}

}  // namespace

std::vector<Value> bind(const std::string& primitive, const std::vector<Value>& inputs, Params params) {
  Trace* target = nullptr;
  for (const Value& input : inputs) {
    if (input.is_traced() && (target == nullptr || input.trace()->level() > target->level())) target = input.trace();
  }
  // Operations belong to the innermost active trace, as JAX stages them: with no traced input (jnp.zeros inside
  // a jitted function), and with inputs of an enclosing trace (a loop body or nested jit using a value it closes
  // over computes on it inside the body, which captures the value).
  if (Trace* innermost = current_trace();
      innermost != nullptr && (target == nullptr || innermost->level() > target->level())) {
    target = innermost;
  }
  if (target == nullptr) return run_eagerly(primitive, inputs, params);
  // A trace differentiating concrete arguments also computes each operation whose operands are all known.
  std::optional<std::vector<Value>> known;
  // Effects (debug callbacks and prints) run once, when the program does.
  const Primitive* definition = find_primitive(primitive);
  if (!target->concrete_kind().empty() && (definition == nullptr || definition->host_call == HostCall::kNone)) {
    std::vector<Value> known_inputs;
    for (const Value& input : inputs) {
      const Value* value = input.concrete_or_known();
      if (value == nullptr) break;
      known_inputs.push_back(*value);
    }
    if (known_inputs.size() == inputs.size()) known = run_eagerly(primitive, known_inputs, params);
  }
  // The equation remembers which line of user code traced it (print_saved_residuals and errors name it).
  const SourceScope source(capture_source_info());
  const std::optional<std::vector<DeviceBuffers>> blocks =
      target->per_device_mesh() != nullptr ? blocks_of(*target, primitive, inputs, params) : std::nullopt;
  std::vector<Atom> atoms;
  for (const Value& input : inputs) atoms.push_back(target->lift(input));
  std::vector<Value> outputs;
  std::size_t index = 0;
  if (blocks) {
    for (Atom& atom : target->builder().bind(primitive, std::move(atoms), std::move(params))) {
      outputs.push_back(index < blocks->size() ? Value::traced_blocks(std::move(atom), target, (*blocks)[index])
                                               : Value::traced(std::move(atom), target));
      ++index;
    }
    return outputs;
  }
  for (Atom& atom : target->builder().bind(primitive, std::move(atoms), std::move(params))) {
    outputs.push_back(known && index < known->size() ? Value::traced_known(std::move(atom), target, (*known)[index])
                                                     : Value::traced(std::move(atom), target));
    ++index;
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
    const SourceScope source(source_or_current(eqn.source));
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
