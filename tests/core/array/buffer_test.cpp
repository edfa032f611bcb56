// Buffer storage kinds: zero-filled, unfilled, views into another buffer, and storage offered to the next
// unfilled buffer of a given size.
#include "array/buffer.h"

#include <doctest/doctest.h>

#include <numeric>

#include "base/error.h"

using namespace shardscope;

namespace {
std::shared_ptr<const Buffer> iota(int64_t n) {
  std::vector<int32_t> values(static_cast<std::size_t>(n));
  std::iota(values.begin(), values.end(), 0);
  return make_buffer(DType::kInt32, {n}, values);
}
}  // namespace

TEST_CASE("zero-filled and unfilled buffers have the dtype's size and are writable") {
  const Buffer zeros(DType::kFloat64, {3, 2});
  CHECK(zeros.nbytes() == 48);
  for (const double v : zeros.as<double>()) CHECK(v == 0.0);
  Buffer unfilled(DType::kInt16, {5}, Buffer::Uninitialized{});
  CHECK(unfilled.nbytes() == 10);
  CHECK(unfilled.size() == 5);
  for (int16_t& v : unfilled.as_mutable<int16_t>()) v = 9;
  CHECK(unfilled.element_as_double(4) == 9.0);
  const Buffer empty(DType::kFloat32, {0}, Buffer::Uninitialized{});
  CHECK(empty.nbytes() == 0);
}

TEST_CASE("a view reads its owner's elements in place and keeps the owner alive") {
  std::shared_ptr<const Buffer> owner = iota(10);
  const std::byte* storage = owner->bytes().data();
  const BufferPtr view = Buffer::view_of(owner, 3, {2, 2});
  owner.reset();
  CHECK(view->shape() == Shape{2, 2});
  CHECK(view->bytes().data() == storage + 3 * sizeof(int32_t));
  CHECK(view->element_as_double(0) == 3.0);
  CHECK(view->element_as_double(3) == 6.0);
  // A copy owns its bytes.
  const Buffer copy(*view);
  CHECK(copy.bytes().data() != view->bytes().data());
  CHECK(copy.element_as_double(3) == 6.0);
  CHECK_THROWS_AS((void)Buffer::view_of(iota(4), 2, {3}), Error);
  CHECK_THROWS_AS((void)Buffer::view_of(iota(4), -1, {1}), Error);
}

TEST_CASE("offered storage goes to the next unfilled buffer of exactly its size, once") {
  auto target = std::make_shared<Buffer>(DType::kFloat32, Shape{8});
  std::byte* second_half = target->mutable_bytes().data() + 4 * sizeof(float);
  {
    const StorageOffer offer(target, second_half, 4 * sizeof(float));
    const Buffer zero_filled(DType::kFloat32, {4});  // zero-filled buffers never take it
    CHECK(zero_filled.bytes().data() != second_half);
    const Buffer other_size(DType::kFloat32, {3}, Buffer::Uninitialized{});
    CHECK(other_size.bytes().data() != second_half);
    Buffer taker(DType::kInt32, {4}, Buffer::Uninitialized{});  // same size in bytes: any dtype
    CHECK(taker.bytes().data() == second_half);
    for (int32_t& v : taker.as_mutable<int32_t>()) v = 0x3f800000;  // 1.0f
    const Buffer after(DType::kFloat32, {4}, Buffer::Uninitialized{});
    CHECK(after.bytes().data() != second_half);
  }
  CHECK(target->element_as_double(3) == 0.0);
  CHECK(target->element_as_double(4) == 1.0);
  CHECK(target->element_as_double(7) == 1.0);
  { const StorageOffer unused(target, target->mutable_bytes().data(), 4 * sizeof(float)); }
  const Buffer later(DType::kFloat32, {4}, Buffer::Uninitialized{});  // the offer ended with its scope
  CHECK(later.bytes().data() != target->bytes().data());
}

TEST_CASE("freed big unfilled storage is reused by the next unfilled buffer of that size, not by others") {
  const Shape odd_size = {3 * 1024 * 1024 + 10};  // a size nothing else in this program asks for
  const std::byte* first = nullptr;
  {
    Buffer big(DType::kUInt8, odd_size, Buffer::Uninitialized{});
    big.as_mutable<uint8_t>()[7] = 42;
    first = big.bytes().data();
  }
  const Buffer other(DType::kUInt8, {2 * 1024 * 1024}, Buffer::Uninitialized{});
  CHECK(other.bytes().data() != first);
  const Buffer zeros(DType::kUInt8, odd_size);  // zero-filled buffers keep their own storage
  CHECK(zeros.bytes().data() != first);
  CHECK(zeros.as<uint8_t>()[7] == 0);
  const Buffer again(DType::kUInt8, odd_size, Buffer::Uninitialized{});
  CHECK(again.bytes().data() == first);
}
