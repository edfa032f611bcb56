// jit, make_jaxpr, vmap, grad, jvp, shard_map and pmap on flat Python functions (pytrees are flattened in Python).
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "api/session.h"
#include "api/transforms.h"
#include "python/bindings.h"
#include "python/convert.h"
#include "sharding/sharding.h"

namespace shardscope::python {
namespace {

// A Python function on a list of values returning a list of values, as core sees it.
api::Function wrap(const py::function& flat_fun) {
  return [flat_fun](const std::vector<api::Value>& args) {
    const py::gil_scoped_acquire gil;
    py::object result = flat_fun(from_values(args));
    return to_values(result);
  };
}

std::vector<std::optional<Sharding>> optional_shardings(const py::object& shardings) {
  std::vector<std::optional<Sharding>> out;
  if (shardings.is_none()) return out;
  for (const py::handle item : shardings) {
    if (item.is_none()) {
      out.emplace_back(std::nullopt);
    } else if (py::isinstance<NamedSharding>(item)) {
      out.emplace_back(item.cast<NamedSharding>());
    } else {
      out.emplace_back(item.cast<SingleDeviceSharding>());
    }
  }
  return out;
}

std::vector<std::optional<int64_t>> optional_axes(const py::object& axes) {
  std::vector<std::optional<int64_t>> out;
  for (const py::handle item : axes) {
    out.push_back(item.is_none() ? std::nullopt : std::optional<int64_t>(item.cast<int64_t>()));
  }
  return out;
}

}  // namespace

void bind_transforms(py::module_& m) {
  m.def("make_jaxpr", [](const py::function& f, const py::list& args, const std::string& name) {
    return api::make_jaxpr_text(wrap(f), to_values(args), name);
  });
  m.def("jit_call", [](const py::function& f, const py::list& args, const std::string& name,
                       const py::object& in_shardings, const py::object& out_shardings) {
    api::JitSpec spec{name, optional_shardings(in_shardings), optional_shardings(out_shardings)};
    return from_values(api::call_jit(wrap(f), to_values(args), spec));
  });
  m.def("vmap_call", [](const py::function& f, const py::list& args, const py::object& in_axes,
                        const py::object& out_axes, std::optional<std::string> axis_name, const std::string& name) {
    return from_values(
        api::call_vmap(wrap(f), to_values(args), optional_axes(in_axes), optional_axes(out_axes), axis_name, name));
  });
  m.def("grad_call", [](const py::function& f, const py::list& args, const std::vector<int64_t>& argnums, bool has_aux,
                        bool with_value, const std::string& name) {
    return from_values(api::call_grad(wrap(f), to_values(args), argnums, has_aux, with_value, name));
  });
  m.def("jvp_call",
        [](const py::function& f, const py::list& primals, const py::list& tangents, const std::string& name) {
          return from_values(api::call_jvp(wrap(f), to_values(primals), to_values(tangents), name));
        });
  m.def("shard_map_call",
        [](const py::function& f, const py::list& args, const Mesh& mesh, const std::vector<PartitionSpec>& in_specs,
           const std::vector<PartitionSpec>& out_specs, bool check_vma, const std::string& name) {
          ShardMapSpec spec;
          spec.mesh = mesh;
          spec.in_specs = in_specs;
          spec.out_specs = out_specs;
          spec.check_vma = check_vma;
          spec.function_name = name;
          return from_values(api::call_shard_map(wrap(f), to_values(args), std::move(spec)));
        });
  m.def("pmap_call", [](const py::function& f, const py::list& args, std::optional<std::string> axis_name,
                        const py::object& in_axes, const py::object& out_axes, std::optional<int64_t> axis_size,
                        const py::object& devices, const std::string& name) {
    PmapSpec spec;
    spec.function_name = name;
    spec.axis_name = std::move(axis_name);
    spec.in_axes = optional_axes(in_axes);
    spec.out_axes = optional_axes(out_axes);
    spec.axis_size = axis_size;
    if (!devices.is_none()) {
      for (const py::handle device : devices) spec.devices.push_back(device.cast<Device>());
    }
    return from_values(api::call_pmap(wrap(f), to_values(args), std::move(spec)));
  });
}

}  // namespace shardscope::python
