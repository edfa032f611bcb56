// Buffer storage, block copies between global and per-shard buffers.
#include "array/buffer.h"

#include <bit>
#include <cmath>
#include <limits>

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

Buffer::Buffer(DType dtype, Shape shape)
    : dtype_(dtype), shape_(std::move(shape)), bytes_(static_cast<std::size_t>(product(shape_)) * dtype_size(dtype)) {}

Buffer::Buffer(DType dtype, Shape shape, std::vector<std::byte> bytes)
    : dtype_(dtype), shape_(std::move(shape)), bytes_(std::move(bytes)) {
  if (bytes_.size() != static_cast<std::size_t>(product(shape_)) * dtype_size(dtype_)) {
    throw value_error("Buffer of shape " + python_int_tuple(shape_) + " and dtype " + std::string(dtype_name(dtype_)) +
                      " needs " + std::to_string(static_cast<std::size_t>(product(shape_)) * dtype_size(dtype_)) +
                      " bytes, got " + std::to_string(bytes_.size()));
  }
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
  auto block = std::make_shared<Buffer>(source.dtype(), shape);
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
