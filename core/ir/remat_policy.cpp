// The built-in checkpoint policies, and reading one off a remat2 equation.
#include "ir/remat_policy.h"

#include <algorithm>

#include "base/error.h"

namespace shardscope {
namespace {

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// The checkpoint_name an equation attaches, when it is one.
const std::string* checkpoint_name_of(const std::string& primitive, const Params& params) {
  if (primitive != "name") return nullptr;
  const ParamValue* name = find_param(params, "name");
  return name != nullptr ? name->get_if<std::string>() : nullptr;
}

// dot_general's dimension_numbers ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)) with both batch groups
// empty.
bool dot_without_batch_dims(const Params& params) {
  const ParamValue* numbers = find_param(params, "dimension_numbers");
  const auto* outer = numbers != nullptr ? numbers->get_if<ParamValue::Tuple>() : nullptr;
  if (outer == nullptr || outer->items.size() != 2) return false;
  const auto* batch = outer->items[1].get_if<ParamValue::Tuple>();
  if (batch == nullptr) return false;
  return std::all_of(batch->items.begin(), batch->items.end(), [](const ParamValue& group) {
    const auto* dims = group.get_if<ParamValue::Tuple>();
    return dims != nullptr && dims->items.empty();
  });
}

RematDecision save_if(bool saveable) { return saveable ? RematDecision::kSave : RematDecision::kRecompute; }

const char* decision_repr(RematDecision decision) {
  switch (decision) {
    case RematDecision::kSave: return "True";
    case RematDecision::kRecompute: return "False";
    case RematDecision::kOffload: return "Offloadable(src, dst)";
  }
  return "?";
}

}  // namespace

RematDecision remat_decision(const RematPolicy& policy, const std::string& primitive, std::span<const Aval> in_avals,
                             const Params& params) {
  using Kind = RematPolicy::Kind;
  const std::string* name = checkpoint_name_of(primitive, params);
  switch (policy.kind) {
    case Kind::kEverythingSaveable: return RematDecision::kSave;
    case Kind::kNothingSaveable: return RematDecision::kRecompute;
    case Kind::kDotsSaveable: return save_if(primitive == "dot_general" || primitive == "conv_general_dilated");
    case Kind::kDotsWithNoBatchDimsSaveable:
      return save_if(primitive == "dot_general" && dot_without_batch_dims(params));
    case Kind::kSaveOnlyTheseNames: return save_if(name != nullptr && contains(policy.names, *name));
    case Kind::kSaveAnyNamesButThese: return save_if(name != nullptr && !contains(policy.names, *name));
    case Kind::kSaveAndOffloadOnlyTheseNames:
      if (name != nullptr && contains(policy.names, *name)) return RematDecision::kSave;
      if (name != nullptr && contains(policy.offloaded_names, *name)) return RematDecision::kOffload;
      return RematDecision::kRecompute;
    case Kind::kOffloadDotsWithNoBatchDims:
      return primitive == "dot_general" && dot_without_batch_dims(params) ? RematDecision::kOffload
                                                                          : RematDecision::kRecompute;
    case Kind::kEither: {
      if (!policy.first || !policy.second) throw value_error("save_from_both_policies needs two policies");
      const RematDecision a = remat_decision(*policy.first, primitive, in_avals, params);
      const RematDecision b = remat_decision(*policy.second, primitive, in_avals, params);
      if (a == RematDecision::kOffload || b == RematDecision::kOffload) {
        throw value_error(std::string("The return value of the policies should be a boolean. Got: ") +
                          decision_repr(a) + " and " + decision_repr(b) +
                          ". Please write a custom policy function directly, rather than using this helper function.");
      }
      return save_if(a == RematDecision::kSave || b == RematDecision::kSave);
    }
    case Kind::kCustom:
      if (!policy.custom) throw value_error("a custom checkpoint policy without a function");
      return policy.custom(primitive, in_avals, params);
  }
  return RematDecision::kRecompute;
}

const RematPolicy& remat_policy_of(const Params& params) {
  static const RematPolicy nothing_saveable{};
  const ParamValue* value = find_param(params, "policy");
  if (value == nullptr) return nothing_saveable;
  const auto* ref = value->get_if<ParamValue::PolicyRef>();
  return ref != nullptr && ref->policy ? *ref->policy : nothing_saveable;
}

}  // namespace shardscope
