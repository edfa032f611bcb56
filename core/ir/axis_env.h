// The sizes of the named axes in scope while tracing a shard_map, pmap or vmap body.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace shardscope {

// What bound a scope's axes: collectives choose their primitives and varying-axes casts by it.
enum class AxisBinding {
  kMapped,            // vmap or pmap: no varying-axes types
  kManual,            // shard_map with check_vma=False
  kManualVmaChecked,  // shard_map with check_vma=True: values carry the manual axes they vary over
};

// Pushes axis sizes for the lifetime of the scope (per thread; scopes nest).
class AxisEnvScope {
 public:
  explicit AxisEnvScope(std::vector<std::pair<std::string, int64_t>> axes, AxisBinding binding = AxisBinding::kMapped);
  ~AxisEnvScope();
  AxisEnvScope(const AxisEnvScope&) = delete;
  AxisEnvScope& operator=(const AxisEnvScope&) = delete;

 private:
  std::size_t pushed_;
};

// The size of a bound axis; NameError `unbound axis name: {name}` (JAX's text) when it is not bound.
[[nodiscard]] int64_t axis_size(const std::string& name);
// Whether `name` is bound by an enclosing shard_map, pmap or vmap.
[[nodiscard]] bool axis_bound(const std::string& name);
// The first of `axes` that is not bound, if any.
[[nodiscard]] std::optional<std::string> first_unbound_axis(const std::vector<std::string>& axes);
// The names of all bound axes, outermost first.
[[nodiscard]] std::vector<std::string> bound_axis_names();
// Whether the innermost enclosing shard_map checks varying manual axes (JAX's check_vma): collectives
// then cast their operands with pvary and psum becomes psum_invariant.
[[nodiscard]] bool vma_checking();
// `axes` without duplicates, in the order the axes were bound (mesh order inside shard_map).
[[nodiscard]] std::vector<std::string> in_binding_order(const std::vector<std::string>& axes);

// The product of the sizes of several axes.
[[nodiscard]] int64_t axes_size(const std::vector<std::string>& names);

}  // namespace shardscope
