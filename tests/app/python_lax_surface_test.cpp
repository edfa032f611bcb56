// jax.lax's elementwise, reduction and shape functions beyond the ones jnp builds on: values, the jaxpr equation
// each binds, and the TypeErrors lax raises where it does no promotion.
#include <doctest/doctest.h>

#include <string>

#include "app/python_test_support.h"
#include "python/host.h"

using python_test::printed;
using shardscope::python::run_cell;

namespace {

constexpr const char* kPrelude =
    "import _shardscope\n_shardscope.set_jax_version('0.11.2')\n_shardscope.set_device_preset('cpu:8')\n"
    "import numpy as np\nimport jax\n"
    "import jax.numpy as jnp\nfrom jax import lax\n"
    "def attempt(thunk):\n"
    "    try:\n"
    "        print(thunk())\n"
    "    except Exception as ex:\n"
    "        print(type(ex).__name__, ex)\n";

}  // namespace

TEST_CASE("lax elementwise functions: rounding modes, trigonometry, bits, powers and clamps") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("x = jnp.array([-2.5, -0.5, 0.5, 1.5, 2.5])\n").ok());
  CHECK(printed("print(lax.round(x), lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN))") ==
        "[-3. -1.  1.  2.  3.] [-2. -0.  0.  2.  2.]\n");
  CHECK(printed("print(lax.is_finite(jnp.array([1., np.inf, np.nan])), lax.tan(jnp.float32(0.5)), "
                "lax.atan2(1., 1.), lax.cbrt(27.), lax.exp2(3.))") ==
        "[ True False False] 0.5463025 0.7853982 3.0 8.0\n");
  CHECK(printed("print(lax.pow(x, 2), lax.pow(2.0, jnp.float32(3)), lax.reciprocal(jnp.float32(4)))") ==
        "[6.25 0.25 0.25 2.25 6.25] 8.0 0.25\n");
  CHECK(printed("print(lax.clamp(-1., x, 1.), lax.rem(jnp.int32(7), jnp.int32(4)), lax.rem(-7., 4.))") ==
        "[-1.  -0.5  0.5  1.   1. ] 3 -3.0\n");
  CHECK(printed("print(lax.bitwise_xor(jnp.uint32(5), jnp.uint32(3)), lax.shift_left(jnp.int32(1), jnp.int32(4)), "
                "lax.shift_right_arithmetic(jnp.int32(-16), jnp.int32(2)), lax.bitwise_not(jnp.int32(0)), "
                "lax.population_count(jnp.uint8(255)), lax.clz(jnp.int32(1)))") == "6 16 -4 -1 8 31\n");
  // No promotion: an integer operand of a float-only function, and bounds of the wrong shape, are TypeErrors.
  CHECK(printed("attempt(lambda: lax.tan(jnp.int32(1)))\n"
                "attempt(lambda: lax.clamp(jnp.ones(2), x, 1.))\n"
                "attempt(lambda: lax.rem(jnp.ones(2), jnp.ones(2, jnp.int32)))") ==
        "TypeError tan does not accept dtype int32. Accepted dtypes are subtypes of floating, complexfloating.\n"
        "TypeError clamp requires min.shape == operand.shape or min.shape == (), got min.shape=(2,), "
        "operand.shape=(5,).\n"
        "TypeError lax.rem requires arguments to have the same dtypes, got float32, int32.\n");
  CHECK(printed(
            "print(str(lax.Precision.HIGHEST), lax.Precision.DEFAULT.value, int(lax.RoundingMethod.AWAY_FROM_ZERO))") ==
        "HIGHEST 0 0\n");
}

TEST_CASE("lax reductions, argmax and shape functions bind the primitives jnp uses, with lax's parameters") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("a = jnp.arange(12.).reshape(3, 4)\n").ok());
  CHECK(printed("print(lax.reduce_sum(a, (0,)), lax.reduce_max(a, [1]), lax.reduce_min(a, (0, 1)), "
                "lax.reduce_prod(jnp.arange(1, 5), (0,)))") == "[12. 15. 18. 21.] [ 3.  7. 11.] 0.0 24\n");
  CHECK(printed("print(lax.reduce_and(jnp.array([True, False]), (0,)), lax.reduce_or(jnp.array([True, False]), (0,)), "
                "lax.reduce_xor(jnp.array([True, True]), (0,)))") == "False True False\n");
  CHECK(printed("print(lax.argmax(a, 1, jnp.int32), lax.argmin(a, 0, np.int32).dtype)") == "[3 3 3] int32\n");
  CHECK(printed("print(lax.squeeze(a[None, :, None], (0, 2)).shape, lax.concatenate([a, a], 1).shape, "
                "[t.shape for t in lax.split(a, (1, 3), axis=1)], lax.collapse(jnp.ones((2, 3, 4)), 1).shape)") ==
        "(3, 4) (3, 8) [(3, 1), (3, 3)] (2, 12)\n");
  CHECK(printed("print(repr(lax.full((2,), 3, jnp.int8)), lax.broadcast_to_rank(jnp.ones(3), 3).shape, "
                "repr(lax.zeros_like_array(jnp.ones(2, jnp.int32))))") ==
        "Array([3, 3], dtype=int8) (1, 1, 3) Array([0, 0], dtype=int32)\n");
  CHECK(printed("print(lax.dot(a, jnp.ones(4)), lax.batch_matmul(jnp.ones((2, 3, 4)), jnp.ones((2, 4, 5))).shape)") ==
        "[ 6. 22. 38.] (2, 3, 5)\n");
  CHECK(printed("print(jax.make_jaxpr(lambda a: lax.argmax(lax.reduce_max(a, (1,))[None], 1, jnp.int32))(a))") ==
        "{ lambda ; a:f32[3,4]. let\n"
        "    b:f32[3] = reduce_max[axes=(1,) out_sharding=None] a\n"
        "    c:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] b\n"
        "    d:i32[1] = argmax[axes=(1,) index_dtype=int32] c\n"
        "  in (d,) }\n");
  // Inside jit they keep the operands' sharding rules (a sharded reduction is one all-reduce).
  CHECK(printed("from jax.sharding import NamedSharding, PartitionSpec as P\n"
                "mesh = jax.make_mesh((8,), ('x',), axis_types=(jax.sharding.AxisType.Auto,))\n"
                "s = jax.device_put(jnp.arange(16.), NamedSharding(mesh, P('x')))\n"
                "f = jax.jit(lambda s: lax.reduce_sum(s, (0,)))\n"
                "print(f(s), f(s).sharding.spec, 'all-reduce' in f.lower(s).compile().as_text())") ==
        "120.0 P() True\n");
}

TEST_CASE("lax.conv_general_dilated is one equation as JAX prints it, and shards like Shardy's convolution rule") {
  REQUIRE(run_cell(kPrelude).ok());
  // Real JAX 0.11.2's text (probe p05, cell 17).
  CHECK(printed("a = jnp.arange(64.).reshape(8, 8)\n"
                "print(jax.make_jaxpr(lambda t: lax.conv_general_dilated(t[None, None], jnp.ones((1, 1, 3, 3)), "
                "(1, 1), 'SAME'))(a))") ==
        "{ lambda ; a:f32[8,8]. let\n"
        "    b:f32[1,1,8,8] = broadcast_in_dim[broadcast_dimensions=(2, 3)] a\n"
        "    c:f32[1,1,3,3] = broadcast_in_dim 1.0:f32[]\n"
        "    d:f32[1,1,8,8] = conv_general_dilated[\n"
        "      batch_group_count=1\n"
        "      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), rhs_spec=(0, 1, 2, 3), out_spec=(0, 1, 2, "
        "3))\n"
        "      feature_group_count=1\n"
        "      lhs_dilation=(1, 1)\n"
        "      out_sharding=None\n"
        "      padding=((1, 1), (1, 1))\n"
        "      precision=None\n"
        "      preferred_element_type=None\n"
        "      rhs_dilation=(1, 1)\n"
        "      window_strides=(1, 1)\n"
        "    ] b c\n"
        "  in (d,) }\n");
  REQUIRE(
      run_cell("import re\n"
               "from jax.sharding import PartitionSpec as P, NamedSharding, AxisType\n"
               "mesh = jax.make_mesh((4, 2), ('data', 'model'), axis_types=(AxisType.Auto, AxisType.Auto))\n"
               "x = jnp.arange(8 * 6 * 6 * 4, dtype=jnp.float32).reshape(8, 6, 6, 4) / 64\n"
               "w = jnp.arange(3 * 3 * 4 * 8, dtype=jnp.float32).reshape(3, 3, 4, 8) / 64\n"
               "f = jax.jit(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), 'SAME', "
               "dimension_numbers=('NHWC', 'HWIO', 'NHWC')))\n"
               "def show(lx, lw):\n"
               "    xs = jax.device_put(x, NamedSharding(mesh, lx))\n"
               "    ws = jax.device_put(w, NamedSharding(mesh, lw))\n"
               "    out = f(xs, ws)\n"
               "    text = f.lower(xs, ws).compile().as_text()\n"
               "    kinds = sorted(re.findall(r'\\b(all-gather|all-reduce|all-to-all|collective-permute)\\(', text))\n"
               "    print(out.sharding.spec, kinds, bool(jnp.array_equal(out, f(x, w))))\n")
          .ok());
  // Batch and output features pass through; sharded input features are a reduction: partial sums, one all-reduce.
  CHECK(printed("show(P('data'), P(None, None, None, 'model'))") == "P('data', None, None, 'model') [] True\n");
  CHECK(printed("show(P(None, None, None, 'model'), P(None, None, 'model'))") == "P() ['all-reduce'] True\n");
  CHECK(printed("show(P(None, 'model'), P())") == "P(None, 'model') ['all-gather'] True\n");
  // Explicit axes: lax's rule keeps the lhs's sharding only for a replicated kernel.
  REQUIRE(run_cell("emesh = jax.make_mesh((4, 2), ('data', 'model'), axis_types=(AxisType.Explicit,) * 2)\n").ok());
  CHECK(
      printed(
          "with jax.set_mesh(emesh):\n"
          "    print(jax.typeof(f(jax.device_put(x, P('data')), jax.device_put(w, P()))))\n"
          "    attempt(lambda: f(jax.device_put(x, P('data')), jax.device_put(w, P(None, None, None, 'model'))))") ==
      "float32[8@data,6,6,8]\n"
      "ShardingTypeError Please specify the output sharding via `out_sharding` parameter of `conv_general_dilated`\n");
}
