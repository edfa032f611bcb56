// reshard, auto_axes and explicit_axes of jax.sharding on flat Python functions and values.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <optional>

#include "api/explicit_axes.h"
#include "explicit/mesh_context.h"
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

// `with _shardscope.axes_typed(axes, AxisType.Auto):` — the abstract mesh in effect with `axes` (all of them
// when empty) switched to the type, as eager auto_axes and explicit_axes run their function under it.
class AxesTypedScope {
 public:
  AxesTypedScope(std::vector<std::string> axes, AxisType type) : axes_(std::move(axes)), type_(type) {}
  void enter() {
    const AbstractMesh current = get_abstract_mesh();
    const std::vector<std::string> chosen = axes_.empty() ? current.axis_names : axes_;
    scope_.emplace(with_axis_types(current, chosen, type_));
  }
  void exit() { scope_.reset(); }

 private:
  std::vector<std::string> axes_;
  AxisType type_;
  std::optional<AbstractMeshScope> scope_;
};

// `with jax.sharding.use_abstract_mesh(am):` — the abstract mesh in effect (inside jit too) until the block ends.
class UseAbstractMesh {
 public:
  explicit UseAbstractMesh(const py::object& mesh) {
    if (!py::isinstance<AbstractMesh>(mesh)) {
      throw py::value_error("Expected mesh of type `jax.sharding.AbstractMesh`. Got type: " +
                            py::repr(py::type::of(mesh)).cast<std::string>());
    }
    mesh_ = mesh.cast<AbstractMesh>();
  }
  void enter() { scope_.emplace(mesh_); }
  void exit() { scope_.reset(); }

 private:
  AbstractMesh mesh_;
  std::optional<AbstractMeshScope> scope_;
};

void bind_explicit(py::module_& m) {
  py::class_<UseAbstractMesh>(m, "use_abstract_mesh")
      .def(py::init<const py::object&>())
      .def("__enter__", [](UseAbstractMesh& scope) { scope.enter(); })
      .def("__exit__", [](UseAbstractMesh& scope, const py::args&) {
        scope.exit();
        return false;
      });
  py::class_<AxesTypedScope>(m, "axes_typed")
      .def(py::init<std::vector<std::string>, AxisType>())
      .def("__enter__", [](AxesTypedScope& scope) { scope.enter(); })
      .def("__exit__", [](AxesTypedScope& scope, const py::args&) {
        scope.exit();
        return false;
      });
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
