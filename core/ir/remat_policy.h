// jax.checkpoint policies: which values a rematerialized program keeps for the backward pass and which it
// recomputes there, decided per equation as jax.checkpoint_policies decide.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ir/aval.h"
#include "ir/param.h"

namespace shardscope {

enum class RematDecision { kRecompute, kSave, kOffload };

// The targets of the device_put equations that move an offloaded residual to host memory and back, printed as
// JAX's MemorySpace values print.
inline constexpr const char* kHostMemorySpaceText = "MemorySpace.Host";
inline constexpr const char* kDeviceMemorySpaceText = "MemorySpace.Device";

struct RematPolicy {
  enum class Kind {
    kEverythingSaveable,
    kNothingSaveable,
    kDotsSaveable,                 // dot_general and conv_general_dilated outputs
    kDotsWithNoBatchDimsSaveable,  // dot_general outputs without batch dimensions
    kSaveOnlyTheseNames,           // checkpoint_name values named in `names`
    kSaveAnyNamesButThese,         // checkpoint_name values not named in `names`
    kSaveAndOffloadOnlyTheseNames,
    kOffloadDotsWithNoBatchDims,
    kEither,  // save_from_both_policies(first, second)
    kCustom,  // a user's function
  };
  Kind kind = Kind::kNothingSaveable;
  std::vector<std::string> names;            // saved names (kSaveOnlyTheseNames, kSaveAndOffload...), or excluded
  std::vector<std::string> offloaded_names;  // kSaveAndOffloadOnlyTheseNames
  std::shared_ptr<const RematPolicy> first, second;
  // kCustom: the user's policy, asked with the primitive's name, its operand types and its params.
  std::function<RematDecision(const std::string&, std::span<const Aval>, const Params&)> custom;
};

// What `policy` says of an equation binding `primitive` on operands of types `in_avals`. save_from_both_policies
// raises JAX's ValueError when a side answers with an offload instead of a bool.
[[nodiscard]] RematDecision remat_decision(const RematPolicy& policy, const std::string& primitive,
                                           std::span<const Aval> in_avals, const Params& params);

// The policy a remat2 equation's `policy` param holds (None: nothing_saveable, JAX's default for checkpoint).
[[nodiscard]] const RematPolicy& remat_policy_of(const Params& params);

}  // namespace shardscope
