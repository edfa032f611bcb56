// reshard, auto_axes and explicit_axes of jax.sharding on flat Python functions and values.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "api/explicit_axes.h"
#include "python/bindings.h"
#include "python/convert.h"

namespace shardscope::python {
namespace {

api::Function wrap_function(const py::function& flat_fun) {
  return [flat_fun](const std::vector<api::Value>& args) {
    const py::gil_scoped_acquire gil;
    return to_values(flat_fun(from_values(args)));
  };
}

api::ReshardTarget reshard_target(const py::object& target) {
  if (py::isinstance<NamedSharding>(target)) return target.cast<NamedSharding>();
  if (py::isinstance<PartitionSpec>(target)) return target.cast<PartitionSpec>();
  throw py::type_error("reshard's out_shardings must be a PartitionSpec or a NamedSharding, got " +
                       py::repr(target).cast<std::string>());
}

}  // namespace

void bind_explicit(py::module_& m) {
  m.def("reshard", [](const py::object& x, const py::object& target) {
    return from_value(api::reshard(to_value(x), reshard_target(target)));
  });
  m.def("auto_axes_call", [](const py::function& f, const py::list& args,
                             std::optional<std::vector<PartitionSpec>> out_shardings, std::vector<std::string> axes) {
    return from_values(api::auto_axes(wrap_function(f), to_values(args), out_shardings, axes));
  });
  m.def("explicit_axes_call",
        [](const py::function& f, const py::list& args, std::optional<std::vector<PartitionSpec>> in_shardings,
           std::vector<std::string> axes) {
          return from_values(api::explicit_axes(wrap_function(f), to_values(args), in_shardings, axes));
        });
}

}  // namespace shardscope::python
