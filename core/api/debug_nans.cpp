// The NaN check of jax_debug_nans, run on every eager operation's results while the option is on.
#include "api/debug_nans.h"

#include <atomic>
#include <cmath>

#include "base/dtype_dispatch.h"
#include "base/error.h"

namespace shardscope::api {
namespace {

std::atomic<bool> enabled{false};

bool holds_nan(const Buffer& buffer) {
  return visit_dtype(buffer.dtype(), [&](auto tag) {
    constexpr DType kDType = decltype(tag)::value;
    using Compute = typename DTypeTraits<kDType>::compute;
    if constexpr (std::is_floating_point_v<Compute>) {
      for (const auto value : buffer.template as<typename DTypeTraits<kDType>::storage>()) {
        if (std::isnan(static_cast<double>(load<kDType>(value)))) return true;
      }
    }
    return false;
  });
}

}  // namespace

void set_debug_nans(bool on) { enabled = on; }

bool debug_nans() { return enabled; }

void check_for_nans(const std::string& primitive, const std::vector<Array>& outputs) {
  for (const Array& out : outputs) {
    if (!is_floating(out.dtype()) || out.is_abstract()) continue;
    if (holds_nan(*out.gather())) throw Error("FloatingPointError", "invalid value (nan) encountered in " + primitive);
  }
}

}  // namespace shardscope::api
