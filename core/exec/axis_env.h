// The sizes of the named axes in scope while tracing a shard_map or pmap body.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace shardscope {

// Pushes axis sizes for the lifetime of the scope (per thread; scopes nest).
class AxisEnvScope {
 public:
  explicit AxisEnvScope(std::vector<std::pair<std::string, int64_t>> axes);
  ~AxisEnvScope();
  AxisEnvScope(const AxisEnvScope&) = delete;
  AxisEnvScope& operator=(const AxisEnvScope&) = delete;

 private:
  std::size_t pushed_;
};

// The size of a bound axis; NameError with JAX's message when the axis is not bound.
[[nodiscard]] int64_t axis_size(const std::string& name);
// `axes` without duplicates, in the order the axes were bound (mesh order inside shard_map).
[[nodiscard]] std::vector<std::string> in_binding_order(const std::vector<std::string>& axes);

// The product of the sizes of several axes.
[[nodiscard]] int64_t axes_size(const std::vector<std::string>& names);

}  // namespace shardscope
