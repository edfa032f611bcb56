// jax.make_jaxpr's object model over the engine's jaxpr: variables, literals, equations with their params, and
// the printer's text for a whole jaxpr or one equation. Python builds JAX's classes from these (jaxpr_objects.py).
#include <pybind11/stl.h>

#include "api/session.h"
#include "explicit/sharding_rules.h"
#include "ir/jaxpr_printer.h"
#include "ir/primitive.h"
#include "python/bindings.h"
#include "python/convert.h"

namespace shardscope::python {
namespace {

const JaxProfile& current_profile() { return api::session().profile; }

// One engine jaxpr, shared by the Python objects built from it.
struct JaxprHandle {
  JaxprPtr jaxpr;
};

// A variable as (id, str(aval), repr(aval), shape, dtype, weak_type); Python turns it into Var(aval=ShapedArray).
py::tuple var_entry(const Var& var) {
  const JaxProfile& profile = current_profile();
  return py::make_tuple(var.id, typeof_str(var.aval, profile), typeof_repr(var.aval),
                        py::cast(var.aval.shape).cast<py::tuple>(), python_dtype(var.aval.dtype), var.aval.weak_type);
}

py::tuple atom_entry(const Atom& atom) {
  if (const auto* var = std::get_if<Var>(&atom)) return py::make_tuple("var", var_entry(*var));
  const auto& literal = std::get<Literal>(atom);
  const py::object value = std::visit([](const auto& v) { return py::cast(v); }, literal.value);
  return py::make_tuple("literal", value, var_entry(Var{0, literal.aval}));
}

py::object param_object(const ParamValue& param) {
  return std::visit(
      [](const auto& v) -> py::object {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, ParamValue::None>) {
          return py::none();
        } else if constexpr (std::is_same_v<T, ParamValue::Tuple>) {
          py::list items;
          for (const ParamValue& item : v.items) items.append(param_object(item));
          return v.is_list ? py::object(items) : py::object(py::tuple(items));
        } else if constexpr (std::is_same_v<T, ParamValue::FrozenSet>) {
          return py::module_::import("builtins").attr("frozenset")(py::cast(v.names));
        } else if constexpr (std::is_same_v<T, DType>) {
          return python_dtype(v);
        } else if constexpr (std::is_same_v<T, ParamValue::JaxprRef>) {
          return py::cast(JaxprHandle{v});
        } else if constexpr (std::is_same_v<T, ParamValue::Verbatim> || std::is_same_v<T, ParamValue::PolicyRef>) {
          return py::str(v.text);
        } else {
          return py::cast(v);
        }
      },
      param.value());
}

py::dict structure(const JaxprHandle& handle) {
  const Jaxpr& jaxpr = *handle.jaxpr;
  py::list constvars, invars, outvars, eqns;
  for (const Var& v : jaxpr.constvars) constvars.append(var_entry(v));
  for (const Var& v : jaxpr.invars) invars.append(var_entry(v));
  for (const Atom& a : jaxpr.outvars) outvars.append(atom_entry(a));
  for (const Eqn& eqn : jaxpr.eqns) {
    py::dict params;
    for (const auto& [key, value] : eqn.params) params[py::str(key)] = param_object(value);
    py::list inputs, outputs;
    for (const Atom& a : eqn.inputs) inputs.append(atom_entry(a));
    for (const Var& v : eqn.outputs) outputs.append(var_entry(v));
    // The primitive's name as the profile's JAX prints it (remat2 became checkpoint, pjit became jit).
    const Primitive& primitive = *eqn.primitive;
    const std::string name = primitive.printed_name ? primitive.printed_name(current_profile()) : primitive.name;
    eqns.append(py::make_tuple(name, params, inputs, outputs));
  }
  py::dict out;
  out["constvars"] = constvars;
  out["invars"] = invars;
  out["outvars"] = outvars;
  out["eqns"] = eqns;
  return out;
}

}  // namespace

py::object jaxpr_handle(JaxprPtr jaxpr) { return py::cast(JaxprHandle{std::move(jaxpr)}); }

void bind_jaxpr(py::module_& m) {
  py::class_<JaxprHandle>(m, "JaxprHandle")
      .def("text", [](const JaxprHandle& h) { return print_jaxpr(*h.jaxpr, current_profile()); })
      .def("structure", &structure)
      .def("eqn_text", [](const JaxprHandle& h,
                          std::size_t index) { return print_equation(h.jaxpr->eqns.at(index), current_profile()); })
      .def("same", [](const JaxprHandle& a, const JaxprHandle& b) { return a.jaxpr == b.jaxpr; });
}

}  // namespace shardscope::python
