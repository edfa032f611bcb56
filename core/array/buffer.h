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
  // Tag for storage whose contents are unspecified until written: for kernels that overwrite every element
  // (fresh pages are then touched once, by the kernel, instead of first by a zero fill).
  struct Uninitialized {};

  Buffer(DType dtype, Shape shape);  // zero-filled
  Buffer(DType dtype, Shape shape, Uninitialized);
  Buffer(DType dtype, Shape shape, std::vector<std::byte> bytes);
  Buffer(const Buffer& other);
  Buffer& operator=(const Buffer& other);
  Buffer(Buffer&&) noexcept = default;
  Buffer& operator=(Buffer&&) noexcept = default;
  ~Buffer() = default;

  // The contiguous elements [offset, offset + product(shape)) of `owner`, without copying: the view
  // keeps `owner` alive and is read-only like every shared buffer.
  [[nodiscard]] static std::shared_ptr<const Buffer> view_of(const std::shared_ptr<const Buffer>& owner, int64_t offset,
                                                             Shape shape);

  [[nodiscard]] DType dtype() const { return dtype_; }
  [[nodiscard]] const Shape& shape() const { return shape_; }
  [[nodiscard]] int64_t size() const { return product(shape_); }
  [[nodiscard]] std::size_t nbytes() const { return size_; }
  [[nodiscard]] std::span<const std::byte> bytes() const { return {data_, size_}; }
  [[nodiscard]] std::span<std::byte> mutable_bytes() { return {data_, size_}; }

  // Typed views; T must match the dtype's storage (uint16_t for bfloat16 and float16, bool as uint8_t).
  template <typename T>
  [[nodiscard]] std::span<const T> as() const {
    return {reinterpret_cast<const T*>(data_), size_ / sizeof(T)};
  }
  template <typename T>
  [[nodiscard]] std::span<T> as_mutable() {
    return {reinterpret_cast<T*>(data_), size_ / sizeof(T)};
  }

  // Element i as a double (for printing and comparisons in tests).
  [[nodiscard]] double element_as_double(int64_t flat_index) const;

 private:
  Buffer(DType dtype, Shape shape, std::shared_ptr<const Buffer> owner, std::byte* data);

  DType dtype_;
  Shape shape_;
  std::vector<std::byte> bytes_;  // storage when built from bytes or zero-filled
  // Storage when Uninitialized: big blocks go back to a bounded pool when freed (see buffer.cpp).
  struct ReleaseStorage {
    // No default member initializer: unique_ptr needs the deleter default-constructible inside Buffer.
    std::size_t bytes;
    void operator()(std::byte* storage) const;
  };
  std::unique_ptr<std::byte, ReleaseStorage> unfilled_;
  std::shared_ptr<const Buffer> owner_;  // what a view reads
  std::byte* data_ = nullptr;            // whichever of the three holds the elements
  std::size_t size_ = 0;
};

using BufferPtr = std::shared_ptr<const Buffer>;

// While alive, offers `bytes` bytes at `storage` (inside `owner`) to the next unfilled Buffer of exactly that
// size made on this thread, which then writes there instead of into fresh memory: how a fused loop lets
// its kernels write a chunk straight into the output block. The offer is taken at most once; callers
// check where the result landed (a kernel may have made another buffer of that size first) and copy if
// it is elsewhere. Offers do not nest.
class StorageOffer {
 public:
  StorageOffer(std::shared_ptr<const Buffer> owner, std::byte* storage, std::size_t bytes);
  ~StorageOffer();
  StorageOffer(const StorageOffer&) = delete;
  StorageOffer& operator=(const StorageOffer&) = delete;
};

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
