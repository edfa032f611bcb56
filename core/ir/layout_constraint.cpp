// Where a layout-pinning equation keeps its target: `sharding` for constraints, `devices[0]` for device_put.
#include "ir/layout_constraint.h"

#include "ir/primitive.h"

namespace shardscope {

bool is_layout_constraint(const Eqn& eqn) {
  const std::string& name = eqn.primitive->name;
  return name == "sharding_constraint" || name == "device_put";
}

const NamedSharding* layout_constraint_target(const Eqn& eqn) {
  const std::string& name = eqn.primitive->name;
  if (name == "sharding_constraint") {
    const ParamValue* sharding = find_param(eqn.params, "sharding");
    return sharding == nullptr ? nullptr : sharding->get_if<NamedSharding>();
  }
  if (name == "device_put") {
    const ParamValue* devices = find_param(eqn.params, "devices");
    const auto* items = devices == nullptr ? nullptr : devices->get_if<ParamValue::Tuple>();
    return items == nullptr || items->items.empty() ? nullptr : items->items.front().get_if<NamedSharding>();
  }
  return nullptr;
}

}  // namespace shardscope
