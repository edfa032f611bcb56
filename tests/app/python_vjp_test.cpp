// jax.vjp's VJP function from Python: a pytree of its residuals (arguments kept as given, then computed values),
// returned from and passed to jitted functions, with saveable_args, fwd_and_bwd and the older Partial form.
#include <doctest/doctest.h>

#include <string>

#include "app/python_test_support.h"
#include "python/host.h"

using python_test::printed;
using shardscope::python::run_cell;

namespace {

std::string prelude(const std::string& version) {
  return "import _shardscope\n_shardscope.set_jax_version('" + version +
         "')\nimport jax\nimport jax.numpy as jnp\nimport numpy as np\n"
         "def layer(W, x):\n  return jnp.tanh(x @ W)\n"
         "W1 = jnp.linspace(-1.0, 1.0, 9).reshape(3, 3)\nW2 = 0.5 * W1.T\n"
         "x0 = jnp.linspace(0.5, -0.75, 6).reshape(2, 3)\n" +
         python_test::kAttemptHelper;
}

}  // namespace

TEST_CASE("the VJP function keeps the arguments it reads as args_res and the computed residuals as leaves") {
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  // sin(x) * y reads y (for x's cotangent), cos x and sin x: x itself is not needed.
  CHECK(printed("y, f_vjp = jax.vjp(lambda x, y: jnp.sin(x) * y, jnp.float32(0.5), jnp.float32(2.0))\n"
                "print(type(f_vjp).__name__, f_vjp.args_res, len(jax.tree.leaves(f_vjp)))\n"
                "gx, gy = f_vjp(jnp.float32(1.0))\n"
                "print(bool(gx == 2.0 * jnp.cos(jnp.float32(0.5))), bool(gy == jnp.sin(jnp.float32(0.5))))") ==
        "VJP [NotNeeded(), Array(2., dtype=float32)] 3\nTrue True\n");
  // A closed-over array is a constant: no cotangent, and its value is a computed residual, not an argument.
  CHECK(printed("c = jnp.arange(3.0)\n_, f_vjp = jax.vjp(lambda x: x * c, jnp.ones(3))\n"
                "print(f_vjp.args_res, f_vjp(jnp.ones(3)))") ==
        "[NotNeeded()] (Array([0., 1., 2.], dtype=float32),)\n");
  CHECK(printed("print(jax.vjp(lambda x: (x, 2.0 * x), 1.0)[1].out_nzs)") == "(True, True)\n");
}

TEST_CASE("a VJP function crosses jit both ways and the backward pass equals grad's, bit for bit") {
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  REQUIRE(run_cell("traces = []\n"
                   "def fwd(W, x):\n  traces.append('fwd')\n  return jax.vjp(layer, W, x)\n"
                   "def bwd(f_vjp, ct):\n  traces.append('bwd')\n  return f_vjp(ct)\n"
                   "fwd, bwd = jax.jit(fwd), jax.jit(bwd)\n"
                   "x1, res1 = fwd(W1, x0)\nx2, res2 = fwd(W2, x1)\n"
                   "dW2, dx1 = bwd(res2, jnp.ones_like(x2))\ndW1, dx0 = bwd(res1, dx1)\n"
                   "def two_layers(W1, W2, x):\n  return jnp.sum(layer(W2, layer(W1, x)))\n"
                   "ref = jax.grad(two_layers, argnums=(0, 1, 2))(W1, W2, x0)\n")
              .ok());
  CHECK(printed("print([bool(jnp.allclose(a, b, rtol=1e-6, atol=1e-7)) for a, b in zip((dW1, dW2, dx0), ref)])") ==
        "[True, True, True]\n");
  // The forward and backward passes each compiled once: the second pullback has the first one's structure.
  CHECK(printed("print(traces)") == "['fwd', 'bwd']\n");
  // W and x, then tanh's one residual (1 - y) * (1 + y) from 0.11.2.
  CHECK(printed("print(type(res1).__name__, [a.shape for a in jax.tree.leaves(res1)])") ==
        "VJP [(3, 3), (2, 3), (2, 3)]\n");
  // fwd_and_bwd packages the same; an int argnums returns one cotangent.
  CHECK(
      printed("f, b = jax.fwd_and_bwd(layer, argnums=(0, 1))\ny, r = f(W1, x0)\ng = b(r, jnp.ones_like(y))\n"
              "g_ref = jax.vjp(layer, W1, x0)[1](jnp.ones_like(y))\n"
              "print([bool((a == c).all()) for a, c in zip(g, g_ref)])\n"
              "f0, b0 = jax.fwd_and_bwd(layer, argnums=0)\ny, r = f0(W1, x0)\nprint(b0(r, jnp.ones_like(y)).shape)") ==
      "[True, True]\n(3, 3)\n");
}

TEST_CASE("saveable_args leaves NotSaveable sentinels the caller must restore before applying") {
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  CHECK(printed("y, f_vjp = jax.vjp(layer, W1, x0, saveable_args=(False, True))\n"
                "print(f_vjp.args_res[0], len(jax.tree.leaves(f_vjp)) == len(jax.tree.leaves(jax.vjp(layer, W1, "
                "x0)[1])) - 1)") == "NotSaveable() True\n");
  const std::string error = printed("attempt(lambda: f_vjp(jnp.ones_like(y)))");
  CHECK(error.starts_with("ValueError the VJP function was applied before restoring its not-saveable residuals."));
  CHECK(error.find("  * the argument at position args[0] of the differentiated function layer at <cell ") !=
        std::string::npos);
  CHECK(printed("f_vjp.args_res[0] = W1\ng = f_vjp(jnp.ones_like(y))\n"
                "print([bool((a == b).all()) for a, b in zip(g, jax.vjp(layer, W1, x0)[1](jnp.ones_like(y)))])") ==
        "[True, True]\n");
  // A tuple-tree matches a dict argument by its number of children (keys in sorted order).
  CHECK(printed("d = {'hi': jnp.ones((4, 5)), 'bye': jnp.ones((3, 4))}\n"
                "_, g_vjp = jax.vjp(lambda d: d['bye'] @ d['hi'], d, saveable_args=((True, False),))\n"
                "print(g_vjp.args_res[0][1])\ng_vjp.args_res = [d]\n"
                "print(jax.tree.map(jnp.shape, g_vjp(jnp.ones((3, 5)))[0]))") ==
        "NotSaveable()\n{'bye': (3, 4), 'hi': (4, 5)}\n");
  CHECK(printed("attempt(lambda: jax.vjp(layer, W1, x0, saveable_args=(True,)))") ==
        "ValueError the saveable_args argument to jax.vjp must form a tree prefix of the corresponding values (up to "
        "pytree node types, so containers need only match in their number of children), but saveable_args has 1 "
        "children while the corresponding container has 2\n");
}

TEST_CASE("the VJP function checks its cotangent as JAX does") {
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  REQUIRE(run_cell("y, f_vjp = jax.vjp(lambda x: (x, 2 * x), jnp.ones(2))").ok());
  const std::string too_many = printed("attempt(lambda: f_vjp(jnp.ones(2), jnp.ones(2)))");
  CHECK(
      too_many.starts_with("TypeError \nThe function returned by `jax.vjp` applied to <lambda> was called with 2 "
                           "arguments,\n"));
  const std::string tree = printed("attempt(lambda: f_vjp([jnp.ones(2), jnp.ones(2)]))");
  CHECK(tree.starts_with("ValueError unexpected tree structure.\n"));
  CHECK(tree.find("  * out was a <class 'tuple'> in the original output, but a <class 'list'> here, so their Python "
                  "types differ.") != std::string::npos);
  CHECK(printed("attempt(lambda: f_vjp((jnp.ones(3), jnp.ones(2))))") ==
        "ValueError unexpected JAX type (e.g. shape/dtype) for argument to VJP function: got float32[3], but "
        "expected float32[2] because the corresponding output of the differentiated function had JAX type "
        "float32[2]\n");
}

TEST_CASE(
    "older profiles: a Partial of the residuals before 0.8.1, no saveable_args before 0.11, no fwd_and_bwd "
    "before 0.6.1") {
  REQUIRE(run_cell(prelude("0.7.0")).ok());
  CHECK(printed("_, f_vjp = jax.vjp(lambda x, y: jnp.sin(x) * y, 0.5, 2.0)\n"
                "print(type(f_vjp).__name__, len(jax.tree.leaves(f_vjp)))\n"
                "print(jax.jit(lambda f, ct: f(ct))(f_vjp, 1.0)[1])") == "Partial 3\n0.47942555\n");
  CHECK(printed("attempt(lambda: jax.vjp(layer, W1, x0, saveable_args=False))") ==
        "TypeError vjp() got an unexpected keyword argument 'saveable_args'\n");
  REQUIRE(run_cell(prelude("0.6.0")).ok());
  CHECK(printed("print(hasattr(jax, 'fwd_and_bwd'))") == "False\n");
}

TEST_CASE("tanh's derivative is one residual product from 0.11.2, and rounds as JAX's did before") {
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  // grad(tanh)(2.) as real JAX 0.11.2 prints it: (1 - t) * (1 + t), one rounding fewer than 1 - t - t * (1 - t).
  CHECK(printed("print(jax.grad(jnp.tanh)(2.0))\n"
                "_, f_vjp = jax.vjp(jnp.tanh, jnp.ones(3))\nprint(len(f_vjp.opaque_residuals))") == "0.07065082\n1\n");
  CHECK(printed("print(jax.make_jaxpr(jax.grad(jnp.tanh))(2.0))") ==
        "{ lambda ; a:f32[]. let\n    b:f32[] = tanh a\n    c:f32[] = sub 1.0:f32[] b\n    d:f32[] = add 1.0:f32[] b\n"
        "    e:f32[] = mul c d\n    f:f32[] = mul 1.0:f32[] e\n  in (f,) }\n");
  REQUIRE(run_cell(prelude("0.11.1")).ok());
  CHECK(printed("print(jax.grad(jnp.tanh)(2.0))\n"
                "_, f_vjp = jax.vjp(jnp.tanh, jnp.ones(3))\nprint(len(f_vjp.opaque_residuals))") == "0.070650816\n2\n");
}
