// jax.jit's cache as JAX defines it: one trace per argument signature (tree structure, static arguments,
// shapes, dtypes, weak types, shardings); a repeated call runs the cached program without calling the
// Python function, so side effects such as print happen only while tracing.
#include <doctest/doctest.h>

#include <string>

#include "app/python_test_support.h"
#include "python/host.h"

using python_test::printed;
using shardscope::python::CellResult;
using shardscope::python::run_cell;

namespace {

constexpr const char* kPrelude =
    "import numpy as np\nimport jax\nimport jax.numpy as jnp\n"
    "from jax.sharding import PartitionSpec as P, NamedSharding\nmesh = jax.make_mesh((8,), ('x',))\n";

}  // namespace

TEST_CASE("a repeated call with the same signature does not trace again") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("@jax.jit\ndef f(x, y):\n    print('tracing')\n    return x * 2 + y\n") == "");
  // 2 * [0, 1, 2] + 1 = [1, 3, 5]; the print runs only for the first call.
  CHECK(printed("print(f(jnp.arange(3.0), jnp.ones(3)))\nprint(f(jnp.arange(3.0), jnp.ones(3)))\n"
                "print(f(jnp.arange(3.0), jnp.ones(3)))") == "tracing\n[1. 3. 5.]\n[1. 3. 5.]\n[1. 3. 5.]\n");
  // New values of the same types reuse the program: 2 * [5, 5, 5] + [0, 1, 2].
  CHECK(printed("print(f(jnp.array([5.0, 5.0, 5.0]), jnp.arange(3.0)))") == "[10. 11. 12.]\n");
  CHECK(printed("print(f._cache_size())") == "1\n");
}

TEST_CASE("shape, dtype, weak type and sharding changes trace again") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("@jax.jit\ndef g(x):\n    print('trace', x.shape, x.dtype)\n    return x + 1\n") == "");
  CHECK(printed("print(g(jnp.zeros(2)))") == "trace (2,) float32\n[1. 1.]\n");
  CHECK(printed("print(g(jnp.zeros(3)))") == "trace (3,) float32\n[1. 1. 1.]\n");
  CHECK(printed("print(g(jnp.zeros(3, jnp.int32)))") == "trace (3,) int32\n[1 1 1]\n");
  // Python scalars are weakly typed: every float shares one trace, an int is another type.
  CHECK(printed("print(g(1.5))\nprint(g(2.5))") == "trace () float32\n2.5\n3.5\n");
  CHECK(printed("print(g(7))") == "trace () int32\n8\n");
  // The same shape placed differently is a different signature.
  CHECK(printed("print(g(jax.device_put(jnp.zeros(8), NamedSharding(mesh, P('x')))))") ==
        "trace (8,) float32\n[1. 1. 1. 1. 1. 1. 1. 1.]\n");
  CHECK(printed("print(g(jax.device_put(jnp.ones(8), NamedSharding(mesh, P('x')))))") == "[2. 2. 2. 2. 2. 2. 2. 2.]\n");
  CHECK(printed("print(g(jax.device_put(jnp.ones(8), NamedSharding(mesh, P()))))") ==
        "trace (8,) float32\n[2. 2. 2. 2. 2. 2. 2. 2.]\n");
  CHECK(printed("print(g._cache_size())") == "7\n");
  CHECK(printed("g.clear_cache()\nprint(g(jnp.zeros(2)))") == "trace (2,) float32\n[1. 1.]\n");
}

TEST_CASE("static arguments are part of the key by value and type") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("def power(x, n):\n    print('trace', n)\n    return x ** n\n"
                "p = jax.jit(power, static_argnums=1)") == "");
  CHECK(printed("print(p(jnp.arange(3.0), 2))\nprint(p(jnp.arange(3.0), 3))\nprint(p(jnp.arange(3.0), 2))") ==
        "trace 2\n[0. 1. 4.]\ntrace 3\n[0. 1. 8.]\n[0. 1. 4.]\n");
  // 2.0 == 2 but has another type: JAX traces again.
  CHECK(printed("print(p(jnp.arange(3.0), 2.0))") == "trace 2.0\n[0. 1. 4.]\n");
  // By name: static_argnames, and a static position passed as a keyword.
  CHECK(printed("q = jax.jit(power, static_argnames='n')\nprint(q(jnp.arange(3.0), n=2))\n"
                "print(q(jnp.arange(3.0), n=2))\nprint(p(jnp.arange(3.0), n=3))") ==
        "trace 2\n[0. 1. 4.]\n[0. 1. 4.]\ntrace 3\n[0. 1. 8.]\n");
}

TEST_CASE("pytrees of arguments and results round-trip through the cache") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("@jax.jit\ndef h(params, x, scale=1.0):\n    print('trace')\n"
                "    return {'y': params['w'] * x + params['b'], 'parts': (x, scale * x)}\n") == "");
  const std::string call =
      "out = h({'w': jnp.full(2, 3.0), 'b': jnp.ones(2)}, jnp.arange(2.0), scale=2.0)\n"
      "print(sorted(out), out['y'], out['parts'][0], out['parts'][1])";
  // y = 3 * [0, 1] + 1; parts = (x, 2x).
  CHECK(printed(call) == "trace\n['parts', 'y'] [1. 4.] [0. 1.] [0. 2.]\n");
  CHECK(printed(call) == "['parts', 'y'] [1. 4.] [0. 1.] [0. 2.]\n");
  // Another structure (no keyword) is another entry.
  CHECK(printed("print(h({'w': jnp.ones(2), 'b': jnp.ones(2)}, jnp.ones(2))['y'])") == "trace\n[2. 2.]\n");
}

TEST_CASE("values a function reads at trace time are fixed in its program, as in JAX") {
  REQUIRE(run_cell(kPrelude).ok());
  // JAX's documented behaviour (Sharp Bits, pure functions): the global is read while tracing only.
  CHECK(printed("g_scale = 2.0\nscaled = jax.jit(lambda x: x * g_scale)\nprint(scaled(jnp.ones(2)))\n"
                "g_scale = 3.0\nprint(scaled(jnp.ones(2)))\nprint(scaled(jnp.ones(3)))") ==
        "[2. 2.]\n[2. 2.]\n[3. 3. 3.]\n");
  // A captured array works across calls.
  CHECK(printed("offset = jnp.arange(3.0)\nshift = jax.jit(lambda x: x + offset)\nprint(shift(jnp.ones(3)))\n"
                "print(shift(jnp.full(3, 2.0)))") == "[1. 2. 3.]\n[2. 3. 4.]\n");
}

TEST_CASE("traces are cached per function, so a new jit of the same function reuses the first trace") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed(
            "def noisy(x):\n    print('tracing')\n    return x + g_bias\ng_bias = 0.\n"
            "print(jax.jit(noisy)(4.))\ng_bias = 10.\nprint(jax.jit(noisy)(5.))\nprint(jax.jit(noisy)(jnp.ones(1)))") ==
        "tracing\n4.0\n5.0\ntracing\n[11.]\n");
  // Different jit parameters are a different cache.
  CHECK(printed("print(jax.jit(noisy, static_argnums=0)(1.))") == "tracing\n11.0\n");
}

TEST_CASE("jit inside transformations still traces and computes correctly") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("cube = jax.jit(lambda x: x ** 3)\nprint(jax.grad(cube)(2.0))\nprint(jax.grad(cube)(3.0))\n"
                "print(jax.vmap(cube)(jnp.arange(3.0)))\nprint(jax.jit(lambda x: cube(x) + 1)(2.0))\n"
                "print(cube(2.0))") == "12.0\n27.0\n[0. 1. 8.]\n9.0\n8.0\n");
}

TEST_CASE("eval_shape reports shapes without running anything") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("print(jax.jit(lambda x: jnp.zeros((1 << 40,)) + x).eval_shape(1.0))") ==
        "ShapeDtypeStruct(shape=(1099511627776,), dtype=float32)\n");
  CHECK(printed("from jax._src.jit import eval_shape\n"
                "print(eval_shape(lambda a, b: (a @ b, a.sum()), jax.ShapeDtypeStruct((1 << 20, 8), jnp.float32), "
                "jax.ShapeDtypeStruct((8, 1 << 20), jnp.float32)))") ==
        "(ShapeDtypeStruct(shape=(1048576, 1048576), dtype=float32), ShapeDtypeStruct(shape=(), dtype=float32))\n");
  CHECK(printed("print(eval_shape(lambda x: x * 2, 3.0))") ==
        "ShapeDtypeStruct(shape=(), dtype=float32, weak_type=True)\n");
}

TEST_CASE("lower and compile describe the partitioned program and run it") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("auto = jax.make_mesh((8,), ('x',), axis_types=(jax.sharding.AxisType.Auto,))\n"
                   "xs = jax.device_put(jnp.arange(32.0).reshape(8, 4), NamedSharding(auto, P('x')))\n"
                   "gram = jax.jit(lambda a: (a @ a.T).sum())\nlowered = gram.lower(xs)\ncompiled = lowered.compile()")
              .ok());
  const std::string text = printed("print(lowered.as_text())");
  CHECK(text.starts_with("# shardscope lowering"));
  // XLA's HloSharding text for rows split over 8 devices.
  CHECK(text.find("mhlo.sharding = \"{devices=[8,1]0,1,2,3,4,5,6,7}\"") != std::string::npos);
  // One (1, 4) float32 row block per device.
  CHECK(printed("print(compiled.memory_analysis().argument_size_in_bytes)") == "16\n");
  CHECK(printed("print(compiled.input_shardings[0][0].spec == P('x'))") == "True\n");
  // sum(x @ x.T) = |column sums|^2 = 112^2 + 120^2 + 128^2 + 136^2.
  CHECK(printed("print(compiled(xs), gram(xs))") == "61824.0 61824.0\n");
  CHECK(printed("print('flops' in compiled.cost_analysis())") == "True\n");
}

TEST_CASE("with mesh: gives bare PartitionSpecs a mesh, as JAX's resource environment does") {
  REQUIRE(run_cell(kPrelude).ok());
  // jax.make_mesh gives Explicit axes in the newest profile; a legacy-style Auto mesh, as `with mesh:` code uses.
  REQUIRE(run_cell("from jax.sharding import Mesh\nlegacy = Mesh(np.array(jax.devices()).reshape(2, 4), ('data', "
                   "'model'))\ndef g(x):\n    return jax.lax.with_sharding_constraint(x * 2, P(None, 'model'))\n")
              .ok());
  CHECK(printed("with legacy:\n    y = jax.jit(g)(jnp.ones((8, 8)))\nprint(y.sharding.spec, y.sharding.mesh.shape)") ==
        "P(None, 'model') OrderedDict([('data', 2), ('model', 4)])\n");  // newest profile prints P(...)
  // Outside the context there is no mesh to resolve P against: JAX's RuntimeError.
  const CellResult outside = run_cell("jax.jit(g)(jnp.ones((8, 8)))");
  CHECK_FALSE(outside.ok());
  CHECK(outside.error.find("RuntimeError") != std::string::npos);
  CHECK(outside.error.find("mesh context") != std::string::npos);
  // JAX 0.11 reads spec.partitions, which a plain tuple lacks; before 0.11 a tuple was a spec too.
  CHECK(run_cell("NamedSharding(legacy, ())")
            .error.find("AttributeError: 'tuple' object has no attribute "
                        "'partitions'") != std::string::npos);
  REQUIRE(run_cell("import _shardscope\n_shardscope.set_jax_version('0.5.1')").ok());
  CHECK(printed("print(NamedSharding(legacy, ()) == NamedSharding(legacy, P()))") == "True\n");
  REQUIRE(run_cell("_shardscope.set_jax_version('0.11.0')").ok());
}

TEST_CASE("truncated_normal stays inside its bounds with the truncated distribution's spread") {
  REQUIRE(run_cell(kPrelude).ok());
  // A standard normal cut to (-2, 2) has standard deviation 0.8796 (sqrt(1 - 2 * 2 * phi(2) / (2 * Phi(2) - 1))).
  CHECK(printed("t = np.asarray(jax.random.truncated_normal(jax.random.key(0), -2.0, 2.0, (200000,)))\n"
                "print(t.dtype, t.shape, bool(t.min() > -2), bool(t.max() < 2), abs(float(t.mean())) < 0.01, "
                "abs(float(t.std()) - 0.8796) < 0.005)") == "float32 (200000,) True True True True\n");
}

TEST_CASE("random samplers run on traced keys inside jit and agree with the eager samplers") {
  REQUIRE(run_cell(kPrelude).ok());
  // The same key sampled eagerly (core/random) and inside jit (a random_bits equation, then float ops): the same
  // bits for [0, 1); where a scale and offset apply, eager sampling fuses them as XLA:CPU does and the traced
  // program multiplies and adds separately: one rounding of the product apart (absolute, since -2 + 5u cancels).
  CHECK(printed("k = jax.random.key(7)\n"
                "a, b = np.asarray(jax.random.uniform(k, (3, 5))), np.asarray(jax.jit(jax.random.uniform, "
                "static_argnums=1)(k, (3, 5)))\n"
                "print(a.dtype, b.dtype, bool((a.view(np.uint32) == b.view(np.uint32)).all()))\n"
                "for f in (lambda k: jax.random.normal(k, (4, 8)), lambda k: jax.random.uniform(k, (64,), minval=-2.0, "
                "maxval=3.0)):\n"
                "    a, b = np.asarray(f(k)), np.asarray(jax.jit(f)(k))\n"
                "    print(bool((np.abs(a - b) <= 5e-7).all()))") == "float32 float32 True\nTrue\nTrue\n");
  // A jitted truncated normal stays in its open interval; a sampler of a dtype with no traced path says so.
  CHECK(printed("t = np.asarray(jax.jit(lambda k: jax.random.truncated_normal(k, -1.0, 1.0, (4096,)))(k))\n"
                "print(bool(t.min() > -1), bool(t.max() < 1))") == "True True\n");
  const CellResult half = run_cell("jax.jit(lambda k: jax.random.uniform(k, (2,), jnp.float16))(k)");
  CHECK(half.error.find("NotImplementedError: jax.random.uniform of float16 on a traced key") != std::string::npos);
}

TEST_CASE("an eager with_sharding_constraint holds the sharding as given, trailing None included") {
  REQUIRE(run_cell(kPrelude).ok());
  // JAX runs it as jit(identity, out_shardings=sharding), whose result carries that object.
  CHECK(printed("auto = jax.make_mesh((2, 4), ('a', 'b'), axis_types=(jax.sharding.AxisType.Auto,) * 2)\n"
                "print(jax.lax.with_sharding_constraint(jnp.ones((8, 4)), NamedSharding(auto, P('b', None)))"
                ".sharding.spec)") == "P('b', None)\n");
}

TEST_CASE("array refs: a jitted function's writes to an outside ref land on every call, inner refs are pure") {
  REQUIRE(run_cell("import jax, jax.numpy as jnp\n").ok());
  CHECK(printed("counts = jax.new_ref(jnp.zeros(3))\n"
                "@jax.jit\n"
                "def bump():\n"
                "    counts[1] += 1.\n"
                "print(counts)\nbump()\nbump()\nprint(counts)") ==
        "Ref([0., 0., 0.], dtype=float32)\nRef([0., 2., 0.], dtype=float32)\n");
  // A ref made inside the differentiated function is just state there.
  CHECK(printed("def through_ref(x):\n"
                "    r = jax.new_ref(0.)\n"
                "    r[...] = jnp.sin(x)\n"
                "    return r[...]\n"
                "print(jax.grad(through_ref)(1.0))") == "0.5403023\n");
  // Indexed reads and writes, then freeze.
  CHECK(printed("grid = jax.new_ref(jnp.arange(12.).reshape(3, 4))\n"
                "grid[1] = grid[0]\n"
                "grid[2, 3] = grid[1, 2]\n"
                "grid[jnp.array([1, 2]), jnp.array([0, 0])] = grid[jnp.array([0, 0]), jnp.array([1, 2])]\n"
                "print(jax.freeze(grid).tolist())") ==
        "[[0.0, 1.0, 2.0, 3.0], [1.0, 1.0, 2.0, 3.0], [2.0, 9.0, 10.0, 2.0]]\n");
  CHECK(printed("shared = jax.new_ref(0.0)\n"
                "def write(x):\n    shared[...] = x\n"
                "try:\n    jax.vmap(write)(jnp.arange(3.0))\nexcept Exception as e:\n    print(e)") ==
        "performing a set/swap operation with vmapped value on an unbatched array reference of type "
        "Ref{float32[]}. Move the array reference to be an argument to the vmapped function?\n");
  // A ref passed to vmap is mapped along its leading axis: each instance writes its own row.
  CHECK(printed("out = jax.new_ref(jnp.zeros(3))\n"
                "def scale_into(x, out_ref):\n    out_ref[...] = 2.0 * x\n"
                "jax.vmap(scale_into)(jnp.arange(3.0), out)\nprint(out[...])") == "[0. 2. 4.]\n");
}

TEST_CASE("linear_transpose transposes a linear function given example shapes and dtypes") {
  REQUIRE(run_cell("import jax, jax.numpy as jnp\n").ok());
  CHECK(printed("scalar = jax.ShapeDtypeStruct(shape=(), dtype=jnp.float32)\n"
                "print(jax.linear_transpose(lambda x, y: 0.5 * x - 0.5 * y, scalar, scalar)(1.0))") ==
        "(Array(0.5, dtype=float32), Array(-0.5, dtype=float32))\n");
  CHECK(printed("m = jnp.arange(6.).reshape(2, 3)\n"
                "print(jax.linear_transpose(lambda v: m @ v, jnp.ones(3))(jnp.ones(2))[0].tolist())") ==
        "[3.0, 5.0, 7.0]\n");
  CHECK(printed("try:\n    jax.linear_transpose(lambda v: v, jnp.ones(3) > 0)\nexcept TypeError as e:\n    print(e)") ==
        "linear_transpose only supports [float or complex] -> [float or complex], and integer -> integer functions, "
        "but got [dtype('bool')] -> [dtype('bool')].\n");
}

TEST_CASE("jit names a namedtuple field in its non-array argument error, and jnp.array refuses None") {
  REQUIRE(run_cell("import collections\nimport jax, jax.numpy as jnp\n"
                   "Box = collections.namedtuple('Box', ['name', 'a'])\n")
              .ok());
  const std::string error = printed(
      "try:\n    jax.jit(lambda x: x.a)(Box('box', 1.0))\nexcept TypeError as e:\n"
      "    print(e)");
  CHECK(error.find("was passed to the function at path x.name") != std::string::npos);
  CHECK(printed("for make in (lambda: jnp.array([1.0, None]), lambda: jnp.asarray(None)):\n"
                "    try:\n        make()\n    except ValueError as e:\n        print(e)") ==
        "None is not a valid value for jnp.array\nNone is not a valid value for jnp.array\n");
}

TEST_CASE("jax_debug_nans: a NaN from an eager op raises, a jitted one reruns its function op by op to find it") {
  REQUIRE(run_cell("import jax, jax.numpy as jnp\n"
                   "def log_of_negative(x):\n    return jnp.log(-3 * jnp.square(x))\n")
              .ok());
  CHECK(printed("jax.config.update('jax_debug_nans', True)\n"
                "try:\n    log_of_negative(5.)\nexcept FloatingPointError as e:\n    print(type(e).__name__, e)") ==
        "Invalid nan value encountered in the output of a jax.jit function. Calling the de-optimized version.\n"
        "FloatingPointError invalid value (nan) encountered in log\n");
  CHECK(printed("try:\n    jax.jit(log_of_negative)(5.)\nexcept FloatingPointError as e:\n    print(e)") ==
        "Invalid nan value encountered in the output of a jax.jit function. Calling the de-optimized version.\n"
        "Invalid nan value encountered in the output of a jax.jit function. Calling the de-optimized version.\n"
        "invalid value (nan) encountered in log\n");
  CHECK(printed("with jax.debug_nans(False):\n    print(jax.jit(log_of_negative)(5.))\n"
                "print(jax.config.jax_debug_nans)\njax.config.update('jax_debug_nans', False)\n"
                "print(log_of_negative(5.))") == "nan\nTrue\nnan\n");
}
