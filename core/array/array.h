// Sharded arrays: a global shape and dtype, a sharding, and the buffer each simulated device holds.
#pragma once

#include <map>
#include <memory>
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
  // jax.make_array_from_callback / make_array_from_single_device_arrays: one buffer per device of the
  // sharding (looked up by device id; the simulation holds every host's blocks), each checked against the sharding's
  // shard shape and the dtype with JAX's ValueError texts; `sharding_text` is repr(sharding) as the message quotes it.
  static Array from_device_blocks(const ShapedArray& aval, Sharding sharding,
                                  const std::map<int64_t, BufferPtr>& blocks, const std::string& sharding_text,
                                  const JaxProfile& profile);

  [[nodiscard]] const ShapedArray& aval() const { return state_->aval; }
  [[nodiscard]] const Shape& shape() const { return state_->aval.shape; }
  [[nodiscard]] DType dtype() const { return state_->aval.dtype; }
  [[nodiscard]] const Sharding& sharding() const { return state_->sharding; }
  [[nodiscard]] const std::vector<Shard>& shards() const { return state_->shards; }
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
  // Arrays are immutable, so copies share one state: passing arrays around (eager ops, pytrees, bindings)
  // costs a reference count instead of a copy of every shard's index and of the mesh.
  struct State {
    ShapedArray aval;
    Sharding sharding;
    std::vector<Shard> shards;
  };

  Array(ShapedArray aval, Sharding sharding, std::vector<Shard> shards)
      : state_(std::make_shared<const State>(State{std::move(aval), std::move(sharding), std::move(shards)})) {}

  std::shared_ptr<const State> state_;
};

}  // namespace shardscope
