// The `_shardscope` extension module and the installer that puts the simulated `jax` package in sys.modules.
#include <pybind11/embed.h>

#include <new>

#include "api/session.h"
#include "base/error.h"
#include "python/bindings.h"
#include "python/host.h"
#include "python/jax_sources.h"

namespace py = pybind11;

namespace shardscope::python {
namespace {

// What a Python value that no typed parameter takes raises (JAX reports wrong argument types as TypeError).
constexpr const char* kUnconvertibleArgument =
    "an argument has a type this function does not accept (a Python value could not be converted to the expected "
    "shape, axis, device or sharding)";

// Exception classes JAX defines; the rest of core's errors are Python builtins.
void register_exceptions(py::module_& m) {
  const JaxProfile& profile = api::session().profile;
  py::object value_error = py::module_::import("builtins").attr("ValueError");
  py::object exception = py::module_::import("builtins").attr("Exception");
  m.attr("IndivisibleError") = py::exception<Error>(m, "IndivisibleError", value_error.ptr());
  m.attr("DuplicateSpecError") = py::exception<Error>(
      m, "DuplicateSpecError",
      profile.has(JaxFeature::kDuplicateSpecErrorIsException) ? exception.ptr() : value_error.ptr());
  m.attr("ShardingTypeError") = py::exception<Error>(m, "ShardingTypeError", value_error.ptr());
  // JAX defines it in jax._src.core, and a traceback names it by that module.
  m.attr("ShardingTypeError").attr("__module__") = "jax._src.core";
  py::register_exception_translator([](std::exception_ptr pointer) {
    try {
      if (pointer) std::rethrow_exception(pointer);
    } catch (const Error& error) {
      // The engine stopped for a Ctrl-C: Python's own SIGINT flag is pending too, and handling it now raises
      // the one KeyboardInterrupt (with the user's handler, if any) instead of a second one later.
      if (error.python_type() == "KeyboardInterrupt" && PyErr_CheckSignals() != 0) return;
      py::module_ shardscope = py::module_::import("_shardscope");
      py::object type;
      if (py::hasattr(shardscope, error.python_type().c_str())) {
        type = shardscope.attr(error.python_type().c_str());
      } else if (py::hasattr(py::module_::import("builtins"), error.python_type().c_str())) {
        type = py::module_::import("builtins").attr(error.python_type().c_str());
      } else if (py::module_ errors = py::module_::import("jax.errors");
                 py::hasattr(errors, error.python_type().c_str())) {
        type = errors.attr(error.python_type().c_str());  // JaxRuntimeError and the tracer errors
      } else {
        type = py::module_::import("builtins").attr("RuntimeError");
      }
      if (error.python_type() == "FloatingPointError") {
        // jax_debug_nans: JAX's jnp functions are jitted, so their NaN is first reported at the jit's output.
        py::print(
            "Invalid nan value encountered in the output of a jax.jit function. Calling the de-optimized "
            "version.");
      }
      PyErr_SetString(type.ptr(), error.what());
    } catch (const std::bad_alloc&) {
      // Every device's shard lives in this process: an array too large for memory is a Python error.
      PyErr_SetString(PyExc_MemoryError,
                      "RESOURCE_EXHAUSTED: Out of memory while trying to allocate an array's buffers (shardscope "
                      "keeps every device's shard in host memory)");
    } catch (const py::cast_error&) {
      // A Python value of the wrong kind reached a typed parameter (a string where a shape or a device
      // belongs): JAX reports wrong argument types as TypeError, pybind11 would say RuntimeError.
      PyErr_SetString(PyExc_TypeError, kUnconvertibleArgument);
    }
  });
}

// pybind11 answers a call no overload takes with TypeError "f(): incompatible function arguments ... Invoked
// with: ..." and a dump of every argument. JAX's functions are Python functions, whose misuse reads "f() got an
// unexpected keyword argument 'x'": the dump is replaced with that text (jax/_src/argument_errors.py).
[[noreturn]] void raise_argument_error(const std::string& name, py::error_already_set& error, const py::args& args,
                                       const py::kwargs& kwargs) {
  if (error.matches(PyExc_TypeError)) {
    const std::string dump = py::str(error.value());
    if (dump.starts_with(kUnconvertibleArgument)) {
      // A shape holding traced integers: JAX's canonicalize_shape error, naming where the tracer came from.
      try {
        py::object text = py::module_::import("jax._src.argument_errors").attr("traced_shape_message")(args, kwargs);
        if (!text.is_none()) throw py::type_error(text.cast<std::string>());
      } catch (const py::error_already_set&) {
        // As below: the original error stands.
      }
    }
    if (dump.find("incompatible function arguments") != std::string::npos ||
        dump.find("incompatible constructor arguments") != std::string::npos) {
      try {
        py::object text = py::module_::import("jax._src.argument_errors").attr("message")(name, dump, args, kwargs);
        if (!text.is_none()) throw py::type_error(text.cast<std::string>());
      } catch (const py::error_already_set&) {
        // The translator is unavailable (user code broke importing): the original error stands.
      }
    }
  }
  throw std::move(error);
}

// Wraps a module's public functions, and those of its public submodules, so their argument errors read as
// Python's. Private ones (`_operators`, `_getitem`) are the shims' hot paths, called with arguments the shims
// built, and stay direct.
void translate_argument_errors(py::module_& module) {
  const py::object type = py::module_::import("builtins").attr("type");
  const py::object builtin_function = type(py::module_::import("builtins").attr("len"));
  // pybind11's methods are instancemethod objects in the class dict; Python-defined __init__s are left alone.
  const py::object instance_method =
      py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(&PyInstanceMethod_Type));
  const auto wrap_function = [](const py::object& original, const std::string& name) {
    return py::cpp_function(
        [original, name](const py::args& args, const py::kwargs& kwargs) -> py::object {
          try {
            return original(*args, **kwargs);
          } catch (py::error_already_set& error) {
            raise_argument_error(name, error, args, kwargs);
          }
        },
        py::name(name.c_str()));
  };
  for (const auto& item : py::dict(module.attr("__dict__"))) {
    const std::string name = py::str(item.first);
    const py::object value = py::reinterpret_borrow<py::object>(item.second);
    if (py::isinstance(value, builtin_function) && !name.starts_with("_")) {
      module.attr(name.c_str()) = wrap_function(value, name);
    } else if (PyType_Check(value.ptr()) != 0 && !name.starts_with("_") && py::hasattr(value, "__init__") &&
               py::isinstance(value.attr("__dict__").attr("get")("__init__"), instance_method)) {
      // A class's constructor: NamedSharding('mesh', P()) must read as Python's TypeError too.
      const py::object original = value.attr("__init__");
      const std::string qualified = name + ".__init__";
      // A debug build of pybind11 warns (FutureWarning) about any __init__ not made with py::init; this one only
      // forwards to the py::init constructor it replaces, so the warning is silenced while it is made.
      const py::object warnings = py::module_::import("warnings");
      const py::object silenced = warnings.attr("catch_warnings")();
      silenced.attr("__enter__")();
      warnings.attr("simplefilter")("ignore", py::handle(PyExc_FutureWarning));
      value.attr("__init__") = py::cpp_function(
          [original, qualified](const py::args& args, const py::kwargs& kwargs) -> py::object {
            try {
              return original(*args, **kwargs);
            } catch (py::error_already_set& error) {
              raise_argument_error(qualified, error, args, kwargs);
            }
          },
          py::name("__init__"), py::is_method(value));
      silenced.attr("__exit__")(py::none(), py::none(), py::none());
    } else if (py::isinstance<py::module_>(value) && !name.starts_with("_") &&
               value.attr("__name__").cast<std::string>().starts_with("_shardscope")) {
      py::module_ submodule = value.cast<py::module_>();
      translate_argument_errors(submodule);
    }
  }
}

// Serves the package's modules from the sources compiled into the binary.
void install_jax() {
  py::dict sources;
  for (const JaxModuleSource& module : jax_module_sources()) sources[py::str(module.module_name)] = module.source;
  py::module_::import("_shardscope").attr("_install_package")(sources);
}

const bool registered = register_installer("jax", &install_jax);

}  // namespace
}  // namespace shardscope::python

PYBIND11_EMBEDDED_MODULE(_shardscope, m) {
  shardscope::python::register_exceptions(m);
  shardscope::python::bind_core(m);
  shardscope::python::bind_transforms(m);
  shardscope::python::bind_explain(m);
  shardscope::python::bind_control_flow(m);
  shardscope::python::bind_api(m);
  shardscope::python::bind_explicit(m);
  py::module_ random = m.def_submodule("random");
  shardscope::python::bind_random(random);
  shardscope::python::bind_debug(m);
  shardscope::python::bind_jaxpr(m);
  shardscope::python::install_source_capture();
  shardscope::python::translate_argument_errors(m);
  // The package importer, in Python because it is a few lines of importlib glue.
  py::exec(R"(
def _install_package(sources):
    import sys, importlib.abc, importlib.util
    packages = {name.rsplit('.', 1)[0] for name in sources if '.' in name}
    class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, fullname, path=None, target=None):
            if fullname not in sources:
                return None
            is_package = fullname in packages or fullname + '.__init__' in sources
            return importlib.util.spec_from_loader(fullname, self, is_package=is_package)
        def create_module(self, spec):
            return None
        def exec_module(self, module):
            if module.__spec__.submodule_search_locations is not None:
                module.__path__ = []
            code = compile(sources[module.__name__], '<shardscope ' + module.__name__ + '>', 'exec')
            exec(code, module.__dict__)
    sys.meta_path.insert(0, _Finder())
)",
           m.attr("__dict__"));
}
