// jax.typeof(x): the type JAX reports for a value, printed as the session's JAX version printed it.
#pragma once

#include <string>

#include "api/trace.h"
#include "compat/jax_version.h"

namespace shardscope::api {

// The aval jax.typeof shows: sharding in types for Explicit-mode arrays; varying manual axes only in the
// profiles whose avals carry them.
[[nodiscard]] Aval typeof_aval(const Value& value, const JaxProfile& profile);
// str(jax.typeof(x)): `ShapedArray(int32[4@X,2])` on old profiles, `float32[4]{V:x}` on new ones.
[[nodiscard]] std::string typeof_text(const Value& value, const JaxProfile& profile);
// repr(jax.typeof(x)): always `ShapedArray(...)`, with `, weak_type=True` for weakly typed values.
[[nodiscard]] std::string typeof_repr_text(const Value& value, const JaxProfile& profile);

}  // namespace shardscope::api
