// `_shardscope.numpy`, `.lax` and `.nn`: the engine's jnp/lax/nn functions with Python's argument forms.
#include <pybind11/stl.h>

#include "api/convolution.h"
#include "api/nn.h"
#include "api/numpy.h"
#include "base/error.h"
#include "python/bindings.h"
#include "python/convert.h"

namespace shardscope::python {
namespace {

using api::Value;
namespace jnp = api::jnp;

std::optional<DType> dtype_arg(const py::object& dtype) {
  if (dtype.is_none()) return std::nullopt;
  return dtype_from_python(dtype);
}

jnp::Axis axis_arg(const py::object& axis) {
  if (axis.is_none()) return std::nullopt;
  if (py::isinstance<py::int_>(axis)) return std::vector<int64_t>{axis.cast<int64_t>()};
  return axis.cast<std::vector<int64_t>>();
}

std::optional<int64_t> int_or_none(const py::object& value) {
  if (value.is_none()) return std::nullopt;
  return value.cast<int64_t>();
}

Shape shape_arg(const py::object& shape) {
  if (py::isinstance<py::int_>(shape)) return {shape.cast<int64_t>()};
  return shape.cast<std::vector<int64_t>>();
}

std::optional<Value> optional_value(const py::object& value) {
  if (value.is_none()) return std::nullopt;
  return to_value(value);
}

jnp::IndexItem index_item(const py::handle& item);

// An integer (or concrete boolean) array used as an index: jax Arrays, tracers, numpy arrays. Boolean masks
// become the integer arrays of their nonzero positions (NDIndexer.expand_bool_indices), so only concrete ones do.
bool is_array_index(const py::handle& item) {
  return py::isinstance<PyValue>(item) || py::isinstance(item, py::module_::import("numpy").attr("ndarray"));
}

void append_array_index(std::vector<jnp::IndexItem>& items, const py::handle& item) {
  const api::Value value = to_value(item);
  if (value.aval().dtype != DType::kBool) {
    items.push_back(jnp::IndexItem::of_array(value));
    return;
  }
  if (value.is_traced()) {
    throw Error("NonConcreteBooleanIndexError",
                "Array boolean indices must be concrete; got " + value.aval().str_short(true) +
                    "\n\nSee https://docs.jax.dev/en/latest/errors.html#jax.errors.NonConcreteBooleanIndexError");
  }
  const py::object numpy = py::module_::import("numpy");
  const py::tuple positions = numpy.attr("nonzero")(numpy.attr("asarray")(item));
  for (const py::handle p : positions) {
    items.push_back(jnp::IndexItem::of_array(to_value(p.attr("astype")(numpy.attr("int32")))));
  }
}

// Concrete 0-d arrays index like the Python int they hold (a static slice).
bool is_concrete_scalar(const py::handle& item) {
  if (py::isinstance<PyValue>(item)) {
    const api::Value& value = item.cast<const PyValue&>().value();
    return !value.is_traced() && value.aval().rank() == 0 && value.aval().dtype != DType::kBool;
  }
  return py::len(item.attr("shape")) == 0 && item.attr("dtype").attr("kind").cast<std::string>() != "b";
}

std::vector<jnp::IndexItem> index_items(const py::object& index) {
  std::vector<jnp::IndexItem> items;
  const auto add = [&](const py::handle& item) {
    if (is_array_index(item) && !is_concrete_scalar(item)) {
      append_array_index(items, item);
    } else {
      items.push_back(index_item(item));
    }
  };
  if (py::isinstance<py::tuple>(index)) {
    for (const py::handle item : index) add(item);
  } else if (py::isinstance<py::list>(index)) {
    throw type_error(
        "Using a non-tuple sequence for multidimensional indexing is not allowed; use `arr[array(seq)]` instead of "
        "`arr[seq]`. See https://github.com/jax-ml/jax/issues/4564 for more information.");
  } else {
    add(index);
  }
  return items;
}

jnp::IndexOptions index_options(const py::object& mode, const py::object& fill_value, bool indices_are_sorted,
                                bool unique_indices) {
  jnp::IndexOptions options;
  if (!mode.is_none()) options.mode = py::str(mode).cast<std::string>();
  if (!fill_value.is_none()) options.fill_value = fill_value.cast<double>();
  options.indices_are_sorted = indices_are_sorted;
  options.unique_indices = unique_indices;
  return options;
}

jnp::IndexItem index_item(const py::handle& item) {
  if (item.is_none()) return jnp::IndexItem::newaxis();
  if (item.is(py::ellipsis())) return jnp::IndexItem::ellipsis();
  if (py::isinstance<py::slice>(item)) {
    return jnp::IndexItem::range(int_or_none(item.attr("start")), int_or_none(item.attr("stop")),
                                 int_or_none(item.attr("step")));
  }
  if (py::isinstance<py::int_>(item) || py::hasattr(item, "__index__")) {
    return jnp::IndexItem::at(py::int_(py::reinterpret_borrow<py::object>(item)).cast<int64_t>());
  }
  if (py::isinstance<py::float_>(item)) {
    // NumPy's dtype of a Python float, as JAX's _is_valid_integer_index check names it.
    throw type_error("Indexer must have integer or boolean type, got indexer with type float64");
  }
  throw not_implemented_error("indexing with " + py::repr(item).cast<std::string>() +
                              " (arrays or booleans as indices) is not supported by shardscope yet");
}

py::object wrap(Value value) { return from_value(std::move(value)); }

using Unary = Value (*)(const Value&);
using Binary = Value (*)(const Value&, const Value&);

bool is_sequence(const py::handle& x) { return py::isinstance<py::list>(x) || py::isinstance<py::tuple>(x); }

// A (nested) list or tuple with a jax Array or tracer somewhere inside.
bool holds_array(const py::handle& x) {
  if (py::isinstance<PyValue>(x)) return true;
  if (!is_sequence(x)) return false;
  for (const py::handle item : x) {
    if (holds_array(item)) return true;
  }
  return false;
}

void collect_leaves(const py::handle& x, std::vector<Value>& leaves) {
  if (is_sequence(x)) {
    for (const py::handle item : x) collect_leaves(item, leaves);
  } else {
    leaves.push_back(to_value(x));
  }
}

Value stack_nested(const py::handle& x, DType dtype) {
  if (!is_sequence(x)) return jnp::asarray(to_value(x), dtype);
  std::vector<Value> elements;
  // Leaves convert where they are expanded, one after the other, as JAX's jaxprs show them.
  for (const py::handle item : x) elements.push_back(is_sequence(item) ? stack_nested(item, dtype) : to_value(item));
  return jnp::array_from_elements(elements, dtype);
}

// jnp.array / jnp.asarray: lists mixing traced values and Python numbers become a stack of the elements at
// their common (promoted) dtype, as JAX's array() does; everything else converts host data.
py::object array_from_python(const py::object& x, const py::object& dtype) {
  if (py::isinstance<PyValue>(x)) return wrap(jnp::asarray(to_value(x), dtype_arg(dtype)));
  if (is_sequence(x) && holds_array(x)) {
    std::vector<Value> leaves;
    collect_leaves(x, leaves);
    const DType target = dtype.is_none() ? jnp::result_type(leaves).dtype : dtype_from_python(dtype);
    return wrap(stack_nested(x, target));
  }
  return wrap(jnp::asarray(buffer_from_python(x, dtype_arg(dtype))));
}

// JAX's util.check_arraylike: numpy's ufuncs and reductions take arrays and scalars, not Python lists or tuples.
Value arraylike(const py::object& x, const char* function, int position) {
  if (py::isinstance<py::list>(x) || py::isinstance<py::tuple>(x)) {
    const std::string type = py::str(py::type::of(x));
    throw type_error(std::string(function) + " requires ndarray or scalar arguments, got " + type + " at position " +
                     std::to_string(position) + ".");
  }
  // A ref is not an array: JAX's jitted jnp functions see it as a tracer of a ref type and refuse it so.
  if (py::hasattr(x, "_shardscope_is_ref")) {
    throw type_error(std::string(function) +
                     " requires ndarray or scalar arguments, got <class "
                     "'jax._src.interpreters.partial_eval.DynamicJaxprTracer'> at position " +
                     std::to_string(position) + ".");
  }
  return to_value(x);
}

void bind_numpy(py::module_& m) {
  const std::vector<std::pair<const char*, Unary>> unary = {{"negative", jnp::negative},
                                                            {"positive", jnp::positive},
                                                            {"abs", jnp::abs},
                                                            {"absolute", jnp::abs},
                                                            {"sign", jnp::sign},
                                                            {"square", jnp::square},
                                                            {"reciprocal", jnp::reciprocal},
                                                            {"floor", jnp::floor},
                                                            {"ceil", jnp::ceil},
                                                            {"isfinite", jnp::isfinite},
                                                            {"isnan", jnp::isnan},
                                                            {"exp", jnp::exp},
                                                            {"log", jnp::log},
                                                            {"sqrt", jnp::sqrt},
                                                            {"tanh", jnp::tanh},
                                                            {"sin", jnp::sin},
                                                            {"cos", jnp::cos},
                                                            {"logical_not", jnp::logical_not},
                                                            {"ravel", jnp::ravel}};
  for (const auto& [name, fn] : unary) {
    m.def(name, [fn = fn, name = name](const py::object& x) { return wrap(fn(arraylike(x, name, 0))); });
  }
  for (const char* name : {"tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "arcsinh", "arccosh", "arctanh",
                           "log1p", "expm1", "log2", "log10", "exp2", "cbrt", "rint", "round", "trunc", "invert"}) {
    const std::string fn_name = name;
    m.def(name, [fn_name, name](const py::object& x) { return wrap(jnp::math(fn_name, arraylike(x, name, 0))); });
  }
  const std::vector<std::pair<const char*, Binary>> binary = {
      {"add", jnp::add},
      {"subtract", jnp::subtract},
      {"multiply", jnp::multiply},
      {"true_divide", jnp::true_divide},
      {"divide", jnp::true_divide},
      {"floor_divide", jnp::floor_divide},
      {"remainder", jnp::remainder},
      {"mod", jnp::remainder},
      {"power", jnp::power},
      {"maximum", jnp::maximum},
      {"minimum", jnp::minimum},
      {"equal", jnp::equal},
      {"not_equal", jnp::not_equal},
      {"less", jnp::less},
      {"less_equal", jnp::less_equal},
      {"greater", jnp::greater},
      {"greater_equal", jnp::greater_equal},
      {"logical_and", jnp::logical_and},
      {"logical_or", jnp::logical_or},
      {"logical_xor", jnp::logical_xor},
      {"bitwise_and", jnp::bitwise_and},
      {"bitwise_or", jnp::bitwise_or},
      {"logaddexp", jnp::logaddexp},
      {"arctan2", jnp::arctan2},
      {"dot", [](const Value& a, const Value& b) { return jnp::dot(a, b); }},
      {"vdot", jnp::vdot},
      {"matmul", [](const Value& a, const Value& b) { return jnp::matmul(a, b); }},
      {"inner", jnp::inner},
      {"outer", jnp::outer}};
  for (const auto& [name, fn] : binary) {
    m.def(name, [fn = fn, name = name](const py::object& x, const py::object& y) {
      return wrap(fn(arraylike(x, name, 0), arraylike(y, name, 1)));
    });
  }
  m.def("where", [](const py::object& c, const py::object& x, const py::object& y) {
    return wrap(jnp::where(arraylike(c, "where", 0), arraylike(x, "where", 1), arraylike(y, "where", 2)));
  });
  m.def(
      "clip",
      [](const py::object& x, const py::object& lo, const py::object& hi) {
        return wrap(jnp::clip(to_value(x), optional_value(lo), optional_value(hi)));
      },
      py::arg("x"), py::arg("min") = py::none(), py::arg("max") = py::none());
  m.def(
      "asarray", [](const py::object& x, const py::object& dtype) { return array_from_python(x, dtype); }, py::arg("a"),
      py::arg("dtype") = py::none());
  m.def(
      "array", [](const py::object& x, const py::object& dtype) { return array_from_python(x, dtype); },
      py::arg("object"), py::arg("dtype") = py::none());
  // jnp.copy of a jax Array binds JAX's copy primitive, so the result keeps the operand's sharding.
  m.def(
      "copy",
      [](const py::object& x, const py::object&) {
        if (py::isinstance<PyValue>(x)) return wrap(api::bind1("copy", {to_value(x)}));
        return wrap(jnp::asarray(buffer_from_python(x, std::nullopt)));
      },
      py::arg("a"), py::arg("order") = py::none());
  m.def("astype", [](const py::object& x, const py::object& dtype) {
    return wrap(jnp::astype(to_value(x), dtype_from_python(dtype)));
  });
  m.def(
      "zeros",
      [](const py::object& shape, const py::object& dtype) {
        return wrap(jnp::zeros(shape_arg(shape), dtype_arg(dtype)));
      },
      py::arg("shape"), py::arg("dtype") = py::none());
  m.def(
      "ones",
      [](const py::object& shape, const py::object& dtype) {
        return wrap(jnp::ones(shape_arg(shape), dtype_arg(dtype)));
      },
      py::arg("shape"), py::arg("dtype") = py::none());
  m.def(
      "full",
      [](const py::object& shape, const py::object& fill, const py::object& dtype) {
        return wrap(jnp::full(shape_arg(shape), to_value(fill), dtype_arg(dtype)));
      },
      py::arg("shape"), py::arg("fill_value"), py::arg("dtype") = py::none());
  m.def(
      "zeros_like",
      [](const py::object& x, const py::object& dtype) { return wrap(jnp::zeros_like(to_value(x), dtype_arg(dtype))); },
      py::arg("a"), py::arg("dtype") = py::none());
  m.def(
      "ones_like",
      [](const py::object& x, const py::object& dtype) { return wrap(jnp::ones_like(to_value(x), dtype_arg(dtype))); },
      py::arg("a"), py::arg("dtype") = py::none());
  m.def(
      "full_like",
      [](const py::object& x, const py::object& fill, const py::object& dtype) {
        return wrap(jnp::full_like(to_value(x), to_value(fill), dtype_arg(dtype)));
      },
      py::arg("a"), py::arg("fill_value"), py::arg("dtype") = py::none());
  m.def(
      "arange",
      [](const py::object& start, const py::object& stop, const py::object& step, const py::object& dtype) {
        const auto is_int = [](const py::object& v) { return v.is_none() || py::isinstance<py::int_>(v); };
        const bool integer_args = is_int(start) && is_int(stop) && is_int(step);
        const auto number = [](const py::object& v) {
          return v.is_none() ? std::nullopt : std::optional<double>(v.cast<double>());
        };
        return wrap(jnp::arange(start.cast<double>(), number(stop), number(step), dtype_arg(dtype), integer_args));
      },
      py::arg("start"), py::arg("stop") = py::none(), py::arg("step") = py::none(), py::arg("dtype") = py::none());
  m.def(
      "eye",
      [](int64_t n, const py::object& cols, int64_t k, const py::object& dtype) {
        return wrap(jnp::eye(n, int_or_none(cols), k, dtype_arg(dtype)));
      },
      py::arg("N"), py::arg("M") = py::none(), py::arg("k") = 0, py::arg("dtype") = py::none());
  m.def(
      "linspace",
      [](double start, double stop, int64_t num, bool endpoint, const py::object& dtype) {
        return wrap(jnp::linspace(start, stop, num, endpoint, dtype_arg(dtype)));
      },
      py::arg("start"), py::arg("stop"), py::arg("num") = 50, py::arg("endpoint") = true,
      py::arg("dtype") = py::none());
  const auto reduction = [&m](const char* name, auto fn) {
    m.def(
        name,
        [fn, name](const py::object& x, const py::object& axis, const py::object& dtype, const py::object& out,
                   bool keepdims) {
          if (!out.is_none()) throw not_implemented_error("The 'out' argument to jnp reductions is not supported.");
          return wrap(fn(arraylike(x, name, 0), axis_arg(axis), dtype_arg(dtype), keepdims));
        },
        py::arg("a"), py::arg("axis") = py::none(), py::arg("dtype") = py::none(), py::arg("out") = py::none(),
        py::arg("keepdims") = false);
  };
  reduction("sum",
            [](const Value& x, const jnp::Axis& a, std::optional<DType> d, bool k) { return jnp::sum(x, a, d, k); });
  reduction("prod",
            [](const Value& x, const jnp::Axis& a, std::optional<DType> d, bool k) { return jnp::prod(x, a, d, k); });
  reduction("mean",
            [](const Value& x, const jnp::Axis& a, std::optional<DType> d, bool k) { return jnp::mean(x, a, d, k); });
  const auto simple_reduction = [&m](const char* name, auto fn) {
    m.def(
        name,
        [fn, name](const py::object& x, const py::object& axis, const py::object& out, bool keepdims) {
          if (!out.is_none()) throw not_implemented_error("The 'out' argument to jnp reductions is not supported.");
          return wrap(fn(arraylike(x, name, 0), axis_arg(axis), keepdims));
        },
        py::arg("a"), py::arg("axis") = py::none(), py::arg("out") = py::none(), py::arg("keepdims") = false);
  };
  simple_reduction("max", [](const Value& x, const jnp::Axis& a, bool k) { return jnp::max(x, a, k); });
  simple_reduction("min", [](const Value& x, const jnp::Axis& a, bool k) { return jnp::min(x, a, k); });
  simple_reduction("amax", [](const Value& x, const jnp::Axis& a, bool k) { return jnp::max(x, a, k); });
  simple_reduction("amin", [](const Value& x, const jnp::Axis& a, bool k) { return jnp::min(x, a, k); });
  simple_reduction("all", [](const Value& x, const jnp::Axis& a, bool k) { return jnp::all(x, a, k); });
  simple_reduction("any", [](const Value& x, const jnp::Axis& a, bool k) { return jnp::any(x, a, k); });
  m.def(
      "var",
      [](const py::object& x, const py::object& axis, const py::object& dtype, int64_t ddof, bool keepdims) {
        return wrap(jnp::var(to_value(x), axis_arg(axis), dtype_arg(dtype), ddof, keepdims));
      },
      py::arg("a"), py::arg("axis") = py::none(), py::arg("dtype") = py::none(), py::arg("ddof") = 0,
      py::arg("keepdims") = false);
  m.def(
      "std",
      [](const py::object& x, const py::object& axis, const py::object& dtype, int64_t ddof, bool keepdims) {
        return wrap(jnp::stddev(to_value(x), axis_arg(axis), dtype_arg(dtype), ddof, keepdims));
      },
      py::arg("a"), py::arg("axis") = py::none(), py::arg("dtype") = py::none(), py::arg("ddof") = 0,
      py::arg("keepdims") = false);
  m.def(
      "argmax",
      [](const py::object& x, const py::object& axis, bool keepdims) {
        return wrap(jnp::argmax(to_value(x), int_or_none(axis), keepdims));
      },
      py::arg("a"), py::arg("axis") = py::none(), py::arg("keepdims") = false);
  m.def(
      "argmin",
      [](const py::object& x, const py::object& axis, bool keepdims) {
        return wrap(jnp::argmin(to_value(x), int_or_none(axis), keepdims));
      },
      py::arg("a"), py::arg("axis") = py::none(), py::arg("keepdims") = false);
  m.def(
      "cumsum",
      [](const py::object& x, const py::object& axis, const py::object& dtype) {
        return wrap(jnp::cumsum(to_value(x), int_or_none(axis), dtype_arg(dtype)));
      },
      py::arg("a"), py::arg("axis") = py::none(), py::arg("dtype") = py::none());
  m.def(
      "cumprod",
      [](const py::object& x, const py::object& axis, const py::object& dtype) {
        return wrap(jnp::cumprod(to_value(x), int_or_none(axis), dtype_arg(dtype)));
      },
      py::arg("a"), py::arg("axis") = py::none(), py::arg("dtype") = py::none());
  m.def("reshape",
        [](const py::object& x, const py::object& shape) { return wrap(jnp::reshape(to_value(x), shape_arg(shape))); });
  m.def(
      "transpose",
      [](const py::object& x, const py::object& axes) {
        return wrap(jnp::transpose(
            to_value(x),
            axes.is_none() ? std::nullopt : std::optional<std::vector<int64_t>>(axes.cast<std::vector<int64_t>>())));
      },
      py::arg("a"), py::arg("axes") = py::none());
  m.def(
      "swapaxes", [](const py::object& x, int64_t a, int64_t b) { return wrap(jnp::swapaxes(to_value(x), a, b)); },
      py::arg("a"), py::arg("axis1"), py::arg("axis2"));
  m.def(
      "expand_dims",
      [](const py::object& x, const py::object& axis) { return wrap(jnp::expand_dims(to_value(x), *axis_arg(axis))); },
      py::arg("a"), py::arg("axis"));
  m.def(
      "squeeze",
      [](const py::object& x, const py::object& axis) { return wrap(jnp::squeeze(to_value(x), axis_arg(axis))); },
      py::arg("a"), py::arg("axis") = py::none());
  m.def(
      "concatenate",
      [](const py::object& arrays, const py::object& axis) {
        return wrap(jnp::concatenate(to_values(arrays), int_or_none(axis)));
      },
      py::arg("arrays"), py::arg("axis") = 0);
  m.def(
      "stack",
      [](const py::object& arrays, int64_t axis, const py::object& out, const py::object& dtype) {
        if (!out.is_none()) throw not_implemented_error("The 'out' argument to jnp.stack is not supported.");
        // One array (a jax Array, tracer or numpy array) stacks its rows without unstacking them.
        if (is_array_index(arrays)) return wrap(jnp::stack_array(to_value(arrays), axis, dtype_arg(dtype)));
        return wrap(jnp::stack(to_values(arrays), axis, dtype_arg(dtype)));
      },
      py::arg("arrays"), py::arg("axis") = 0, py::arg("out") = py::none(), py::arg("dtype") = py::none());
  m.def(
      "unstack",
      [](const py::object& x, int64_t axis) {
        return py::tuple(from_values(jnp::unstack(arraylike(x, "unstack", 0), axis)));
      },
      py::arg("x"), py::pos_only(), py::kw_only(), py::arg("axis") = 0);
  m.def(
      "split",
      [](const py::object& x, const py::object& sections, int64_t axis) {
        if (py::isinstance<py::int_>(sections))
          return from_values(jnp::split(to_value(x), sections.cast<int64_t>(), axis));
        return from_values(jnp::split_at(to_value(x), sections.cast<std::vector<int64_t>>(), axis));
      },
      py::arg("ary"), py::arg("indices_or_sections"), py::arg("axis") = 0);
  m.def("broadcast_to", [](const py::object& x, const py::object& shape) {
    return wrap(jnp::broadcast_to(to_value(x), shape_arg(shape)));
  });
  m.def("tile",
        [](const py::object& x, const py::object& reps) { return wrap(jnp::tile(to_value(x), shape_arg(reps))); });
  m.def("einsum", [](const std::string& subscripts, const py::args& operands, const py::kwargs& kwargs) {
    std::optional<PartitionSpec> out_spec;
    for (const auto& item : kwargs) {
      const auto key = item.first.cast<std::string>();
      if (key == "out_sharding" && !item.second.is_none()) {
        if (py::isinstance<PartitionSpec>(item.second)) {
          out_spec = item.second.cast<PartitionSpec>();
        } else if (py::isinstance<NamedSharding>(item.second)) {
          out_spec = item.second.cast<NamedSharding>().spec;
        } else {
          throw py::type_error("jnp.einsum's out_sharding must be a PartitionSpec or a NamedSharding, got " +
                               py::repr(item.second).cast<std::string>());
        }
        continue;
      }
      // optimize only picks a contraction order; the values are the same.
      if (key != "optimize" && key != "out_sharding" && !(key == "precision" && item.second.is_none())) {
        throw not_implemented_error("jnp.einsum's " + key + " argument is not supported by shardscope");
      }
    }
    std::vector<Value> values;
    for (const py::handle a : operands) values.push_back(to_value(py::reinterpret_borrow<py::object>(a)));
    return wrap(jnp::einsum(subscripts, values, out_spec));
  });
  m.def(
      "tensordot",
      [](const py::object& a, const py::object& b, int64_t axes) {
        return wrap(jnp::tensordot(to_value(a), to_value(b), axes));
      },
      py::arg("a"), py::arg("b"), py::arg("axes") = 2);
  for (const char* name : {"isclose", "allclose"}) {
    const bool all = std::string(name) == "allclose";
    m.def(
        name,
        [all](const py::object& a, const py::object& b, const py::object& rtol, const py::object& atol,
              bool equal_nan) {
          const auto fn = all ? jnp::allclose : jnp::isclose;
          return wrap(fn(to_value(a), to_value(b), to_value(rtol), to_value(atol), equal_nan));
        },
        py::arg("a"), py::arg("b"), py::arg("rtol") = 1e-05, py::arg("atol") = 1e-08, py::arg("equal_nan") = false);
  }
  m.def(
      "array_equal",
      [](const py::object& a, const py::object& b, bool equal_nan) {
        return wrap(jnp::array_equal(to_value(a), to_value(b), equal_nan));
      },
      py::arg("a1"), py::arg("a2"), py::arg("equal_nan") = false);
  m.def(
      "array_equiv",
      [](const py::object& a, const py::object& b) { return wrap(jnp::array_equiv(to_value(a), to_value(b))); },
      py::arg("a1"), py::arg("a2"));
  m.def("isinf", [](const py::object& x) { return wrap(jnp::isinf(to_value(x))); });
  m.def(
      "pad",
      [](const py::object& x, const py::object& pad_width, const py::object& mode, const py::kwargs& kwargs) {
        if (!py::isinstance<py::str>(mode)) {
          throw not_implemented_error("jnp.pad with a callable mode is not supported by shardscope");
        }
        for (const auto& item : kwargs) {
          const auto key = item.first.cast<std::string>();
          if (key != "constant_values" && !(key == "reflect_type" && item.second.cast<std::string>() == "even")) {
            throw not_implemented_error("jnp.pad's " + key + " argument is not supported by shardscope");
          }
        }
        const py::object widths = py::module_::import("numpy").attr("asarray")(pad_width, "int64");
        const Value value = to_value(x);
        const auto list = widths.attr("ravel")().attr("tolist")().cast<std::vector<int64_t>>();
        const auto given = widths.attr("shape").cast<std::vector<int64_t>>();
        const Value constant =
            to_value(kwargs.contains("constant_values") ? py::object(kwargs["constant_values"]) : py::int_(0));
        return wrap(jnp::pad(value, jnp::broadcast_pad_width(list, given, api::ndim_of(value)),
                             mode.cast<std::string>(), constant));
      },
      py::arg("array"), py::arg("pad_width"), py::arg("mode") = "constant");
  m.def(
      "roll",
      [](const py::object& x, const py::object& shift, const py::object& axis) {
        const auto ints = [](const py::object& v) {
          if (py::isinstance<py::int_>(v) || py::hasattr(v, "__index__")) {
            return std::vector<int64_t>{py::int_(v).cast<int64_t>()};
          }
          return v.cast<std::vector<int64_t>>();
        };
        return wrap(jnp::roll(to_value(x), ints(shift), axis.is_none() ? std::nullopt : std::optional(ints(axis))));
      },
      py::arg("a"), py::arg("shift"), py::arg("axis") = py::none());
  m.def(
      "repeat",
      [](const py::object& x, int64_t repeats, const py::object& axis, const py::object& total) {
        if (!total.is_none()) throw not_implemented_error("jnp.repeat's total_repeat_length is not supported");
        return wrap(jnp::repeat(to_value(x), repeats, int_or_none(axis)));
      },
      py::arg("a"), py::arg("repeats"), py::arg("axis") = py::none(), py::kw_only(),
      py::arg("total_repeat_length") = py::none());
  m.def(
      "array_split",
      [](const py::object& x, const py::object& sections, int64_t axis) {
        if (py::isinstance<py::int_>(sections))
          return from_values(jnp::array_split(to_value(x), sections.cast<int64_t>(), axis));
        return from_values(jnp::split_at(to_value(x), sections.cast<std::vector<int64_t>>(), axis));
      },
      py::arg("ary"), py::arg("indices_or_sections"), py::arg("axis") = 0);
  m.def(
      "meshgrid",
      [](const py::args& arrays, bool copy, bool sparse, const std::string& indexing) {
        (void)copy;
        std::vector<Value> values;
        for (const py::handle a : arrays) values.push_back(to_value(py::reinterpret_borrow<py::object>(a)));
        return from_values(jnp::meshgrid(values, sparse, indexing));
      },
      py::kw_only(), py::arg("copy") = true, py::arg("sparse") = false, py::arg("indexing") = "xy");
  m.def("_result_type", [](const py::list& values) {
    const WeakDType result = jnp::result_type(to_values(values));
    return py::make_tuple(std::string(dtype_name(result.dtype)), result.weak);
  });
  m.def("_getitem", [](const py::object& x, const py::object& index) {
    return wrap(jnp::getitem_general(to_value(x), index_items(index)));
  });
  // x.at[idx].get(...) and x.at[idx].set/add/...(y): op is the scatter's name ("scatter", "scatter-add", ...).
  m.def(
      "_at_get",
      [](const py::object& x, const py::object& index, const py::object& mode, const py::object& fill_value,
         bool indices_are_sorted, bool unique_indices) {
        return wrap(jnp::getitem_general(to_value(x), index_items(index),
                                         index_options(mode, fill_value, indices_are_sorted, unique_indices)));
      },
      py::arg("x"), py::arg("index"), py::arg("mode") = py::none(), py::arg("fill_value") = py::none(),
      py::arg("indices_are_sorted") = false, py::arg("unique_indices") = false);
  m.def(
      "_scatter_update",
      [](const py::object& x, const py::object& index, const py::object& y, const std::string& op,
         const py::object& mode, bool indices_are_sorted, bool unique_indices) {
        static const std::vector<std::pair<std::string, jnp::ScatterOp>> ops = {
            {"set", jnp::ScatterOp::kSet}, {"add", jnp::ScatterOp::kAdd}, {"sub", jnp::ScatterOp::kSub},
            {"mul", jnp::ScatterOp::kMul}, {"min", jnp::ScatterOp::kMin}, {"max", jnp::ScatterOp::kMax}};
        const auto it = std::find_if(ops.begin(), ops.end(), [&](const auto& entry) { return entry.first == op; });
        if (it == ops.end()) throw value_error("unknown scatter op " + op);
        return wrap(jnp::scatter_update(to_value(x), index_items(index), to_value(y), it->second,
                                        index_options(mode, py::none(), indices_are_sorted, unique_indices)));
      },
      py::arg("x"), py::arg("index"), py::arg("y"), py::arg("op"), py::arg("mode") = py::none(),
      py::arg("indices_are_sorted") = false, py::arg("unique_indices") = false);
  m.def(
      "take",
      [](const py::object& a, const py::object& indices, const py::object& axis, const py::object& out,
         const py::object& mode, bool unique_indices, bool indices_are_sorted, const py::object& fill_value) {
        if (!out.is_none()) throw not_implemented_error("The 'out' argument to jnp.take is not supported.");
        return wrap(jnp::take(to_value(a), to_value(indices), int_or_none(axis),
                              index_options(mode, fill_value, indices_are_sorted, unique_indices)));
      },
      py::arg("a"), py::arg("indices"), py::arg("axis") = py::none(), py::arg("out") = py::none(),
      py::arg("mode") = py::none(), py::arg("unique_indices") = false, py::arg("indices_are_sorted") = false,
      py::arg("fill_value") = py::none());
  m.def(
      "take_along_axis",
      [](const py::object& arr, const py::object& indices, const py::object& axis, const py::object& mode,
         const py::object& fill_value) {
        return wrap(jnp::take_along_axis(to_value(arr), to_value(indices), int_or_none(axis),
                                         index_options(mode, fill_value, false, false)));
      },
      py::arg("arr"), py::arg("indices"), py::arg("axis"), py::arg("mode") = py::none(),
      py::arg("fill_value") = py::none());
  m.def(
      "sort",
      [](const py::object& a, const py::object& axis, const py::object& kind, const py::object& order, bool stable,
         bool descending) {
        if (!kind.is_none()) {
          throw type_error(
              "'kind' argument to sort is not supported. Use stable=True or stable=False to specify sort "
              "stability.");
        }
        if (!order.is_none()) throw type_error("'order' argument to sort is not supported.");
        return wrap(jnp::sort(to_value(a), int_or_none(axis), stable, descending));
      },
      py::arg("a"), py::arg("axis") = -1, py::kw_only(), py::arg("kind") = py::none(), py::arg("order") = py::none(),
      py::arg("stable") = true, py::arg("descending") = false);
  m.def(
      "argsort",
      [](const py::object& a, const py::object& axis, const py::object& kind, const py::object& order, bool stable,
         bool descending, const py::object& dtype) {
        if (!kind.is_none()) {
          throw type_error(
              "'kind' argument to argsort is not supported. Use stable=True or stable=False to specify "
              "sort stability.");
        }
        if (!order.is_none()) throw type_error("'order' argument to argsort is not supported.");
        return wrap(jnp::argsort(to_value(a), int_or_none(axis), stable, descending, dtype_arg(dtype)));
      },
      py::arg("a"), py::arg("axis") = -1, py::kw_only(), py::arg("kind") = py::none(), py::arg("order") = py::none(),
      py::arg("stable") = true, py::arg("descending") = false, py::arg("dtype") = py::none());
  m.def(
      "tril", [](const py::object& matrix, int64_t k) { return wrap(jnp::tril(to_value(matrix), k)); }, py::arg("m"),
      py::arg("k") = 0);
  m.def(
      "triu", [](const py::object& matrix, int64_t k) { return wrap(jnp::triu(to_value(matrix), k)); }, py::arg("m"),
      py::arg("k") = 0);
  m.def(
      "diagonal",
      [](const py::object& a, int64_t offset, int64_t axis1, int64_t axis2) {
        return wrap(jnp::diagonal(to_value(a), offset, axis1, axis2));
      },
      py::arg("a"), py::arg("offset") = 0, py::arg("axis1") = 0, py::arg("axis2") = 1);
  m.def(
      "diag", [](const py::object& v, int64_t k) { return wrap(jnp::diag(to_value(v), k)); }, py::arg("v"),
      py::arg("k") = 0);
}

void bind_nn(py::module_& m) {
  const std::vector<std::pair<const char*, Unary>> unary = {
      {"relu", api::nn::relu}, {"relu6", api::nn::relu6}, {"sigmoid", api::nn::sigmoid},
      {"silu", api::nn::silu}, {"swish", api::nn::silu},  {"softplus", api::nn::softplus}};
  for (const auto& [name, fn] : unary) {
    m.def(name, [fn = fn](const py::object& x) { return wrap(fn(to_value(x))); });
  }
  m.def(
      "gelu", [](const py::object& x, bool approximate) { return wrap(api::nn::gelu(to_value(x), approximate)); },
      py::arg("x"), py::arg("approximate") = true);
  m.def(
      "softmax",
      [](const py::object& x, const py::object& axis, const py::object& where) {
        return wrap(api::nn::softmax(to_value(x), axis_arg(axis), optional_value(where)));
      },
      py::arg("x"), py::arg("axis") = -1, py::arg("where") = py::none());
  m.def(
      "log_softmax",
      [](const py::object& x, const py::object& axis, const py::object& where) {
        return wrap(api::nn::log_softmax(to_value(x), axis_arg(axis), optional_value(where)));
      },
      py::arg("x"), py::arg("axis") = -1, py::arg("where") = py::none());
  const std::vector<std::pair<const char*, Unary>> more_unary = {{"selu", api::nn::selu},
                                                                 {"log_sigmoid", api::nn::log_sigmoid},
                                                                 {"soft_sign", api::nn::soft_sign},
                                                                 {"hard_tanh", api::nn::hard_tanh},
                                                                 {"hard_sigmoid", api::nn::hard_sigmoid},
                                                                 {"hard_silu", api::nn::hard_silu},
                                                                 {"hard_swish", api::nn::hard_silu},
                                                                 {"mish", api::nn::mish},
                                                                 {"sparse_plus", api::nn::sparse_plus},
                                                                 {"tanh", jnp::tanh}};
  for (const auto& [name, fn] : more_unary) {
    m.def(name, [fn = fn](const py::object& x) { return wrap(fn(to_value(x))); });
  }
  m.def(
      "leaky_relu",
      [](const py::object& x, const py::object& slope) {
        return wrap(api::nn::leaky_relu(to_value(x), to_value(slope)));
      },
      py::arg("x"), py::arg("negative_slope") = 1e-2);
  m.def(
      "elu",
      [](const py::object& x, const py::object& alpha) { return wrap(api::nn::elu(to_value(x), to_value(alpha))); },
      py::arg("x"), py::arg("alpha") = 1.0);
  m.def(
      "celu",
      [](const py::object& x, const py::object& alpha) { return wrap(api::nn::celu(to_value(x), to_value(alpha))); },
      py::arg("x"), py::arg("alpha") = 1.0);
  m.def(
      "squareplus",
      [](const py::object& x, const py::object& b) { return wrap(api::nn::squareplus(to_value(x), to_value(b))); },
      py::arg("x"), py::arg("b") = 4);
  m.def(
      "glu", [](const py::object& x, int64_t axis) { return wrap(api::nn::glu(to_value(x), axis)); }, py::arg("x"),
      py::arg("axis") = -1);
  m.def(
      "standardize",
      [](const py::object& x, const py::object& axis, const py::object& mean, const py::object& variance,
         const py::object& epsilon, const py::object& where) {
        if (!where.is_none()) throw not_implemented_error("jax.nn.standardize's where argument is not supported");
        return wrap(api::nn::standardize(to_value(x), axis_arg(axis), optional_value(mean), optional_value(variance),
                                         to_value(epsilon)));
      },
      py::arg("x"), py::arg("axis") = -1, py::arg("mean") = py::none(), py::arg("variance") = py::none(),
      py::arg("epsilon") = 1e-5, py::arg("where") = py::none());
  m.def(
      "logsumexp",
      [](const py::object& x, const py::object& axis, bool keepdims) {
        return wrap(api::nn::logsumexp(to_value(x), axis_arg(axis), keepdims));
      },
      py::arg("a"), py::arg("axis") = py::none(), py::arg("keepdims") = false);
  m.def(
      "one_hot",
      [](const py::object& x, int64_t n, const py::object& dtype, int64_t axis) {
        return wrap(api::nn::one_hot(to_value(x), n, dtype_arg(dtype), axis));
      },
      py::arg("x"), py::arg("num_classes"), py::arg("dtype") = py::none(), py::arg("axis") = -1);
}

std::vector<std::string> axis_names(const py::object& names) {
  if (py::isinstance<py::str>(names)) return {names.cast<std::string>()};
  return names.cast<std::vector<std::string>>();
}

void bind_lax(py::module_& m) {
  // Collectives take normalized arguments (a list of axis names, plain ints); jax/lax/__init__.py gives them
  // JAX's signatures, keywords and pytree mapping.
  using Reduction = api::Value (*)(const api::Value&, const std::vector<std::string>&);
  for (const auto& [name, fn] : std::vector<std::pair<const char*, Reduction>>{
           {"psum", api::lax::psum}, {"pmax", api::lax::pmax}, {"pmin", api::lax::pmin}, {"pmean", api::lax::pmean}}) {
    m.def(name,
          [fn = fn](const py::object& x, const py::object& axes) { return wrap(fn(to_value(x), axis_names(axes))); });
  }
  m.def("all_gather", [](const py::object& x, const py::object& axes, int64_t axis, bool tiled) {
    return wrap(api::lax::all_gather(to_value(x), axis_names(axes), axis, tiled));
  });
  m.def("all_gather_invariant", [](const py::object& x, const py::object& axes, int64_t axis, bool tiled) {
    return wrap(api::lax::all_gather_invariant(to_value(x), axis_names(axes), axis, tiled));
  });
  m.def("psum_scatter", [](const py::object& x, const py::object& axes, int64_t scatter_dimension, bool tiled) {
    return wrap(api::lax::psum_scatter(to_value(x), axis_names(axes), scatter_dimension, tiled));
  });
  m.def("ppermute",
        [](const py::object& x, const py::object& axes, const std::vector<std::pair<int64_t, int64_t>>& perm) {
          return wrap(api::lax::ppermute(to_value(x), axis_names(axes), perm));
        });
  m.def("all_to_all", [](const py::object& x, const py::object& axes, int64_t split_axis, int64_t concat_axis,
                         bool tiled, bool axis_name_is_tuple) {
    return wrap(
        api::lax::all_to_all(to_value(x), axis_names(axes), split_axis, concat_axis, tiled, axis_name_is_tuple));
  });
  m.def("axis_index", [](const py::object& axes, bool axis_name_is_tuple) {
    return wrap(api::lax::axis_index(axis_names(axes), axis_name_is_tuple));
  });
  m.def("axis_size", [](const py::object& axes) { return api::lax::axis_size(axis_names(axes)); });
  m.def("pvary", [](const py::object& x, const py::object& axes) {
    return wrap(api::lax::pvary(to_value(x), axis_names(axes)));
  });
  m.def("pcast", [](const py::object& x, const py::object& axes, const std::string& to) {
    return wrap(api::lax::pcast(to_value(x), axis_names(axes), to));
  });
  m.def(
      "sort",
      [](const py::object& operand, int64_t dimension, bool is_stable, int64_t num_keys) -> py::object {
        if (py::isinstance<py::tuple>(operand) || py::isinstance<py::list>(operand)) {
          return py::tuple(from_values(api::lax::sort(to_values(operand), dimension, is_stable, num_keys)));
        }
        if (num_keys != 1) {
          throw value_error("num_keys=" + std::to_string(num_keys) + " must equal 1 for a single operand.");
        }
        return wrap(api::lax::sort({to_value(operand)}, dimension, is_stable, 1)[0]);
      },
      py::arg("operand"), py::arg("dimension") = -1, py::arg("is_stable") = true, py::arg("num_keys") = 1);
  m.def(
      "top_k",
      [](const py::object& operand, int64_t k, int64_t axis, bool is_stable) {
        return py::tuple(from_values(api::lax::top_k(to_value(operand), k, axis, is_stable)));
      },
      py::arg("operand"), py::arg("k"), py::kw_only(), py::arg("axis") = -1, py::arg("is_stable") = true);
  m.def("_stop_gradient", [](const py::object& x) { return wrap(api::lax::stop_gradient(to_value(x))); });
  m.def("with_sharding_constraint", [](const py::object& x, const NamedSharding& sharding) {
    return wrap(api::lax::with_sharding_constraint(to_value(x), sharding));
  });
  m.def("sin", [](const py::object& x) { return wrap(api::lax::unary("sin", to_value(x))); });
  m.def("cos", [](const py::object& x) { return wrap(api::lax::unary("cos", to_value(x))); });
  m.def("exp", [](const py::object& x) { return wrap(api::lax::unary("exp", to_value(x))); });
  m.def("add", [](const py::object& x, const py::object& y) { return wrap(api::lax::add(to_value(x), to_value(y))); });
  m.def("mul", [](const py::object& x, const py::object& y) { return wrap(api::lax::mul(to_value(x), to_value(y))); });
  // lax's other binary operations by primitive name (sub, div, the comparisons, and, or).
  m.def("_binary", [](const std::string& primitive, const py::object& x, const py::object& y) {
    return wrap(api::lax::binary(primitive, to_value(x), to_value(y)));
  });
}

// lax's array functions beyond collectives: arguments already normalized by jax/_src/lax_ops.py.
void bind_lax_arrays(py::module_& m) {
  m.def("_select", [](const py::object& pred, const py::object& on_true, const py::object& on_false) {
    return wrap(api::lax::select(to_value(pred), to_value(on_true), to_value(on_false)));
  });
  // jax.lax.stack / unstack (gated to JAX 0.10.1+ in jax/lax/__init__.py).
  m.def("_stack",
        [](const py::object& operands, int64_t axis) { return wrap(api::lax::stack(to_values(operands), axis)); });
  m.def("_unstack",
        [](const py::object& x, int64_t axis) { return py::tuple(from_values(api::lax::unstack(to_value(x), axis))); });
  m.def("_broadcast_in_dim", [](const py::object& x, const Shape& shape, const std::vector<int64_t>& dims) {
    return wrap(api::lax::broadcast_in_dim(to_value(x), shape, dims));
  });
  m.def("_reshape",
        [](const py::object& x, const Shape& shape) { return wrap(api::lax::reshape(to_value(x), shape)); });
  m.def("_transpose", [](const py::object& x, const std::vector<int64_t>& permutation) {
    return wrap(api::lax::transpose(to_value(x), permutation));
  });
  m.def("_pad",
        [](const py::object& x, const py::object& padding_value, const std::vector<std::array<int64_t, 3>>& config) {
          return wrap(api::lax::pad(to_value(x), to_value(padding_value), config));
        });
  m.def("_dynamic_update_slice", [](const py::object& x, const py::object& update, const py::list& starts) {
    std::vector<Value> indices;
    for (const auto& start : starts) indices.push_back(to_value(py::reinterpret_borrow<py::object>(start)));
    return wrap(api::lax::dynamic_update_slice(to_value(x), to_value(update), indices));
  });
  m.def("_cumulative", [](const std::string& primitive, const py::object& x, int64_t axis, bool reverse) {
    return wrap(api::lax::cumulative(primitive, to_value(x), axis, reverse));
  });
  m.def("_rev",
        [](const py::object& x, const std::vector<int64_t>& dims) { return wrap(api::lax::rev(to_value(x), dims)); });
  m.def("_integer_pow", [](const py::object& x, int64_t y) { return wrap(api::lax::integer_pow(to_value(x), y)); });
  // weak_type: JAX's promotion keeps a Python scalar weakly typed (folded into a literal, as lax folds it).
  m.def(
      "_convert_element_type",
      [](const py::object& x, const py::object& dtype, bool weak_type) {
        return wrap(api::lax::convert_element_type(to_value(x), dtype_from_python(dtype), weak_type));
      },
      py::arg("x"), py::arg("dtype"), py::arg("weak_type") = false);
  m.def("_iota",
        [](const py::object& dtype, int64_t size) { return wrap(api::lax::iota(dtype_from_python(dtype), size)); });
  m.def("_broadcasted_iota", [](const py::object& dtype, const Shape& shape, int64_t dimension) {
    return wrap(api::lax::broadcasted_iota(dtype_from_python(dtype), shape, dimension));
  });
  m.def("_slice", [](const py::object& x, const std::vector<int64_t>& start, const std::vector<int64_t>& limit,
                     const std::optional<std::vector<int64_t>>& strides) {
    return wrap(api::lax::slice(to_value(x), start, limit, strides));
  });
  m.def("_dynamic_slice", [](const py::object& x, const py::list& starts, const std::vector<int64_t>& sizes) {
    return wrap(api::lax::dynamic_slice(to_value(x), to_values(starts), sizes));
  });
  m.def("_unary", [](const std::string& primitive, const py::object& x) {
    return wrap(api::lax::unary(primitive, to_value(x)));
  });
  m.def("_dot_general", [](const py::object& lhs, const py::object& rhs, const std::vector<int64_t>& lhs_contract,
                           const std::vector<int64_t>& rhs_contract, const std::vector<int64_t>& lhs_batch,
                           const std::vector<int64_t>& rhs_batch, const py::object& preferred,
                           const py::object& out_sharding) {
    ParamValue sharding = ParamValue::None{};
    if (py::isinstance<PartitionSpec>(out_sharding)) sharding = out_sharding.cast<PartitionSpec>();
    if (py::isinstance<NamedSharding>(out_sharding)) sharding = out_sharding.cast<NamedSharding>();
    if (!out_sharding.is_none() && sharding.is_none()) {
      throw py::type_error("dot_general's out_sharding must be a PartitionSpec or a NamedSharding, got " +
                           py::repr(out_sharding).cast<std::string>());
    }
    return wrap(api::lax::dot_general(to_value(lhs), to_value(rhs),
                                      api::lax::DotDimensionNumbers{lhs_contract, rhs_contract, lhs_batch, rhs_batch},
                                      dtype_arg(preferred), sharding));
  });
  m.def("_conv_general_dilated",
        [](const py::object& lhs, const py::object& rhs, const std::vector<int64_t>& strides, const py::object& padding,
           const std::vector<int64_t>& lhs_dilation, const std::vector<int64_t>& rhs_dilation,
           const std::optional<std::vector<std::string>>& specs, int64_t feature_group_count, int64_t batch_group_count,
           const py::object& preferred) {
          const Value x = to_value(lhs);
          api::lax::ConvPadding pads;
          if (py::isinstance<py::str>(padding)) {
            pads.name = padding.cast<std::string>();
          } else {
            pads.pairs = padding.cast<std::vector<std::pair<int64_t, int64_t>>>();
          }
          const auto dims = api::lax::conv_dimension_numbers(static_cast<std::size_t>(api::ndim_of(x)), specs);
          return wrap(api::lax::conv_general_dilated(x, to_value(rhs), strides, pads, lhs_dilation, rhs_dilation, dims,
                                                     feature_group_count, batch_group_count, dtype_arg(preferred)));
        });
}

}  // namespace

void bind_api(py::module_& m) {
  py::module_ numpy = m.def_submodule("numpy");
  bind_numpy(numpy);
  py::module_ nn = m.def_submodule("nn");
  bind_nn(nn);
  py::module_ lax = m.def_submodule("lax");
  bind_lax(lax);
  bind_lax_arrays(lax);
}

}  // namespace shardscope::python
