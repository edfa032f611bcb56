// The table of JAX behaviour changes and version parsing.
#include "compat/jax_version.h"

#include <atomic>
#include <charconv>

#include "base/error.h"

namespace shardscope {

std::string JaxVersion::to_string() const {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

JaxVersion JaxVersion::parse(std::string_view text) {
  std::string_view rest = text;
  for (const std::string_view prefix : {"jax-v", "jax-", "v"}) {
    if (rest.starts_with(prefix)) {
      rest.remove_prefix(prefix.size());
      break;
    }
  }
  int parts[3] = {0, 0, 0};
  int count = 0;
  while (!rest.empty() && count < 3) {
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), parts[count]);
    if (ec != std::errc() || end == rest.data() || parts[count] < 0) break;
    ++count;
    rest.remove_prefix(static_cast<std::size_t>(end - rest.data()));
    if (rest.empty()) break;
    if (rest.front() != '.') {
      count = -1;
      break;
    }
    rest.remove_prefix(1);
  }
  // Development suffixes like "0.11.1.dev" are accepted after three numbers.
  const bool trailing_ok = rest.empty() || (count == 3 && rest.starts_with("dev"));
  if (count < 2 || !trailing_ok) {
    throw value_error("Invalid JAX version '" + std::string(text) +
                      "': expected a release number such as 0.4.26 or 0.11.0");
  }
  return JaxVersion{parts[0], parts[1], parts[2]};
}

const std::vector<JaxFeatureChange>& jax_feature_changes() {
  static const std::vector<JaxFeatureChange> table = {
      {JaxFeature::kTpuDeviceReprProcessIndex, {0, 2, 13}, "repr(TpuDevice) shows process_index (was host_id)"},
      {JaxFeature::kXlaPmapGlobalArgShapes, {0, 2, 26}, "xla_pmap carries global_arg_shapes"},
      {JaxFeature::kMapsMeshDeprecated, {0, 3, 2}, "maps.mesh warns FutureWarning: use maps.Mesh"},
      {JaxFeature::kMapsMeshRemoved, {0, 3, 8}, "jax.experimental.maps.mesh is removed"},
      {JaxFeature::kPmapArrayOutputs, {0, 4, 1}, "pmap returns Array with PmapSharding"},
      {JaxFeature::kXlaPmapExplicitGlobalAxisSize, {0, 4, 2}, "xla_pmap carries is_explicit_global_axis_size"},
      {JaxFeature::kDotGeneralPrintRule,
       {0, 4, 2},
       "dot_general prints dimension_numbers as lists and hides None params"},
      {JaxFeature::kJitPrimitivePjit, {0, 4, 4}, "jit is pjit: jaxprs show pjit[name= jaxpr=]"},
      {JaxFeature::kDeviceMismatchNamesArguments,
       {0, 4, 4},
       "device-assignment errors name the mismatched arguments and their shapes"},
      {JaxFeature::kXlaPmapNoGlobalArgShapes, {0, 4, 8}, "global_arg_shapes is removed from xla_pmap"},
      {JaxFeature::kPmapTooManyDevicesNoPartitions, {0, 4, 8}, "pmap's device-count error drops num_partitions"},
      {JaxFeature::kTypedPrngKeys, {0, 4, 11}, "jax.random.key returns typed key arrays of dtype key<fry>"},
      {JaxFeature::kJnpDotPassesPreferredType, {0, 4, 14}, "jnp.dot passes preferred_element_type=<result dtype>"},
      {JaxFeature::kNamedShardingReprMeshStr, {0, 4, 15}, "NamedSharding shows its mesh as Mesh('x': 2) (was a dict)"},
      {JaxFeature::kJnpMatmulPassesPreferredType, {0, 4, 16}, "jnp.matmul passes preferred_element_type"},
      {JaxFeature::kArrayDeviceMethodDeprecated, {0, 4, 21}, "arr.device() warns DeprecationWarning"},
      {JaxFeature::kReshapeUnknownAxisMessage, {0, 4, 21}, "reshape with two -1 sizes raises JAX's own TypeError"},
      {JaxFeature::kMeshStrDefined, {0, 4, 24}, "Mesh has a __str__ (before, str(mesh) was its repr)"},
      {JaxFeature::kSplitErrorNamesRest, {0, 4, 25}, "an uneven split's error names the remainder"},
      {JaxFeature::kArrayDeviceMethodRemoved, {0, 4, 27}, "arr.device() is removed"},
      {JaxFeature::kTpuMemoryKindInReprs, {0, 4, 30}, "TPU and GPU shardings print memory_kind=device"},
      {JaxFeature::kXmapRemoved, {0, 4, 31}, "xmap is deleted"},
      {JaxFeature::kArrayDeviceProperty, {0, 4, 31}, "arr.device is a property"},
      {JaxFeature::kConvertElementTypePrintsDtype,
       {0, 4, 31},
       "convert_element_type prints new_dtype and weak_type, and its sharding unless None"},
      // jax_enable_memories became the default in 0.4.32: shardings canonicalize a None memory kind to the
      // device's default one, which CPU devices name unpinned_host.
      {JaxFeature::kCpuMemoryKindInReprs, {0, 4, 32}, "CPU shardings print a memory kind (unpinned_host)"},
      {JaxFeature::kPmapNoRankReduction, {0, 4, 34}, "pmap shards keep their leading 1"},
      {JaxFeature::kIotaShardingParam, {0, 4, 35}, "iota has a sharding param"},
      {JaxFeature::kGatherBatchingDims, {0, 4, 35}, "GatherDimensionNumbers print batching dims"},
      {JaxFeature::kUnboundAxisShortMessage, {0, 4, 36}, "unbound axis errors no longer list the bound names"},
      {JaxFeature::kUfuncMismatchNamesAdd,
       {0, 4, 36},
       "jnp's binary ufuncs take (x, y): device mismatches name `argument x of add`"},
      {JaxFeature::kDotGeneralOutTypeParam,
       {0, 4, 36},
       "dot_general has an out_type param (renamed out_sharding in 0.5.0)"},
      {JaxFeature::kShapeOpShardingParam, {0, 4, 36}, "broadcast_in_dim and reshape have a sharding param"},
      {JaxFeature::kMeshReprAxisTypes, {0, 5, 0}, "repr(Mesh) shows axis_types=(...)"},
      {JaxFeature::kDotGeneralOutShardingParam, {0, 5, 0}, "dot_general's out_type param is named out_sharding"},
      {JaxFeature::kJitPpReusesOuterNames, {0, 5, 3}, "a jit's inner jaxpr reuses the outer variable names"},
      {JaxFeature::kMeshStrShowsAxisTypes, {0, 5, 3}, "str(Mesh) shows axis_types=(...)"},
      {JaxFeature::kDuplicateSpecErrorIsException,
       {0, 5, 3},
       "DuplicateSpecError derives from Exception, not ValueError"},
      {JaxFeature::kUnaryAccuracyParam, {0, 6, 0}, "unary ops like sin carry an accuracy param, hidden while None"},
      {JaxFeature::kShardMapVmaParams, {0, 6, 1}, "shard_map params check_vma in_specs manual_axes out_specs"},
      {JaxFeature::kTypedLiterals, {0, 6, 1}, "jaxpr literals print with their type (1.0:f32[])"},
      {JaxFeature::kShapedArrayStrDropsWrapper, {0, 6, 1}, "str(ShapedArray) drops the ShapedArray(...) wrapper"},
      {JaxFeature::kAvalVaryingManualAxes, {0, 6, 1}, "avals carry varying manual axes, printed {V:x}"},
      {JaxFeature::kJitPrimitiveJit, {0, 7, 0}, "the pjit primitive is renamed jit"},
      {JaxFeature::kMeshReprAxisSizes, {0, 7, 0}, "repr(Mesh) prints axis_sizes= instead of device_ids=array(...)"},
      {JaxFeature::kUnboundAxisFoundMessage, {0, 7, 0}, "traced collectives name the API in unbound-axis errors"},
      // jax commit 279de8bd72 (first released in 0.7.1) made `device` the CPU devices' default memory.
      {JaxFeature::kCpuDefaultMemoryKindDevice, {0, 7, 1}, "CPU default memory kind is device"},
      // jax commit ad8f28dcbd (August 2025, first released in 0.7.1).
      {JaxFeature::kConstraintAssertsOnExplicitMesh,
       {0, 7, 1},
       "with_sharding_constraint under an all-Explicit mesh asserts the operand's type"},
      {JaxFeature::kAbstractMeshReprDevice, {0, 7, 2}, "repr(AbstractMesh) shows device_kind, num_cores, platform"},
      {JaxFeature::kDebugPrintPrimitive, {0, 7, 2}, "jax.debug.print binds debug_print"},
      {JaxFeature::kConvOutShardingParam, {0, 7, 2}, "conv_general_dilated takes out_sharding"},
      {JaxFeature::kAutoAxesWithoutMeshCast, {0, 7, 2}, "auto_axes changes axis types without mesh_cast"},
      {JaxFeature::kLiteralsPrintItem, {0, 7, 2}, "float literals print their value as a Python float"},
      {JaxFeature::kPmapIsJitOfShardMap, {0, 8, 0}, "pmap is jit(shard_map); xla_pmap is gone from jaxprs"},
      {JaxFeature::kReduceSumOutShardingParam, {0, 8, 0}, "reduce_sum has an out_sharding param"},
      {JaxFeature::kGradSeedReshard, {0, 8, 1}, "grad seeds its cotangent with a reshard of 1.0 (lax._one_vjp)"},
      {JaxFeature::kIndexErrorArrayIsNDimensional, {0, 8, 2}, "too many indices: `array is N-dimensional, but M...`"},
      {JaxFeature::kMakeMeshDefaultsToExplicit, {0, 9, 0}, "jax.make_mesh defaults to Explicit axis types"},
      {JaxFeature::kShortPartitionSpecRepr, {0, 9, 1}, "PartitionSpec prints as P(...)"},
      {JaxFeature::kIndivisibleErrorClass, {0, 9, 1}, "uneven shards raise IndivisibleError instead of ValueError"},
      {JaxFeature::kBroadcastInDimPrintRule, {0, 9, 1}, "broadcast_in_dim hides shape, sharding and empty dims"},
      {JaxFeature::kCpuDeviceStrLowercase, {0, 10, 0}, "CPU devices are named cpu:N instead of TFRT_CPU_N"},
      {JaxFeature::kConvertElementTypeHidesSharding, {0, 10, 0}, "convert_element_type never prints sharding"},
      {JaxFeature::kMulOutDtypeParam, {0, 10, 0}, "mul carries an out_dtype param, hidden while None"},
      {JaxFeature::kDotGeneralHidesOutSharding, {0, 10, 0}, "dot_general never prints out_sharding"},
      {JaxFeature::kReshardHidesParams, {0, 10, 0}, "reshard equations print no params"},
      {JaxFeature::kDeviceMismatchWithDeviceIds,
       {0, 10, 0},
       "device-mismatch errors say `with device ids [...] on platform ...`"},
      {JaxFeature::kUnusedOutputsPrintUnderscore, {0, 10, 1}, "unused jaxpr outputs print as _; addresses masked"},
      // jax commit bfafe3c1: jnp.stack/unstack bind stack/unstack (were expand_dims+concatenate, split+squeeze).
      {JaxFeature::kStackPrimitives, {0, 10, 1}, "stack and unstack are primitives; jax.lax.stack/unstack exist"},
      {JaxFeature::kLargeSubJaxprsShared, {0, 10, 2}, "sub-jaxprs over 10 equations print once, up front"},
      {JaxFeature::kShardMapNewlyManualAxes, {0, 11, 0}, "shard_map's manual_axes is renamed newly_manual_axes"},
      {JaxFeature::kIndivisibleErrorNoPrefix, {0, 11, 0}, "IndivisibleError drops its 'Sharding ' prefix"},
      {JaxFeature::kIndivisibleErrorPrintsSource, {0, 11, 0}, "uneven device_put/jit shards print the source"},
      {JaxFeature::kFrozenSetParamsBraced, {0, 11, 0}, "frozenset params print frozenset({...}), even empty"},
      {JaxFeature::kReduceMaxMinOutShardingParam, {0, 11, 1}, "reduce_max/reduce_min have an out_sharding param"},
      {JaxFeature::kTanhJvpOneResidual, {0, 11, 2}, "tanh's JVP keeps one residual, (1 - ans) * (1 + ans)"},
  };
  return table;
}

namespace {
std::atomic<ProfileSource> profile_source{nullptr};
}  // namespace

void set_profile_source(ProfileSource source) { profile_source.store(source); }

const JaxProfile& active_profile() {
  static const JaxProfile fallback;
  const ProfileSource source = profile_source.load();
  return source == nullptr ? fallback : source();
}

bool JaxProfile::has(JaxFeature feature) const {
  for (const JaxFeatureChange& change : jax_feature_changes()) {
    if (change.feature == feature) return version_ >= change.introduced_in;
  }
  return false;
}

}  // namespace shardscope
