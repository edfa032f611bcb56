// Python-level benchmarks: jax calls timed through the C API in the embedded interpreter, against numpy in
// the same process and against the same engine work done from C++ (the difference is the Python layer's cost).
#include <benchmark/benchmark.h>
#include <pybind11/embed.h>

#include "api/numpy.h"
#include "api/transforms.h"
#include "python/convert.h"
#include "python/host.h"

namespace py = pybind11;

namespace {

using shardscope::api::Value;

// The objects the benchmarks call: a (4, 8) float32 array sharded 8 ways (columns over a 1-D mesh of the
// default preset's 8 devices), a second one like it, a compiled jit of x + y, and numpy copies.
constexpr const char* kSetup = R"(
import operator, sys, types
import numpy as np
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((8,), ('x',))
sharding = NamedSharding(mesh, P(None, 'x'))
x = jax.device_put(jnp.arange(32, dtype=jnp.float32).reshape(4, 8), sharding)
y = jax.device_put(jnp.ones((4, 8), jnp.float32), sharding)
add_jit = jax.jit(lambda a, b: a + b)
assert (np.asarray(add_jit(x, y)) == np.arange(32).reshape(4, 8) + 1).all()
a = np.arange(32, dtype=np.float32).reshape(4, 8)
b = np.ones((4, 8), np.float32)
sys.modules['_pybench'] = types.SimpleNamespace(add=operator.add, x=x, y=y, add_jit=add_jit, a=a, b=b)
)";

// The setup's namespace; the interpreter starts on first use and lives until the process exits.
py::object bench_namespace() {
  static const bool ready = [] {
    shardscope::python::start_interpreter();
    const shardscope::python::CellResult result = shardscope::python::run_cell(kSetup);
    if (!result.ok()) throw std::runtime_error("benchmark setup failed:\n" + result.error);
    return true;
  }();
  (void)ready;
  return py::module_::import("sys").attr("modules")["_pybench"];
}

// Calls `fn(first, second)` through PyObject_Call per iteration.
void time_call(benchmark::State& state, const char* fn, const char* first, const char* second) {
  const py::object ns = bench_namespace();
  const py::object callable = ns.attr(fn);
  const py::tuple args = py::make_tuple(ns.attr(first), ns.attr(second));
  for (auto _ : state) {
    PyObject* result = PyObject_Call(callable.ptr(), args.ptr(), nullptr);
    if (result == nullptr) throw py::error_already_set();
    Py_DECREF(result);
  }
}

Value engine_value(const char* name) {
  return bench_namespace().attr(name).cast<const shardscope::python::PyValue&>().value();
}

// Eager `x + y` from Python: operator dispatch, conversion, the engine's eager add, the result object.
void BM_PyEagerAdd_4x8_8way(benchmark::State& state) { time_call(state, "add", "x", "y"); }
BENCHMARK(BM_PyEagerAdd_4x8_8way)->Unit(benchmark::kMicrosecond)->MeasureProcessCPUTime()->UseRealTime();

// The same eager add called from C++ on the same arrays: the engine's share of the above.
void BM_EngineEagerAdd_4x8_8way(benchmark::State& state) {
  const Value x = engine_value("x");
  const Value y = engine_value("y");
  for (auto _ : state) benchmark::DoNotOptimize(shardscope::api::jnp::add(x, y));
}
BENCHMARK(BM_EngineEagerAdd_4x8_8way)->Unit(benchmark::kMicrosecond)->MeasureProcessCPUTime()->UseRealTime();

// A call of an already-compiled jit(lambda a, b: a + b) from Python (a cache hit: no tracing).
void BM_PyJitCall_4x8_8way(benchmark::State& state) { time_call(state, "add_jit", "x", "y"); }
BENCHMARK(BM_PyJitCall_4x8_8way)->Unit(benchmark::kMicrosecond)->MeasureProcessCPUTime()->UseRealTime();

// The same traced program run from C++: the engine's share of a compiled call.
void BM_EngineJitProgram_4x8_8way(benchmark::State& state) {
  const std::vector<Value> args = {engine_value("x"), engine_value("y")};
  const shardscope::api::JitProgram program = shardscope::api::trace_jit(
      [](const std::vector<Value>& in) { return std::vector<Value>{shardscope::api::jnp::add(in[0], in[1])}; }, args,
      shardscope::api::JitSpec{});
  for (auto _ : state) benchmark::DoNotOptimize(shardscope::api::run_jit_program(program, args));
}
BENCHMARK(BM_EngineJitProgram_4x8_8way)->Unit(benchmark::kMicrosecond)->MeasureProcessCPUTime()->UseRealTime();

// numpy's a + b on the same (4, 8) float32 data, called the same way: the baseline.
void BM_NumpyAdd_4x8(benchmark::State& state) { time_call(state, "add", "a", "b"); }
BENCHMARK(BM_NumpyAdd_4x8)->Unit(benchmark::kMicrosecond)->MeasureProcessCPUTime()->UseRealTime();

}  // namespace
