// Replacing a call's body: what a transformed call keeps of the original call's params.
#include "transforms/call_params.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace shardscope {

Params call_params_with_body(const Params& params, const ParamValue::JaxprRef& body) {
  static constexpr std::array<std::string_view, 5> kPerArgument = {"in_shardings", "out_shardings", "in_layouts",
                                                                   "out_layouts", "donated_invars"};
  Params out;
  for (const auto& [key, value] : params) {
    if (std::find(kPerArgument.begin(), kPerArgument.end(), key) != kPerArgument.end()) continue;
    out.emplace_back(key, key == "jaxpr" ? ParamValue(body) : value);
  }
  return out;
}

}  // namespace shardscope
