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
  kNamedShardingReprMeshStr,         // NamedSharding shows its mesh as `Mesh('x': 2)` (was `{'x': 2}`)
  kMeshStrDefined,                   // str(Mesh) is `Mesh('x': 2)` (before, str fell back to repr)
  kTpuMemoryKindInReprs,             // TPU/GPU shardings print `memory_kind=device`
  kCpuMemoryKindInReprs,             // CPU shardings print a memory kind at all
  kCpuDefaultMemoryKindDevice,       // CPU default memory kind is `device` (was `unpinned_host`)
  kConstraintAssertsOnExplicitMesh,  // with_sharding_constraint under an all-Explicit mesh asserts the type
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
  kJitPrimitivePjit,                // jit equations print as pjit[name= jaxpr=] (were xla_call[call_jaxpr= name=])
  kJitPrimitiveJit,                 // jit equations print as jit[...] (were pjit)
  kTpuDeviceReprProcessIndex,       // repr(TpuDevice) says process_index= (was host_id=)
  kDeviceMismatchNamesArguments,    // device-assignment errors name the arguments (were "another array's")
  kXlaPmapGlobalArgShapes,          // xla_pmap carries global_arg_shapes
  kXlaPmapNoGlobalArgShapes,        // global_arg_shapes removed from xla_pmap
  kXlaPmapExplicitGlobalAxisSize,   // xla_pmap carries is_explicit_global_axis_size
  kPmapArrayOutputs,                // pmap returns jax.Array with PmapSharding (was ShardedDeviceArray)
  kPmapTooManyDevicesNoPartitions,  // the too-many-devices error drops `, num_partitions=1`
  kPmapNoRankReduction,             // pmap shards keep a leading 1 (Chunked, not Unstacked)
  kPmapIsJitOfShardMap,             // pmap is jit(shard_map) over devices[:n]; no xla_pmap
  kShardMapVmaParams,               // shard_map params: check_vma in_specs manual_axes out_specs (were
                                    // auto check_rep in_names out_names rewrite)
  kShardMapNewlyManualAxes,         // shard_map's manual_axes param is named newly_manual_axes
  kShapedArrayStrDropsWrapper,      // str(ShapedArray) is `int32[8]` (was `ShapedArray(int32[8])`)
  kAvalVaryingManualAxes,           // avals carry varying manual axes, printed `{V:x}` (shard_map bodies)
  kAbstractMeshReprDevice,          // repr(AbstractMesh) ends with the device kind, cores and platform
  kAutoAxesWithoutMeshCast,         // auto_axes/explicit_axes change axis types without a mesh_cast equation
  kReshardHidesParams,              // reshard equations print no params
  kGradSeedReshard,                 // grad seeds its cotangent with `reshard 1.0` (lax._one_vjp)
  kJnpDotPassesPreferredType,       // jnp.dot/vdot bind dot_general with preferred_element_type=<result dtype>
  kJnpMatmulPassesPreferredType,    // jnp.matmul does the same (was None)
  kUnboundAxisShortMessage,         // unbound axis names raise `unbound axis name: x` (no list of bound names)
  kUnboundAxisFoundMessage,         // traced collectives say `Found an unbound axis name: x. To fix this, ...`
  kTypedPrngKeys,                   // jax.random.key gives typed key arrays (dtype key<fry>)
  kDebugPrintPrimitive,             // jax.debug.print binds debug_print (was a debug_callback of a formatter)
  kConvOutShardingParam,            // conv_general_dilated equations carry an out_sharding param
  kMapsMeshDeprecated,              // jax.experimental.maps.mesh warns (FutureWarning: use maps.Mesh)
  kMapsMeshRemoved,                 // jax.experimental.maps.mesh is gone
  kXmapRemoved,                     // jax.experimental.maps.xmap is gone
  kArrayDeviceMethodDeprecated,     // arr.device() warns (DeprecationWarning: use arr.devices())
  kArrayDeviceMethodRemoved,        // arr.device() is gone
  kArrayDeviceProperty,             // arr.device is a property (the device, or the sharding of several)
  kIndivisibleErrorPrintsSource,    // device_put/jit print the user's source line before raising IndivisibleError
  kLiteralsPrintItem,          // float literals print np.asarray(val).item(): 0.044715 in f32 is 0.044714998453855515
  kFrozenSetParamsBraced,      // frozenset params print sorted in braces, frozenset({}) when empty
  kReshapeUnknownAxisMessage,  // two -1 sizes: TypeError `can only specify one unknown axis size with a ...`
  kSplitErrorNamesRest,        // an uneven jnp.split says `... equal division: rest is r`
  kIndexErrorArrayIsNDimensional,  // `Too many indices: array is 2-dimensional, but 3 were indexed`
  kStackPrimitives,                // stack/unstack are primitives (jnp.stack's shape error lists the shapes)
  kUfuncMismatchNamesAdd,          // a jnp ufunc's device mismatch names `add` and its (x, y), not jax.numpy.add's x1
  kDeviceMismatchWithDeviceIds,    // device-mismatch errors say `... with device ids [..] on platform CPU`
  kTanhJvpOneResidual,             // tanh's JVP is g * ((1 - ans) * (1 + ans)): one residual, its rounding
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

// The profile the session reproduces, for rules below the session layer (a derivative whose form changed across
// releases). The session installs where to read it; until then, the default profile.
using ProfileSource = const JaxProfile& (*)();
void set_profile_source(ProfileSource source);
[[nodiscard]] const JaxProfile& active_profile();

}  // namespace shardscope
