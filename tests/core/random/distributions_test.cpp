// Samplers against real JAX output: notebook-recorded arrays, doc examples and JAX's own value tests.
#include "random/distributions.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

using namespace shardscope::random;
using shardscope::bf16_to_float;
using shardscope::double_to_bf16;
using shardscope::double_to_f16;
using shardscope::f16_to_float;
using shardscope::float_to_bf16;
using shardscope::float_to_f16;

namespace {

constexpr ThreefryMode kPart = ThreefryMode::kPartitionable;
constexpr ThreefryMode kOrig = ThreefryMode::kOriginal;
const RandomOptions kLegacy{kOrig, std::nullopt};

std::vector<int64_t> dims(std::initializer_list<int64_t> d) { return std::vector<int64_t>(d); }

// The numbers in a printed numpy array, brackets and line breaks dropped.
std::vector<std::string> tokens(std::string_view printed) {
  std::vector<std::string> out;
  std::string current;
  for (const char c : printed) {
    if (c == '[' || c == ']' || c == ',' || c == ' ' || c == '\n') {
      if (!current.empty()) out.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) out.push_back(current);
  return out;
}

// How numpy prints a float32 array element (floatmode='maxprec'): the shortest digits that identify
// the float32, cut to `precision` fractional digits (correctly rounded) when longer.
std::string numpy_str(float v, int precision = 8) {
  std::array<char, 64> buf{};
  char* end = std::to_chars(buf.data(), buf.data() + buf.size(), v, std::chars_format::fixed).ptr;
  std::string s(buf.data(), end);
  const std::size_t dot = s.find('.');
  const std::size_t frac = dot == std::string::npos ? 0 : s.size() - dot - 1;
  if (frac > static_cast<std::size_t>(precision)) {
    end = std::to_chars(buf.data(), buf.data() + buf.size(), v, std::chars_format::fixed, precision).ptr;
    s.assign(buf.data(), end);
    while (s.back() == '0') s.pop_back();
  }
  if (s.find('.') == std::string::npos) s += '.';
  return s;
}

void check_printed(const std::vector<float>& values, std::string_view printed, int precision = 8) {
  const std::vector<std::string> expected = tokens(printed);
  REQUIRE(values.size() == expected.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    INFO("element " << i);
    CHECK(numpy_str(values[i], precision) == expected[i]);
  }
}

std::vector<float> pick(const std::vector<float>& all, std::initializer_list<std::size_t> indices) {
  std::vector<float> out;
  for (const std::size_t i : indices) out.push_back(all[i]);
  return out;
}

int32_t ulp_distance(float a, float b) { return std::bit_cast<int32_t>(a) - std::bit_cast<int32_t>(b); }

}  // namespace

TEST_CASE("A1: arange(24) + uniform(key(42), (24,)) in both threefry modes") {
  for (const ThreefryMode mode : {kOrig, kPart}) {
    std::vector<float> u = uniform<float>(key(42), dims({24}), 0.0f, 1.0f, RandomOptions{mode, std::nullopt});
    for (std::size_t i = 0; i < u.size(); ++i) u[i] = static_cast<float>(i) + u[i];
    if (mode == kOrig) {
      check_printed(
          u,
          "[ 0.72503686  1.8532515   2.983416    3.083253    4.0332246   5.4782867\n  6.1720605   7.6900277   "
          "8.602836    9.810046   10.861367   11.907651\n 12.330483   13.456195   14.808557   15.960099   "
          "16.067581   17.739723\n 18.335474   19.46401    20.390276   21.116539   22.858128   23.223194  ]");
    } else {
      check_printed(u,
                    "[ 0.48870957  1.6797972   2.6162715   3.561016    4.4506445   5.585866\n  6.0748096   7.775133    "
                    "8.698959    9.818634   10.350306   11.87282\n 12.925881   13.86013    14.477554   15.818481   "
                    "16.711355   17.586697\n 18.073738   19.777622   20.404566   21.119123   22.026257   23.63918   ]");
    }
  }
}

TEST_CASE("A2-A4: legacy uniform(key(0)) arrays of the Pallas distributed notebook") {
  const std::vector<float> a2 = uniform<float>(key(0), dims({8, 512}), 0.0f, 1.0f, kLegacy);
  check_printed(pick(a2, {0, 128, 256, 384}), "[0.9858954  0.11763906 0.9955574  0.775211  ]");
  const std::vector<float> a3 = uniform<float>(key(0), dims({32, 128}), 0.0f, 1.0f, kLegacy);
  check_printed(pick(a3, {0, 1024, 2048, 3072}), "[0.9858954  0.54248166 0.9547038  0.954962  ]");
  const std::vector<float> a4 = uniform<float>(key(0), dims({64, 512}), 0.0f, 1.0f, kLegacy);
  std::vector<float> column;
  for (std::size_t r = 0; r < 64; r += 4) column.push_back(a4[r * 512]);
  check_printed(column,
                "[0.78051674 0.3524047  0.59993696 0.9714314  0.24692321 0.01347649\n 0.01857424 0.24841607 0.86097646 "
                "0.8261659  0.9753758  0.6902338\n 0.4431417  0.963323   0.3158517  0.535548  ]");
}

TEST_CASE("A5: column 0 of legacy uniform(key(0), (16384, 16384)) via block generation") {
  const RandomOptions column0{kOrig, Block{{0, 0}, {16384, 1}}};
  const std::vector<float> col = uniform<float>(key(0), dims({16384, 16384}), 0.0f, 1.0f, column0);
  REQUIRE(col.size() == 16384);
  // Printed input_arr[::4, 0], numpy-summarised to its first and last three values.
  check_printed(pick(col, {0, 4, 8, 16372, 16376, 16380}),
                "[0.74162567 0.0242182  0.27751946 0.05213022 0.36088037 0.04494429]");
}

TEST_CASE("A7: normal draws of the Flax rng guide (partitionable)") {
  struct Case {
    Key base;
    uint32_t hash;  // sha1-derived fold_in data, see threefry_test.cpp
    std::vector<int64_t> shape;
    const char* printed;
  };
  const std::vector<Case> cases = {
      {key(0), 2998342421u, {2, 2}, "[[-1.6185919   0.700908  ]\n [-1.3146383  -0.79342234]]"},
      {key(0), 3213575472u, {2, 2}, "[[ 0.0761425 -1.6157459]\n [-1.6857724  0.7126891]]"},
      {key(0), 3303678395u, {2, 2}, "[[ 0.60175574  0.2553228 ]\n [ 0.27367848 -2.1975214 ]]"},
      {key(1), 3213575472u, {2, 2}, "[[1.6249592  0.30813068]\n [1.6613585  1.0404155 ]]"},
      {key(0), 111800540u, {2, 2}, "[[ 0.0030665   0.29551846]\n [ 0.16670242 -0.78252524]]"},
      {key(0), 3340417016u, {1, 2}, "[[1.582462   0.15216611]]"},
  };
  for (const Case& c : cases) {
    for (const FloatContraction contraction : {FloatContraction::kFused, FloatContraction::kUnfused}) {
      check_printed(normal<float>(fold_in(c.base, c.hash), c.shape, RandomOptions{kPart, std::nullopt, contraction}),
                    c.printed);
    }
  }
}

TEST_CASE("A8: nnx.Rngs(0).param() normal (4, 4) on XLA:CPU needs the fused polynomial") {
  const char* printed =
      "[[ 1.0040143  -0.9063372  -0.7481722  -1.1713669 ]\n [-0.8712328   0.5888381   0.72392994 -1.0255982 ]\n"
      " [ 1.661628   -1.8910251  -1.2889339   0.13360691]\n [-1.1530392   0.23929629  1.7448074   0.5050189 ]]";
  const Key k = fold_in(key(0), 0);
  const std::vector<float> fused = normal<float>(k, dims({4, 4}));
  check_printed(fused, printed);
  // Without contraction two elements land 1 and 2 ulp away, the rest are identical.
  const std::vector<float> unfused =
      normal<float>(k, dims({4, 4}), RandomOptions{kPart, std::nullopt, FloatContraction::kUnfused});
  int differing = 0;
  for (std::size_t i = 0; i < 16; ++i) {
    CHECK(std::abs(ulp_distance(fused[i], unfused[i])) <= 2);
    differing += fused[i] != unfused[i] ? 1 : 0;
  }
  CHECK(differing == 2);
}

TEST_CASE("B1: thinking_in_jax normal draws from key(43) (partitionable)") {
  check_printed(normal<float>(key(43), dims({})), "0.07520543");
  // Printed through an f-string: the float32 widened to a Python float.
  const std::array<const char*, 3> draws = {"-1.9133632183074951", "-1.4749839305877686", "-0.36703771352767944"};
  Key k = key(43);
  for (const char* expected : draws) {
    const std::vector<Key> keys = split(k, 2, kPart);
    CHECK(static_cast<double>(normal<float>(keys[1], dims({}))[0]) == std::strtod(expected, nullptr));
    k = keys[0];
  }
}

TEST_CASE("B2: Common Gotchas normal draws along a legacy split chain") {
  const Key k0 = PRNGKey(0);
  check_printed(normal<float>(k0, dims({1}), kLegacy), "[-0.20584226]");
  const std::vector<Key> s1 = split(k0, 2, kOrig);
  check_printed(normal<float>(s1[1], dims({1}), kLegacy), "[-1.2515389]");
  const std::vector<Key> s2 = split(s1[0], 2, kOrig);
  check_printed(normal<float>(s2[1], dims({1}), kLegacy), "[-0.58665055]");
  const std::vector<Key> s4 = split(s2[0], 4, kOrig);
  check_printed(normal<float>(s4[1], dims({1}), kLegacy), "[-0.37533438]");
  check_printed(normal<float>(s4[2], dims({1}), kLegacy), "[0.98645043]");
  check_printed(normal<float>(s4[3], dims({1}), kLegacy), "[0.14553197]");
}

TEST_CASE("B3: 2021 jax-101 normals agree closely (that release's erf_inv differed by up to 20 ulp)") {
  const Key k = PRNGKey(42);
  const auto close = [](float actual, double expected) {
    return std::abs(actual - expected) <= 1e-5 * std::abs(expected);
  };
  CHECK(close(normal<float>(k, dims({}), kLegacy)[0], -0.18471184));
  CHECK(close(normal<float>(split(k, 2, kOrig)[1], dims({}), kLegacy)[0], 1.3694694));
  const std::vector<Key> subkeys = split(k, 3, kOrig);
  const std::array<double, 3> individually = {-0.04838839, 0.10796146, -1.2226542};
  for (std::size_t i = 0; i < 3; ++i) CHECK(close(normal<float>(subkeys[i], dims({}), kLegacy)[0], individually[i]));
  const std::vector<float> at_once = normal<float>(k, dims({3}), kLegacy);
  CHECK(close(at_once[0], 0.18693541));
  CHECK(close(at_once[1], -1.2806507));
  CHECK(close(at_once[2], -1.5593133));
}

TEST_CASE("partitionable uniform values printed in JAX's documentation") {
  check_printed(uniform<float>(key(0), dims({})), "0.947667");
  check_printed(uniform<float>(split(key(0), 2, kPart)[1], dims({})), "0.00729382");
  check_printed(uniform<float>(key(0), dims({3})), "[0.947667  , 0.9785799 , 0.33229148]");
  // jnp.trunc's docstring, printed with precision=2.
  check_printed(uniform<float>(key(42), dims({3, 3}), -10.0f, 10.0f),
                "[[-0.23  3.6   2.33]\n [ 1.22 -0.99  1.72]\n [-8.5   5.5   3.98]]", 2);
}

TEST_CASE("values from the reference's independent scratch implementation") {
  CHECK(uniform<float>(PRNGKey(0), dims({3}), 0.0f, 1.0f, kLegacy) ==
        std::vector<float>{0.96532142f, 0.31468165f, 0.63302994f});
  const std::vector<float> n = normal<float>(key(0), dims({3}));
  CHECK(n[0] == 1.6226422f);
  CHECK(n[1] == 2.0252647f);
  CHECK(n[2] == -0.43359444f);
  CHECK(normal<float>(key(42), dims({}))[0] == -0.028304616f);
  CHECK(normal<float>(PRNGKey(42), dims({}), kLegacy)[0] == -0.18471177f);
}

TEST_CASE("legacy randint (tests/random_test.py::testPRNGValues)") {
  CHECK(randint<int32_t>(PRNGKey(0), dims({3, 3}), 0, 8, kLegacy) == std::vector<int32_t>{2, 1, 3, 6, 1, 5, 6, 3, 4});
  // The x64 variant draws 64-bit streams.
  CHECK(randint<int64_t>(PRNGKey(0, true), dims({3, 3}), 0, 8, kLegacy) ==
        std::vector<int64_t>{7, 2, 6, 2, 1, 0, 6, 7, 7});
}

TEST_CASE("legacy _RANDOM_VALUES_CASES of tests/random_test.py (seeds adler32(name + 'threefry2x32'))") {
  const std::vector<float> u = uniform<float>(PRNGKey(1338574713), dims({5}), 0.0f, 1.0f, kLegacy);
  const std::array<float, 5> u_expected = {0.298671f, 0.073213f, 0.873356f, 0.260549f, 0.412797f};
  const std::vector<float> n = normal<float>(PRNGKey(1193674498), dims({5}), kLegacy);
  const std::array<float, 5> n_expected = {-1.173234f, -1.511662f, 0.070593f, -0.099764f, 1.052845f};
  for (std::size_t i = 0; i < 5; ++i) {
    CHECK(std::abs(u[i] - u_expected[i]) <= 1e-6f);
    CHECK(std::abs(n[i] - n_expected[i]) <= 1e-6f);
  }
  CHECK(randint<int32_t>(PRNGKey(1319372649), dims({5}), 0, 10, kLegacy) == std::vector<int32_t>{0, 5, 7, 7, 5});
  CHECK(bernoulli<float>(PRNGKey(1612777541), 0.5f, dims({5}), BernoulliMode::kLow, kLegacy) ==
        std::vector<uint8_t>{0, 1, 1, 1, 0});
}

TEST_CASE("randint range handling follows JAX") {
  // maxval <= minval returns minval (issue 222).
  CHECK(randint<int32_t>(key(10003), dims({}), 0, 0) == std::vector<int32_t>{0});
  CHECK(randint<int32_t>(key(1), dims({4}), 5, -3) == std::vector<int32_t>(4, 5));
  // test_randint_out_of_range.
  CHECK(randint<uint8_t>(key(0), dims({10}), 255, 256) == std::vector<uint8_t>(10, 255));
  const std::vector<int8_t> i8 = randint<int8_t>(key(0), dims({1000}), -128, 128);
  CHECK(std::count(i8.begin(), i8.end(), int8_t{-128}) > 0);
  CHECK(std::count(i8.begin(), i8.end(), int8_t{127}) > 0);
  const std::vector<uint8_t> u8 = randint<uint8_t>(key(0), dims({1000}), -1000, 1000);
  CHECK(std::count(u8.begin(), u8.end(), uint8_t{0}) > 0);
  CHECK(std::count(u8.begin(), u8.end(), uint8_t{255}) > 0);
  // test_randint_bounds: narrow dtypes clip their bounds.
  CHECK(randint<int16_t>(key(1701), dims({10}), -32768, 32768) ==
        randint<int16_t>(key(1701), dims({10}), -32768 - 12345, 32767 + 12345));
  CHECK(randint<uint16_t>(key(1701), dims({10}), 0, 65536) ==
        randint<uint16_t>(key(1701), dims({10}), -12345, 65535 + 12345));
  // A span of 2^32 wraps to 0, so the remainders vanish and the low stream comes through as is.
  const std::vector<uint32_t> low_stream = random_bits<uint32_t>(split(key(3), 2, kPart)[1], dims({6}));
  CHECK(randint<uint32_t>(key(3), dims({6}), 0, int64_t{1} << 32) == low_stream);
  const std::vector<int32_t> full_i32 = randint<int32_t>(key(3), dims({6}), INT32_MIN, int64_t{INT32_MAX} + 1);
  for (std::size_t i = 0; i < 6; ++i) CHECK(full_i32[i] == static_cast<int32_t>(low_stream[i] + 0x80000000u));
  // maxval past the dtype's top: the span grows by one so the top value stays reachable.
  const std::vector<int32_t> top = randint<int32_t>(key(3), dims({6}), 0, int64_t{1} << 31);
  for (std::size_t i = 0; i < 6; ++i) CHECK(top[i] == static_cast<int32_t>(low_stream[i] & 0x7FFFFFFFu));
  // Otherwise values stay in range.
  for (const int32_t v : randint<int32_t>(key(4), dims({2000}), -7, 13)) {
    CHECK(v >= -7);
    CHECK(v < 13);
  }
}

TEST_CASE("uniform keeps the top mantissa bits of each dtype's random bits") {
  for (const ThreefryMode mode : {kPart, kOrig}) {
    const RandomOptions options{mode, std::nullopt};
    const std::vector<int64_t> shape = dims({3, 7});
    const std::vector<uint32_t> b32 = random_bits<uint32_t>(key(5), shape, options);
    const std::vector<uint64_t> b64 = random_bits<uint64_t>(key(5), shape, options);
    const std::vector<uint8_t> b8 = random_bits<uint8_t>(key(5), shape, options);
    const std::vector<uint16_t> b16 = random_bits<uint16_t>(key(5), shape, options);
    const std::vector<float> f32 = uniform<float>(key(5), shape, 0.0f, 1.0f, options);
    const std::vector<double> f64 = uniform<double>(key(5), shape, 0.0, 1.0, options);
    const std::vector<uint16_t> bf16 = uniform_bf16(key(5), shape, 0.0, 1.0, options);
    const std::vector<uint16_t> f16 = uniform_f16(key(5), shape, 0.0, 1.0, options);
    for (std::size_t i = 0; i < b32.size(); ++i) {
      CHECK(f32[i] == std::bit_cast<float>((b32[i] >> 9) | 0x3F800000u) - 1.0f);
      CHECK(f64[i] == std::bit_cast<double>((b64[i] >> 12) | 0x3FF0000000000000u) - 1.0);
      CHECK(bf16_to_float(bf16[i]) == bf16_to_float(static_cast<uint16_t>((b8[i] >> 1) | 0x3F80u)) - 1.0f);
      CHECK(f16_to_float(f16[i]) == f16_to_float(static_cast<uint16_t>((b16[i] >> 6) | 0x3C00u)) - 1.0f);
    }
  }
  for (const float v : uniform<float>(key(8), dims({5000}), -3.0f, 2.5f)) {
    CHECK(v >= -3.0f);
    CHECK(v < 2.5f);
  }
  // The affine step is one fused multiply-add unless asked otherwise; over 1000 draws the two differ.
  const std::vector<uint32_t> bits = random_bits<uint32_t>(key(8), dims({1000}));
  const std::vector<float> fused = uniform<float>(key(8), dims({1000}), -10.0f, 0.7f);
  const std::vector<float> unfused = uniform<float>(key(8), dims({1000}), -10.0f, 0.7f,
                                                    RandomOptions{kPart, std::nullopt, FloatContraction::kUnfused});
  int differing = 0;
  for (std::size_t i = 0; i < bits.size(); ++i) {
    const float unit = std::bit_cast<float>((bits[i] >> 9) | 0x3F800000u) - 1.0f;
    const float span = 0.7f - -10.0f;
    CHECK(fused[i] == std::fma(unit, span, -10.0f));
    const float scaled = unit * span;
    CHECK(unfused[i] == scaled + -10.0f);
    differing += fused[i] != unfused[i] ? 1 : 0;
  }
  CHECK(differing > 0);
  // maxval below minval: lax.max(minval, .) returns minval everywhere.
  CHECK(uniform<float>(key(8), dims({50}), 1.0f, 0.0f) == std::vector<float>(50, 1.0f));
  CHECK(uniform<double>(key(8), dims({50}), 2.0, -1.0) == std::vector<double>(50, 2.0));
  // bfloat16 bounds are rounded to bfloat16 first: 0.1 becomes 0.10009765625.
  for (const uint16_t v : uniform_bf16(key(8), dims({200}), 0.1, 0.2)) CHECK(bf16_to_float(v) >= 0.10009765625f);
}

TEST_CASE("normal is sqrt(2) * erf_inv of a uniform in (-1, 1)") {
  const std::vector<float> u = uniform<float>(key(6), dims({64}), std::nextafter(-1.0f, 0.0f), 1.0f);
  const std::vector<float> n = normal<float>(key(6), dims({64}));
  for (std::size_t i = 0; i < u.size(); ++i) CHECK(n[i] == 1.41421354f * erf_inv(u[i]));
  const auto moments = [](const std::vector<double>& xs) {
    double sum = 0.0;
    double sum_sq = 0.0;
    for (const double x : xs) {
      sum += x;
      sum_sq += x * x;
    }
    const double mean = sum / static_cast<double>(xs.size());
    return std::array<double, 2>{mean, sum_sq / static_cast<double>(xs.size()) - mean * mean};
  };
  const std::array<double, 2> m64 = moments(normal<double>(key(7), dims({20000})));
  CHECK(std::abs(m64[0]) < 0.03);
  CHECK(std::abs(m64[1] - 1.0) < 0.05);
  std::vector<double> half;
  for (const uint16_t v : normal_bf16(key(7), dims({20000}))) half.push_back(bf16_to_float(v));
  const std::array<double, 2> mbf = moments(half);
  CHECK(std::abs(mbf[0]) < 0.05);
  CHECK(std::abs(mbf[1] - 1.0) < 0.1);
  half.clear();
  for (const uint16_t v : normal_f16(key(7), dims({20000}))) half.push_back(f16_to_float(v));
  const std::array<double, 2> mf16 = moments(half);
  CHECK(std::abs(mf16[0]) < 0.03);
  CHECK(std::abs(mf16[1] - 1.0) < 0.05);
}

TEST_CASE("erf_inv inverts erf and keeps XLA's edge cases") {
  CHECK(erf_inv(1.0f) == std::numeric_limits<float>::infinity());
  CHECK(erf_inv(-1.0f) == -std::numeric_limits<float>::infinity());
  CHECK(erf_inv(-1.0) == -std::numeric_limits<double>::infinity());
  CHECK(erf_inv(0.0f) == 0.0f);
  CHECK(std::isnan(erf_inv(std::numeric_limits<float>::quiet_NaN())));
  for (const double x : {-0.9999999, -0.999, -0.7, -0.2, 1e-6, 0.3, 0.9, 0.99999, 0.9999999999}) {
    INFO("x = " << x);
    CHECK(erf_inv(-x) == -erf_inv(x));
    CHECK(std::erf(erf_inv(x)) == doctest::Approx(x).epsilon(1e-14));
    if (std::abs(x) < 0.9999999) {
      const float xf = static_cast<float>(x);
      CHECK(std::erf(static_cast<double>(erf_inv(xf))) == doctest::Approx(xf).epsilon(2e-6));
    }
  }
}

TEST_CASE("erf_inv is accurate across both polynomial branches") {
  // Giles' branch switch sits at w = -log1p(-x^2) = 5 (|x| ~ 0.9966); a sweep through it catches a
  // misplaced switch, which costs about 1e-6 in erf(erf_inv(x)) near |x| = 0.99.
  double worst32 = 0.0;
  double worst64 = 0.0;
  for (int i = -99999; i <= 99999; ++i) {
    const float x = static_cast<float>(i / 100000.0);
    worst32 = std::max(worst32, std::abs(std::erf(static_cast<double>(erf_inv(x))) - static_cast<double>(x)));
    const double xd = i / 100000.0;
    worst64 = std::max(worst64, std::abs(std::erf(erf_inv(xd)) - xd));
  }
  CHECK(worst32 < 2e-7);
  CHECK(worst64 < 1e-15);
}

TEST_CASE("bernoulli compares uniforms with p, in both modes") {
  CHECK(bernoulli<float>(key(1), 0.0f, dims({50})) == std::vector<uint8_t>(50, 0));
  CHECK(bernoulli<float>(key(1), 1.0f, dims({50})) == std::vector<uint8_t>(50, 1));
  const std::vector<float> u = uniform<float>(key(1), dims({50}));
  const std::vector<uint8_t> low = bernoulli<float>(key(1), 0.3f, dims({50}));
  for (std::size_t i = 0; i < 50; ++i) CHECK(low[i] == (u[i] < 0.3f ? 1 : 0));
  // "high" draws (2, *shape): the second half refines the first below its resolution.
  const std::vector<float> u2 = uniform<float>(key(1), dims({2, 50}));
  const std::vector<uint8_t> high = bernoulli<float>(key(1), 0.3f, dims({50}), BernoulliMode::kHigh);
  for (std::size_t i = 0; i < 50; ++i) CHECK(high[i] == (u2[50 + i] * 0x1p-23f < 0.3f - u2[i] ? 1 : 0));
  const std::vector<uint8_t> tiny = bernoulli<double>(key(2), 1e-9, dims({1000}), BernoulliMode::kHigh);
  CHECK(std::count(tiny.begin(), tiny.end(), uint8_t{1}) == 0);
}

TEST_CASE("sampler blocks equal slices of the full sample") {
  std::mt19937_64 rng(7);
  for (const ThreefryMode mode : {kPart, kOrig}) {
    for (int trial = 0; trial < 20; ++trial) {
      const Key k{static_cast<uint32_t>(rng()), static_cast<uint32_t>(rng())};
      const std::vector<int64_t> shape =
          dims({static_cast<int64_t>(rng() % 5 + 1), static_cast<int64_t>(rng() % 9 + 1)});
      const int64_t r0 = static_cast<int64_t>(rng() % static_cast<uint64_t>(shape[0]));
      const int64_t c0 = static_cast<int64_t>(rng() % static_cast<uint64_t>(shape[1]));
      const Block block{{r0, c0},
                        {shape[0], c0 + 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(shape[1] - c0))}};
      const RandomOptions whole{mode, std::nullopt};
      const RandomOptions part{mode, block};
      const auto sliced = [&](const auto& full) {
        std::remove_cvref_t<decltype(full)> out;
        for (int64_t r = block.start[0]; r < block.stop[0]; ++r) {
          for (int64_t c = block.start[1]; c < block.stop[1]; ++c)
            out.push_back(full[static_cast<std::size_t>(r * shape[1] + c)]);
        }
        return out;
      };
      CHECK(uniform<float>(k, shape, -2.0f, 3.0f, part) == sliced(uniform<float>(k, shape, -2.0f, 3.0f, whole)));
      CHECK(uniform<double>(k, shape, 0.0, 1.0, part) == sliced(uniform<double>(k, shape, 0.0, 1.0, whole)));
      CHECK(uniform_bf16(k, shape, 0.0, 1.0, part) == sliced(uniform_bf16(k, shape, 0.0, 1.0, whole)));
      CHECK(uniform_f16(k, shape, 0.0, 1.0, part) == sliced(uniform_f16(k, shape, 0.0, 1.0, whole)));
      CHECK(normal<float>(k, shape, part) == sliced(normal<float>(k, shape, whole)));
      CHECK(normal<double>(k, shape, part) == sliced(normal<double>(k, shape, whole)));
      CHECK(randint<int8_t>(k, shape, -5, 100, part) == sliced(randint<int8_t>(k, shape, -5, 100, whole)));
      CHECK(randint<int64_t>(k, shape, 0, 1000, part) == sliced(randint<int64_t>(k, shape, 0, 1000, whole)));
      CHECK(bernoulli<float>(k, 0.4f, shape, BernoulliMode::kHigh, part) ==
            sliced(bernoulli<float>(k, 0.4f, shape, BernoulliMode::kHigh, whole)));
    }
  }
}

TEST_CASE("16-bit float conversions round to nearest even") {
  CHECK(float_to_bf16(1.0f) == 0x3F80u);
  CHECK(bf16_to_float(0x3F80u) == 1.0f);
  CHECK(float_to_bf16(1.0f + 0x1p-8f) == 0x3F80u);             // tie, stays even
  CHECK(float_to_bf16(1.0f + 0x1p-7f + 0x1p-8f) == 0x3F82u);   // tie, rounds up to even
  CHECK(float_to_bf16(1.0f + 0x1p-8f + 0x1p-20f) == 0x3F81u);  // above the tie
  CHECK(double_to_bf16(1.0 + 0x1p-8 + 0x1p-40) == 0x3F81u);    // a double is rounded once
  CHECK(float_to_bf16(std::numeric_limits<float>::max()) == 0x7F80u);
  CHECK(std::isnan(bf16_to_float(float_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  CHECK(float_to_f16(1.0f) == 0x3C00u);
  CHECK(f16_to_float(0x3C00u) == 1.0f);
  CHECK(float_to_f16(65504.0f) == 0x7BFFu);
  CHECK(float_to_f16(65519.0f) == 0x7BFFu);
  CHECK(float_to_f16(65520.0f) == 0x7C00u);
  CHECK(float_to_f16(0x1p-24f) == 0x0001u);
  CHECK(float_to_f16(0x1p-25f) == 0x0000u);     // tie to even (zero)
  CHECK(float_to_f16(-0x1.8p-24f) == 0x8002u);  // tie to even (two units)
  CHECK(f16_to_float(0x0001u) == 0x1p-24f);
  CHECK(f16_to_float(0x7C00u) == std::numeric_limits<float>::infinity());
  CHECK(float_to_f16(1.0f + 0x1p-11f) == 0x3C00u);
  CHECK(float_to_f16(1.0f + 0x1p-10f + 0x1p-11f) == 0x3C02u);
  for (uint32_t h = 0; h < 0x7C00u; ++h) CHECK(float_to_f16(f16_to_float(static_cast<uint16_t>(h))) == h);
}
