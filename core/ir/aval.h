// Abstract values in programs: shape and dtype plus sharding-in-types, varying manual axes and memory space.
#pragma once

#include <string>
#include <vector>

#include "array/array.h"

namespace shardscope {

enum class MemorySpace { kDevice, kHost, kAny };

struct Aval {
  Shape shape;
  DType dtype = DType::kFloat32;
  bool weak_type = false;
  // Explicit mesh axes sharding each dimension (empty list: unsharded); empty vector: no sharding in the type.
  std::vector<std::vector<std::string>> dim_axes;
  std::vector<std::string> unreduced;  // explicit axes the value is an unreduced partial sum over
  std::vector<std::string> reduced;    // explicit axes the value is replicated over and whose cotangent is unreduced
  std::vector<std::string> varying;    // manual axes the value varies over (vma), in mesh order
  MemorySpace memory = MemorySpace::kDevice;

  static Aval of(Shape shape, DType dtype, bool weak_type = false) {
    return {std::move(shape), dtype, weak_type, {}, {}, {}, {}, MemorySpace::kDevice};
  }
  [[nodiscard]] std::size_t rank() const { return shape.size(); }
  [[nodiscard]] ShapedArray shaped() const { return {shape, dtype, weak_type}; }

  // aval.str_short: "float32[8@x,4]", "f32[4]{V:x}", "f32<host>[8]" with short dtypes.
  [[nodiscard]] std::string str_short(bool short_dtypes) const;
  bool operator==(const Aval&) const = default;
};

// Elements and bytes of a value of this type (as doubles: sizes of abstract arrays can exceed 2^63 bytes' range
// in products of large shapes).
[[nodiscard]] double aval_elements(const Aval& aval);
[[nodiscard]] double aval_bytes(const Aval& aval);

}  // namespace shardscope
