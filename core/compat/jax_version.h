// JAX version profiles: every behaviour that changed between JAX releases is keyed here, in one table.
#pragma once

#include <compare>
#include <string>
#include <string_view>
#include <vector>

namespace shardscope {

struct JaxVersion {
  int major = 0;
  int minor = 11;
  int patch = 0;

  auto operator<=>(const JaxVersion&) const = default;
  [[nodiscard]] std::string to_string() const;
  // Accepts "0.4.26", "0.5", "v0.6.1", "jax-v0.7.0"; throws ValueError naming the text otherwise.
  static JaxVersion parse(std::string_view text);
};

// The newest JAX release shardscope reproduces (the default profile).
inline constexpr JaxVersion kNewestJax{0, 11, 0};

// Behaviours that changed at one release. A profile "has" a feature when its version is at
// least the release that introduced it.
enum class JaxFeature {
  kTpuMemoryKindInReprs,             // TPU/GPU shardings print `memory_kind=device`
  kCpuMemoryKindInReprs,             // CPU shardings print a memory kind at all
  kCpuDefaultMemoryKindDevice,       // CPU default memory kind is `device` (was `unpinned_host`)
  kMeshStrShowsAxisTypes,            // str(Mesh) ends with `, axis_types=(...)`
  kMeshReprAxisTypes,                // repr(Mesh) ends with `, axis_types=(...)`
  kMeshReprAxisSizes,                // repr(Mesh) uses `axis_sizes=` (was `device_ids=array(...)`)
  kMakeMeshDefaultsToExplicit,       // jax.make_mesh's default axis_types are Explicit (were Auto)
  kShortPartitionSpecRepr,           // repr(PartitionSpec) is `P(...)` (was `PartitionSpec(...)`)
  kIndivisibleErrorClass,            // uneven shards raise IndivisibleError, not plain ValueError
  kIndivisibleErrorNoPrefix,         // the message no longer starts with "Sharding "
  kCpuDeviceStrLowercase,            // str(CpuDevice) is `cpu:0` (was `TFRT_CPU_0`)
  kDuplicateSpecErrorIsException,    // DuplicateSpecError no longer subclasses ValueError
  kJitPpReusesOuterNames,            // make_jaxpr: a jit's inner jaxpr reuses the outer variable names
  kTypedLiterals,                    // literals print with their type, `1.0:f32[]`
  kUnusedOutputsPrintUnderscore,     // unused equation outputs print as `_`, object addresses masked
  kLargeSubJaxprsShared,             // sub-jaxprs over 10 equations print once, before the main jaxpr
  kConvertElementTypePrintsDtype,    // convert_element_type prints new_dtype and weak_type (and a set sharding)
  kUnaryAccuracyParam,               // transcendental unary ops carry `accuracy` (printed only when set)
  kConvertElementTypeHidesSharding,  // convert_element_type never prints its sharding param
  kMulOutDtypeParam,                 // mul carries `out_dtype` (printed only when set)
  kDotGeneralPrintRule,
  kDotGeneralOutTypeParam,
  kDotGeneralOutShardingParam,
  kDotGeneralHidesOutSharding,
  kIotaShardingParam,
  kGatherBatchingDims,
  kShapeOpShardingParam,
  kReduceSumOutShardingParam,
  kBroadcastInDimPrintRule,
  kReduceMaxMinOutShardingParam,
  kCount
};

struct JaxFeatureChange {
  JaxFeature feature;
  JaxVersion introduced_in;
  std::string_view summary;
};

// The whole table, oldest first.
[[nodiscard]] const std::vector<JaxFeatureChange>& jax_feature_changes();

class JaxProfile {
 public:
  JaxProfile() = default;
  explicit JaxProfile(JaxVersion version) : version_(version) {}

  [[nodiscard]] const JaxVersion& version() const { return version_; }
  [[nodiscard]] bool has(JaxFeature feature) const;

 private:
  JaxVersion version_ = kNewestJax;
};

}  // namespace shardscope
