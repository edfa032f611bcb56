// Thread-local stack of bound axis names.
#include "ir/axis_env.h"

#include <algorithm>

#include "base/error.h"

namespace shardscope {
namespace {

struct BoundAxis {
  std::string name;
  int64_t size = 0;
  AxisBinding binding = AxisBinding::kMapped;
};

thread_local std::vector<BoundAxis> bound_axes;

}  // namespace

AxisEnvScope::AxisEnvScope(std::vector<std::pair<std::string, int64_t>> axes, AxisBinding binding)
    : pushed_(axes.size()) {
  for (auto& [name, size] : axes) bound_axes.push_back(BoundAxis{std::move(name), size, binding});
}

AxisEnvScope::~AxisEnvScope() { bound_axes.resize(bound_axes.size() - pushed_); }

int64_t axis_size(const std::string& name) {
  for (auto it = bound_axes.rbegin(); it != bound_axes.rend(); ++it) {
    if (it->name == name) return it->size;
  }
  throw Error("NameError", "unbound axis name: " + name);
}

bool axis_bound(const std::string& name) {
  return std::any_of(bound_axes.begin(), bound_axes.end(), [&](const BoundAxis& a) { return a.name == name; });
}

std::optional<std::string> first_unbound_axis(const std::vector<std::string>& axes) {
  for (const std::string& name : axes) {
    if (!axis_bound(name)) return name;
  }
  return std::nullopt;
}

std::vector<std::string> bound_axis_names() {
  std::vector<std::string> names;
  for (const BoundAxis& axis : bound_axes) names.push_back(axis.name);
  return names;
}

bool vma_checking() {
  for (auto it = bound_axes.rbegin(); it != bound_axes.rend(); ++it) {
    if (it->binding != AxisBinding::kMapped) return it->binding == AxisBinding::kManualVmaChecked;
  }
  return false;
}

std::vector<std::string> in_binding_order(const std::vector<std::string>& axes) {
  std::vector<std::string> ordered;
  for (const BoundAxis& bound : bound_axes) {
    if (std::find(axes.begin(), axes.end(), bound.name) != axes.end() &&
        std::find(ordered.begin(), ordered.end(), bound.name) == ordered.end()) {
      ordered.push_back(bound.name);
    }
  }
  for (const std::string& name : axes) {  // axes not bound here keep their own order, after the bound ones
    if (std::find(ordered.begin(), ordered.end(), name) == ordered.end()) ordered.push_back(name);
  }
  return ordered;
}

int64_t axes_size(const std::vector<std::string>& names) {
  int64_t size = 1;
  for (const std::string& name : names) size *= axis_size(name);
  return size;
}

}  // namespace shardscope
