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
// Defined in exec/: programs nested as equations (shard_map, old pmap's xla_pmap).
void register_shard_map_primitive();
void register_pmap_primitive();
void register_ad_primitives();
void register_explicit_primitives();  // reshard, mesh_cast (core/trace/explicit_reshard.cpp)
void register_random_primitives();

}  // namespace shardscope
