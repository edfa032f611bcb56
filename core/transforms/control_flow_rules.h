// Registration of the control-flow primitives' JVP, transpose and batching rules.
#pragma once

namespace shardscope {
namespace ad {
void register_control_flow_ad_rules();
}  // namespace ad
namespace batching {
void register_control_flow_batch_rules();
}  // namespace batching
}  // namespace shardscope
