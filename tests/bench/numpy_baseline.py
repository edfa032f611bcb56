#!/usr/bin/env python3
"""numpy (OpenBLAS) figures for the same workloads as engine_bench.cpp, measured in the same session."""
import json
import time

import numpy as np
from threadpoolctl import threadpool_info


# Process CPU seconds (all threads) of the fastest run, next to its wall time: on a loaded machine the
# wall time mostly measures waiting, the CPU time what the work cost.
CPU = {}


def best_of(fn, repeats=5, name=None):
    fn()
    runs = []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        runs.append((time.perf_counter() - start, time.process_time() - start_cpu))
    wall, cpu = min(runs)
    if name:
        CPU[name] = cpu
    return wall


def main():
    x = (np.arange(32 * 1024 * 1024, dtype=np.float32) % 1000) * np.float32(0.001)
    sin_affine = best_of(lambda: 2 * np.sin(x) + 1, name="sin_affine_32M_cpu_s")
    v = (np.arange(8 * 1250000 * 3, dtype=np.float32) % 1000).reshape(8, 1250000, 3) * np.float32(0.001)
    einsum = best_of(lambda: np.einsum("dbi,dbi->db", v, v), name="einsum_8x1250000x3_cpu_s")
    a = (np.arange(2048 * 2048, dtype=np.float32) % 1000).reshape(2048, 2048) * np.float32(0.001)
    matmul = best_of(lambda: a @ a, name="matmul_2048_cpu_s")
    p = (np.arange(1024 * 256, dtype=np.float32) % 1000).reshape(1024, 256) * np.float32(0.001)
    q = (np.arange(256 * 1024, dtype=np.float32) % 1000).reshape(256, 1024) * np.float32(0.001)
    depth256 = best_of(lambda: p @ q, name="matmul_1024_depth256_cpu_s")
    small = np.ones((4, 8), np.float32)
    small_add = best_of(lambda: [small + 1 for _ in range(1000)]) / 1000
    print(json.dumps({
        "numpy": np.__version__,
        "blas": [{k: info.get(k) for k in ("internal_api", "version", "num_threads", "architecture")}
                 for info in threadpool_info()],
        "sin_affine_32M_s": sin_affine,
        "einsum_8x1250000x3_s": einsum,
        "matmul_2048_gflops": 2 * 2048 ** 3 / matmul / 1e9,
        "matmul_1024_depth256_gflops": 2 * 1024 * 256 * 1024 / depth256 / 1e9,
        "small_add_4x8_s": small_add,
        **CPU,
    }, indent=2))


if __name__ == "__main__":
    main()
