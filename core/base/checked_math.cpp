// Overflow-checked products: a wrapped product would silently give an empty array or a zero-device mesh.
#include "base/checked_math.h"

#include <string>
#include <vector>

#include "base/error.h"
#include "base/python_format.h"

namespace shardscope {

std::optional<int64_t> multiply_exact(int64_t a, int64_t b) {
  int64_t result = 0;
  if (__builtin_mul_overflow(a, b, &result)) return std::nullopt;
  return result;
}

int64_t checked_product(std::span<const int64_t> values, std::string_view what) {
  int64_t result = 1;
  for (const int64_t value : values) {
    const std::optional<int64_t> next = multiply_exact(result, value);
    if (!next) {
      throw value_error(std::string(what) + " " + python_int_tuple(std::vector<int64_t>(values.begin(), values.end())) +
                        " has more elements than an int64 can count (2**63 - 1)");
    }
    result = *next;
  }
  return result;
}

int64_t checked_multiply(int64_t a, int64_t b, std::string_view what) {
  const std::optional<int64_t> result = multiply_exact(a, b);
  if (!result) {
    throw value_error(std::string(what) + " " + std::to_string(a) + " * " + std::to_string(b) +
                      " does not fit an int64 (2**63 - 1)");
  }
  return *result;
}

void check_shapelike(const std::string& fun_name, const std::string& arg_name, std::span<const int64_t> values) {
  for (const int64_t value : values) {
    if (value < 0) {
      throw type_error(fun_name + " " + arg_name + " must have every element be nonnegative, got " +
                       python_int_tuple(std::vector<int64_t>(values.begin(), values.end())) + ".");
    }
  }
}

}  // namespace shardscope
