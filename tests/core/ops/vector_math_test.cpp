// The SIMD transcendental kernels against <cmath> in ulp, on both builds, with special values and tails.
#include "ops/vector_math.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace shardscope;
using vector_math::Function;

namespace {

// Distance in representable values (both NaN counts as equal; a sign change of zero counts as far).
template <typename T>
uint64_t ulp_distance(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : UINT64_MAX;
  if (a == b) return std::signbit(a) == std::signbit(b) ? 0 : UINT64_MAX;
  using Bits = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  Bits ia = 0;
  Bits ib = 0;
  std::memcpy(&ia, &a, sizeof(T));
  std::memcpy(&ib, &b, sizeof(T));
  // Map the sign-magnitude bit patterns onto one monotonic integer line.
  const auto line = [](Bits v) { return v < 0 ? static_cast<int64_t>(std::numeric_limits<Bits>::min()) - v : v; };
  const int64_t da = line(ia);
  const int64_t db = line(ib);
  return static_cast<uint64_t>(da > db ? da - db : db - da);
}

template <typename T>
T reference(Function function, T x) {
  switch (function) {
    case Function::kSin: return std::sin(x);
    case Function::kCos: return std::cos(x);
    case Function::kExp: return std::exp(x);
    case Function::kLog: return std::log(x);
    case Function::kTanh: return std::tanh(x);
    case Function::kLogistic: return T{1} / (T{1} + std::exp(-x));
  }
  return x;
}

struct Range {
  Function function;
  const char* name;
  double low;
  double high;
};

const std::vector<Range> kRanges = {
    {Function::kSin, "sin", -10, 10},
    {Function::kSin, "sin", -9.0e4, 9.0e4},
    {Function::kCos, "cos", -10, 10},
    {Function::kCos, "cos", -9.0e4, 9.0e4},
    {Function::kExp, "exp", -100, 100},
    {Function::kExp, "exp", -1, 1},
    {Function::kLog, "log", 0, 2},
    {Function::kLog, "log", 0, 1e30},
    {Function::kTanh, "tanh", -0.7, 0.7},
    {Function::kTanh, "tanh", -30, 30},
    {Function::kLogistic, "logistic", -120, 120},
};

template <typename T>
void check_ranges(bool portable) {
  std::mt19937_64 rng(7);
  for (const Range& range : kRanges) {
    std::uniform_real_distribution<double> draw(range.low, range.high);
    std::vector<T> in(20011);
    for (T& v : in) v = static_cast<T>(draw(rng));
    std::vector<T> out(in.size());
    const auto n = static_cast<int64_t>(in.size());
    if (portable) {
      vector_math::apply_portable(range.function, in.data(), out.data(), n);
    } else {
      vector_math::apply(range.function, in.data(), out.data(), n);
    }
    uint64_t worst = 0;
    for (std::size_t i = 0; i < in.size(); ++i)
      worst = std::max(worst, ulp_distance(out[i], reference(range.function, in[i])));
    INFO(range.name, " on [", range.low, ", ", range.high, "] ", sizeof(T) == 4 ? "float32" : "float64",
         portable ? " portable" : " dispatched");
    CHECK(worst <= 4);
  }
}

template <typename T>
void check_special_values() {
  const T inf = std::numeric_limits<T>::infinity();
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const T tiny = std::numeric_limits<T>::denorm_min();
  // Each value sits in a vector of ordinary ones, so the fallback is exercised lane by lane.
  const std::vector<T> specials = {
      T{0}, T{-0.0}, inf, -inf, nan, tiny, -tiny, T{1e6}, T{-1e7}, static_cast<T>(1e30), T{-800}, T{800}, T{-1}};
  for (const Function function :
       {Function::kSin, Function::kCos, Function::kExp, Function::kLog, Function::kTanh, Function::kLogistic}) {
    for (const T special : specials) {
      for (int lane = 0; lane < 9; ++lane) {
        std::vector<T> in(9, T{0.25});
        in[static_cast<std::size_t>(lane)] = special;
        std::vector<T> out(in.size());
        vector_math::apply(function, in.data(), out.data(), static_cast<int64_t>(in.size()));
        for (std::size_t i = 0; i < in.size(); ++i) {
          INFO("function ", static_cast<int>(function), " value ", static_cast<double>(in[i]));
          CHECK(ulp_distance(out[i], reference(function, in[i])) <= 4);
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("vector float32 sin, cos, exp, log, tanh and logistic are within 4 ulp of cmath") {
  check_ranges<float>(false);
  check_ranges<float>(true);
}

TEST_CASE("vector float64 sin, cos, exp, log, tanh and logistic are within 4 ulp of cmath") {
  check_ranges<double>(false);
  check_ranges<double>(true);
}

TEST_CASE("special values and huge arguments come out as cmath gives them") {
  check_special_values<float>();
  check_special_values<double>();
}

TEST_CASE("every tail length is computed, and nothing past n is written") {
  for (int64_t n = 0; n <= 19; ++n) {
    std::vector<float> in(24, 0.5F);
    std::vector<float> out(24, -7.0F);
    for (int64_t i = 0; i < n; ++i) in[static_cast<std::size_t>(i)] = static_cast<float>(i) * 0.3F;
    vector_math::apply(Function::kExp, in.data(), out.data(), n);
    for (int64_t i = 0; i < 24; ++i) {
      const auto at = static_cast<std::size_t>(i);
      if (i < n) {
        CHECK(ulp_distance(out[at], std::exp(in[at])) <= 2);
      } else {
        CHECK(out[at] == -7.0F);
      }
    }
  }
}

TEST_CASE("in-place application is allowed") {
  std::vector<double> values = {0.1, 0.2, 0.3, 0.4, 0.5};
  const std::vector<double> original = values;
  vector_math::apply(Function::kLog, values.data(), values.data(), static_cast<int64_t>(values.size()));
  for (std::size_t i = 0; i < values.size(); ++i) CHECK(ulp_distance(values[i], std::log(original[i])) <= 2);
}
