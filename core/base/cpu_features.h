// Run-time checks of the processor's instruction sets, and the attribute that builds a function for AVX2 + FMA.
#pragma once

// A loop that rounds like XLA's code generator needs fused multiply-adds; std::fma is a library call per element
// unless the function is built for the FMA instruction set, so kernels keep a copy built for it and pick it when
// has_fma_instructions() says the processor runs it. GCC's -O2 vectorizes only loops whose trip count needs no
// remainder unless the cost model is dynamic; clang vectorizes these at -O2 already.
#if defined(__x86_64__) && defined(__GNUC__)
#define SHARDSCOPE_HAS_FMA_TARGET 1
#if defined(__clang__)
#define SHARDSCOPE_FMA_LOOP __attribute__((target("avx2,fma")))
#else
#define SHARDSCOPE_FMA_LOOP __attribute__((target("avx2,fma"), optimize("vect-cost-model=dynamic")))
#endif
#else
#define SHARDSCOPE_HAS_FMA_TARGET 0
#define SHARDSCOPE_FMA_LOOP
#endif

namespace shardscope {

inline bool has_fma_instructions() {
#if SHARDSCOPE_HAS_FMA_TARGET
  static const bool has = __builtin_cpu_supports("fma") != 0 && __builtin_cpu_supports("avx2") != 0;
  return has;
#else
  return false;
#endif
}

}  // namespace shardscope
