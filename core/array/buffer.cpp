// Buffer storage, block copies between global and per-shard buffers.
#include "array/buffer.h"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <new>

#include "base/checked_math.h"
#include "base/error.h"
#include "base/half_float.h"

namespace shardscope {
namespace {

// Row-major strides in elements.
std::vector<int64_t> strides_of(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

// Calls copy_run(source_offset, target_offset, elements) for each contiguous run of the block.
template <typename CopyRun>
void for_each_block_run(const Shape& global, const std::vector<DimSlice>& index, const Shape& block_shape,
                        CopyRun&& copy_run) {
  const std::size_t rank = global.size();
  if (rank == 0) {
    copy_run(0, 0, 1);
    return;
  }
  if (product(block_shape) == 0) return;
  const std::vector<int64_t> global_strides = strides_of(global);
  const std::vector<int64_t> block_strides = strides_of(block_shape);
  const int64_t run = block_shape[rank - 1];
  std::vector<int64_t> counter(rank - 1, 0);
  const int64_t rows = product(block_shape) / run;
  for (int64_t row = 0; row < rows; ++row) {
    int64_t global_offset = index[rank - 1].full ? 0 : index[rank - 1].start;
    int64_t block_offset = 0;
    for (std::size_t d = 0; d + 1 < rank; ++d) {
      const int64_t start = index[d].full ? 0 : index[d].start;
      global_offset += (start + counter[d]) * global_strides[d];
      block_offset += counter[d] * block_strides[d];
    }
    copy_run(global_offset, block_offset, run);
    for (std::size_t d = rank - 1; d-- > 0;) {
      if (++counter[d] < block_shape[d]) break;
      counter[d] = 0;
    }
  }
}

Shape block_shape_of(const Shape& global, const std::vector<DimSlice>& index) {
  if (index.size() != global.size()) {
    throw value_error("Block index of rank " + std::to_string(index.size()) + " for a buffer of shape " +
                      python_int_tuple(global));
  }
  Shape shape(global.size());
  for (std::size_t d = 0; d < global.size(); ++d) {
    shape[d] = index[d].full ? global[d] : index[d].stop - index[d].start;
  }
  return shape;
}

}  // namespace

namespace {

// Every shard lives in this process: a request beyond the machine's memory fails with bad_alloc before it
// is attempted (some allocators, a sanitizer's among them, abort on such a request instead of throwing).
std::size_t allocatable(std::size_t bytes) {
  static const std::size_t physical = [] {
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long page_size = ::sysconf(_SC_PAGESIZE);
    return pages > 0 && page_size > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page_size)
                                      : std::numeric_limits<std::size_t>::max();
  }();
  if (bytes > physical) throw std::bad_alloc();
  return bytes;
}

// Bytes of a buffer of this shape; ValueError naming the shape when the count overflows.
std::size_t byte_count(const Shape& shape, DType dtype) {
  const std::optional<int64_t> bytes = multiply_exact(product(shape), static_cast<int64_t>(dtype_size(dtype)));
  if (!bytes) {
    throw value_error("an array of shape " + python_int_tuple(shape) + " and dtype " + std::string(dtype_name(dtype)) +
                      " needs more bytes than an int64 can count (2**63 - 1)");
  }
  return static_cast<std::size_t>(*bytes);
}

}  // namespace

Buffer::Buffer(DType dtype, Shape shape)
    : dtype_(dtype), shape_(std::move(shape)), bytes_(allocatable(byte_count(shape_, dtype))) {
  data_ = bytes_.data();
  size_ = bytes_.size();
}

namespace {

struct Offer {
  std::shared_ptr<const Buffer> owner;
  std::byte* storage = nullptr;
  std::size_t bytes = 0;
};
thread_local Offer t_offer;

// Recently freed big blocks, kept for the next unfilled buffer of the same size. Without it every large
// result would be fresh memory that the kernel faults in and zeroes page by page (glibc unmaps big chunks
// and trims its heap on free), which costs about as much as an elementwise kernel itself. Bounded, so a
// finished computation leaves at most kMaxPooledBytes behind.
class StoragePool {
 public:
  static constexpr std::size_t kMinBytes = std::size_t{1} << 20;
  static constexpr std::size_t kMaxPooledBytes = std::size_t{256} << 20;

  std::byte* take(std::size_t bytes) {
    if (bytes >= kMinBytes) {
      const std::lock_guard lock(mutex_);
      if (const auto it = free_.find(bytes); it != free_.end()) {
        std::byte* storage = it->second;
        free_.erase(it);
        pooled_ -= bytes;
        return storage;
      }
    }
    void* storage = std::malloc(std::max<std::size_t>(allocatable(bytes), 1));
    if (storage == nullptr) throw std::bad_alloc();
    return static_cast<std::byte*>(storage);
  }

  void give(std::byte* storage, std::size_t bytes) {
    if (bytes >= kMinBytes) {
      const std::lock_guard lock(mutex_);
      // The oldest blocks make room for the newest (the next request is most likely the same size).
      while (pooled_ + bytes > kMaxPooledBytes && !order_.empty()) evict_oldest();
      if (bytes <= kMaxPooledBytes) {
        free_.emplace(bytes, storage);
        order_.push_back({storage, bytes});
        pooled_ += bytes;
        if (order_.size() > 4 * free_.size() + 64) drop_taken_from_order();
        return;
      }
    }
    std::free(storage);
  }

 private:
  void evict_oldest() {
    const auto [storage, bytes] = order_.front();
    order_.pop_front();
    const auto range = free_.equal_range(bytes);
    for (auto it = range.first; it != range.second; ++it) {
      if (it->second == storage) {
        free_.erase(it);
        pooled_ -= bytes;
        std::free(storage);
        return;
      }
    }
  }

  // Entries of blocks taken since they were pooled only delay eviction; they are dropped now and then.
  void drop_taken_from_order() {
    std::multimap<std::size_t, std::byte*> pending = free_;
    std::deque<std::pair<std::byte*, std::size_t>> kept;
    for (const auto& entry : order_) {
      const auto range = pending.equal_range(entry.second);
      for (auto it = range.first; it != range.second; ++it) {
        if (it->second == entry.first) {
          pending.erase(it);
          kept.push_back(entry);
          break;
        }
      }
    }
    order_ = std::move(kept);
  }

  std::mutex mutex_;
  std::multimap<std::size_t, std::byte*> free_;           // guarded by mutex_
  std::deque<std::pair<std::byte*, std::size_t>> order_;  // guarded by mutex_; may name taken blocks
  std::size_t pooled_ = 0;                                // guarded by mutex_
};

// Never destroyed: buffers in other statics may be freed after this file's statics are gone.
StoragePool& storage_pool() {
  static auto* pool = new StoragePool();
  return *pool;
}

std::byte* take_storage(std::size_t bytes) { return storage_pool().take(bytes); }

}  // namespace

void Buffer::ReleaseStorage::operator()(std::byte* storage) const { storage_pool().give(storage, bytes); }

StorageOffer::StorageOffer(std::shared_ptr<const Buffer> owner, std::byte* storage, std::size_t bytes) {
  t_offer = {std::move(owner), storage, bytes};
}

StorageOffer::~StorageOffer() { t_offer = {}; }

Buffer::Buffer(DType dtype, Shape shape, Uninitialized)
    : dtype_(dtype), shape_(std::move(shape)), size_(byte_count(shape_, dtype)) {
  if (t_offer.storage != nullptr && t_offer.bytes == size_) {
    owner_ = std::move(t_offer.owner);
    data_ = t_offer.storage;
    t_offer = {};
    return;
  }
  unfilled_ = std::unique_ptr<std::byte, ReleaseStorage>(take_storage(size_), ReleaseStorage{size_});
  data_ = unfilled_.get();
}

Buffer::Buffer(DType dtype, Shape shape, std::vector<std::byte> bytes)
    : dtype_(dtype), shape_(std::move(shape)), bytes_(std::move(bytes)) {
  if (bytes_.size() != byte_count(shape_, dtype_)) {
    throw value_error("Buffer of shape " + python_int_tuple(shape_) + " and dtype " + std::string(dtype_name(dtype_)) +
                      " needs " + std::to_string(byte_count(shape_, dtype_)) + " bytes, got " +
                      std::to_string(bytes_.size()));
  }
  data_ = bytes_.data();
  size_ = bytes_.size();
}

Buffer::Buffer(DType dtype, Shape shape, std::shared_ptr<const Buffer> owner, std::byte* data)
    : dtype_(dtype),
      shape_(std::move(shape)),
      owner_(std::move(owner)),
      data_(data),
      size_(byte_count(shape_, dtype)) {}

// Copies own their bytes, whatever the original's storage.
Buffer::Buffer(const Buffer& other)
    : dtype_(other.dtype_), shape_(other.shape_), bytes_(other.bytes().begin(), other.bytes().end()) {
  data_ = bytes_.data();
  size_ = bytes_.size();
}

Buffer& Buffer::operator=(const Buffer& other) {
  if (this != &other) *this = Buffer(other);
  return *this;
}

std::shared_ptr<const Buffer> Buffer::view_of(const std::shared_ptr<const Buffer>& owner, int64_t offset, Shape shape) {
  const std::size_t item = dtype_size(owner->dtype());
  const auto begin = static_cast<std::size_t>(offset) * item;
  if (offset < 0 || begin + static_cast<std::size_t>(product(shape)) * item > owner->nbytes()) {
    throw value_error("A view of shape " + python_int_tuple(shape) + " at element " + std::to_string(offset) +
                      " does not fit a buffer of shape " + python_int_tuple(owner->shape()));
  }
  // Views are only handed out as const buffers, so their bytes are never written through this pointer.
  std::byte* data = const_cast<std::byte*>(owner->bytes().data()) + begin;
  return std::shared_ptr<const Buffer>(new Buffer(owner->dtype(), std::move(shape), owner, data));
}

double Buffer::element_as_double(int64_t flat_index) const {
  const auto i = static_cast<std::size_t>(flat_index);
  switch (dtype_) {
    case DType::kBool: return as<uint8_t>()[i] != 0 ? 1.0 : 0.0;
    case DType::kInt8: return as<int8_t>()[i];
    case DType::kInt16: return as<int16_t>()[i];
    case DType::kInt32: return as<int32_t>()[i];
    case DType::kInt64: return static_cast<double>(as<int64_t>()[i]);
    case DType::kUInt8: return as<uint8_t>()[i];
    case DType::kUInt16: return as<uint16_t>()[i];
    case DType::kUInt32: return as<uint32_t>()[i];
    case DType::kUInt64: return static_cast<double>(as<uint64_t>()[i]);
    case DType::kBFloat16: return bf16_to_float(as<uint16_t>()[i]);
    case DType::kFloat16: return f16_to_float(as<uint16_t>()[i]);
    case DType::kFloat32: return as<float>()[i];
    case DType::kFloat64: return as<double>()[i];
  }
  return 0;
}

BufferPtr slice_block(const Buffer& source, const std::vector<DimSlice>& index) {
  const Shape shape = block_shape_of(source.shape(), index);
  auto block = std::make_shared<Buffer>(source.dtype(), shape, Buffer::Uninitialized{});  // every run is copied
  const std::size_t item = dtype_size(source.dtype());
  const std::byte* from = source.bytes().data();
  std::byte* to = block->mutable_bytes().data();
  for_each_block_run(source.shape(), index, shape, [&](int64_t global_offset, int64_t block_offset, int64_t count) {
    std::memcpy(to + static_cast<std::size_t>(block_offset) * item,
                from + static_cast<std::size_t>(global_offset) * item, static_cast<std::size_t>(count) * item);
  });
  return block;
}

void write_block(Buffer& target, const std::vector<DimSlice>& index, const Buffer& block) {
  const Shape shape = block_shape_of(target.shape(), index);
  if (shape != block.shape() || block.dtype() != target.dtype()) {
    throw value_error("Block of shape " + python_int_tuple(block.shape()) + " does not fit index of shape " +
                      python_int_tuple(shape));
  }
  const std::size_t item = dtype_size(target.dtype());
  std::byte* to = target.mutable_bytes().data();
  const std::byte* from = block.bytes().data();
  for_each_block_run(target.shape(), index, shape, [&](int64_t global_offset, int64_t block_offset, int64_t count) {
    std::memcpy(to + static_cast<std::size_t>(global_offset) * item,
                from + static_cast<std::size_t>(block_offset) * item, static_cast<std::size_t>(count) * item);
  });
}

}  // namespace shardscope
