// Overflow-checked shape and mesh arithmetic: a wrapped product is an error naming the input.
#include "base/checked_math.h"

#include <doctest/doctest.h>

#include <limits>
#include <vector>

#include "base/error.h"
#include "base/python_format.h"

using namespace shardscope;

TEST_CASE("products that fit are exact, ones that overflow int64 name the values") {
  CHECK(multiply_exact(1LL << 31, 1LL << 31) == (1LL << 62));
  CHECK_FALSE(multiply_exact(1LL << 32, 1LL << 32).has_value());
  CHECK_FALSE(multiply_exact(std::numeric_limits<int64_t>::max(), 2).has_value());
  const std::vector<int64_t> fits = {1 << 20, 1 << 20, 1 << 20};
  CHECK(checked_product(fits, "shape") == (1LL << 60));
  CHECK(checked_product(std::vector<int64_t>{}, "shape") == 1);
  CHECK(checked_product(std::vector<int64_t>{0, std::numeric_limits<int64_t>::max()}, "shape") == 0);
  CHECK_THROWS_WITH_AS((void)checked_product(std::vector<int64_t>{1LL << 32, 1LL << 32}, "--mesh"),
                       "--mesh (4294967296, 4294967296) has more elements than an int64 can count (2**63 - 1)", Error);
  // Shape products everywhere go through it: jnp.zeros((2**32, 2**32)) no longer wraps to an empty array.
  CHECK_THROWS_AS((void)product({1LL << 32, 1LL << 32}), Error);
  CHECK(checked_multiply(3, 4, "bytes") == 12);
  CHECK_THROWS_AS((void)checked_multiply(1LL << 62, 4, "bytes"), Error);
}

TEST_CASE("check_shapelike: JAX's TypeError for a negative dimension") {
  CHECK_NOTHROW(check_shapelike("iota", "shape", std::vector<int64_t>{0, 3}));
  try {
    check_shapelike("iota", "shape", std::vector<int64_t>{-1});
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.python_type() == "TypeError");
    CHECK(std::string(e.what()) == "iota shape must have every element be nonnegative, got (-1,).");
  }
}
