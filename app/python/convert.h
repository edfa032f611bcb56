// Conversions between Python objects and core values: arrays, scalars, numpy data, dtypes and params.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "api/trace.h"

namespace shardscope::python {

namespace py = pybind11;

// The Python face of a value: jax.Array when concrete, a tracer inside a trace.
class PyValue {
 public:
  explicit PyValue(api::Value value);
  [[nodiscard]] const api::Value& value() const { return value_; }
  // The value as an operand: UnexpectedTracerError for a tracer whose trace has finished (a leaked tracer),
  // whose Trace no longer exists.
  [[nodiscard]] const api::Value& operand() const;
  // The value's trace while it still exists, else nullptr: a leaked tracer's Trace object is gone, so reprs and
  // queries of such a tracer must not reach it.
  [[nodiscard]] const api::Trace* live_trace() const;
  // A traced value whose trace has ended.
  [[nodiscard]] bool leaked() const { return value_.is_traced() && live_trace() == nullptr; }
  // The size a vmap body's value is batched over (kept from when it was made, so a leaked one still shows it).
  [[nodiscard]] std::optional<int64_t> vmap_axis_size() const { return vmap_axis_size_; }
  // jax.Array.delete(): using the array as an operand raises RuntimeError afterwards (its buffers stay: the
  // simulation has no device memory to give back).
  void mark_deleted();
  [[nodiscard]] bool deleted() const { return deleted_; }

 private:
  api::Value value_;
  bool deleted_ = false;
  uint64_t trace_token_ = 0;  // which run of Python code under the value's trace made it; 0 when unknown
  std::optional<int64_t> vmap_axis_size_;
};

// Marks a trace as running user Python code for the scope's lifetime: tracers made meanwhile may be used
// as operands until the scope ends, and are reported as leaked afterwards (the Trace object is gone then).
class ActiveTraceScope {
 public:
  explicit ActiveTraceScope(const api::Trace* trace);
  ~ActiveTraceScope();
  ActiveTraceScope(const ActiveTraceScope&) = delete;
  ActiveTraceScope& operator=(const ActiveTraceScope&) = delete;

 private:
  uint64_t token_;
};

// numpy's dtype object for a dtype (bfloat16, which numpy lacks, reads back as float32 data).
[[nodiscard]] py::object numpy_dtype(DType dtype);
// The dtype an array reports to Python: numpy's, or jax.dtypes' stand-in for bfloat16 (this numpy has no ml_dtypes).
[[nodiscard]] py::object python_dtype(DType dtype);
// A dtype from a numpy dtype, a scalar type (jnp.float32), or a name; TypeError naming the value otherwise.
[[nodiscard]] DType dtype_from_python(const py::handle& object);

// A Python value as an operand: PyValue as is, Python scalars as weakly typed literals, numpy data and nested
// lists as arrays on the default device (dtype canonicalized as JAX does without x64).
[[nodiscard]] api::Value to_value(const py::handle& object);
[[nodiscard]] std::vector<api::Value> to_values(const py::handle& sequence);
// to_value without copying a jax.Array's value: a reference to it, or to `storage` holding the conversion.
[[nodiscard]] const api::Value& operand_ref(const py::handle& object, std::optional<api::Value>& storage);
[[nodiscard]] py::object from_value(api::Value value);
[[nodiscard]] py::list from_values(std::vector<api::Value> values);

// The global value as a numpy array (a copy).
[[nodiscard]] py::object to_numpy(const Array& array);
// Host data for an array: numpy array (or anything np.asarray takes) to a buffer of `dtype` (or its own).
[[nodiscard]] BufferPtr buffer_from_python(const py::handle& data, std::optional<DType> dtype);

// A Python int (or anything with __index__) for a parameter named `what`: TypeError for other values and
// OverflowError beyond int64, as CPython's own conversions word them, instead of pybind11's argument dump.
[[nodiscard]] int64_t int_argument(const py::handle& value, const char* what);

// Equation params from a dict of Python values (None, bool, int, float, str, tuples, dtypes, shardings).
[[nodiscard]] Params params_from_python(const py::dict& params);

}  // namespace shardscope::python
