// make_jaxpr's object model: Jaxpr (ClosedJaxpr before JAX 0.11), equations with their primitives and params,
// variables with their avals, literals, eval_jaxpr and jaxpr_as_fun running a jaxpr equation by equation.
#include <doctest/doctest.h>

#include <string>

#include "app/python_test_support.h"
#include "python/host.h"

using python_test::kAttemptHelper;
using python_test::printed;
using shardscope::python::run_cell;

namespace {

constexpr const char* kPrelude =
    "import _shardscope\n_shardscope.set_jax_version('0.11.2')\n_shardscope.set_device_preset('cpu:8')\n"
    "import numpy as np\nimport jax\nimport jax.numpy as jnp\nfrom jax.extend import core as xcore\n";

}  // namespace

TEST_CASE("a jaxpr's equations, variables, literals and avals as JAX 0.11's merged Jaxpr exposes them") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("cj = jax.make_jaxpr(lambda a, b: jnp.sin(a) * b + 1.0)(jnp.ones(3), 2.0)\n"
                "print(type(cj).__name__, type(cj.jaxpr).__name__, cj.jaxpr is cj)\n"
                "print(cj.in_avals, cj.out_avals, cj.consts, cj.literals)\n"
                "print(len(cj.eqns), [e.primitive.name for e in cj.eqns], type(cj.eqns[0].primitive).__name__)\n"
                "print(cj.eqns[0])\n"
                "add = cj.eqns[3]\n"
                "print([type(v).__name__ for v in add.invars], add.invars[1], add.invars[1].aval)\n"
                "print(add.invars[0] is cj.eqns[2].outvars[0], cj.eqns[0].invars[0] is cj.invars[0])\n"
                "print(cj.invars[1].aval.weak_type, str(cj.outvars[0].aval), repr(cj.in_avals[1]))") ==
        "Jaxpr Jaxpr True\n"
        "[ShapedArray(float32[3]), ShapedArray(float32[], weak_type=True)] [ShapedArray(float32[3])] [] []\n"
        "4 ['sin', 'convert_element_type', 'mul', 'add'] Primitive\n"
        "a:f32[3] = sin b\n"
        "['Var', 'Literal'] Literal(1.0) float32[]\n"
        "True True\n"
        "True float32[3] ShapedArray(float32[], weak_type=True)\n");
}

TEST_CASE("a nested jit's jaxpr param is a Jaxpr printed on its own, and return_shape gives the output structure") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("cj = jax.make_jaxpr(lambda a: jax.jit(lambda b: b * 2)(a) + 1)(jnp.ones(3))\n"
                "inner = cj.eqns[0].params['jaxpr']\n"
                "print(cj.eqns[0].primitive.name, type(inner).__name__, inner)\n"
                "print(jax.make_jaxpr(lambda a: {'s': a.sum()}, return_shape=True)(jnp.ones((2, 3)))[1])") ==
        "jit Jaxpr { lambda ; a:f32[3]. let b:f32[3] = mul a 2.0:f32[] in (b,) }\n"
        "{'s': ShapeDtypeStruct(shape=(), dtype=float32)}\n");
}

TEST_CASE("closed-over arrays are the jaxpr's consts, and eval_jaxpr runs every equation, through jit too") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("w = jnp.arange(6.).reshape(2, 3) / 16\n"
                "f = lambda a: jnp.tanh(a @ w.T).sum() + jax.jit(jnp.sin)(a).sum()\n"
                "cj = jax.make_jaxpr(f)(jnp.ones((4, 3)))\n"
                "print(len(cj.consts), len(cj.constvars), bool((cj.consts[0] == w).all()))\n"
                "x = jnp.arange(12.).reshape(4, 3) / 16\n"
                "got = jax.core.eval_jaxpr(cj.jaxpr, cj.consts, x)\n"
                "print(len(got), bool(jnp.allclose(got[0], f(x))), bool(jnp.allclose(xcore.jaxpr_as_fun(cj)(x)[0], "
                "f(x))))") == "1 1 True\n1 True True\n");
}

TEST_CASE("before JAX 0.11 make_jaxpr gives a ClosedJaxpr around an open Jaxpr, in jax.core too") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell(kAttemptHelper).ok());
  REQUIRE(run_cell("_shardscope.set_jax_version('0.4.30')\n").ok());
  CHECK(printed("cj = jax.make_jaxpr(lambda a: jnp.cos(a) * 3)(jnp.ones(2))\n"
                "print(type(cj).__name__, type(cj.jaxpr).__name__, isinstance(cj, jax.core.ClosedJaxpr))\n"
                "print(cj.in_avals, cj.eqns[1].params, str(cj) == str(cj.jaxpr))\n"
                "print(jax.core.eval_jaxpr(cj.jaxpr, cj.consts, jnp.zeros(2)))") ==
        "ClosedJaxpr Jaxpr True\n[ShapedArray(float32[2])] {} True\n[Array([3., 3.], dtype=float32)]\n");
  REQUIRE(run_cell("_shardscope.set_jax_version('0.11.2')\n").ok());
  CHECK(printed("attempt(lambda: jax.core.ClosedJaxpr)\nattempt(lambda: jax.core.Tracer)\n"
                "attempt(lambda: xcore.Primitive('mine').def_impl(lambda x: x))") ==
        "AttributeError module 'jax.core' has no attribute 'ClosedJaxpr'\n"
        "NotImplementedError jax.core.Tracer is not supported by shardscope\n"
        "NotImplementedError defining new primitives (mine.def_impl) is not supported by shardscope\n");
}
