// Registration of conv_general_dilated's jvp, transpose and batching rules (transforms/conv_rules.cpp).
#pragma once

namespace shardscope {

void register_conv_ad_rules();
void register_conv_batch_rule();

}  // namespace shardscope
