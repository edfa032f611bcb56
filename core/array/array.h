// Sharded arrays: a global shape and dtype, a sharding, and the buffer each simulated device holds.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "array/buffer.h"
#include "sharding/sharding.h"

namespace shardscope {

// jax.core.ShapedArray without sharding-in-types: the abstract value of an array.
struct ShapedArray {
  Shape shape;
  DType dtype = DType::kFloat32;
  bool weak_type = false;

  // "float32[8,4]" (or "f32[8,4]" with short dtypes, as jaxprs print it).
  [[nodiscard]] std::string str_short(bool short_dtypes) const;
  bool operator==(const ShapedArray&) const = default;
};

class Array {
 public:
  struct Shard {
    Device device;
    std::vector<DimSlice> index;
    int64_t replica_id = 0;
    BufferPtr data;  // null for abstract arrays; replicas of one block share it
  };

  // jax.device_put of a host value: each device gets its block; replicas share one buffer.
  // Raises IndivisibleError (JAX's message) when the sharding does not divide the shape.
  static Array from_host(const BufferPtr& host, Sharding sharding, const JaxProfile& profile, bool weak_type = false);
  // Shape, dtype and sharding only: everything that needs no values works on it.
  static Array abstract(ShapedArray aval, Sharding sharding, const JaxProfile& profile);
  // Takes ownership of per-device buffers computed elsewhere (e.g. by a program run per device);
  // `shards` must follow devices_indices_map's order for the sharding.
  static Array from_shards(ShapedArray aval, Sharding sharding, std::vector<Shard> shards);

  [[nodiscard]] const ShapedArray& aval() const { return aval_; }
  [[nodiscard]] const Shape& shape() const { return aval_.shape; }
  [[nodiscard]] DType dtype() const { return aval_.dtype; }
  [[nodiscard]] const Sharding& sharding() const { return sharding_; }
  [[nodiscard]] const std::vector<Shard>& shards() const { return shards_; }
  [[nodiscard]] bool is_abstract() const;

  // The global value, assembled from one replica of every block.
  [[nodiscard]] BufferPtr gather() const;
  // Bytes held on each device of the sharding, in mesh order (replicas counted on every holder).
  [[nodiscard]] std::vector<int64_t> bytes_per_device() const;
  [[nodiscard]] int64_t nbytes() const;
  // Number of distinct buffers actually allocated (replicas share theirs).
  [[nodiscard]] std::size_t distinct_buffer_count() const;

  // A copy placed under another sharding with the same devices and blocks (e.g. another memory kind).
  [[nodiscard]] Array with_sharding(Sharding sharding) const;

 private:
  Array(ShapedArray aval, Sharding sharding, std::vector<Shard> shards)
      : aval_(std::move(aval)), sharding_(std::move(sharding)), shards_(std::move(shards)) {}

  ShapedArray aval_;
  Sharding sharding_;
  std::vector<Shard> shards_;
};

}  // namespace shardscope
