// User-level values and tracing: what a primitive applied to arrays, tracers or Python scalars does.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "array/array.h"
#include "ir/jaxpr.h"
#include "trace/builder.h"

namespace shardscope::api {

class Trace;

// A value in user code: a concrete array, a variable of an active trace, or a Python scalar (a weakly typed
// literal until an operation gives it a dtype).
class Value {
 public:
  static Value concrete(Array array);
  static Value scalar(Literal literal);
  static Value traced(Atom atom, Trace* trace);
  // A traced value whose concrete value is also known (the primal a grad or jvp of concrete arguments carries, as
  // JAX's JVPTracer does): Python control flow and scalar conversions may read it.
  static Value traced_known(Atom atom, Trace* trace, Value known);

  [[nodiscard]] const Aval& aval() const { return state().aval; }
  [[nodiscard]] bool is_concrete() const { return state().array.has_value(); }
  [[nodiscard]] bool is_scalar_literal() const { return state().trace == nullptr && !state().array.has_value(); }
  [[nodiscard]] bool is_traced() const { return state().trace != nullptr; }
  [[nodiscard]] const Array& array() const;  // TypeError-like runtime_error when not concrete
  [[nodiscard]] const Atom& atom() const { return state().atom; }
  [[nodiscard]] Trace* trace() const { return state().trace; }
  // An eager shard_map body's value on each device (mesh order), when the body is traced alongside its blocks.
  [[nodiscard]] const std::vector<BufferPtr>* blocks() const { return state().blocks.get(); }
  static Value traced_blocks(Atom atom, Trace* trace, std::vector<BufferPtr> blocks);
  // The concrete value of a traced value when known (a concrete or literal Value), else nullptr.
  [[nodiscard]] const Value* known() const { return state().known.get(); }
  // The value itself when concrete or a literal, its known value when traced with one, else nullptr.
  [[nodiscard]] const Value* concrete_or_known() const { return is_traced() ? known() : this; }

 private:
  // Values are immutable and copied through every jnp function (promotion, broadcasting, pytrees), so
  // copies share one state.
  struct State {
    std::optional<Array> array;
    Atom atom;
    Trace* trace = nullptr;
    Aval aval;
    std::shared_ptr<const Value> known;
    std::shared_ptr<const std::vector<BufferPtr>> blocks;
  };
  [[nodiscard]] const State& state() const;

  std::shared_ptr<const State> state_;
};

// One level of tracing (a jit, make_jaxpr, vmap, grad, shard_map or pmap body). Constructing a Trace makes it
// the innermost for this thread; destroying it restores the previous one. Values from outside (concrete arrays,
// tracers of enclosing traces) that reach an operation here are captured as constants.
class Trace {
 public:
  explicit Trace(std::string name = "f");
  ~Trace();
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

  [[nodiscard]] Value arg(Aval aval);
  [[nodiscard]] Atom lift(const Value& value);
  [[nodiscard]] JaxprBuilder& builder() { return builder_; }
  [[nodiscard]] int level() const { return level_; }
  [[nodiscard]] const std::string& name() const { return name_; }
  // The mapped axis size when this trace is a vmap body (its values stand for batches of that many): JAX prints
  // its tracers as VmapTracer, with the batched type.
  [[nodiscard]] std::optional<int64_t> vmap_axis_size() const { return vmap_axis_size_; }
  // Also remembers where the user is (the vmap call): JAX's BatchTracers of the arguments were created there.
  void set_vmap_axis_size(std::optional<int64_t> size);
  [[nodiscard]] const SourceInfo& vmap_call_site() const { return vmap_call_site_; }
  // Which differentiation evaluates alongside this trace ("grad" or "jvp"; empty: none). Such a trace runs each
  // operation whose operands are known and records the result as known, as JAX's JVP of concrete arguments
  // computes primals eagerly.
  [[nodiscard]] const std::string& concrete_kind() const { return concrete_kind_; }
  void set_concrete_kind(std::string kind) { concrete_kind_ = std::move(kind); }
  // A traced argument with its concrete value.
  [[nodiscard]] Value arg_known(Aval aval, const Value& known);
  // An eager shard_map body: each operation is also run on every device's blocks (collectives across them), so
  // that printing a value shows each device's block, as JAX's eager shard_map does.
  [[nodiscard]] const Mesh* per_device_mesh() const { return per_device_mesh_; }
  void set_per_device_mesh(const Mesh* mesh) { per_device_mesh_ = mesh; }
  [[nodiscard]] Value arg_blocks(Aval aval, std::vector<BufferPtr> blocks);

  struct Closed {
    JaxprPtr jaxpr;               // captured values are its constvars
    std::vector<Value> captured;  // one per constvar, in order
  };
  // The traced program with `outputs` as its results (values from outside become constvars too).
  [[nodiscard]] Closed finish(const std::vector<Value>& outputs);

 private:
  JaxprBuilder builder_;
  std::string name_;
  int level_ = 0;
  Trace* previous_ = nullptr;
  std::optional<int64_t> vmap_axis_size_;
  SourceInfo vmap_call_site_;
  std::string concrete_kind_;
  const Mesh* per_device_mesh_ = nullptr;
  std::vector<std::pair<Value, Var>> captured_;
};

// The type a value has as a traced argument: an Explicit-mode sharding becomes sharding in the type.
[[nodiscard]] Aval argument_aval(const Value& value);
// argument_aval of each value, in order.
[[nodiscard]] std::vector<Aval> argument_avals(const std::vector<Value>& values);

// The innermost active trace of this thread, or null.
[[nodiscard]] Trace* current_trace();

// Which of its trace's arguments a traced value depends on (positions among the trace's arguments, ascending), as
// JAX names them when a tracer cannot become a Python value; nullopt for a value that is not traced.
[[nodiscard]] std::optional<std::vector<std::size_t>> argument_progenitors(const Value& value);
// The operations a traced value that reads no argument came from, as JAX lists them ("a:i32[] = reduce_prod[...] b
// \n    from line file:line:column (function)"): each equation of its trace reading a constant it depends on or a
// literal, in program order.
[[nodiscard]] std::vector<std::string> tracer_origin_operations(const Value& value);
// Where a value of a vmap body was created, as JAX's BatchTracer error messages summarize it ("file:line:col
// (function)"): the operation that computed it, or the vmap call for an argument. nullopt for other values, or
// when nothing recorded the location.
[[nodiscard]] std::optional<std::string> batch_tracer_origin(const Value& value);

// What an operation hands back to the user: a scalar literal made outside every trace (jnp.zeros(()), a
// convert_element_type of a Python number) becomes the 0-d array JAX's eager dispatch returns, on the default
// device with the literal's dtype and weak type. Inside a trace, and for every other value, `value` itself.
[[nodiscard]] Value realized(Value value);

// Applies a primitive: recorded in the innermost trace among the inputs (and the current one), or run now on the
// concrete inputs as JAX's eager dispatch does (a one-equation jit).
std::vector<Value> bind(const std::string& primitive, const std::vector<Value>& inputs, Params params = {});
Value bind1(const std::string& primitive, const std::vector<Value>& inputs, Params params = {});

// Runs a program on values: its equations are bound one by one, so inside a trace they are recorded and outside
// they run eagerly. `inputs` are the constvars' values followed by the arguments.
std::vector<Value> apply_jaxpr(const Jaxpr& jaxpr, const std::vector<Value>& inputs);

// A closed program whose constvars become leading arguments (what a jit equation holds).
[[nodiscard]] JaxprPtr consts_as_args(const Jaxpr& jaxpr);

}  // namespace shardscope::api
