// `_shardscope.debug`: host callbacks for the debug primitives (jax.debug.print/callback/inspect_array_sharding);
// `_shardscope.jax_has`: the profile-table behaviours the Python layer consults by name; `_shardscope.pmap_sharding`:
// the PmapSharding text of an old-pmap output.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <map>

#include "api/session.h"
#include "api/trace.h"
#include "base/error.h"
#include "exec/debug_callbacks.h"
#include "exec/host_callbacks.h"
#include "exec/interpreter.h"
#include "python/bindings.h"
#include "python/convert.h"
#include "sharding/pmap_sharding.h"

namespace shardscope::python {

namespace {

// Python-side names of the behaviour changes the jax package checks (the table itself is core/compat).
JaxFeature feature_named(const std::string& name) {
  static const std::map<std::string, JaxFeature> features = {
      {"typed_prng_keys", JaxFeature::kTypedPrngKeys},
      {"debug_print_primitive", JaxFeature::kDebugPrintPrimitive},
      {"maps_mesh_deprecated", JaxFeature::kMapsMeshDeprecated},
      {"maps_mesh_removed", JaxFeature::kMapsMeshRemoved},
      {"xmap_removed", JaxFeature::kXmapRemoved},
      {"array_device_method_deprecated", JaxFeature::kArrayDeviceMethodDeprecated},
      {"array_device_method_removed", JaxFeature::kArrayDeviceMethodRemoved},
      {"array_device_property", JaxFeature::kArrayDeviceProperty},
      {"pmap_array_outputs", JaxFeature::kPmapArrayOutputs},
      {"pmap_is_jit_of_shard_map", JaxFeature::kPmapIsJitOfShardMap},
  };
  const auto it = features.find(name);
  if (it == features.end()) throw value_error("unknown JAX profile feature '" + name + "'");
  return it->second;
}

}  // namespace

void bind_debug(py::module_& root) {
  ensure_debug_primitives();
  root.def("jax_has", [](const std::string& name) { return api::session().profile.has(feature_named(name)); });
  // (sharding_spec repr, str) of a pmap output under profiles with PmapSharding; None otherwise.
  root.def("pmap_sharding", [](const py::object& array) -> py::object {
    const api::Value value = to_value(array);
    if (!value.is_concrete()) return py::none();
    const auto layout =
        pmap_sharding_layout(value.array().sharding(), value.array().shape().size(), api::session().profile);
    if (!layout) return py::none();
    return py::make_tuple(sharding_spec_repr(*layout), pmap_sharding_str(*layout), layout->mapped_dim, layout->chunked);
  });
  py::module_ m = root.def_submodule("debug");
  // `on_values(values, device_index_or_None)` gets the operands as arrays on the default device, as JAX hands
  // debug callbacks their operands on a CPU device; `on_sharding(mesh_or_None, spec)` gets what the
  // partitioner chose. Returns the id the equations carry.
  m.def(
      "register",
      [](const py::object& on_values, const py::object& on_sharding) {
        DebugCallback callback;
        if (!on_values.is_none()) {
          callback.on_values = [on_values](std::span<const BufferPtr> values, std::optional<int64_t> device) {
            const py::gil_scoped_acquire gil;
            const JaxProfile& profile = api::session().profile;
            py::list arrays;
            for (const BufferPtr& value : values) {
              const Sharding sharding = make_single_device_sharding(api::default_device(), profile);
              arrays.append(py::cast(PyValue(api::Value::concrete(Array::from_host(value, sharding, profile)))));
            }
            on_values(arrays, device ? py::cast(*device) : py::none());
          };
        }
        if (!on_sharding.is_none()) {
          callback.on_sharding = [on_sharding](const Mesh* mesh, const PartitionSpec& spec) {
            const py::gil_scoped_acquire gil;
            on_sharding(mesh != nullptr ? py::cast(*mesh) : py::none(), py::cast(spec));
          };
        }
        return register_debug_callback(std::move(callback));
      },
      py::arg("on_values"), py::arg("on_sharding") = py::none());
  // Callbacks hold Python objects: jax.debug drops them at interpreter exit, while Python can still free them.
  m.def("clear", [] {
    clear_debug_callbacks();
    clear_host_functions();
  });
  // jax.pure_callback / io_callback: `host(*numpy_arrays)` returns the results as a list; binds one equation with
  // the declared result shapes and dtype names.
  m.def("host_callback_call", [](const py::function& host, const py::list& args,
                                 const std::vector<std::vector<int64_t>>& shapes,
                                 const std::vector<std::string>& dtypes, const std::string& primitive,
                                 const std::string& vmap_method, bool ordered, const std::string& callback_repr) {
    ensure_host_callback_primitives();
    const int64_t id = register_host_function([host](std::span<const BufferPtr> operands) {
      const py::gil_scoped_acquire gil;
      const JaxProfile& profile = api::session().profile;
      py::list arrays;
      for (const BufferPtr& operand : operands) {
        arrays.append(
            to_numpy(Array::from_host(operand, make_single_device_sharding(api::default_device(), profile), profile)));
      }
      std::vector<BufferPtr> results;
      for (const py::handle item : host(*arrays).cast<py::list>()) {
        const api::Value value = to_value(item);
        results.push_back(value.is_concrete() ? value.array().gather()
                                              : literal_buffer(std::get<Literal>(value.atom())));
      }
      return results;
    });
    std::vector<ParamValue> shape_params;
    std::vector<ParamValue> dtype_params;
    for (std::size_t r = 0; r < shapes.size(); ++r) {
      shape_params.push_back(ParamValue::int_tuple(shapes[r]));
      const std::optional<DType> dtype = parse_dtype(dtypes.at(r));
      if (!dtype) throw value_error("a callback result has a dtype shardscope does not simulate: " + dtypes[r]);
      dtype_params.emplace_back(*dtype);
    }
    Params params{{"callback", callback_repr},
                  {"callback_id", id},
                  {"result_shapes", ParamValue::tuple(std::move(shape_params))},
                  {"result_dtypes", ParamValue::tuple(std::move(dtype_params))}};
    if (primitive == "io_callback") params.emplace_back("ordered", ordered);
    if (primitive == "pure_callback") params.emplace_back("vmap_method", vmap_method);
    return from_values(api::bind(primitive, to_values(args), std::move(params)));
  });
  // Whether a program is being traced: a debug print of static values only is staged then, not run at once.
  m.def("in_trace", [] { return api::current_trace() != nullptr; });
  m.def("current_trace_level", [] { return api::current_trace() != nullptr ? api::current_trace()->level() : 0; });
}

}  // namespace shardscope::python
