// Python <-> core conversions: numpy data through the buffer protocol, scalars as weak literals.
#include "python/convert.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "api/session.h"
#include "api/trace.h"
#include "base/error.h"
#include "base/half_float.h"
#include "sharding/sharding.h"

namespace shardscope::python {
namespace {

py::module_ numpy() { return py::module_::import("numpy"); }

struct LiveTrace {
  const api::Trace* trace;
  uint64_t token;
};

// Traces running user code, innermost last (the GIL guards it: Python code runs under one trace at a time).
std::vector<LiveTrace>& live_traces() {
  static std::vector<LiveTrace> traces;
  return traces;
}

uint64_t live_token(const api::Trace* trace) {
  const std::vector<LiveTrace>& traces = live_traces();
  for (auto it = traces.rbegin(); it != traces.rend(); ++it) {
    if (it->trace == trace) return it->token;
  }
  return 0;
}

// JAX checks a Python int against its default integer type (abstract_arrays.py).
void check_python_int(const py::handle& value) {
  const bool x64 = api::session().enable_x64;
  const py::int_ lowest(x64 ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int32_t>::min());
  const py::int_ highest(x64 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int32_t>::max());
  if (value < lowest || value > highest) {
    throw Error("OverflowError", "Python int " + py::str(value).cast<std::string>() + " too large to convert to " +
                                     (x64 ? "int64" : "int32"));
  }
}

}  // namespace

ActiveTraceScope::ActiveTraceScope(const api::Trace* trace) {
  static uint64_t next_token = 0;
  token_ = ++next_token;
  live_traces().push_back({trace, token_});
}

ActiveTraceScope::~ActiveTraceScope() {
  std::vector<LiveTrace>& traces = live_traces();
  for (auto it = traces.rbegin(); it != traces.rend(); ++it) {
    if (it->token == token_) {
      traces.erase(std::next(it).base());
      return;
    }
  }
}

PyValue::PyValue(api::Value value)
    : value_(api::realized(std::move(value))), trace_token_(value_.is_traced() ? live_token(value_.trace()) : 0) {
  if (value_.is_traced()) vmap_axis_size_ = value_.trace()->vmap_axis_size();
}

void PyValue::mark_deleted() { deleted_ = true; }

const api::Trace* PyValue::live_trace() const {
  if (!value_.is_traced()) return nullptr;
  // A token of 0: made outside any scope of user code (by the engine itself), which outlives no trace.
  if (trace_token_ != 0 && live_token(value_.trace()) != trace_token_) return nullptr;
  return value_.trace();
}

const api::Value& PyValue::operand() const {
  if (deleted_) throw runtime_error("Array has been deleted with shape=" + value_.aval().str_short(false) + ".");
  if (leaked()) {
    throw Error("UnexpectedTracerError",
                "Encountered an unexpected tracer. A function transformed by JAX had a side effect, allowing for a "
                "reference to an intermediate value with type " +
                    value_.aval().str_short(false) +
                    " wrapped in a DynamicJaxprTracer to escape the scope of the transformation.\nJAX "
                    "transformations require that functions explicitly return their outputs, and disallow saving "
                    "intermediate values to global state.");
  }
  return value_;
}

py::object numpy_dtype(DType dtype) {
  const std::string name = dtype == DType::kBFloat16 ? "float32" : std::string(dtype_name(dtype));
  return numpy().attr("dtype")(name);
}

py::object python_dtype(DType dtype) {
  if (dtype == DType::kBFloat16) return py::module_::import("jax.dtypes").attr("bfloat16_dtype");
  return numpy_dtype(dtype);
}

DType dtype_from_python(const py::handle& object) {
  py::object candidate = py::reinterpret_borrow<py::object>(object);
  if (py::hasattr(candidate, "_shardscope_dtype"))
    return parse_dtype(candidate.attr("_shardscope_dtype").cast<std::string>()).value();
  std::string name;
  if (py::isinstance<py::str>(candidate)) {
    name = candidate.cast<std::string>();
  } else if (py::isinstance<py::type>(candidate) && candidate.is(py::module_::import("builtins").attr("float"))) {
    name = "float";
  } else if (py::isinstance<py::type>(candidate) && candidate.is(py::module_::import("builtins").attr("int"))) {
    name = "int";
  } else if (py::isinstance<py::type>(candidate) && candidate.is(py::module_::import("builtins").attr("bool"))) {
    name = "bool";
  } else {
    name = py::str(numpy().attr("dtype")(candidate).attr("name")).cast<std::string>();
  }
  const std::optional<DType> dtype = parse_dtype(name);
  if (!dtype) {
    // Complex dtypes, which JAX has and the engine does not simulate, are a missing feature, said as such;
    // anything else (object, strings, unknown names) is the TypeError JAX gives too.
    // A name numpy does not know raises numpy's own TypeError ("data type 'floaty' not understood"), as JAX's
    // np.dtype call does.
    std::string known;
    const py::object numpy_type = numpy().attr("dtype")(candidate);
    if (numpy_type.attr("kind").cast<std::string>() == "c") known = py::str(numpy_type.attr("name"));
    if (!known.empty()) {
      throw not_implemented_error("arrays of dtype " + known +
                                  " are not supported by shardscope yet (it simulates bool, integer and floating "
                                  "dtypes)");
    }
    throw type_error("Cannot interpret '" + py::repr(candidate).cast<std::string>() + "' as a data type");
  }
  return canonicalize_dtype(*dtype, api::session().enable_x64);
}

BufferPtr buffer_from_python(const py::handle& data, std::optional<DType> dtype) {
  if (!dtype && py::isinstance<py::int_>(data) && !py::isinstance<py::bool_>(data)) check_python_int(data);
  py::object array = numpy().attr("asarray")(data);
  DType source = dtype_from_python(array.attr("dtype"));
  const DType target = dtype.value_or(source);
  if (target == DType::kBFloat16) {
    py::array_t<float, py::array::c_style | py::array::forcecast> as_float(array);
    Shape shape(as_float.shape(), as_float.shape() + as_float.ndim());
    auto buffer = std::make_shared<Buffer>(DType::kBFloat16, shape);
    auto out = buffer->as_mutable<uint16_t>();
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = float_to_bf16(as_float.data()[i]);
    return buffer;
  }
  py::array contiguous = py::array::ensure(array.attr("astype")(numpy_dtype(target)), py::array::c_style);
  Shape shape(contiguous.shape(), contiguous.shape() + contiguous.ndim());
  auto buffer = std::make_shared<Buffer>(target, shape);
  if (buffer->nbytes() > 0) std::memcpy(buffer->mutable_bytes().data(), contiguous.data(), buffer->nbytes());
  return buffer;
}

py::object to_numpy(const Array& array) {
  if (array.is_abstract()) throw value_error("an abstract array has no values");
  const BufferPtr global = array.gather();
  std::vector<py::ssize_t> shape(global->shape().begin(), global->shape().end());
  if (global->dtype() == DType::kBFloat16) {
    py::array_t<float> out(shape);
    const auto bits = global->as<uint16_t>();
    for (std::size_t i = 0; i < bits.size(); ++i) out.mutable_data()[i] = bf16_to_float(bits[i]);
    return out;
  }
  py::array out(numpy_dtype(global->dtype()), shape);
  // An empty array's storage may be no allocation at all: memcpy must not see its null pointer.
  if (global->nbytes() > 0) std::memcpy(out.mutable_data(), global->bytes().data(), global->nbytes());
  return out;
}

namespace {

// A numpy scalar or 0-d array of a plain numeric dtype met while tracing: JAX stages it as a literal (2.0:f32[]), not a
// captured constant, strongly typed in its (canonicalized) dtype. Others (half floats, 64-bit ints beyond a
// double's exact range) stay arrays.
std::optional<api::Value> numpy_scalar_literal(const py::object& array, DType dtype) {
  // Only where it is staged: outside a trace a numpy scalar is an ordinary array (device_put, asarray).
  if (api::current_trace() == nullptr || array.attr("ndim").cast<int64_t>() != 0) return std::nullopt;
  const bool plain = dtype == DType::kBool || dtype == DType::kFloat32 || dtype == DType::kFloat64 ||
                     dtype == DType::kInt8 || dtype == DType::kInt16 || dtype == DType::kInt32 ||
                     dtype == DType::kInt64 || dtype == DType::kUInt8 || dtype == DType::kUInt16 ||
                     dtype == DType::kUInt32;
  if (!plain) return std::nullopt;
  // The value as the canonical dtype holds it (a float64 scalar rounds to float32 without x64).
  const py::object canonical = array.attr("astype")(std::string(dtype_name(dtype))).attr("item")();
  const double value = canonical.cast<double>();
  if (dtype == DType::kInt64 && std::abs(value) > 9007199254740992.0) return std::nullopt;
  return api::Value::scalar(scalar_literal(value, dtype, false));
}

}  // namespace

api::Value to_value(const py::handle& object) {
  if (py::isinstance<PyValue>(object)) return object.cast<const PyValue&>().operand();
  const bool x64 = api::session().enable_x64;
  if (py::isinstance<py::bool_>(object)) {
    return api::Value::scalar(scalar_literal(object.cast<bool>() ? 1.0 : 0.0, DType::kBool, false));
  }
  if (py::isinstance<py::int_>(object)) {
    check_python_int(object);
    return api::Value::scalar(scalar_literal(object.cast<double>(), default_int_dtype(x64), true));
  }
  if (py::isinstance<py::float_>(object)) {
    return api::Value::scalar(scalar_literal(object.cast<double>(), default_float_dtype(x64), true));
  }
  if (py::hasattr(object, "__jax_array__")) return to_value(object.attr("__jax_array__")());
  py::object array = numpy().attr("asarray")(object);
  const std::string kind = array.attr("dtype").attr("kind").cast<std::string>();
  if (kind == "U" || kind == "S" || kind == "O" || kind == "V") {
    // JAX's message for values it has no abstract type for (core.py), e.g. strings, None, arbitrary objects.
    throw type_error("Argument '" + py::str(object).cast<std::string>() + "' of type " +
                     py::str(py::type::of(object)).cast<std::string>() + " is not a valid JAX type");
  }
  const DType dtype = dtype_from_python(array.attr("dtype"));
  if (std::optional<api::Value> literal = numpy_scalar_literal(array, dtype)) return *literal;
  const JaxProfile& profile = api::session().profile;
  return api::Value::concrete(Array::from_host(buffer_from_python(array, dtype),
                                               make_single_device_sharding(api::default_device(), profile), profile));
}

const api::Value& operand_ref(const py::handle& object, std::optional<api::Value>& storage) {
  if (py::isinstance<PyValue>(object)) return object.cast<const PyValue&>().operand();
  return storage.emplace(to_value(object));
}

std::vector<api::Value> to_values(const py::handle& sequence) {
  std::vector<api::Value> values;
  for (const py::handle item : sequence) values.push_back(to_value(item));
  return values;
}

py::object from_value(api::Value value) { return py::cast(PyValue(std::move(value))); }

py::list from_values(std::vector<api::Value> values) {
  py::list list;
  for (api::Value& value : values) list.append(from_value(std::move(value)));
  return list;
}

namespace {

ParamValue param_from_python(const py::handle& object) {
  if (object.is_none()) return ParamValue::None{};
  if (py::isinstance<py::bool_>(object)) return object.cast<bool>();
  if (py::isinstance<py::int_>(object)) return object.cast<int64_t>();
  if (py::isinstance<py::float_>(object)) return object.cast<double>();
  if (py::isinstance<py::str>(object)) return object.cast<std::string>();
  if (py::isinstance<PartitionSpec>(object)) return object.cast<PartitionSpec>();
  if (py::isinstance<NamedSharding>(object)) return object.cast<NamedSharding>();
  if (py::isinstance<Mesh>(object)) return object.cast<Mesh>();
  if (py::isinstance<py::tuple>(object) || py::isinstance<py::list>(object)) {
    std::vector<ParamValue> items;
    for (const py::handle item : object) items.push_back(param_from_python(item));
    return py::isinstance<py::list>(object) ? ParamValue::list(std::move(items)) : ParamValue::tuple(std::move(items));
  }
  return dtype_from_python(object);
}

}  // namespace

Params params_from_python(const py::dict& params) {
  Params out;
  for (const auto& [key, value] : params) out.emplace_back(key.cast<std::string>(), param_from_python(value));
  return out;
}

int64_t int_argument(const py::handle& value, const char* what) {
  if (PyBool_Check(value.ptr()) == 0 && PyIndex_Check(value.ptr()) == 0) {
    throw py::type_error(std::string(what) + ": '" + Py_TYPE(value.ptr())->tp_name +
                         "' object cannot be interpreted as an integer");
  }
  const py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr()));
  if (!index) throw py::error_already_set();
  int overflow = 0;
  const long long result = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0) {
    const std::string message =
        std::string(what) + "=" + py::repr(index).cast<std::string>() + ": Python int too large to convert to C int64";
    PyErr_SetString(PyExc_OverflowError, message.c_str());
    throw py::error_already_set();
  }
  if (result == -1 && PyErr_Occurred() != nullptr) throw py::error_already_set();
  return static_cast<int64_t>(result);
}

}  // namespace shardscope::python
