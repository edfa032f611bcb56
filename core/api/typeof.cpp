// jax.typeof(x) for the profile: which parts of the aval existed in that JAX release.
#include "api/typeof.h"

#include "api/transforms.h"
#include "explicit/sharding_rules.h"

namespace shardscope::api {

Aval typeof_aval(const Value& value, const JaxProfile& profile) {
  Aval aval = value.is_concrete() ? argument_aval(value) : value.aval();
  // Before avals tracked varying manual axes, shard_map bodies saw plain per-shard types.
  if (!profile.has(JaxFeature::kAvalVaryingManualAxes)) aval.varying.clear();
  return aval;
}

std::string typeof_text(const Value& value, const JaxProfile& profile) {
  return typeof_str(typeof_aval(value, profile), profile);
}

std::string typeof_repr_text(const Value& value, const JaxProfile& profile) {
  return typeof_repr(typeof_aval(value, profile));
}

}  // namespace shardscope::api
