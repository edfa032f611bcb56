// Dense row-major device buffers: the bytes one simulated device holds for one shard.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "base/dtype.h"
#include "base/python_format.h"
#include "sharding/sharding.h"

namespace shardscope {

// Immutable once shared: replicated shards point at the same Buffer.
class Buffer {
 public:
  Buffer(DType dtype, Shape shape);  // zero-filled
  Buffer(DType dtype, Shape shape, std::vector<std::byte> bytes);

  [[nodiscard]] DType dtype() const { return dtype_; }
  [[nodiscard]] const Shape& shape() const { return shape_; }
  [[nodiscard]] int64_t size() const { return product(shape_); }
  [[nodiscard]] std::size_t nbytes() const { return bytes_.size(); }
  [[nodiscard]] std::span<const std::byte> bytes() const { return bytes_; }
  [[nodiscard]] std::span<std::byte> mutable_bytes() { return bytes_; }

  // Typed views; T must match the dtype's storage (uint16_t for bfloat16 and float16, bool as uint8_t).
  template <typename T>
  [[nodiscard]] std::span<const T> as() const {
    return {reinterpret_cast<const T*>(bytes_.data()), bytes_.size() / sizeof(T)};
  }
  template <typename T>
  [[nodiscard]] std::span<T> as_mutable() {
    return {reinterpret_cast<T*>(bytes_.data()), bytes_.size() / sizeof(T)};
  }

  // Element i as a double (for printing and comparisons in tests).
  [[nodiscard]] double element_as_double(int64_t flat_index) const;

 private:
  DType dtype_;
  Shape shape_;
  std::vector<std::byte> bytes_;
};

using BufferPtr = std::shared_ptr<const Buffer>;

// Copies the block `index` (one DimSlice per dimension; full slices take the whole dimension).
[[nodiscard]] BufferPtr slice_block(const Buffer& source, const std::vector<DimSlice>& index);

// Writes `block` into `target` at `index`: the inverse of slice_block.
void write_block(Buffer& target, const std::vector<DimSlice>& index, const Buffer& block);

// Buffers from typed values (row-major); the value type must be the dtype's storage type.
template <typename T>
[[nodiscard]] BufferPtr make_buffer(DType dtype, Shape shape, const std::vector<T>& values) {
  std::vector<std::byte> bytes(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return std::make_shared<const Buffer>(dtype, std::move(shape), std::move(bytes));
}

}  // namespace shardscope
