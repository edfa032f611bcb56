// The parts of the `_shardscope` module, each bound in its own file.
#pragma once

#include <pybind11/pybind11.h>

#include "ir/jaxpr.h"

namespace shardscope::python {

void bind_core(pybind11::module_& m);
void bind_transforms(pybind11::module_& m);
void bind_explain(pybind11::module_& m);       // shardscope.explain / compare / notation: beyond JAX
void bind_control_flow(pybind11::module_& m);  // lax.scan, while_loop, cond, switch, checkpoint
void bind_api(pybind11::module_& m);
void bind_explicit(pybind11::module_& m);
void bind_random(pybind11::module_& m);  // the `random` submodule
void bind_debug(pybind11::module_& m);   // `debug` (jax.debug's host callbacks) and jax_has (profile queries)
void bind_jaxpr(pybind11::module_& m);   // make_jaxpr's object model
// A Python handle on an engine jaxpr (bindings_jaxpr.cpp).
[[nodiscard]] pybind11::object jaxpr_handle(JaxprPtr jaxpr);
void install_source_capture();  // traced equations record the user's file, line and function

}  // namespace shardscope::python
