// Thread-local stack of bound axis names.
#include "exec/axis_env.h"

#include <algorithm>

#include "base/error.h"
#include "base/python_format.h"

namespace shardscope {
namespace {
thread_local std::vector<std::pair<std::string, int64_t>> bound_axes;
}  // namespace

AxisEnvScope::AxisEnvScope(std::vector<std::pair<std::string, int64_t>> axes) : pushed_(axes.size()) {
  bound_axes.insert(bound_axes.end(), axes.begin(), axes.end());
}

AxisEnvScope::~AxisEnvScope() { bound_axes.resize(bound_axes.size() - pushed_); }

int64_t axis_size(const std::string& name) {
  for (auto it = bound_axes.rbegin(); it != bound_axes.rend(); ++it) {
    if (it->first == name) return it->second;
  }
  std::vector<std::string> names;
  for (const auto& [bound, size] : bound_axes) names.push_back(bound);
  throw Error("NameError", "unbound axis name: " + name +
                               ". The following axis names (e.g. defined by pmap) are available to collective "
                               "operations: [" +
                               join(names, ", ") + "]");
}

std::vector<std::string> in_binding_order(const std::vector<std::string>& axes) {
  std::vector<std::string> ordered;
  for (const auto& [name, size] : bound_axes) {
    if (std::find(axes.begin(), axes.end(), name) != axes.end() &&
        std::find(ordered.begin(), ordered.end(), name) == ordered.end()) {
      ordered.push_back(name);
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
