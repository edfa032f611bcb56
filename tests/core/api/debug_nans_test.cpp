// jax_debug_nans in the engine: eager operations check their floating results while the option is on.
#include "api/debug_nans.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "api/lax.h"
#include "api/session.h"
#include "base/error.h"

using namespace shardscope;
using namespace shardscope::api;

namespace {
Value f32(const std::vector<float>& values) {
  const auto n = static_cast<int64_t>(values.size());
  return Value::concrete(Array::from_host(make_buffer(DType::kFloat32, Shape{n}, values),
                                          make_single_device_sharding(default_device(), session().profile),
                                          session().profile));
}
}  // namespace

TEST_CASE("an eager op's NaN raises FloatingPointError naming the op only while debug_nans is on") {
  const Value negative = f32({1.0F, -1.0F});
  CHECK_FALSE(debug_nans());
  CHECK(std::isnan(lax::unary("log", negative).array().gather()->as<float>()[1]));
  set_debug_nans(true);
  try {
    (void)lax::unary("log", negative);
    FAIL("expected FloatingPointError");
  } catch (const Error& error) {
    CHECK(error.python_type() == "FloatingPointError");
    CHECK(std::string(error.what()) == "invalid value (nan) encountered in log");
  }
  // Integer results and NaN-free floats pass.
  CHECK_NOTHROW((void)lax::unary("exp", negative));
  set_debug_nans(false);
  CHECK_NOTHROW((void)lax::unary("log", negative));
}

TEST_CASE("an eager op's infinity raises FloatingPointError only while debug_infs is on, NaNs only under debug_nans") {
  const Value values = f32({0.0F, 2.0F});
  const Value negative = f32({-1.0F, 1.0F});
  CHECK_FALSE(debug_infs());
  CHECK(std::isinf(lax::unary("log", values).array().gather()->as<float>()[0]));
  set_debug_infs(true);
  try {
    (void)lax::unary("log", values);
    FAIL("expected FloatingPointError");
  } catch (const Error& error) {
    CHECK(error.python_type() == "FloatingPointError");
    CHECK(std::string(error.what()) == "invalid value (inf) encountered in log");
  }
  // debug_infs alone lets a NaN through; with both on the NaN is reported.
  CHECK_NOTHROW((void)lax::unary("log", negative));
  set_debug_nans(true);
  CHECK_THROWS_WITH((void)lax::unary("log", negative), "invalid value (nan) encountered in log");
  set_debug_nans(false);
  set_debug_infs(false);
  CHECK_NOTHROW((void)lax::unary("log", values));
}
