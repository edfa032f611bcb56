// Host callbacks with results: jax.pure_callback and jax.experimental.io_callback equations, whose kernels hand
// their operands to a function the host registered and take its results as the equation's.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "array/buffer.h"
#include "ir/jaxpr.h"

namespace shardscope {

// What a callback equation calls: whole operand values in, one buffer per result out.
using HostFunction = std::function<std::vector<BufferPtr>(std::span<const BufferPtr> operands)>;

// Keeps `function` for the equations that name its id (the hidden `callback_id` param); ids are never reused.
[[nodiscard]] int64_t register_host_function(HostFunction function);

// Drops every registered function (the host calls this before it shuts down: functions hold host objects).
void clear_host_functions();

// Registers pure_callback and io_callback with their vmap and differentiation rules (idempotent).
//
// Params: callback (the callable's repr, printed), callback_id (hidden), result_shapes and result_dtypes (the
// declared results), vmap_method ("" for none; pure_callback only), ordered (io_callback only).
void ensure_host_callback_primitives();

// True for pure_callback and io_callback equations: partitioned programs run them once, on whole operands, and
// replicate their results (as JAX runs them on one device).
[[nodiscard]] bool is_host_callback(const Eqn& eqn);

// Per equation: a pure_callback whose results nothing reads. JAX removes such calls before running a program
// (they are pure), so the host function is not called; empty when the program has none.
[[nodiscard]] std::vector<bool> unused_pure_callbacks(const Jaxpr& jaxpr);

}  // namespace shardscope
