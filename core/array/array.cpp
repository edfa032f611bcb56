// Sharded array construction, gathering and per-device accounting.
#include "array/array.h"

#include <algorithm>
#include <map>
#include <set>

#include "array/unreduced.h"
#include "base/error.h"

namespace shardscope {
namespace {

bool covers_whole(const std::vector<DimSlice>& index) {
  return std::all_of(index.begin(), index.end(), [](const DimSlice& slice) { return slice.full; });
}

}  // namespace

std::string ShapedArray::str_short(bool short_dtypes) const {
  std::vector<std::string> dims;
  dims.reserve(shape.size());
  for (const int64_t d : shape) dims.push_back(std::to_string(d));
  return std::string(short_dtypes ? dtype_short_name(dtype) : dtype_name(dtype)) + "[" + join(dims, ",") + "]";
}

Array Array::from_host(const BufferPtr& host, Sharding sharding, const JaxProfile& profile, bool weak_type) {
  std::vector<Shard> shards;
  std::map<std::vector<DimSlice>, BufferPtr> blocks;
  for (DeviceIndex& entry : devices_indices_map(sharding, host->shape(), profile)) {
    BufferPtr& block = blocks[entry.index];
    // A block that is the whole value shares the (immutable) host buffer instead of copying it.
    if (!block) block = covers_whole(entry.index) ? host : slice_block(*host, entry.index);
    // An unreduced sharding gives each device of a group its part of the value, which sum back to it.
    if (const auto place = unreduced_place(sharding, entry.device)) {
      const PartitionSpec& spec = std::get<NamedSharding>(sharding).spec;
      if (spec.unreduced_kind() != UnreducedKind::kSum) {
        // JAX places values only as partial sums (its device_put raises a bare NotImplementedError).
        throw not_implemented_error("device_put to an unreduced sharding whose unreduced_kind is not sum");
      }
      const BufferPtr partial = replicated_to_unreduced(block, spec, *place);
      shards.push_back({std::move(entry.device), std::move(entry.index), entry.replica_id, partial});
      continue;
    }
    shards.push_back({std::move(entry.device), std::move(entry.index), entry.replica_id, block});
  }
  return Array({host->shape(), host->dtype(), weak_type}, std::move(sharding), std::move(shards));
}

Array Array::abstract(ShapedArray aval, Sharding sharding, const JaxProfile& profile) {
  std::vector<Shard> shards;
  for (DeviceIndex& entry : devices_indices_map(sharding, aval.shape, profile)) {
    shards.push_back({std::move(entry.device), std::move(entry.index), entry.replica_id, nullptr});
  }
  return Array(std::move(aval), std::move(sharding), std::move(shards));
}

Array Array::from_shards(ShapedArray aval, Sharding sharding, std::vector<Shard> shards) {
  return Array(std::move(aval), std::move(sharding), std::move(shards));
}

Array Array::from_device_blocks(const ShapedArray& aval, Sharding sharding, const std::map<int64_t, BufferPtr>& blocks,
                                const std::string& sharding_text, const JaxProfile& profile) {
  const Shape expected = shard_shape(sharding, aval.shape, profile);
  const auto tuple_text = [](const Shape& shape) {
    std::vector<std::string> dims;
    for (const int64_t d : shape) dims.push_back(std::to_string(d));
    return "(" + join(dims, ", ") + (shape.size() == 1 ? ",)" : ")");
  };
  std::vector<Shard> shards;
  for (DeviceIndex& entry : devices_indices_map(sharding, aval.shape, profile)) {
    const auto found = blocks.find(entry.device.id);
    if (found == blocks.end()) {
      throw value_error("Addressable devices and per-device arrays devices do not match. Sharding contains devices {" +
                        std::to_string(entry.device.id) + "} that are not present in per-device arrays.");
    }
    const BufferPtr& block = found->second;
    if (block->dtype() != aval.dtype) {
      throw value_error("Input buffers to `Array` must have matching dtypes. Got " +
                        std::string(dtype_name(block->dtype())) + ", expected " + std::string(dtype_name(aval.dtype)));
    }
    if (block->shape() != expected) {
      throw value_error("Expected shard shape " + tuple_text(expected) +
                        " doesn't match the single device array shape " + tuple_text(block->shape()) +
                        ". Shape of Array is " + aval.str_short(false) + " with sharding " + sharding_text);
    }
    shards.push_back({std::move(entry.device), std::move(entry.index), entry.replica_id, block});
  }
  return Array(aval, std::move(sharding), std::move(shards));
}

bool Array::is_abstract() const { return shards().empty() || shards().front().data == nullptr; }

BufferPtr Array::gather() const {
  if (is_abstract()) throw value_error("An abstract array " + aval().str_short(false) + " has no values to fetch");
  if (unreduced_place(sharding(), shards().front().device)) {
    // The value of an unreduced array is the sum of its groups' partial values.
    auto global = std::make_shared<Buffer>(aval().dtype, aval().shape);
    for (const Shard& shard : shards()) {
      if (unreduced_place(sharding(), shard.device)->first_replica) add_block(*global, shard.index, *shard.data);
    }
    return global;
  }
  for (const Shard& shard : shards()) {
    if (covers_whole(shard.index)) return shard.data;  // one block holds everything: nothing to assemble
  }
  auto global = std::make_shared<Buffer>(aval().dtype, aval().shape);
  for (const Shard& shard : shards()) {
    if (shard.replica_id == 0) write_block(*global, shard.index, *shard.data);
  }
  return global;
}

std::vector<int64_t> Array::bytes_per_device() const {
  std::vector<int64_t> bytes;
  bytes.reserve(shards().size());
  for (const Shard& shard : shards()) {
    int64_t elements = 1;
    for (std::size_t d = 0; d < aval().shape.size(); ++d) {
      elements *= shard.index[d].full ? aval().shape[d] : shard.index[d].stop - shard.index[d].start;
    }
    bytes.push_back(elements * static_cast<int64_t>(dtype_size(aval().dtype)));
  }
  return bytes;
}

int64_t Array::nbytes() const { return product(aval().shape) * static_cast<int64_t>(dtype_size(aval().dtype)); }

std::size_t Array::distinct_buffer_count() const {
  std::set<const Buffer*> distinct;
  for (const Shard& shard : shards()) {
    if (shard.data) distinct.insert(shard.data.get());
  }
  return distinct.size();
}

Array Array::with_sharding(Sharding sharding) const { return Array(aval(), std::move(sharding), shards()); }

}  // namespace shardscope
