// Matrix products for float32/float64: a packed, vectorized kernel (with fused multiply-adds for depths of one
// panel, as XLA rounds them), OpenBLAS for deeper ones where the strides allow.
#include <algorithm>
#include <array>
#include <cstring>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "base/cpu_features.h"
#include "base/thread_pool.h"
#include "ops/structural_internal.h"

#ifdef SHARDSCOPE_HAVE_CBLAS
#include <cblas.h>
#endif

namespace shardscope::structural {
namespace {

struct GemmSize {
  int64_t m;
  int64_t n;
  int64_t k;
};

constexpr int64_t kMr = 6;  // rows of C per micro-tile
constexpr auto kTileRows = static_cast<std::size_t>(kMr);
constexpr int64_t kKc = 256;   // depth of a packed panel (the B micro-panel stays in L1)
constexpr int64_t kMc = 96;    // rows of a packed A block (L2)
constexpr int64_t kNc = 1024;  // columns of a packed B block (L2)
// Multiply-adds below which a product stays on the calling thread (waking the pool costs microseconds).
constexpr int64_t kParallelGemmWork = int64_t{1} << 21;

#if SHARDSCOPE_HAS_FMA_TARGET
// One micro-tile's accumulators over kc steps with the FMA instruction itself (so no optimization level or compiler
// contraction choice changes the rounding): out[r * kNr + j] = fma chain of pa[k * kMr + r] * pb[k * kNr + j].
// Built for AVX2 + FMA; the caller picks it only where the processor has them.
__attribute__((target("avx2,fma"))) void fused_tile(const float* pa, const float* pb, int64_t kc, float* out) {
  __m256 acc[2 * kTileRows];  // NOLINT(*-c-arrays): GCC drops vector attributes from template arguments
#pragma GCC unroll 12
  for (auto& v : acc) v = _mm256_setzero_ps();
  for (int64_t kk = 0; kk < kc; ++kk) {
    const __m256 b0 = _mm256_loadu_ps(pb);
    const __m256 b1 = _mm256_loadu_ps(pb + 8);
#pragma GCC unroll 6
    for (std::size_t r = 0; r < kTileRows; ++r) {
      const __m256 a = _mm256_set1_ps(pa[r]);
      acc[2 * r] = _mm256_fmadd_ps(b0, a, acc[2 * r]);
      acc[2 * r + 1] = _mm256_fmadd_ps(b1, a, acc[2 * r + 1]);
    }
    pa += kMr;
    pb += 16;
  }
#pragma GCC unroll 12
  for (std::size_t i = 0; i < 2 * kTileRows; ++i) _mm256_storeu_ps(out + 8 * i, acc[i]);
}

__attribute__((target("avx2,fma"))) void fused_tile(const double* pa, const double* pb, int64_t kc, double* out) {
  __m256d acc[2 * kTileRows];  // NOLINT(*-c-arrays): as above
#pragma GCC unroll 12
  for (auto& v : acc) v = _mm256_setzero_pd();
  for (int64_t kk = 0; kk < kc; ++kk) {
    const __m256d b0 = _mm256_loadu_pd(pb);
    const __m256d b1 = _mm256_loadu_pd(pb + 4);
#pragma GCC unroll 6
    for (std::size_t r = 0; r < kTileRows; ++r) {
      const __m256d a = _mm256_set1_pd(pa[r]);
      acc[2 * r] = _mm256_fmadd_pd(b0, a, acc[2 * r]);
      acc[2 * r + 1] = _mm256_fmadd_pd(b1, a, acc[2 * r + 1]);
    }
    pa += kMr;
    pb += 8;
  }
#pragma GCC unroll 12
  for (std::size_t i = 0; i < 2 * kTileRows; ++i) _mm256_storeu_pd(out + 4 * i, acc[i]);
}
#endif

// C[MxN] += A[MxK] . B[KxN] for one batch; `Width` is the SIMD width in elements, so one micro-tile
// is kMr x (2 * Width) and its accumulators stay in registers. `Fused`: each accumulation is one fused
// multiply-add (AVX2 widths only).
template <typename T, int Width, bool Fused = false>
[[gnu::always_inline]] inline void gemm_blocked(const GemmSize& shape, const T* a, int64_t a_rows, int64_t a_cols,
                                                const T* b, int64_t b_rows, int64_t b_cols, T* c) {
  using Vec [[gnu::vector_size(sizeof(T) * Width)]] = T;
  constexpr int64_t kNr = 2 * static_cast<int64_t>(Width);
  const int64_t m_total = shape.m;
  const int64_t n_total = shape.n;
  const int64_t k_total = shape.k;
  std::vector<T> packed_b(static_cast<std::size_t>(kKc * ((std::min(kNc, n_total) + kNr - 1) / kNr) * kNr));
  std::vector<T> packed_a(static_cast<std::size_t>(kKc * ((std::min(kMc, m_total) + kMr - 1) / kMr) * kMr));
  alignas(64) std::array<T, static_cast<std::size_t>(kMr * kNr)> tile{};
  for (int64_t jc = 0; jc < n_total; jc += kNc) {
    const int64_t nc = std::min(kNc, n_total - jc);
    const int64_t n_panels = (nc + kNr - 1) / kNr;
    for (int64_t pc = 0; pc < k_total; pc += kKc) {
      const int64_t kc = std::min(kKc, k_total - pc);
      // B block -> column micro-panels: panel p holds, for each k, kNr consecutive columns.
      for (int64_t p = 0; p < n_panels; ++p) {
        T* panel = packed_b.data() + p * kNr * kc;
        const int64_t cols = std::min(kNr, nc - p * kNr);
        const T* source = b + pc * b_rows + (jc + p * kNr) * b_cols;
        if (b_cols == 1) {
          for (int64_t kk = 0; kk < kc; ++kk) {
            const T* row = source + kk * b_rows;
            T* target = panel + kk * kNr;
            for (int64_t j = 0; j < cols; ++j) target[j] = row[j];
            for (int64_t j = cols; j < kNr; ++j) target[j] = T{};
          }
        } else {
          for (int64_t j = 0; j < kNr; ++j) {
            if (j < cols) {
              for (int64_t kk = 0; kk < kc; ++kk) panel[kk * kNr + j] = source[kk * b_rows + j * b_cols];
            } else {
              for (int64_t kk = 0; kk < kc; ++kk) panel[kk * kNr + j] = T{};
            }
          }
        }
      }
      for (int64_t ic = 0; ic < m_total; ic += kMc) {
        const int64_t mc = std::min(kMc, m_total - ic);
        const int64_t m_panels = (mc + kMr - 1) / kMr;
        // A block -> row micro-panels: panel q holds, for each k, kMr consecutive rows.
        for (int64_t q = 0; q < m_panels; ++q) {
          T* panel = packed_a.data() + q * kMr * kc;
          const int64_t rows = std::min(kMr, mc - q * kMr);
          for (int64_t r = 0; r < kMr; ++r) {
            if (r < rows) {
              const T* source = a + (ic + q * kMr + r) * a_rows + pc * a_cols;
              for (int64_t kk = 0; kk < kc; ++kk) panel[kk * kMr + r] = source[kk * a_cols];
            } else {
              for (int64_t kk = 0; kk < kc; ++kk) panel[kk * kMr + r] = T{};
            }
          }
        }
        for (int64_t p = 0; p < n_panels; ++p) {
          const int64_t cols = std::min(kNr, nc - p * kNr);
          for (int64_t q = 0; q < m_panels; ++q) {
            const int64_t rows = std::min(kMr, mc - q * kMr);
            const T* pa = packed_a.data() + q * kMr * kc;
            const T* pb = packed_b.data() + p * kNr * kc;
            // A C array: GCC drops vector attributes from template arguments, so no std::array here.
            Vec acc[kTileRows][2] = {};  // NOLINT(*-c-arrays)
#if SHARDSCOPE_HAS_FMA_TARGET
            if constexpr (Fused) {
              static_assert(Width * sizeof(T) == 32, "the fused tile is AVX2-wide");
              // The tile's accumulators as the FMA kernel leaves them (kMr rows of 2 * Width lanes).
              fused_tile(pa, pb, kc, reinterpret_cast<T*>(&acc[0][0]));
              pa += kMr * kc;
              pb += kNr * kc;
            }
#endif
            for (int64_t kk = 0; kk < (Fused ? 0 : kc); ++kk) {
              Vec b0;
              Vec b1;
              std::memcpy(&b0, pb, sizeof(Vec));
              std::memcpy(&b1, pb + Width, sizeof(Vec));
#pragma GCC unroll 6
              for (std::size_t r = 0; r < kTileRows; ++r) {
                acc[r][0] += b0 * pa[r];
                acc[r][1] += b1 * pa[r];
              }
              pa += kMr;
              pb += kNr;
            }
            T* c_tile = c + (ic + q * kMr) * n_total + jc + p * kNr;
            if (rows == kMr && cols == kNr) {
#pragma GCC unroll 6
              for (std::size_t r = 0; r < kTileRows; ++r) {
                T* c_row = c_tile + static_cast<int64_t>(r) * n_total;
                Vec c0;
                Vec c1;
                std::memcpy(&c0, c_row, sizeof(Vec));
                std::memcpy(&c1, c_row + Width, sizeof(Vec));
                c0 += acc[r][0];
                c1 += acc[r][1];
                std::memcpy(c_row, &c0, sizeof(Vec));
                std::memcpy(c_row + Width, &c1, sizeof(Vec));
              }
            } else {
              // A ragged edge tile: spill the accumulators and add only the rows and columns that exist.
              for (std::size_t r = 0; r < kTileRows; ++r) {
                std::memcpy(tile.data() + static_cast<int64_t>(r) * kNr, &acc[r][0], sizeof(Vec));
                std::memcpy(tile.data() + static_cast<int64_t>(r) * kNr + Width, &acc[r][1], sizeof(Vec));
              }
              for (int64_t r = 0; r < rows; ++r) {
                for (int64_t j = 0; j < cols; ++j)
                  c_tile[r * n_total + j] += tile[static_cast<std::size_t>(r * kNr + j)];
              }
            }
          }
        }
      }
    }
  }
}

template <typename T>
using GemmFn = void (*)(const GemmSize&, const T*, int64_t, int64_t, const T*, int64_t, int64_t, T*);

template <typename T>
void gemm_portable(const GemmSize& shape, const T* a, int64_t a_rows, int64_t a_cols, const T* b, int64_t b_rows,
                   int64_t b_cols, T* c) {
  gemm_blocked<T, static_cast<int>(16 / sizeof(T))>(shape, a, a_rows, a_cols, b, b_rows, b_cols, c);
}

#if defined(__x86_64__) && defined(__GNUC__)
// The same kernel compiled for AVX2 (8 floats per vector), chosen at run time.
template <typename T>
__attribute__((target("avx2"))) void gemm_avx2(const GemmSize& shape, const T* a, int64_t a_rows, int64_t a_cols,
                                               const T* b, int64_t b_rows, int64_t b_cols, T* c) {
  gemm_blocked<T, static_cast<int>(32 / sizeof(T))>(shape, a, a_rows, a_cols, b, b_rows, b_cols, c);
}
#endif

template <typename T>
GemmFn<T> best_gemm() {
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx2")) return gemm_avx2<T>;
#endif
  return gemm_portable<T>;
}

#if SHARDSCOPE_HAS_FMA_TARGET
// The kernel with each accumulation `acc += a * b` one fused multiply-add: every element of C is then the
// chain fma(a_k, b_k, ...) over k in order, rounded once per step, as XLA:CPU's code for a dot computes it.
template <typename T>
__attribute__((target("avx2"))) void gemm_avx2_fma(const GemmSize& shape, const T* a, int64_t a_rows, int64_t a_cols,
                                                   const T* b, int64_t b_rows, int64_t b_cols, T* c) {
  gemm_blocked<T, static_cast<int>(32 / sizeof(T)), true>(shape, a, a_rows, a_cols, b, b_rows, b_cols, c);
}
#endif

#ifdef SHARDSCOPE_HAVE_CBLAS
// An operand BLAS can read: row-major with a leading dimension, possibly transposed (column-major).
struct BlasOperand {
  CBLAS_TRANSPOSE transpose = CblasNoTrans;
  blasint leading = 0;
};

// (rows x cols) with element (i, j) at i * row_stride + j * col_stride; nullopt when BLAS cannot read it.
std::optional<BlasOperand> blas_operand(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride) {
  if (col_stride == 1 && row_stride >= std::max<int64_t>(cols, 1))
    return BlasOperand{CblasNoTrans, static_cast<blasint>(row_stride)};
  if (row_stride == 1 && col_stride >= std::max<int64_t>(rows, 1))
    return BlasOperand{CblasTrans, static_cast<blasint>(col_stride)};
  return std::nullopt;
}

// C = A . B + beta * C through OpenBLAS when both operands have a unit stride and sizes fit BLAS's int. With
// beta 0 BLAS never reads C, so C may be unfilled memory (no zero fill and no read of it before the product).
template <typename T>
bool blas_gemm(const GemmSize& shape, const T* a, int64_t a_rows, int64_t a_cols, const T* b, int64_t b_rows,
               int64_t b_cols, T* c, T beta) {
  constexpr int64_t kLimit = std::numeric_limits<blasint>::max();
  if (shape.m > kLimit || shape.n > kLimit || shape.k > kLimit || a_rows > kLimit || a_cols > kLimit ||
      b_rows > kLimit || b_cols > kLimit) {
    return false;
  }
  const auto lhs = blas_operand(shape.m, shape.k, a_rows, a_cols);
  const auto rhs = blas_operand(shape.k, shape.n, b_rows, b_cols);
  if (!lhs || !rhs) return false;
  const auto m = static_cast<blasint>(shape.m);
  const auto n = static_cast<blasint>(shape.n);
  const auto k = static_cast<blasint>(shape.k);
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, lhs->transpose, rhs->transpose, m, n, k, 1.0F, a, lhs->leading, b, rhs->leading, beta, c,
                n);
  } else {
    cblas_dgemm(CblasRowMajor, lhs->transpose, rhs->transpose, m, n, k, 1.0, a, lhs->leading, b, rhs->leading, beta, c,
                n);
  }
  return true;
}
#endif

// C += A . B, or C = A . B when `overwrite` (then C's prior contents, possibly unfilled, are never read).
// A product of depth k within one packed panel is each element's k products summed in order with fused
// multiply-adds when the processor has them (XLA's rounding); deeper ones go to BLAS, whose order is its own.
template <typename T>
void gemm_dispatch(const GemmSize& shape, const T* a, int64_t a_rows, int64_t a_cols, const T* b, int64_t b_rows,
                   int64_t b_cols, T* c, bool overwrite) {
#if SHARDSCOPE_HAS_FMA_TARGET
  if (shape.k <= kKc && has_fma_instructions()) {
    if (overwrite) std::fill_n(c, shape.m * shape.n, T{});
    // Row blocks on the thread pool: each element's chain is the same whichever thread computes it.
    const int64_t work = shape.m * shape.n * shape.k;
    const auto blocks = static_cast<int64_t>(
        work >= kParallelGemmWork ? std::min<std::size_t>(thread_count(), static_cast<std::size_t>(shape.m)) : 1);
    parallel_for(static_cast<std::size_t>(blocks), blocks > 1, [&](std::size_t index) {
      const auto block = static_cast<int64_t>(index);
      const int64_t first = shape.m * block / blocks;
      const int64_t last = shape.m * (block + 1) / blocks;
      if (first == last) return;
      gemm_avx2_fma<T>({last - first, shape.n, shape.k}, a + first * a_rows, a_rows, a_cols, b, b_rows, b_cols,
                       c + first * shape.n);
    });
    return;
  }
#endif
#ifdef SHARDSCOPE_HAVE_CBLAS
  if (blas_gemm(shape, a, a_rows, a_cols, b, b_rows, b_cols, c, overwrite ? T{0} : T{1})) return;
#endif
  if (overwrite) std::fill_n(c, shape.m * shape.n, T{});
  static const GemmFn<T> gemm = best_gemm<T>();
  gemm(shape, a, a_rows, a_cols, b, b_rows, b_cols, c);
}

}  // namespace

void gemm_accumulate(int64_t m, int64_t n, int64_t k, const float* a, int64_t a_rows, int64_t a_cols, const float* b,
                     int64_t b_rows, int64_t b_cols, float* c) {
  gemm_dispatch<float>({m, n, k}, a, a_rows, a_cols, b, b_rows, b_cols, c, false);
}

void gemm_accumulate(int64_t m, int64_t n, int64_t k, const double* a, int64_t a_rows, int64_t a_cols, const double* b,
                     int64_t b_rows, int64_t b_cols, double* c) {
  gemm_dispatch<double>({m, n, k}, a, a_rows, a_cols, b, b_rows, b_cols, c, false);
}

void gemm_assign(int64_t m, int64_t n, int64_t k, const float* a, int64_t a_rows, int64_t a_cols, const float* b,
                 int64_t b_rows, int64_t b_cols, float* c) {
  gemm_dispatch<float>({m, n, k}, a, a_rows, a_cols, b, b_rows, b_cols, c, true);
}

void gemm_assign(int64_t m, int64_t n, int64_t k, const double* a, int64_t a_rows, int64_t a_cols, const double* b,
                 int64_t b_rows, int64_t b_cols, double* c) {
  gemm_dispatch<double>({m, n, k}, a, a_rows, a_cols, b, b_rows, b_cols, c, true);
}

}  // namespace shardscope::structural
