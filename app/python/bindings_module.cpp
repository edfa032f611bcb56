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
      } else {
        type = py::module_::import("builtins").attr("RuntimeError");
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
      PyErr_SetString(PyExc_TypeError,
                      "an argument has a type this function does not accept (a Python value could not be converted "
                      "to the expected shape, axis, device or sharding)");
    }
  });
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
  shardscope::python::bind_control_flow(m);
  shardscope::python::bind_api(m);
  shardscope::python::bind_explicit(m);
  py::module_ random = m.def_submodule("random");
  shardscope::python::bind_random(random);
  shardscope::python::bind_debug(m);
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
