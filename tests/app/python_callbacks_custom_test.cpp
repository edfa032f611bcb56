// jax.pure_callback / io_callback (eager, jit, sharded, vmap, and JAX's errors) and jax.custom_jvp / custom_vjp
// with vjp, jacfwd, jacrev and hessian, as the embedded jax package runs them.
#include <doctest/doctest.h>

#include <string>

#include "app/python_test_support.h"
#include "python/host.h"

using python_test::printed;
using shardscope::python::run_cell;

namespace {

constexpr const char* kPrelude =
    "import _shardscope\n_shardscope.set_jax_version('0.11.0')\n_shardscope.set_device_preset('cpu:8')\n"
    "import functools\nimport numpy as np\nimport jax\nimport jax.numpy as jnp\n"
    "from jax.experimental import io_callback\n"
    "calls = []\n"
    "def host_sin(x):\n    calls.append(np.shape(x))\n    return np.sin(x).astype(x.dtype)\n"
    "def f(x, method=None):\n"
    "    return jax.pure_callback(host_sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x, vmap_method=method)\n";

}  // namespace

TEST_CASE("pure_callback runs the host function once on whole values, eagerly, under jit and on sharded input") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("print(f(jnp.arange(3.)), jax.jit(f)(jnp.arange(3.)), calls)") ==
        "[0.        0.841471  0.9092974] [0.        0.841471  0.9092974] [(3,), (3,)]\n");
  // A sharded operand is gathered for the one call; the result is replicated.
  CHECK(printed("calls.clear()\nmesh = jax.make_mesh((8,), ('i',), axis_types=(jax.sharding.AxisType.Auto,))\n"
                "x = jax.device_put(jnp.arange(8.), jax.sharding.NamedSharding(mesh, jax.P('i')))\n"
                "y = jax.jit(f)(x)\nprint(calls, y.sharding.spec)\n"
                "print(jax.shard_map(f, mesh=mesh, in_specs=jax.P('i'), out_specs=jax.P('i'))(x)[:2], len(calls))") ==
        "[(8,)] P()\n[0.       0.841471] 9\n");
  // A call whose result nothing reads is dropped, as JAX's jit does.
  CHECK(printed("calls.clear()\njax.jit(lambda x: (f(x), 1.0)[1])(jnp.ones(2))\nprint(calls)") == "[]\n");
}

TEST_CASE("vmap of pure_callback follows vmap_method, differentiation and ordered io_callback raise JAX's errors") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("xs = jnp.arange(6.).reshape(3, 2)\n"
                "print(jax.vmap(functools.partial(f, method='sequential'))(xs)[2], calls)") ==
        "[-0.7568025 -0.9589243] [(2,), (2,), (2,)]\n");
  CHECK(printed("calls.clear()\nprint(jax.vmap(functools.partial(f, method='expand_dims'))(xs).shape, calls)") ==
        "(3, 2) [(3, 2)]\n");
  CHECK(printed("try:\n    jax.vmap(f)(xs)\nexcept NotImplementedError as e:\n    print(str(e)[-45:])") ==
        "or 'legacy_vectorized'. Got vmap_method=None.\n");
  CHECK(printed("try:\n    jax.grad(lambda x: f(x).sum())(jnp.ones(2))\nexcept ValueError as e:\n    print(e)") ==
        "Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use callbacks while taking gradients.\n");
  CHECK(printed("g = lambda x: io_callback(host_sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x, ordered=True)\n"
                "try:\n    jax.vmap(g)(xs)\nexcept ValueError as e:\n    print(e)") ==
        "Cannot `vmap` ordered IO callback.\n");
  CHECK(printed("try:\n    jax.jit(lambda x: jax.pure_callback(lambda v: np.zeros(5, np.float32), "
                "jax.ShapeDtypeStruct((2,), jnp.float32), x))(jnp.ones(2))\n"
                "except Exception as e:\n    print(type(e).__name__, 'Expected: float32[2], Actual: float32[5]' in "
                "str(e))") == "JaxRuntimeError True\n");
}

TEST_CASE("custom_jvp and custom_vjp: rules give the derivatives, including nondiff_argnums and second order") {
  REQUIRE(run_cell(kPrelude).ok());
  const std::string program =
      "@jax.custom_jvp\n"
      "def log1pexp(x):\n    return jnp.log(1. + jnp.exp(x))\n"
      "@log1pexp.defjvp\n"
      "def log1pexp_jvp(primals, tangents):\n"
      "    (x,), (t,) = primals, tangents\n"
      "    return log1pexp(x), (1 - 1 / (1 + jnp.exp(x))) * t\n"
      "print(jax.grad(log1pexp)(100.), jax.jit(jax.grad(log1pexp))(0.))\n"
      "@functools.partial(jax.custom_vjp, nondiff_argnums=(0,))\n"
      "def clip_grad(bound, x):\n    return x\n"
      "clip_grad.defvjp(lambda bound, x: (x, None), lambda bound, res, g: (jnp.clip(g, -bound, bound),))\n"
      "print(jax.grad(lambda x: 3. * clip_grad(0.5, x))(2.))\n"
      "@jax.custom_jvp\n"
      "def cube(x):\n    return x ** 3\n"
      "cube.defjvps(lambda t, ans, x: 3 * cube(x) / x * t)\n"
      "print(jax.hessian(cube)(2.), jax.jacfwd(cube)(jnp.arange(1., 3.)), jax.jacrev(cube)(jnp.arange(1., 3.)))\n";
  CHECK(printed(program) == "1.0 0.5\n0.5\n12.0 [[ 3.  0.]\n [ 0. 12.]] [[ 3.  0.]\n [ 0. 12.]]\n");
}

TEST_CASE("a custom function's rule runs once per differentiation that reaches it, and its body only elsewhere") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("@jax.custom_jvp\n"
                   "def s(x):\n    print('f')\n    return jnp.sin(x)\n"
                   "@s.defjvp\n"
                   "def s_jvp(primals, tangents):\n    print('jvp')\n"
                   "    (x,), (t,) = primals, tangents\n    return s(x), jnp.cos(x) * t\n")
              .ok());
  // Eagerly the body runs on the values as given (a Python float stays one); jit and vmap trace the body alone.
  CHECK(printed("print(s(3.))") == "f\n0.14112\n");
  CHECK(printed("print(jax.jit(s)(3.))\nprint(jax.vmap(s)(jnp.arange(2.)))") ==
        "f\n0.14112\nf\n[0.         0.84147096]\n");
  // A differentiation runs the rule, whose own call of s runs the body; a second order runs the rule twice.
  CHECK(printed("print(jax.grad(s)(3.))") == "jvp\nf\n-0.9899925\n");
  CHECK(printed("print(jax.grad(jax.grad(s))(3.))") == "jvp\njvp\nf\n-0.14112\n");
  CHECK(printed("print(jax.jvp(s, (3.,), (1.,))[1])") == "jvp\nf\n-0.9899925\n");
  CHECK(printed("@jax.custom_jvp\ndef sq(d):\n    return {'a': d['x'] ** 2}\n"
                "sq.defjvp(lambda p, t: (sq(*p), {'a': 2 * p[0]['x'] * t[0]['x']}))\nprint(sq({'x': 1.0}))") ==
        "{'a': 1.0}\n");
  // The rule sees concrete primals under grad of concrete values, as JAX runs it on them.
  CHECK(printed("@jax.custom_jvp\ndef piecewise(x):\n    return jnp.sin(x) if x > 0 else jnp.cos(x)\n"
                "@piecewise.defjvp\ndef piecewise_jvp(p, t):\n"
                "    x, = p\n    return piecewise(x), (2. if x > 0 else 3.) * t[0]\n"
                "print(jax.grad(piecewise)(1.), jax.grad(piecewise)(-1.))") == "2.0 3.0\n");
}

TEST_CASE("custom_vjp runs fwd under grad and bwd for the cotangents, and jvp runs fwd, then refuses") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("@jax.custom_vjp\n"
                   "def v(x):\n    print('f')\n    return jnp.sin(x)\n"
                   "def v_fwd(x):\n    print('fwd')\n    return v(x), jnp.cos(x)\n"
                   "def v_bwd(c, g):\n    print('bwd')\n    return (c * g,)\n"
                   "v.defvjp(v_fwd, v_bwd)\n")
              .ok());
  CHECK(printed("print(v(3.))") == "f\n0.14112\n");
  CHECK(printed("print(jax.grad(v)(3.))") == "fwd\nf\nbwd\n-0.9899925\n");
  CHECK(printed("try:\n    jax.jvp(v, (3.,), (1.,))\nexcept TypeError as e:\n    print(e)") ==
        "fwd\nf\ncan't apply forward-mode autodiff (jvp) to a custom_vjp function.\n");
  // A function passed as a non-differentiated argument of grad is closed over, not traced.
  CHECK(printed("@functools.partial(jax.custom_jvp, nondiff_argnums=(0,))\ndef app(g, x):\n    return g(x)\n"
                "app.defjvp(lambda g, p, t: (g(*p), 2. * t[0]))\n"
                "print(jax.grad(app, 1)(lambda x: x ** 3, 3.))") == "2.0\n");
}

TEST_CASE("jax.test_util.check_grads passes true derivatives to second order and catches a wrong rule") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("from jax.test_util import check_grads\n"
                "check_grads(lambda W, b: jnp.sum(jnp.tanh(W + b)), (jnp.arange(3.), 0.5), order=2)\n"
                "check_grads(lambda x: jnp.sin(x) * x, (jnp.ones((2, 2)),), order=2, modes=('rev', 'lin'))\n"
                "print('passed')") == "passed\n");
  CHECK(printed("@jax.custom_jvp\ndef wrong(x):\n    return x * 2.\n"
                "wrong.defjvp(lambda p, t: (wrong(p[0]), t[0] * 5.))\n"
                "for modes in (['fwd'], ['rev']):\n"
                "    try:\n        check_grads(wrong, (1.,), order=1, modes=modes)\n"
                "    except AssertionError as e:\n        print(str(e).splitlines()[2])") ==
        "JVP tangent\nVJP cotangent projection\n");
}
