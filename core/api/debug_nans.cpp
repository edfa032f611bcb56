// The NaN and infinity checks of jax_debug_nans and jax_debug_infs, run on every eager operation's results.
#include "api/debug_nans.h"

#include <atomic>
#include <cmath>

#include "base/dtype_dispatch.h"
#include "base/error.h"

namespace shardscope::api {
namespace {

std::atomic<bool> nans_enabled{false};
std::atomic<bool> infs_enabled{false};

template <typename Predicate>
bool holds_value(const Buffer& buffer, Predicate matches) {
  return visit_dtype(buffer.dtype(), [&](auto tag) {
    constexpr DType kDType = decltype(tag)::value;
    using Compute = typename DTypeTraits<kDType>::compute;
    if constexpr (std::is_floating_point_v<Compute>) {
      for (const auto value : buffer.template as<typename DTypeTraits<kDType>::storage>()) {
        if (matches(static_cast<double>(load<kDType>(value)))) return true;
      }
    }
    return false;
  });
}

}  // namespace

void set_debug_nans(bool on) { nans_enabled = on; }

bool debug_nans() { return nans_enabled; }

void set_debug_infs(bool on) { infs_enabled = on; }

bool debug_infs() { return infs_enabled; }

void check_special_values(const std::string& primitive, const std::vector<Array>& outputs) {
  const bool nans = debug_nans();
  const bool infs = debug_infs();
  if (!nans && !infs) return;
  for (const Array& out : outputs) {
    if (!is_floating(out.dtype()) || out.is_abstract()) continue;
    const auto buffer = out.gather();
    if (nans && holds_value(*buffer, [](double v) { return std::isnan(v); })) {
      throw Error("FloatingPointError", "invalid value (nan) encountered in " + primitive);
    }
    if (infs && holds_value(*buffer, [](double v) { return std::isinf(v); })) {
      throw Error("FloatingPointError", "invalid value (inf) encountered in " + primitive);
    }
  }
}

}  // namespace shardscope::api
