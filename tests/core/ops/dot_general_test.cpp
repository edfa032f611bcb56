// dot_general: XLA's output dim order, JAX's dtype and error rules, kernels against a naive reference, print rules.
#include <cmath>
#include <random>

#include "ops/structural.h"
#include "sharding/partition_spec.h"
#include "structural_test_util.h"

using namespace shardscope;
using namespace structural_test;

namespace {

Params dot(const std::vector<int64_t>& lhs_contract, const std::vector<int64_t>& rhs_contract,
           const std::vector<int64_t>& lhs_batch = {}, const std::vector<int64_t>& rhs_batch = {},
           ParamValue preferred = ParamValue::None{}) {
  return {{"dimension_numbers", dot_dimension_numbers_param(lhs_contract, rhs_contract, lhs_batch, rhs_batch)},
          {"precision", ParamValue::None{}},
          {"preferred_element_type", std::move(preferred)},
          {"out_sharding", ParamValue::None{}}};
}

std::vector<double> random_values(int64_t count, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> distribution(-1.0, 1.0);
  std::vector<double> out;
  for (int64_t i = 0; i < count; ++i) out.push_back(distribution(generator));
  return out;
}

// out[b, i, j] = sum_k lhs[b, i, k] * rhs[b, k, j] in double, all row-major.
std::vector<double> reference_matmul(const std::vector<double>& lhs, const std::vector<double>& rhs, int64_t batch,
                                     int64_t m, int64_t k, int64_t n) {
  std::vector<double> out(static_cast<std::size_t>(batch * m * n), 0.0);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t kk = 0; kk < k; ++kk) {
          sum +=
              lhs[static_cast<std::size_t>((b * m + i) * k + kk)] * rhs[static_cast<std::size_t>((b * k + kk) * n + j)];
        }
        out[static_cast<std::size_t>((b * m + i) * n + j)] = sum;
      }
    }
  }
  return out;
}

double max_abs_difference(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

}  // namespace

TEST_CASE("dot_general output dims are batch, lhs free, rhs free") {
  // lhs [5, 2, 3, 7] contracting 2 with rhs dim 0 of [3, 4, 5]; batch lhs 0 with rhs 2.
  const Aval out = eval("dot_general", {f32_aval({5, 2, 3, 7}), f32_aval({3, 4, 5})}, dot({2}, {0}, {0}, {2}));
  CHECK(out.shape == Shape{5, 2, 7, 4});
  CHECK(out.dtype == DType::kFloat32);
  CHECK(eval("dot_general", {f32_aval({8, 3}), f32_aval({8, 3})}, dot({1}, {1}, {0}, {0})).shape == Shape{8});
  Aval lhs = f32_aval({4, 3});
  lhs.dim_axes = {{"x"}, {}};
  Aval rhs = f32_aval({3, 6});
  rhs.dim_axes = {{}, {"y"}};
  CHECK(eval("dot_general", {lhs, rhs}, dot({1}, {0})).dim_axes == std::vector<std::vector<std::string>>{{"x"}, {"y"}});
  // An explicit out_sharding decides the result's sharding in types.
  Params resharded = dot({1}, {0});
  resharded[3].second = NamedSharding{Mesh(), parse_partition_spec("P(None, 'x')"), std::nullopt};
  CHECK(eval("dot_general", {lhs, rhs}, resharded).dim_axes == std::vector<std::vector<std::string>>{{}, {"x"}});
}

TEST_CASE("dot_general result dtype: XLA's higher-precision type, preferred_element_type, weak types") {
  auto dtype_of = [](DType a, DType b, ParamValue preferred = ParamValue::None{}) {
    return eval("dot_general", {Aval::of({2, 2}, a), Aval::of({2, 2}, b)}, dot({1}, {0}, {}, {}, std::move(preferred)))
        .dtype;
  };
  CHECK(dtype_of(DType::kBFloat16, DType::kFloat32) == DType::kFloat32);
  CHECK(dtype_of(DType::kInt8, DType::kFloat16) == DType::kFloat16);
  CHECK(dtype_of(DType::kBFloat16, DType::kFloat16) == DType::kBFloat16);
  CHECK(dtype_of(DType::kInt8, DType::kUInt8) == DType::kInt8);
  CHECK(dtype_of(DType::kUInt8, DType::kInt16) == DType::kInt16);
  CHECK(dtype_of(DType::kBFloat16, DType::kBFloat16, DType::kFloat32) == DType::kFloat32);
  CHECK(dtype_of(DType::kFloat32, DType::kFloat32, DType::kBFloat16) == DType::kBFloat16);
  CHECK(eval_error("dot_general", {Aval::of({2, 2}, DType::kInt32), Aval::of({2, 2}, DType::kInt32)},
                   dot({1}, {0}, {}, {}, DType::kInt8)) ==
        std::pair<std::string, std::string>{"TypeError",
                                            "`preferred_element_type` must not be narrower than the original type, "
                                            "got preferred_element_type of int8 for result type of int32."});
  CHECK(eval("dot_general", {f32_aval({2}, true), f32_aval({2}, true)}, dot({0}, {0})).weak_type);
  CHECK(!eval("dot_general", {f32_aval({2}, true), f32_aval({2})}, dot({0}, {0})).weak_type);
}

TEST_CASE("dot_general raises JAX's TypeErrors") {
  CHECK(eval_error("dot_general", {f32_aval({2, 3}), f32_aval({4, 5})}, dot({1}, {0})) ==
        std::pair<std::string, std::string>{
            "TypeError", "dot_general requires contracting dimensions to have the same shape, got (3,) and (4,)."});
  CHECK(eval_error("dot_general", {f32_aval({2, 3}), f32_aval({3, 3})}, dot({1}, {1}, {0}, {0})).second ==
        "dot_general requires lhs batch dimensions and rhs batch dimensions to have the same shape, got (2,) and "
        "(3,).");
  CHECK(eval_error("dot_general", {f32_aval({2, 3}), f32_aval({3})}, dot({2}, {0})).second ==
        "dot_general requires lhs dimension numbers to be nonnegative and less than the number of axes of the lhs "
        "value, got lhs_batch of () and lhs_contracting of (2,) for lhs of rank 2");
  CHECK(eval_error("dot_general", {f32_aval({2, 3}), f32_aval({2, 3})}, dot({1}, {1}, {0}, {})).second ==
        "dot_general requires equal numbers of lhs_batch and rhs_batch dimensions, got lhs_batch (0,) and rhs_batch "
        "().");
  CHECK(eval_error("dot_general", {f32_aval({3, 3}), f32_aval({3, 3})}, dot({0}, {0}, {0}, {1})).second ==
        "dot_general requires lhs batch dimensions to be disjoint from contracting dimensions, got lhs_batch (0,) and "
        "lhs_contracting (0,).");
  CHECK(eval_error("dot_general", {f32_aval({3, 3}), f32_aval({3, 3})}, dot({0, 0}, {0, 1})).second ==
        "dot_general requires lhs contracting dimensions to be distinct, got lhs_contracting (0, 0).");
}

TEST_CASE("dot_general kernels on small matrices in several dtypes") {
  const std::vector<double> a = {1, 2, 3, 4, 5, 6};  // [2, 3]
  const std::vector<double> b = {1, 0, 0, 1, 1, 1};  // [3, 2]
  const std::vector<double> expected = {4, 5, 10, 11};
  for (const DType dtype : {DType::kFloat32, DType::kFloat64, DType::kBFloat16, DType::kFloat16, DType::kInt32,
                            DType::kInt64, DType::kUInt8, DType::kInt16}) {
    CAPTURE(dtype_name(dtype));
    const BufferPtr out = run("dot_general", {buffer(dtype, {2, 3}, a), buffer(dtype, {3, 2}, b)}, dot({1}, {0}));
    CHECK(out->dtype() == dtype);
    CHECK(values(out) == expected);
  }
  // int8 products wrap in the result type; bool contracts with and/or.
  CHECK(values(run("dot_general", {buffer(DType::kInt8, {2}, {100, 100}), buffer(DType::kInt8, {2}, {2, 1})},
                   dot({0}, {0}))) == std::vector<double>{44});  // 300 mod 256
  CHECK(values(run("dot_general", {buffer(DType::kInt8, {2}, {100, 100}), buffer(DType::kInt8, {2}, {2, 1})},
                   dot({0}, {0}, {}, {}, DType::kInt32))) == std::vector<double>{300});
  CHECK(values(run("dot_general",
                   {buffer(DType::kBool, {2, 2}, {1, 0, 0, 0}), buffer(DType::kBool, {2, 2}, {0, 1, 1, 1})},
                   dot({1}, {0}))) == std::vector<double>{0, 1, 0, 0});
  // bfloat16 inputs accumulate in float32 and round once: 256 + 1 + 1 = 258 exactly.
  CHECK(
      values(run("dot_general", {buffer(DType::kBFloat16, {3}, {256, 1, 1}), buffer(DType::kBFloat16, {3}, {1, 1, 1})},
                 dot({0}, {0}))) == std::vector<double>{258});
  // Mixed operands compute in the result type.
  CHECK(values(run("dot_general", {buffer(DType::kInt8, {2}, {3, 4}), f32({2}, {0.5, 0.25})}, dot({0}, {0}))) ==
        std::vector<double>{2.5});
}

TEST_CASE("a dot with a vector operand sums its products in order with one rounding per step, as XLA fuses them") {
  // x = [1, 1 + 2^-12] and every column of w = [-1, 1 + 2^-12]: exactly, -1 + (1 + 2^-12)^2 = 2^-11 + 2^-24, which
  // a fused multiply-add keeps; rounding the product first would give 2^-11.
  const double eps = std::ldexp(1.0, -12);
  const double fused = std::ldexp(1.0, -11) + std::ldexp(1.0, -24);
  const BufferPtr x = f32({2}, {1, 1 + eps});
  SUBCASE("vector times matrix, and a row of a matrix of one row") {
    CHECK(values(run("dot_general", {x, f32({2, 3}, {-1, -1, -1, 1 + eps, 1 + eps, 1 + eps})}, dot({0}, {0}))) ==
          std::vector<double>(3, fused));
    CHECK(values(run("dot_general", {f32({1, 2}, {1, 1 + eps}), f32({2, 2}, {-1, -1, 1 + eps, 1 + eps})},
                     dot({1}, {0}))) == std::vector<double>(2, fused));
  }
  SUBCASE("matrix times vector, with the matrix's contracting dimension minor or major") {
    CHECK(values(run("dot_general", {f32({3, 2}, {-1, 1 + eps, -1, 1 + eps, -1, 1 + eps}), x}, dot({1}, {0}))) ==
          std::vector<double>(3, fused));
    CHECK(values(run("dot_general", {f32({2, 3}, {-1, -1, -1, 1 + eps, 1 + eps, 1 + eps}), x}, dot({0}, {0}))) ==
          std::vector<double>(3, fused));
  }
  SUBCASE("vector dot vector, batched or not, in float64 too") {
    CHECK(values(run("dot_general", {x, f32({2}, {-1, 1 + eps})}, dot({0}, {0}))) == std::vector<double>{fused});
    CHECK(values(run("dot_general", {f32({2, 2}, {1, 1 + eps, 1, 1 + eps}), f32({2, 2}, {-1, 1 + eps, -1, 1 + eps})},
                     dot({1}, {1}, {0}, {0}))) == std::vector<double>(2, fused));
    // In float64 the fused result of the same bits differs from the rounded one only below 2^-53 of 1: use 2^-27.
    const double tiny = std::ldexp(1.0, -27);
    CHECK(values(run("dot_general",
                     {buffer(DType::kFloat64, {2}, {1, 1 + tiny}), buffer(DType::kFloat64, {2}, {-1, 1 + tiny})},
                     dot({0}, {0}))) == std::vector<double>{std::ldexp(1.0, -26) + std::ldexp(1.0, -54)});
  }
  SUBCASE("matrix times matrix of a depth within one panel: each element is the chain of fused multiply-adds") {
    const int64_t m = 13;
    const int64_t n = 37;
    const int64_t k = 200;
    const std::vector<double> as = random_values(m * k, 3);
    const std::vector<double> bs = random_values(k * n, 4);
    const std::vector<double> got = values(run("dot_general", {f32({m, k}, as), f32({k, n}, bs)}, dot({1}, {0})));
    int differing = 0;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        float chain = 0;
        for (int64_t kk = 0; kk < k; ++kk) {
          chain = std::fma(static_cast<float>(as[static_cast<std::size_t>(i * k + kk)]),
                           static_cast<float>(bs[static_cast<std::size_t>(kk * n + j)]), chain);
        }
        if (got[static_cast<std::size_t>(i * n + j)] != static_cast<double>(chain)) ++differing;
      }
    }
    // A processor without FMA rounds each product, as XLA's code for it does too.
    bool fma_hardware = false;
#if defined(__x86_64__)
    fma_hardware = __builtin_cpu_supports("fma") != 0 && __builtin_cpu_supports("avx2") != 0;
#endif
    if (fma_hardware) {
      CHECK(differing == 0);
      CHECK(values(run("dot_general", {f32({2, 2}, {1, 1 + eps, 1, 1 + eps}), f32({2, 2}, {-1, -1, 1 + eps, 1 + eps})},
                       dot({1}, {0}))) == std::vector<double>(4, fused));
    }
  }
  SUBCASE("the sum runs in k order: a long row vector against a wide matrix matches the chain") {
    const int64_t k = 37;
    const int64_t n = 300;  // more outputs than one block of the kernel
    const std::vector<double> xs = random_values(k, 7);
    const std::vector<double> ws = random_values(k * n, 8);
    const std::vector<double> got = values(run("dot_general", {f32({k}, xs), f32({k, n}, ws)}, dot({0}, {0})));
    for (int64_t j = 0; j < n; ++j) {
      float chain = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        chain = std::fma(static_cast<float>(xs[static_cast<std::size_t>(kk)]),
                         static_cast<float>(ws[static_cast<std::size_t>(kk * n + j)]), chain);
      }
      CHECK(got[static_cast<std::size_t>(j)] == static_cast<double>(chain));
    }
  }
}

TEST_CASE("dot_general matches a naive reference on awkward layouts") {
  SUBCASE("a ragged matmul that exercises every edge of the blocked kernel") {
    const int64_t m = 67;
    const int64_t k = 300;
    const int64_t n = 45;
    const std::vector<double> lhs = random_values(m * k, 1);
    const std::vector<double> rhs = random_values(k * n, 2);
    const BufferPtr out = run("dot_general", {f32({m, k}, lhs), f32({k, n}, rhs)}, dot({1}, {0}));
    CHECK(max_abs_difference(values(out), reference_matmul(lhs, rhs, 1, m, k, n)) < 1e-4);
  }
  SUBCASE("rhs contracted on its minor dim (x @ y.T), batched") {
    const int64_t batch = 3;
    const int64_t m = 9;
    const int64_t k = 20;
    const int64_t n = 17;
    const std::vector<double> lhs = random_values(batch * m * k, 3);
    const std::vector<double> rhs_t = random_values(batch * n * k, 4);  // [batch, n, k]
    std::vector<double> rhs(rhs_t.size());
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t kk = 0; kk < k; ++kk) {
        for (int64_t j = 0; j < n; ++j) {
          rhs[static_cast<std::size_t>((b * k + kk) * n + j)] = rhs_t[static_cast<std::size_t>((b * n + j) * k + kk)];
        }
      }
    }
    const BufferPtr out =
        run("dot_general", {f32({batch, m, k}, lhs), f32({batch, n, k}, rhs_t)}, dot({2}, {2}, {0}, {0}));
    CHECK(out->shape() == Shape{batch, m, n});
    CHECK(max_abs_difference(values(out), reference_matmul(lhs, rhs, batch, m, k, n)) < 1e-5);
  }
  SUBCASE("batch dim last on the lhs and contraction first: operands get transposed") {
    // lhs [k, m, batch], rhs [batch, k, n]: out [batch, m, n].
    const int64_t batch = 2;
    const int64_t m = 7;
    const int64_t k = 5;
    const int64_t n = 8;
    const std::vector<double> lhs_kmb = random_values(k * m * batch, 5);
    const std::vector<double> rhs = random_values(batch * k * n, 6);
    std::vector<double> lhs(lhs_kmb.size());
    for (int64_t kk = 0; kk < k; ++kk) {
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t b = 0; b < batch; ++b) {
          lhs[static_cast<std::size_t>((b * m + i) * k + kk)] =
              lhs_kmb[static_cast<std::size_t>((kk * m + i) * batch + b)];
        }
      }
    }
    const BufferPtr out = run(
        "dot_general", {buffer(DType::kFloat64, {k, m, batch}, lhs_kmb), buffer(DType::kFloat64, {batch, k, n}, rhs)},
        dot({0}, {1}, {2}, {0}));
    CHECK(out->shape() == Shape{batch, m, n});
    CHECK(max_abs_difference(values(out), reference_matmul(lhs, rhs, batch, m, k, n)) < 1e-12);
  }
  SUBCASE("vector-matrix, matrix-vector and batched row dots") {
    const std::vector<double> v = random_values(6, 7);
    const std::vector<double> mat = random_values(int64_t{6} * 5, 8);
    const BufferPtr vm = run("dot_general", {f32({6}, v), f32({6, 5}, mat)}, dot({0}, {0}));
    CHECK(max_abs_difference(values(vm), reference_matmul(v, mat, 1, 1, 6, 5)) < 1e-5);
    const std::vector<double> w = random_values(5, 9);
    const BufferPtr mv = run("dot_general", {f32({6, 5}, mat), f32({5}, w)}, dot({1}, {0}));
    CHECK(max_abs_difference(values(mv), reference_matmul(mat, w, 1, 6, 5, 1)) < 1e-5);
    // vmap(jnp.vdot) over rows, as in the seeds: (8, 3) x (8, 3) -> (8,).
    const BufferPtr rows =
        run("dot_general", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({2, 3}, {1, 1, 1, 2, 0, 1})}, dot({1}, {1}, {0}, {0}));
    CHECK(values(rows) == std::vector<double>{6, 14});
  }
}

TEST_CASE("dot_general print rule per JAX version") {
  const Params params = dot({1}, {1}, {0}, {0}, DType::kFloat32);
  CHECK(params_text("dot_general", params, JaxProfile()) ==
        "dimension_numbers=(([1], [1]), ([0], [0])) preferred_element_type=float32");
  Params sharded = params;
  sharded[3].second = ParamValue::Verbatim{"NamedSharding(...)"};
  CHECK(params_text("dot_general", sharded, JaxProfile()) ==
        "dimension_numbers=(([1], [1]), ([0], [0])) preferred_element_type=float32");
  CHECK(params_text("dot_general", sharded, JaxProfile(JaxVersion{0, 9, 2})) ==
        "dimension_numbers=(([1], [1]), ([0], [0])) out_sharding=NamedSharding(...) preferred_element_type=float32");
  CHECK(params_text("dot_general", dot({0}, {0}), JaxProfile(JaxVersion{0, 3, 4})) ==
        "dimension_numbers=(((0,), (0,)), ((), ())) precision=None preferred_element_type=None");
  CHECK(print_eqn("dot_general", {f32_aval({8, 3}), f32_aval({8, 3})}, f32_aval({8}), params, JaxProfile()) ==
        "{ lambda ; a:f32[8,3] b:f32[8,3]. let\n"
        "    c:f32[8] = dot_general[\n"
        "      dimension_numbers=(([1], [1]), ([0], [0]))\n"
        "      preferred_element_type=float32\n"
        "    ] a b\n"
        "  in (c,) }");
}
