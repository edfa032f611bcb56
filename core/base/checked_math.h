// Overflow-checked arithmetic for shapes, mesh sizes and byte counts: the one place such products are formed.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace shardscope {

// a * b, or nullopt when it does not fit an int64.
[[nodiscard]] std::optional<int64_t> multiply_exact(int64_t a, int64_t b);

// The product of `values`; ValueError naming `what` and the values when it does not fit an int64
// (JAX's shapes and meshes are int64 everywhere, so no real program gets there).
[[nodiscard]] int64_t checked_product(std::span<const int64_t> values, std::string_view what);

// a * b for counts (elements times item size); ValueError naming `what` on overflow.
[[nodiscard]] int64_t checked_multiply(int64_t a, int64_t b, std::string_view what);

// lax._check_shapelike: TypeError "<fun_name> <arg_name> must have every element be nonnegative, got (...)."
// unless every entry is a nonnegative int.
void check_shapelike(const std::string& fun_name, const std::string& arg_name, std::span<const int64_t> values);

}  // namespace shardscope
