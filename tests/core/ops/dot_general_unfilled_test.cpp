// dot_general's floating-point results start as unfilled (pooled) storage: every path must overwrite all of it.
#include <cmath>
#include <limits>
#include <random>

#include "ops/structural.h"
#include "structural_test_util.h"

using namespace shardscope;
using namespace structural_test;

namespace {

Params dot(const std::vector<int64_t>& lhs_contract, const std::vector<int64_t>& rhs_contract,
           const std::vector<int64_t>& lhs_batch = {}, const std::vector<int64_t>& rhs_batch = {}) {
  return {{"dimension_numbers", dot_dimension_numbers_param(lhs_contract, rhs_contract, lhs_batch, rhs_batch)},
          {"precision", ParamValue::None{}},
          {"preferred_element_type", ParamValue::None{}},
          {"out_sharding", ParamValue::None{}}};
}

std::vector<double> random_values(int64_t count, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> distribution(-1.0, 1.0);
  std::vector<double> out(static_cast<std::size_t>(count));
  for (double& v : out) v = distribution(generator);
  return out;
}

// Leaves NaN-filled blocks of `bytes` in the storage pool, so the next unfilled buffers of that size (the
// kernel's result) start as garbage instead of the fresh zero pages a new allocation happens to get.
void poison_pool(DType dtype, const Shape& shape) {
  std::vector<std::shared_ptr<Buffer>> junk;
  for (int i = 0; i < 4; ++i) {
    auto block = std::make_shared<Buffer>(dtype, shape, Buffer::Uninitialized{});
    std::byte* bytes = block->mutable_bytes().data();
    for (std::size_t at = 0; at < block->nbytes(); ++at) bytes[at] = std::byte{0xFF};  // NaN in every dtype
    junk.push_back(std::move(block));
  }
}

// out[b, i, j] = sum_k lhs(b, i, k) * rhs(b, k, j) in double, the operands read through index functions.
template <typename Lhs, typename Rhs>
std::vector<double> reference(int64_t batch, int64_t m, int64_t k, int64_t n, Lhs lhs, Rhs rhs) {
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(batch * m * n));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t kk = 0; kk < k; ++kk) sum += lhs(b, i, kk) * rhs(b, kk, j);
        out.push_back(sum);
      }
    }
  }
  return out;
}

// Largest |a - b| relative to max(1, |b|); NaN anywhere counts as infinitely far.
double worst_error(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i])) return std::numeric_limits<double>::infinity();
    worst = std::max(worst, std::abs(a[i] - b[i]) / std::max(1.0, std::abs(b[i])));
  }
  return worst;
}

}  // namespace

TEST_CASE("a large float32 matmul through BLAS overwrites garbage in its pooled result storage") {
  const int64_t m = 512;
  const int64_t k = 48;
  const int64_t n = 520;  // m * n * 4 bytes > 1 MiB: the result comes from the pool
  const std::vector<double> lhs = random_values(m * k, 21);
  const std::vector<double> rhs = random_values(k * n, 22);
  const auto expected = reference(
      1, m, k, n, [&](int64_t, int64_t i, int64_t kk) { return lhs[static_cast<std::size_t>(i * k + kk)]; },
      [&](int64_t, int64_t kk, int64_t j) { return rhs[static_cast<std::size_t>(kk * n + j)]; });
  for (int round = 0; round < 2; ++round) {
    poison_pool(DType::kFloat32, {m, n});
    const BufferPtr out = run("dot_general", {f32({m, k}, lhs), f32({k, n}, rhs)}, dot({1}, {0}));
    CHECK(worst_error(values(out), expected) < 1e-5);
  }
}

TEST_CASE("float64 batched matmul with a transposed rhs overwrites its pooled result storage") {
  const int64_t batch = 2;
  const int64_t m = 300;
  const int64_t k = 7;
  const int64_t n = 260;  // 2 * 300 * 260 * 8 bytes > 1 MiB
  const std::vector<double> lhs = random_values(batch * m * k, 23);
  const std::vector<double> rhs_t = random_values(batch * n * k, 24);  // [batch, n, k], contracted on k
  const auto expected = reference(
      batch, m, k, n,
      [&](int64_t b, int64_t i, int64_t kk) { return lhs[static_cast<std::size_t>((b * m + i) * k + kk)]; },
      [&](int64_t b, int64_t kk, int64_t j) { return rhs_t[static_cast<std::size_t>((b * n + j) * k + kk)]; });
  poison_pool(DType::kFloat64, {batch, m, n});
  const BufferPtr out =
      run("dot_general", {buffer(DType::kFloat64, {batch, m, k}, lhs), buffer(DType::kFloat64, {batch, n, k}, rhs_t)},
          dot({2}, {2}, {0}, {0}));
  CHECK(out->shape() == Shape{batch, m, n});
  CHECK(worst_error(values(out), expected) < 1e-12);
}

TEST_CASE("strides BLAS cannot take run the packed kernel over pooled result storage") {
  // lhs [m, k, batch] with the batch dim last: its rows and columns both have non-unit strides.
  const int64_t batch = 2;
  const int64_t m = 130;
  const int64_t k = 5;
  const int64_t n = 1100;  // 2 * 130 * 1100 * 4 bytes > 1 MiB
  const std::vector<double> lhs = random_values(m * k * batch, 25);
  const std::vector<double> rhs = random_values(batch * k * n, 26);
  const auto expected = reference(
      batch, m, k, n,
      [&](int64_t b, int64_t i, int64_t kk) { return lhs[static_cast<std::size_t>((i * k + kk) * batch + b)]; },
      [&](int64_t b, int64_t kk, int64_t j) { return rhs[static_cast<std::size_t>((b * k + kk) * n + j)]; });
  poison_pool(DType::kFloat32, {batch, m, n});
  const BufferPtr out = run("dot_general", {f32({m, k, batch}, lhs), f32({batch, k, n}, rhs)}, dot({1}, {1}, {2}, {0}));
  CHECK(out->shape() == Shape{batch, m, n});
  CHECK(worst_error(values(out), expected) < 1e-5);
}

TEST_CASE("vector-matrix and matrix-vector products overwrite their pooled result storage") {
  const int64_t k = 3;
  const int64_t n = 300000;  // 1.2 MB of float32
  const std::vector<double> v = random_values(k, 27);
  const std::vector<double> mat = random_values(k * n, 28);
  const auto expected = reference(
      1, 1, k, n, [&](int64_t, int64_t, int64_t kk) { return v[static_cast<std::size_t>(kk)]; },
      [&](int64_t, int64_t kk, int64_t j) { return mat[static_cast<std::size_t>(kk * n + j)]; });
  poison_pool(DType::kFloat32, {n});
  CHECK(worst_error(values(run("dot_general", {f32({k}, v), f32({k, n}, mat)}, dot({0}, {0}))), expected) < 1e-6);
  // The transposed product [n, k] . [k] walks the other path (one dot per output row).
  std::vector<double> mat_t(mat.size());
  for (int64_t kk = 0; kk < k; ++kk) {
    for (int64_t j = 0; j < n; ++j)
      mat_t[static_cast<std::size_t>(j * k + kk)] = mat[static_cast<std::size_t>(kk * n + j)];
  }
  poison_pool(DType::kFloat32, {n});
  CHECK(worst_error(values(run("dot_general", {f32({n, k}, mat_t), f32({k}, v)}, dot({1}, {0}))), expected) < 1e-6);
}

TEST_CASE("an empty contraction gives zeros, not pooled garbage") {
  const int64_t m = 512;
  const int64_t n = 600;
  poison_pool(DType::kFloat32, {m, n});
  const BufferPtr out = run("dot_general", {f32({m, 0}, {}), f32({0, n}, {})}, dot({1}, {0}));
  const std::vector<double> got = values(out);
  REQUIRE(got.size() == static_cast<std::size_t>(m * n));
  bool all_zero = true;
  for (const double value : got) all_zero = all_zero && value == 0.0;
  CHECK(all_zero);
}
