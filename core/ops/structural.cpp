// Placeholder replaced by the structural primitives.
#include "ops/ops.h"

namespace shardscope {
void register_structural_primitives() {}
}  // namespace shardscope
