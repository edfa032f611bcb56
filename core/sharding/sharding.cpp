// NamedSharding / SingleDeviceSharding validation, reprs and shard geometry.
#include "sharding/sharding.h"

#include <algorithm>
#include <map>
#include <set>

#include "base/error.h"
#include "base/python_format.h"

namespace shardscope {
namespace {

std::string mesh_names_tuple(const Mesh& mesh) {
  std::vector<std::string> items;
  for (const std::string& n : mesh.axis_names()) items.push_back(python_string_repr(n));
  return python_tuple(items);
}

std::optional<std::string> canonical_memory_kind(const Device& device, const std::optional<std::string>& requested,
                                                 const JaxProfile& profile) {
  if (!requested) return default_memory_kind(device.platform, profile);
  const std::vector<std::string> kinds = addressable_memory_kinds(device);
  if (std::find(kinds.begin(), kinds.end(), *requested) == kinds.end()) {
    throw value_error("Could not find memory addressable by device " + device.device_kind + ". Device " +
                      device.device_kind + " can address the following memory kinds: " + join(kinds, ", ") +
                      ". Got memory kind: " + *requested);
  }
  return requested;
}

// Number of shards one spec entry cuts its dimension into.
int64_t entry_shards(const SpecEntry& entry, const Mesh& mesh) {
  int64_t shards = 1;
  for (const std::string& axis : entry.axes) shards *= mesh.axis_size(axis);
  return shards;
}

}  // namespace

NamedSharding make_named_sharding(Mesh mesh, PartitionSpec spec, const JaxProfile& profile,
                                  std::optional<std::string> memory_kind) {
  std::map<std::string, int> uses;
  for (const std::string& axis : spec.mentioned_axes()) ++uses[axis];
  std::vector<std::string> duplicated;
  for (const auto& [axis, count] : uses) {
    if (count > 1) duplicated.push_back("`" + axis + "`");
  }
  if (!duplicated.empty()) {
    throw Error(profile.has(JaxFeature::kDuplicateSpecErrorIsException) ? "DuplicateSpecError" : "ValueError",
                "A single NamedSharding spec specification can map every mesh axis to at most one positional "
                "dimension, but " +
                    spec.repr(profile) + " has duplicate entries for " + join(duplicated, ", "));
  }
  for (const std::string& axis : spec.mentioned_axes()) {
    if (!mesh.axis_index(axis)) {
      throw value_error("Resource axis: " + axis + " of " + spec.repr(profile) +
                        " is not found in mesh: " + mesh_names_tuple(mesh) + ".");
    }
  }
  for (const std::string& axis : spec.unreduced()) {
    if (!mesh.axis_index(axis)) {
      throw value_error("Unreduced axes " + axis + " is not found in mesh.axis_names=" + mesh_names_tuple(mesh) +
                        ". Got pspec=" + spec.repr(profile));
    }
  }
  const bool has_unconstrained = std::any_of(spec.entries().begin(), spec.entries().end(), [](const SpecEntry& e) {
    return e.kind == SpecEntry::Kind::kUnconstrained;
  });
  const bool has_auto =
      std::find(mesh.axis_types().begin(), mesh.axis_types().end(), AxisType::kAuto) != mesh.axis_types().end();
  if (has_unconstrained && !has_auto) {
    std::vector<std::string> types;
    for (const AxisType t : mesh.axis_types()) types.push_back(axis_type_name(t));
    throw value_error(spec.repr(profile) +
                      " cannot contain `P.UNCONSTRAINED` when no mesh axis_types are `Auto`. Got mesh axis_types: " +
                      python_tuple(types));
  }
  if (mesh.devices().empty()) throw value_error("NamedSharding needs a mesh with at least one device");
  std::optional<std::string> kind = canonical_memory_kind(mesh.devices().front(), memory_kind, profile);
  return NamedSharding{std::move(mesh), std::move(spec), std::move(kind)};
}

SingleDeviceSharding make_single_device_sharding(Device device, const JaxProfile& profile,
                                                 std::optional<std::string> memory_kind) {
  std::optional<std::string> kind = canonical_memory_kind(device, memory_kind, profile);
  return SingleDeviceSharding{std::move(device), std::move(kind)};
}

namespace {

// NamedSharding's repr shows str(mesh); before Mesh had a __str__ it built `Mesh('x': 2)` itself, and before
// jax 0.4.15 it showed the axis sizes as a dict.
std::string mesh_in_sharding_repr(const Mesh& mesh, const JaxProfile& profile) {
  if (profile.has(JaxFeature::kMeshStrDefined)) return mesh.str(profile);
  std::string pairs;
  for (std::size_t i = 0; i < mesh.axis_names().size(); ++i) {
    if (i > 0) pairs += ", ";
    pairs += python_string_repr(mesh.axis_names()[i]) + ": " + std::to_string(mesh.axis_sizes()[i]);
  }
  return profile.has(JaxFeature::kNamedShardingReprMeshStr) ? "Mesh(" + pairs + ")" : "{" + pairs + "}";
}

}  // namespace

std::string sharding_repr(const Sharding& sharding, const JaxProfile& profile) {
  if (const auto* named = std::get_if<NamedSharding>(&sharding)) {
    std::string out =
        "NamedSharding(mesh=" + mesh_in_sharding_repr(named->mesh, profile) + ", spec=" + named->spec.repr(profile);
    if (named->memory_kind) out += ", memory_kind=" + *named->memory_kind;
    return out + ")";
  }
  const auto& single = std::get<SingleDeviceSharding>(sharding);
  std::string out = "SingleDeviceSharding(device=" + device_repr(single.device, profile);
  if (single.memory_kind) out += ", memory_kind=" + *single.memory_kind;
  return out + ")";
}

std::vector<Device> sharding_devices(const Sharding& sharding) {
  if (const auto* named = std::get_if<NamedSharding>(&sharding)) return named->mesh.devices();
  return {std::get<SingleDeviceSharding>(sharding).device};
}

Platform sharding_platform(const Sharding& sharding) {
  if (const auto* named = std::get_if<NamedSharding>(&sharding)) return named->mesh.platform();
  return std::get<SingleDeviceSharding>(sharding).device.platform;
}

void check_rank_compatible(const Sharding& sharding, std::size_t rank, const JaxProfile& profile) {
  const auto* named = std::get_if<NamedSharding>(&sharding);
  if (named == nullptr || named->spec.size() <= rank) return;
  std::string message = "Sharding " + sharding_repr(sharding, profile) + " is only valid for values of rank at least " +
                        std::to_string(named->spec.size()) + ", but was applied to a value of rank " +
                        std::to_string(rank) + ".";
  if (rank == 0) message += " For scalars the PartitionSpec should be P()";
  throw value_error(message);
}

std::vector<int64_t> tiling_factors(const Sharding& sharding, std::size_t rank) {
  std::vector<int64_t> factors(rank, 1);
  const auto* named = std::get_if<NamedSharding>(&sharding);
  if (named == nullptr) return factors;
  for (std::size_t d = 0; d < rank && d < named->spec.size(); ++d) {
    factors[d] = entry_shards(named->spec.entries()[d], named->mesh);
  }
  return factors;
}

Shape shard_shape(const Sharding& sharding, const Shape& shape, const JaxProfile& profile) {
  check_rank_compatible(sharding, shape.size(), profile);
  const std::vector<int64_t> factors = tiling_factors(sharding, shape.size());
  Shape result(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] % factors[d] != 0) {
      std::string message = sharding_repr(sharding, profile) + " implies that array axis " + std::to_string(d) +
                            " is partitioned " + std::to_string(factors[d]) + " times, but the dimension size is " +
                            std::to_string(shape[d]) + " (full shape: " + python_int_tuple(shape) +
                            ", per-dimension tiling factors: " + python_int_tuple(factors) +
                            " should evenly divide the shape)";
      if (!profile.has(JaxFeature::kIndivisibleErrorNoPrefix)) message = "Sharding " + message;
      throw Error(profile.has(JaxFeature::kIndivisibleErrorClass) ? "IndivisibleError" : "ValueError", message);
    }
    result[d] = shape[d] / factors[d];
  }
  return result;
}

void check_annotation_rank(const std::string& what, const std::string& keypath, const Sharding& sharding,
                           std::size_t rank, const JaxProfile& profile) {
  try {
    check_rank_compatible(sharding, rank, profile);
  } catch (const Error& error) {
    const std::string name = keypath.empty() ? "" : " with pytree key path " + keypath;
    throw value_error("One of " + what + name + " is incompatible with its sharding annotation " +
                      sharding_repr(sharding, profile) + ": " + error.what());
  }
}

void check_argument_divisible(const std::string& what, const std::string& keypath, const Sharding& sharding,
                              const Shape& shape, const JaxProfile& profile, const std::string& source) {
  const std::string name = keypath.empty() ? "" : " with pytree key path " + keypath;
  check_annotation_rank(what, keypath, sharding, shape.size(), profile);
  const std::vector<int64_t> factors = tiling_factors(sharding, shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] % factors[d] == 0) continue;
    if (!profile.has(JaxFeature::kIndivisibleErrorClass)) {
      throw value_error("One of " + what + name + " was given the sharding of " + sharding_repr(sharding, profile) +
                        ", which implies that the global size of its dimension " + std::to_string(d) +
                        " should be divisible by " + std::to_string(factors[d]) + ", but it is equal to " +
                        std::to_string(shape[d]) + " (full shape: " + python_int_tuple(shape) + ")");
    }
    if (!profile.has(JaxFeature::kIndivisibleErrorNoPrefix)) (void)shard_shape(sharding, shape, profile);
    throw Error("IndivisibleError",
                "One of " + what + name + " was given the sharding " + sharding_repr(sharding, profile) +
                    " implies that array axis " + std::to_string(d) + " is partitioned " + std::to_string(factors[d]) +
                    " times, but the dimension size is " + std::to_string(shape[d]) + " (full shape: " +
                    python_int_tuple(shape) + ", per-dimension tiling factors: " + python_int_tuple(factors) +
                    " should evenly divide the shape). This error " + "occurs at source:  " + source);
  }
}

bool divides_evenly(const Sharding& sharding, const Shape& shape) {
  const std::vector<int64_t> factors = tiling_factors(sharding, shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] % factors[d] != 0) return false;
  }
  return true;
}

bool is_fully_replicated(const Sharding& sharding) {
  const auto* named = std::get_if<NamedSharding>(&sharding);
  if (named == nullptr || named->mesh.size() == 1) return true;
  if (!named->spec.unreduced().empty()) return false;
  for (const SpecEntry& entry : named->spec.entries()) {
    if (entry_shards(entry, named->mesh) != 1) return false;
  }
  return true;
}

std::string DimSlice::repr() const {
  if (full) return "slice(None, None, None)";
  return "slice(" + std::to_string(start) + ", " + std::to_string(stop) + ", None)";
}

std::vector<DeviceIndex> devices_indices_map(const Sharding& sharding, const Shape& shape, const JaxProfile& profile,
                                             ShardCut cut) {
  if (cut == ShardCut::kEven) {
    (void)shard_shape(sharding, shape, profile);
  } else {
    check_rank_compatible(sharding, shape.size(), profile);
  }
  std::vector<DeviceIndex> result;
  const auto* named = std::get_if<NamedSharding>(&sharding);
  if (named == nullptr) {
    result.push_back({std::get<SingleDeviceSharding>(sharding).device, std::vector<DimSlice>(shape.size()), 0});
    return result;
  }
  const Mesh& mesh = named->mesh;
  const bool replicated = is_fully_replicated(sharding);
  std::map<std::vector<int64_t>, int64_t> holders_so_far;
  for (std::size_t flat = 0; flat < mesh.devices().size(); ++flat) {
    const std::vector<int64_t> position = mesh.position_of(flat);
    std::vector<DimSlice> index(shape.size());
    std::vector<int64_t> key;
    for (std::size_t d = 0; d < shape.size() && d < named->spec.size() && !replicated; ++d) {
      const SpecEntry& entry = named->spec.entries()[d];
      const int64_t shards = entry_shards(entry, mesh);
      if (shards == 1) continue;
      // Block index: mixed radix over the entry's axes, major to minor as written.
      int64_t block = 0;
      for (const std::string& axis : entry.axes) {
        const std::size_t a = *mesh.axis_index(axis);
        block = block * mesh.axis_sizes()[a] + position[a];
      }
      const int64_t block_size = (shape[d] + shards - 1) / shards;
      index[d] =
          DimSlice{false, std::min(block * block_size, shape[d]), std::min((block + 1) * block_size, shape[d]), block};
    }
    for (const DimSlice& s : index) {
      key.push_back(s.full ? -1 : s.start);
      key.push_back(s.full ? -1 : s.stop);
    }
    const int64_t replica = holders_so_far[key]++;
    result.push_back({mesh.devices()[flat], std::move(index), replica});
  }
  return result;
}

}  // namespace shardscope
