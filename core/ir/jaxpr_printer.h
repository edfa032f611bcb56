// make_jaxpr's text: JAX's document shapes, variable naming and per-primitive print rules.
#pragma once

#include <string>

#include "compat/jax_version.h"
#include "ir/jaxpr.h"

namespace shardscope {

// What `print(jax.make_jaxpr(f)(...))` shows for the profile (plain, no colour).
[[nodiscard]] std::string print_jaxpr(const Jaxpr& jaxpr, const JaxProfile& profile, int width = 80);

// One equation printed on its own (str(eqn)): its variables named afresh, outputs first ("a:f32[3] = sin b").
[[nodiscard]] std::string print_equation(const Eqn& eqn, const JaxProfile& profile, int width = 80);

// A literal as jaxprs print it: "1.0:f32[]" (or "1.0" before JAX 0.6.1), "2:i32[]", "True:bool[]".
[[nodiscard]] std::string literal_text(const Literal& literal, const JaxProfile& profile);

}  // namespace shardscope
