// Conversions between Python objects and core values: arrays, scalars, numpy data, dtypes and params.
#pragma once

#include <pybind11/pybind11.h>

#include <vector>

#include "api/trace.h"

namespace shardscope::python {

namespace py = pybind11;

// The Python face of a value: jax.Array when concrete, a tracer inside a trace.
class PyValue {
 public:
  explicit PyValue(api::Value value) : value_(std::move(value)) {}
  [[nodiscard]] const api::Value& value() const { return value_; }

 private:
  api::Value value_;
};

// numpy's dtype object for a dtype (bfloat16, which numpy lacks, reads back as float32 data).
[[nodiscard]] py::object numpy_dtype(DType dtype);
// A dtype from a numpy dtype, a scalar type (jnp.float32), or a name; TypeError naming the value otherwise.
[[nodiscard]] DType dtype_from_python(const py::handle& object);

// A Python value as an operand: PyValue as is, Python scalars as weakly typed literals, numpy data and nested
// lists as arrays on the default device (dtype canonicalized as JAX does without x64).
[[nodiscard]] api::Value to_value(const py::handle& object);
[[nodiscard]] std::vector<api::Value> to_values(const py::handle& sequence);
[[nodiscard]] py::object from_value(api::Value value);
[[nodiscard]] py::list from_values(std::vector<api::Value> values);

// The global value as a numpy array (a copy).
[[nodiscard]] py::object to_numpy(const Array& array);
// Host data for an array: numpy array (or anything np.asarray takes) to a buffer of `dtype` (or its own).
[[nodiscard]] BufferPtr buffer_from_python(const py::handle& data, std::optional<DType> dtype);

// Equation params from a dict of Python values (None, bool, int, float, str, tuples, dtypes, shardings).
[[nodiscard]] Params params_from_python(const py::dict& params);

}  // namespace shardscope::python
