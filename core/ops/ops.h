// The core primitives: registration entry points, one per family of operations.
#pragma once

namespace shardscope {

// Registers every core primitive once (idempotent, thread-safe). Static libraries drop
// self-registering objects, so registration is explicit.
void ensure_core_primitives();

void register_elementwise_primitives();
void register_structural_primitives();
void register_collective_primitives();
void register_program_primitives();

}  // namespace shardscope
