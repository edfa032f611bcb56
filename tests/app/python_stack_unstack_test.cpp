// jnp.stack / jnp.unstack and jax.lax.stack / unstack per JAX profile: the stack and unstack primitives from
// 0.10.1 (expand_dims + concatenate and split + squeeze before), promotion, errors, jit/vmap/grad and sharding.
#include <doctest/doctest.h>

#include <string>

#include "app/python_test_support.h"
#include "python/host.h"

using python_test::printed;
using shardscope::python::run_cell;

namespace {

std::string prelude(const std::string& version) {
  return "import _shardscope\n_shardscope.set_jax_version('" + version +
         "')\n_shardscope.set_device_preset('cpu:8')\n"
         "import numpy as np\nimport jax\nimport jax.numpy as jnp\nfrom jax import lax\n"
         "from jax.sharding import PartitionSpec as P, NamedSharding, AxisType\n"
         "x3 = jnp.arange(3.0)\n"
         "def attempt(thunk):\n"
         "    try:\n"
         "        print(thunk())\n"
         "    except Exception as ex:\n"
         "        print(type(ex).__name__, ex)\n";
}

}  // namespace

TEST_CASE("jnp.stack and jnp.unstack bind the stack and unstack primitives from JAX 0.10.1") {
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  CHECK(printed("print(jax.make_jaxpr(lambda x, y: jnp.stack([x, y]))(x3, x3))") ==
        "{ lambda ; a:f32[3] b:f32[3]. let c:f32[2,3] = stack[axis=0] a b in (c,) }\n");
  CHECK(printed("print(jax.make_jaxpr(lambda x: jnp.unstack(x))(jnp.ones((2, 3))))") ==
        "{ lambda ; a:f32[2,3]. let b:f32[3] c:f32[3] = unstack[axis=0] a in (b, c) }\n");
  // Mixed dtypes promote first; the new axis may be negative.
  CHECK(printed("print(jax.make_jaxpr(lambda i, f: jnp.stack([i, f], axis=-1))(jnp.arange(3), x3))") ==
        "{ lambda ; a:i32[3] b:f32[3]. let\n"
        "    c:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] a\n"
        "    d:f32[3,2] = stack[axis=1] c b\n"
        "  in (d,) }\n");
  CHECK(printed("s = jnp.stack([jnp.arange(3), jnp.ones(3)])\nprint(s.dtype, s.tolist())") ==
        "float32 [[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]]\n");
  CHECK(printed("print(repr(jnp.stack([1, 2.5])))") == "Array([1. , 2.5], dtype=float32, weak_type=True)\n");
  CHECK(printed("print(jnp.stack([x3, x3 + 1], axis=1, dtype=jnp.int32).tolist())") == "[[0, 1], [1, 2], [2, 3]]\n");
  // One array stacks its rows without unstacking them: expand_dims, then the reshape that concatenates them.
  CHECK(printed("print(jax.make_jaxpr(lambda a: jnp.stack(a, axis=1))(jnp.ones((2, 3))))") ==
        "{ lambda ; a:f32[2,3]. let\n"
        "    b:f32[2,3,1] = broadcast_in_dim[broadcast_dimensions=(0, 1)] a\n"
        "    c:f32[3,2] = reshape[dimensions=(1, 0, 2) new_sizes=(3, 2) sharding=None] b\n"
        "  in (c,) }\n");
  CHECK(printed("print(jnp.stack(jnp.arange(6).reshape(2, 3), axis=1).tolist())") == "[[0, 3], [1, 4], [2, 5]]\n");
  // jnp.select stacks its conditions as JAX's does.
  CHECK(printed("print('stack[axis=0]' in str(jax.make_jaxpr(lambda c, v: jnp.select([c], [v]))(x3 > 1, x3)))") ==
        "True\n");

  REQUIRE(run_cell(prelude("0.10.0")).ok());
  CHECK(printed("print(jax.make_jaxpr(lambda x, y: jnp.stack([x, y]))(x3, x3))") ==
        "{ lambda ; a:f32[3] b:f32[3]. let\n"
        "    c:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] a\n"
        "    d:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] b\n"
        "    e:f32[2,3] = concatenate[dimension=0] c d\n"
        "  in (e,) }\n");
  CHECK(printed("print(jax.make_jaxpr(lambda x: jnp.unstack(x))(jnp.ones((2, 3))))") ==
        "{ lambda ; a:f32[2,3]. let\n"
        "    b:f32[1,3] c:f32[1,3] = split[axis=0 sizes=(1, 1)] a\n"
        "    d:f32[3] = squeeze[dimensions=(0,)] b\n"
        "    e:f32[3] = squeeze[dimensions=(0,)] c\n"
        "  in (d, e) }\n");
  CHECK(printed("print(jnp.stack([jnp.arange(2), jnp.ones(2)], axis=1).tolist())") == "[[0.0, 1.0], [1.0, 1.0]]\n");
}

TEST_CASE("jax.lax.stack and jax.lax.unstack exist from JAX 0.10.1 and canonicalize the axis") {
  REQUIRE(run_cell(prelude("0.10.0")).ok());
  CHECK(printed("attempt(lambda: jax.lax.stack)") == "AttributeError module 'jax.lax' has no attribute 'stack'\n");
  CHECK(printed("attempt(lambda: lax.unstack)") == "AttributeError module 'jax.lax' has no attribute 'unstack'\n");
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  CHECK(printed("print(lax.stack.__name__, lax.unstack.__name__)") == "stack unstack\n");
  CHECK(printed("print(lax.stack([jnp.array([1, 2]), jnp.array([3, 4])], axis=-1).tolist())") == "[[1, 3], [2, 4]]\n");
  CHECK(printed(
            "u = lax.unstack(jnp.array([[1, 2], [3, 4]]), axis=1)\nprint(type(u).__name__, [a.tolist() for a in u])") ==
        "tuple [[1, 3], [2, 4]]\n");
  CHECK(printed("print(jax.make_jaxpr(lambda x: lax.unstack(x, -1))(jnp.ones((2, 2))))") ==
        "{ lambda ; a:f32[2,2]. let b:f32[2] c:f32[2] = unstack[axis=1] a in (b, c) }\n");
}

TEST_CASE("stack and unstack raise JAX's errors for bad shapes, dtypes and axes") {
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  CHECK(printed("attempt(lambda: jnp.stack([jnp.ones(2), jnp.ones(3)]))") ==
        "ValueError All input arrays must have the same shape. Got (2,), (3,).\n");
  CHECK(printed("attempt(lambda: jnp.stack([jnp.ones(2), jnp.ones((2, 1))], axis=1))") ==
        "ValueError Cannot stack arrays with different numbers of dimensions: got (2,), (2, 1).\n");
  CHECK(printed("attempt(lambda: lax.stack([jnp.ones(2), jnp.ones(2, jnp.int32)]))") ==
        "TypeError lax.stack requires arguments to have the same dtypes, got float32, int32.\n");
  CHECK(printed("attempt(lambda: jnp.stack([]))") == "ValueError Need at least one array to stack.\n");
  CHECK(printed("attempt(lambda: jnp.stack([x3, x3], axis=2))") ==
        "ValueError axis 2 is out of bounds for array of dimension 2\n");
  CHECK(printed("attempt(lambda: jnp.unstack(jnp.float32(1)))") ==
        "ValueError axis 0 is out of bounds for array of dimension 0\n");
  CHECK(printed("attempt(lambda: jnp.unstack([1, 2]))") ==
        "TypeError unstack requires ndarray or scalar arguments, got <class 'list'> at position 0.\n");
  REQUIRE(run_cell(prelude("0.10.0")).ok());
  CHECK(printed("attempt(lambda: jnp.stack([jnp.ones(2), jnp.ones(3)]))") ==
        "ValueError All input arrays must have the same shape.\n");
  CHECK(printed("attempt(lambda: jnp.unstack(jnp.float32(1)))") ==
        "ValueError Unstack requires arrays with rank > 0, however a scalar array was passed.\n");
}

TEST_CASE("unstack under jit, vmap and grad, and stack's gradient unstacks the cotangent") {
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  CHECK(printed("print([a.tolist() for a in jax.jit(lambda x: jnp.unstack(x, axis=1))(jnp.arange(6.).reshape(2, "
                "3))])") == "[[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]\n");
  CHECK(printed("print(jax.make_jaxpr(jax.vmap(jnp.unstack))(jnp.ones((5, 2, 3))))") ==
        "{ lambda ; a:f32[5,2,3]. let b:f32[5,3] c:f32[5,3] = unstack[axis=1] a in (b, c) }\n");
  CHECK(printed("print([a.tolist() for a in jax.vmap(jnp.unstack, in_axes=1)(jnp.arange(6.).reshape(2, 3))])") ==
        "[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]\n");
  CHECK(printed("print(jax.grad(lambda x: (jnp.unstack(x)[1] ** 2).sum())(jnp.arange(6.).reshape(2, 3)).tolist())") ==
        "[[0.0, 0.0, 0.0], [6.0, 8.0, 10.0]]\n");
  const std::string transposed =
      printed("print(jax.make_jaxpr(jax.grad(lambda x: jnp.unstack(x)[0].sum()))(x3.reshape(3, 1)))");
  CHECK(transposed.find("= stack[axis=0] ") != std::string::npos);
  CHECK(printed("print([g.tolist() for g in jax.grad(lambda x, y: (jnp.stack([x, y * 2], axis=1) ** 2).sum(), "
                "argnums=(0, 1))(x3, x3 + 1)])") == "[[0.0, 2.0, 4.0], [8.0, 16.0, 24.0]]\n");
  CHECK(printed("print(jax.vmap(lambda a, b: jnp.stack([a, b]), in_axes=(0, None))(jnp.ones((4, 3)), x3).shape)") ==
        "(4, 2, 3)\n");
}

TEST_CASE("stack and unstack shardings: Explicit types, and an eager gradient keeps the cotangent's type") {
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  REQUIRE(run_cell("mesh = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Explicit, AxisType.Explicit))\n"
                   "a = jax.device_put(jnp.arange(32.).reshape(8, 4), NamedSharding(mesh, P('x', 'y')))\n"
                   "d = jax.device_put(jnp.arange(24.).reshape(2, 12), NamedSharding(mesh, P(None, 'x')))\n")
              .ok());
  CHECK(printed("with jax.set_mesh(mesh):\n    print(jax.typeof(jnp.stack([a, a], axis=1)))") ==
        "float32[8@x,2,4@y]\n");
  CHECK(printed("with jax.set_mesh(mesh):\n    attempt(lambda: jnp.unstack(a, axis=1))") ==
        "ShardingTypeError unstack operand cannot be sharded on the unstacking axis 1. Got operand "
        "type=f32[8@x,4@y]\n");
  // The unused result's zero cotangent is typed like the used one's, so the stack of cotangents type-checks.
  CHECK(printed("with jax.set_mesh(mesh):\n    g = jax.grad(lambda d: (jnp.unstack(d)[1] ** 2).sum())(d)\n"
                "print(jax.typeof(g), np.asarray(g)[1, :3].tolist(), np.asarray(g)[0].tolist() == [0.0] * 12)") ==
        "float32[2,12@x] [24.0, 26.0, 28.0] True\n");
}
