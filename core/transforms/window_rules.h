// Registration of the windowed reductions' jvp, transpose and batching rules (transforms/window_rules.cpp).
#pragma once

namespace shardscope {

void register_window_ad_rules();
void register_window_batch_rules();

}  // namespace shardscope
