// lax.scan / while_loop / cond / switch and jax.checkpoint on flat Python functions (pytrees stay in Python).
#include <pybind11/stl.h>

#include "api/control_flow.h"
#include "api/custom_derivatives.h"
#include "api/lax.h"
#include "api/session.h"
#include "ir/remat_policy.h"
#include "python/bindings.h"
#include "python/convert.h"

namespace shardscope::python {
namespace {

api::Function wrap(const py::function& flat_fun) {
  return [flat_fun](const std::vector<api::Value>& args) {
    const py::gil_scoped_acquire gil;
    const ActiveTraceScope active(api::current_trace());
    py::object result = flat_fun(from_values(args));
    return to_values(result);
  };
}

// None stands for a function or rule the call does not trace (see api/custom_derivatives.h).
api::Function wrap_optional(const py::object& flat_fun) {
  if (flat_fun.is_none()) return nullptr;
  return wrap(flat_fun.cast<py::function>());
}

// A param as a custom policy sees it: Python scalars, strings and tuples; anything else as its printed text.
py::object param_to_python(const ParamValue& value) {
  if (value.is_none()) return py::none();
  if (const auto* b = value.get_if<bool>()) return py::bool_(*b);
  if (const auto* i = value.get_if<int64_t>()) return py::int_(*i);
  if (const auto* d = value.get_if<double>()) return py::float_(*d);
  if (const auto* text = value.get_if<std::string>()) return py::str(*text);
  if (const auto* tuple = value.get_if<ParamValue::Tuple>()) {
    py::list items;
    for (const ParamValue& item : tuple->items) items.append(param_to_python(item));
    return tuple->is_list ? py::object(items) : py::object(py::tuple(items));
  }
  return py::str(value.repr(api::session().profile));
}

// jax.checkpoint's policy, described by jax/_src/control_flow.py's _policy_spec as (kind, ...) tuples; a user's
// function is asked through `ask(primitive_name, avals, params)`, which returns True, False or "offload".
std::shared_ptr<const RematPolicy> policy_from_spec(const py::tuple& spec, const py::function& ask) {
  using Kind = RematPolicy::Kind;
  auto policy = std::make_shared<RematPolicy>();
  const auto kind = spec[0].cast<std::string>();
  if (kind == "everything") {
    policy->kind = Kind::kEverythingSaveable;
  } else if (kind == "nothing") {
    policy->kind = Kind::kNothingSaveable;
  } else if (kind == "dots") {
    policy->kind = Kind::kDotsSaveable;
  } else if (kind == "dots_no_batch") {
    policy->kind = Kind::kDotsWithNoBatchDimsSaveable;
  } else if (kind == "only_names") {
    policy->kind = Kind::kSaveOnlyTheseNames;
    policy->names = spec[1].cast<std::vector<std::string>>();
  } else if (kind == "any_names_but") {
    policy->kind = Kind::kSaveAnyNamesButThese;
    policy->names = spec[1].cast<std::vector<std::string>>();
  } else if (kind == "save_and_offload") {
    policy->kind = Kind::kSaveAndOffloadOnlyTheseNames;
    policy->names = spec[1].cast<std::vector<std::string>>();
    policy->offloaded_names = spec[2].cast<std::vector<std::string>>();
  } else if (kind == "offload_dots") {
    policy->kind = Kind::kOffloadDotsWithNoBatchDims;
  } else if (kind == "either") {
    policy->kind = Kind::kEither;
    policy->first = policy_from_spec(spec[1].cast<py::tuple>(), ask);
    policy->second = policy_from_spec(spec[2].cast<py::tuple>(), ask);
  } else {
    policy->kind = Kind::kCustom;
    const py::object user = spec[1];
    policy->custom = [user, ask](const std::string& primitive, std::span<const Aval> avals, const Params& params) {
      const py::gil_scoped_acquire gil;
      py::list shapes;
      for (const Aval& aval : avals) shapes.append(py::make_tuple(aval.shape, std::string(dtype_name(aval.dtype))));
      py::dict kwargs;
      for (const auto& [key, value] : params) kwargs[py::str(key)] = param_to_python(value);
      const py::object answer = ask(user, primitive, shapes, kwargs);
      if (py::isinstance<py::str>(answer)) return RematDecision::kOffload;
      return answer.cast<bool>() ? RematDecision::kSave : RematDecision::kRecompute;
    };
  }
  return policy;
}

}  // namespace

void bind_control_flow(py::module_& m) {
  m.def("scan_call", [](const py::function& body, const py::list& init, const py::list& xs, int64_t length,
                        bool reverse, int64_t unroll, const std::vector<std::string>& carry_names) {
    api::ScanSpec spec;
    spec.what = "scan body";
    spec.carry_names = carry_names;
    spec.length = length;
    spec.reverse = reverse;
    spec.unroll = unroll;
    return from_values(api::scan(wrap(body), to_values(init), to_values(xs), spec));
  });
  m.def("while_call", [](const py::function& cond, const py::function& body, const py::list& init,
                         const std::vector<std::string>& carry_names) {
    api::LoopSpec spec;
    spec.what = "while_loop body";
    spec.carry_names = carry_names;
    return from_values(api::while_loop(wrap(cond), wrap(body), to_values(init), spec));
  });
  // index: a bool predicate (cond) or an integer index (switch), converted and clamped as JAX does.
  m.def("switch_call", [](const py::object& index, const std::vector<py::function>& branches, const py::list& operands,
                          const std::string& api_name, const std::vector<std::string>& branch_names,
                          const std::vector<std::string>& branch_infos, const py::list& output_paths) {
    api::Value which = to_value(index);
    if (api_name == "cond") {
      which = api::lax::convert_element_type(which, DType::kInt32);
    } else {
      which = api::lax::convert_element_type(which, DType::kInt32);
      which = api::bind1("clamp", {api::typed_scalar(0, DType::kInt32), which,
                                   api::typed_scalar(static_cast<double>(branches.size() - 1), DType::kInt32)});
    }
    std::vector<api::Function> functions;
    for (const py::function& branch : branches) functions.push_back(wrap(branch));
    api::SwitchSpec spec{api_name, branch_names, branch_infos,
                         [output_paths]() {
                           const py::gil_scoped_acquire gil;
                           return output_paths[0].is_none() ? std::vector<std::string>{}
                                                            : output_paths[0].cast<std::vector<std::string>>();
                         },
                         api_name == "cond" ? std::size_t{1} : std::size_t{0}};
    return from_values(api::switch_branches(which, functions, to_values(operands), spec));
  });
  // jax.checkpoint: trace the body once per function and argument types (checkpoint_trace; the body says whether it
  // may be reused), then bind it (checkpoint_bind) with the policy, described as (text, spec).
  py::class_<api::Traced, std::shared_ptr<api::Traced>>(m, "CheckpointBody")
      .def_property_readonly("reusable", [](const api::Traced& traced) { return api::reusable_checkpoint(traced); });
  m.def("checkpoint_trace", [](const py::function& f, const py::list& args) {
    return std::make_shared<api::Traced>(api::trace_checkpoint(wrap(f), to_values(args)));
  });
  m.def("checkpoint_bind", [](const api::Traced& body, const py::list& args, bool prevent_cse, const py::object& policy,
                              const py::object& ask) {
    std::optional<ParamValue::PolicyRef> ref;
    if (!policy.is_none()) {
      const auto described = policy.cast<py::tuple>();
      ref = ParamValue::PolicyRef{described[0].cast<std::string>(),
                                  policy_from_spec(described[1].cast<py::tuple>(), ask.cast<py::function>())};
    }
    return from_values(api::bind_checkpoint(body, to_values(args), prevent_cse, ref));
  });
  // The argument types a traced body is reused for: short type text and weak flag per leaf.
  m.def("aval_keys", [](const py::list& args) {
    py::list keys;
    for (const Aval& aval : api::argument_avals(to_values(args))) {
      keys.append(py::make_tuple(aval.str_short(false), aval.weak_type));
    }
    return py::tuple(keys);
  });
  m.def("custom_jvp_call", [](const py::object& f, const py::object& jvp, const py::list& args, const std::string& name,
                              const std::string& jvp_name) {
    return from_values(api::custom_jvp_call(wrap_optional(f), wrap_optional(jvp), to_values(args), {name, {jvp_name}}));
  });
  m.def("custom_vjp_call", [](const py::object& f, const py::object& fwd, const py::object& bwd, const py::list& args,
                              const py::function& num_outs, const std::string& name, const std::string& fwd_name,
                              const std::string& bwd_name) {
    return from_values(api::custom_vjp_call(wrap_optional(f), wrap_optional(fwd), wrap_optional(bwd), to_values(args),
                                            [num_outs] { return num_outs().cast<std::size_t>(); },
                                            {name, {fwd_name, bwd_name}}));
  });
  // (shape, dtype name, short type text, type text, source) per residual, for jax.ad_checkpoint.saved_residuals.
  m.def("saved_residuals", [](const py::function& f, const py::list& args, const std::vector<std::string>& names) {
    py::list out;
    for (const SavedResidual& residual : api::saved_residuals(wrap(f), to_values(args), names)) {
      out.append(py::make_tuple(py::tuple(py::cast(residual.aval.shape)), std::string(dtype_name(residual.aval.dtype)),
                                residual.aval.str_short(true), residual.aval.str_short(false), residual.source));
    }
    return out;
  });
  m.def("checkpoint_name", [](const py::object& x, const std::string& name) {
    const py::list out = from_values({api::bind1("name", {to_value(x)}, {{"name", name}})});
    return py::object(out[0]);
  });
}

}  // namespace shardscope::python
