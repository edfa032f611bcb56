// jax.jacfwd and jax.jacrev as JAX builds them: the JVP (or the VJP's pullback) vmapped over an identity basis,
// unravelled into the input and output pytrees; vmap's out_axes as a prefix of the output tree; jvp's has_aux.
#include <doctest/doctest.h>

#include <string>

#include "app/python_test_support.h"
#include "python/host.h"

using python_test::printed;
using shardscope::python::run_cell;

namespace {

const std::string kPrelude =
    std::string("import _shardscope\n_shardscope.set_jax_version('0.11.2')\nimport jax\nimport jax.numpy as jnp\n") +
    python_test::kAttemptHelper;

}  // namespace

TEST_CASE("jacfwd and jacrev trace the function once and vmap one JVP or one pullback over the identity") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("f = lambda x: jnp.sin(x) * 2.0\nx = jnp.arange(4.0)\n").ok());
  // One sin however many elements: the basis is batched, not looped over.
  CHECK(printed("for jac in (jax.jacfwd, jax.jacrev):\n"
                "    text = str(jax.make_jaxpr(jac(f))(x))\n"
                "    print(text.count(' sin '), text.count(' cos '), text.count('split[axis='), 'f32[4,4]' in text)") ==
        "1 1 2 True\n1 1 2 True\n");
  CHECK(printed("print(bool(jnp.all(jax.jacfwd(f)(x) == jnp.diag(2.0 * jnp.cos(x)))), "
                "bool(jnp.all(jax.jacrev(f)(x) == jnp.diag(2.0 * jnp.cos(x)))))") == "True True\n");
  // Pytrees on both sides: the output tree on the outside, the inputs' inside, leaves of shape out + in.
  CHECK(printed("h = lambda x, y: {'p': x @ y, 's': jnp.sum(x)}\n"
                "for jac in (jax.jacfwd, jax.jacrev):\n"
                "    print(jax.tree.map(jnp.shape, jac(h, argnums=(0, 1))(jnp.ones((2, 3)), jnp.ones(3))))") ==
        "{'p': ((2, 2, 3), (2, 3)), 's': ((2, 3), (3,))}\n{'p': ((2, 2, 3), (2, 3)), 's': ((2, 3), (3,))}\n");
  // A Python float stays weakly typed; aux comes back beside the Jacobian.
  CHECK(printed("print(repr(jax.jacfwd(lambda x: x ** 2)(3.0)), repr(jax.jacrev(lambda x: x ** 2)(3.0)))") ==
        "Array(6., dtype=float32, weak_type=True) Array(6., dtype=float32, weak_type=True)\n");
  CHECK(printed("print(jax.jacfwd(lambda x: (x ** 2, {'a': x}), has_aux=True)(jnp.ones(2)))") ==
        "(Array([[2., 0.],\n       [0., 2.]], dtype=float32), {'a': Array([1., 1.], dtype=float32)})\n");
}

TEST_CASE("jacfwd and jacrev refuse inputs and outputs of the wrong kind with JAX's messages") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("attempt(lambda: jax.jacfwd(lambda x: x)(1))") ==
        "TypeError jacfwd requires real-valued inputs (input dtype that is a sub-dtype of np.floating), but got "
        "int32. For holomorphic differentiation, pass holomorphic=True. For differentiation of non-holomorphic "
        "functions involving complex inputs or integer inputs, use jax.jvp directly.\n");
  CHECK(printed("attempt(lambda: jax.jacrev(lambda x: x)(1))") ==
        "TypeError jacrev requires real- or complex-valued inputs (input dtype that is a sub-dtype of np.inexact), "
        "but got int32. If you want to use Boolean- or integer-valued inputs, use vjp or set allow_int to True.\n");
  // A pytree whose constructor converts its contents meets the specs JAX builds per leaf (P(None)).
  REQUIRE(run_cell("class Box:\n  def __init__(self, a):\n    self.a = jnp.asarray(a)\n"
                   "jax.tree_util.register_pytree_node(Box, lambda b: ((b.a,), None), lambda _, c: Box(*c))\n")
              .ok());
  CHECK(printed("attempt(lambda: jax.jacobian(lambda b: b)(Box(jnp.arange(5.0))))") ==
        "ValueError None is not a valid value for jnp.array\n");
}

TEST_CASE("vmap's out_axes is a prefix of the output tree, and jvp returns aux with has_aux") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("out = jax.vmap(lambda x: ({'a': x, 'b': 2 * x}, jnp.float32(1)), out_axes=({'a': 0, 'b': 1}, None))"
                "(jnp.ones((3, 2)))\n"
                "print(jax.tree.map(jnp.shape, out))") == "({'a': (3, 2), 'b': (2, 3)}, ())\n");
  CHECK(printed("attempt(lambda: jax.vmap(lambda x: (x, x, x), out_axes=(0, 0))(jnp.ones(3)))") ==
        "ValueError vmap out_axes specification must be a tree prefix of the corresponding value, got "
        "specification (0, 0) for value tree PyTreeDef((*, *, *)).\n");
  CHECK(printed("y, t, aux = jax.jvp(lambda x: (x ** 2, {'x': x}), (3.0,), (1.0,), has_aux=True)\n"
                "print(y, t, aux)") == "9.0 6.0 {'x': Array(3., dtype=float32, weak_type=True)}\n");
}
