// One place that registers every primitive family.
#include "ops/ops.h"

#include <mutex>

#include "ops/control_flow.h"

namespace shardscope {

void ensure_core_primitives() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_elementwise_primitives();
    register_structural_primitives();
    register_collective_primitives();
    register_program_primitives();
    register_control_flow_primitives();
    register_shard_map_primitive();
    register_pmap_primitive();
    register_ad_primitives();
    register_explicit_primitives();
    register_random_primitives();
  });
}

}  // namespace shardscope
