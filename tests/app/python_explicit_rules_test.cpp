// Explicit sharding types from jnp's broadcasting helpers and out_sharding arguments, as JAX 0.11 types them:
// broadcast operands take lax.broadcast_shardings' result, einsum and dot_general honour out_sharding, and roll
// refuses a sharded rolled axis.
#include <doctest/doctest.h>

#include <string>

#include "app/python_test_support.h"
#include "python/host.h"

using python_test::printed;
using shardscope::python::run_cell;

namespace {

constexpr const char* kPrelude =
    "import numpy as np\nimport jax\nimport jax.numpy as jnp\nfrom jax import lax\n"
    "from jax.sharding import PartitionSpec as P, NamedSharding, AxisType\n"
    "emesh = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Explicit, AxisType.Explicit))\n"
    "def types(fn, *args):\n"
    "    with jax.set_mesh(emesh):\n"
    "        try:\n"
    "            out = jax.jit(fn)(*args)\n"
    "            return [str(jax.typeof(o)) for o in (out if isinstance(out, tuple) else (out,))]\n"
    "        except Exception as ex:\n"
    "            return type(ex).__name__ + ': ' + str(ex)\n"
    "with jax.set_mesh(emesh):\n"
    "    a = jax.device_put(jnp.arange(64.).reshape(8, 8), P('x', 'y'))\n"
    "    r = jax.device_put(jnp.arange(64.).reshape(8, 8), P('x', None))\n"
    "    v = jax.device_put(jnp.arange(8.), P('y'))\n";

}  // namespace

TEST_CASE("a scalar or lower-rank operand broadcast beside a sharded array takes its sharding") {
  REQUIRE(run_cell(kPrelude).ok());
  // jnp.where broadcasts the scalar branch with the condition's sharding, so select's operands agree.
  CHECK(printed("print(types(lambda a: jnp.where(a > 3, a, 0.), a))") == "['float32[8@x,8@y]']\n");
  CHECK(printed("print(types(lambda a: jnp.where(a > 3, 1., a), a))") == "['float32[8@x,8@y]']\n");
  // A vector sharded like the matrix's trailing dim is rank promotion: the matrix's sharding for all.
  CHECK(printed("print(types(lambda a, v: jnp.where(a > 3, v, a), a, v))") == "['float32[8@x,8@y]']\n");
  // The values are numpy's.
  CHECK(printed("with jax.set_mesh(emesh):\n"
                "    out = jax.jit(lambda a: jnp.where(a > 3, a, 0.))(a)\n"
                "print(np.array_equal(np.asarray(out), np.where(np.arange(64.).reshape(8, 8) > 3, "
                "np.arange(64.).reshape(8, 8), 0.)))") == "True\n");
}

TEST_CASE("einsum and dot_general take out_sharding under an Explicit mesh") {
  REQUIRE(run_cell(kPrelude).ok());
  // Without out_sharding the sharded contraction is ambiguous: JAX's ShardingTypeError.
  CHECK(printed("print(types(lambda a, b: jnp.einsum('ij,jk->ik', a, b), a, r).split(':')[0])") ==
        "ShardingTypeError\n");
  CHECK(printed("print(types(lambda a, b: jnp.einsum('ij,jk->ik', a, b, out_sharding=P('x', None)), a, r))") ==
        "['float32[8@x,8]']\n");
  // The output spec follows the einsum's output labels through the product's own dim order.
  CHECK(printed("print(types(lambda a, b: jnp.einsum('ij,jk->ki', a, b, out_sharding=P(None, 'x')), a, r))") ==
        "['float32[8,8@x]']\n");
  CHECK(printed("print(types(lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ())), out_sharding=P('x', 'y')),"
                " a, r))") == "['float32[8@x,8@y]']\n");
  CHECK(printed("with jax.set_mesh(emesh):\n"
                "    out = jax.jit(lambda a, b: jnp.einsum('ij,jk->ik', a, b, out_sharding=P('x', None)))(a, r)\n"
                "print(np.allclose(np.asarray(out), np.arange(64.).reshape(8, 8) @ np.arange(64.).reshape(8, 8)))") ==
        "True\n");
  CHECK(printed("try:\n    lax.dot_general(a, r, (((1,), (0,)), ((), ())), out_sharding=3)\n"
                "except TypeError as e:\n    print(e)") ==
        "dot_general's out_sharding must be a PartitionSpec or a NamedSharding, got 3\n");
}

TEST_CASE("jnp.roll refuses an Explicit sharding along the rolled axis") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("print(types(lambda a: jnp.roll(a, 1, 0), a))") ==
        "ShardingTypeError: `a` cannot be sharded on the axis being rolled over. Got arr type=f32[8@x,8@y] and "
        "axis=(0,)\n");
  CHECK(printed("print(types(lambda r: jnp.roll(r, 1, 1), r))") == "['float32[8@x,8]']\n");
}

TEST_CASE("creation functions and jax.random take out_sharding into the type, under vmap too, eval_shape keeps it") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("with jax.set_mesh(emesh):\n"
                "    print(jax.typeof(jnp.zeros((8,), out_sharding=P('x'))), jax.typeof(jnp.ones((8, 2), "
                "out_sharding=P(None, 'y'))), jax.typeof(jnp.full((8,), 2.0, out_sharding=P('x'))))") ==
        "float32[8@x] float32[8,2@y] ~float32[8@x]\n");
  // vmap's batch dim joins the type unsharded (spmd_axis_name=None), as JAX's reshard batching rule adds it.
  CHECK(printed("with jax.set_mesh(emesh):\n"
                "    keys = jax.random.split(jax.random.key(0), 3)\n"
                "    f = jax.vmap(lambda k: jax.random.normal(k, (8, 4), out_sharding=P('x', 'y')))\n"
                "    print(jax.typeof(f(keys)), jax.eval_shape(f, keys).sharding.spec)") ==
        "float32[3,8@x,4@y] P(None, 'x', 'y')\n");
  // Outside an all-Explicit mesh the traced output decides no sharding.
  CHECK(printed("print(jax.eval_shape(lambda: jnp.zeros((8,))).sharding)") == "None\n");
  CHECK(printed("try:\n    jnp.zeros(4, device=jax.devices()[0], out_sharding=P())\nexcept ValueError as e:\n"
                "    print(str(e)[:42])") == "Only one of `device` or `out_sharding` can\n");
}

TEST_CASE("make_mesh takes one axis name as a string, backends exist once the devices were asked for") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("print(jax.make_mesh((8,), 'model').axis_names)") == "('model',)\n");
  CHECK(printed("jax.devices()\nprint(jax._src.xla_bridge.backends_are_initialized())") == "True\n");
}

TEST_CASE("lower() types Explicit-sharded arguments as the call does, arrays and ShapeDtypeStructs alike") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("ambiguous = jax.jit(lambda a: a @ a.T)\n"
                   "def lowered(fn, arg):\n"
                   "    try:\n"
                   "        fn.lower(arg)\n"
                   "        return 'lowered'\n"
                   "    except Exception as ex:\n"
                   "        return type(ex).__name__\n"
                   "sds = jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=a.sharding)\n")
              .ok());
  // Contracting a dim sharded on 'y' on both sides: which output sharding is ambiguous, when called or lowered.
  CHECK(printed("print(types(lambda a: a @ a.T, a))").starts_with("ShardingTypeError: Contracting dimensions"));
  CHECK(printed("print(lowered(ambiguous, a))") == "ShardingTypeError\n");
  CHECK(printed("print(lowered(ambiguous, sds))") == "ShardingTypeError\n");
  // Without the sharding in the type (a plain ShapeDtypeStruct), there is nothing to be ambiguous about.
  CHECK(printed("print(lowered(ambiguous, jax.ShapeDtypeStruct(a.shape, a.dtype)))") == "lowered\n");
  CHECK(printed("print(lowered(jax.jit(lambda a: a * 2), sds))") == "lowered\n");
}

TEST_CASE("zeros_like and full_like keep the operand's sharding, matmul and reshape take out_sharding") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("print(types(jnp.zeros_like, a), types(lambda a: jnp.full_like(a, 2.), r))") ==
        "['float32[8@x,8@y]'] ['float32[8@x,8]']\n");
  // A new shape takes no sharding from the operand.
  CHECK(printed("print(types(lambda a: jnp.zeros_like(a, shape=(4,)), a))") == "['float32[4]']\n");
  // Eagerly, a committed array's own sharding; an uncommitted one stays on its device.
  CHECK(printed("print(jnp.ones_like(a).sharding.spec, type(jnp.ones_like(jnp.ones(3)).sharding).__name__)") ==
        "P('x', 'y') SingleDeviceSharding\n");
  CHECK(printed("print(types(lambda a: jnp.matmul(a, a, out_sharding=P('x', None)), a), "
                "types(lambda a: jnp.reshape(a, (64,), out_sharding=P(('x', 'y'))), a))") ==
        "['float32[8@x,8]'] ['float32[64@(x,y)]']\n");
  CHECK(printed("print(lax.select_n(jnp.arange(3) > 0, jnp.zeros(3), jnp.ones(3)), "
                "lax.select_n(jnp.array([2, 0, 1]), jnp.zeros(3), jnp.ones(3), jnp.full(3, 2.)))") ==
        "[0. 1. 1.] [2. 0. 1.]\n");
}

TEST_CASE("tile and repeat of a sharded dim raise JAX's errors under Explicit axes, triu keeps the sharding") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("print(types(lambda a: jnp.tile(a, (2, 1)), a))") ==
        "ShardingTypeError: Operand cannot be sharded on dimension 0 when the tiling is non-trivial. Got input "
        "type: float32[8@x,8@y] with reps: (2, 1)\n");
  CHECK(printed("print(types(lambda r: jnp.tile(r, (1, 2)), r))") == "['float32[8@x,16]']\n");
  CHECK(printed("print(types(lambda a: jnp.repeat(a, 2, 0), a))") ==
        "ValueError: Please pass sharding to `jnp.repeat` via `out_sharding` parameter.\n");
  CHECK(printed("print(types(lambda a: jnp.repeat(a, 2, 0, out_sharding=P('x', None)), a))") ==
        "['float32[16@x,8]']\n");
  CHECK(printed("print(types(jnp.triu, a), types(jnp.tril, r))") == "['float32[8@x,8@y]'] ['float32[8@x,8]']\n");
}

TEST_CASE("grad of a batch-sharded matmul reduces the weight's cotangent into its replicated type") {
  REQUIRE(run_cell("import numpy as np\nimport jax, jax.numpy as jnp\n"
                   "xmesh = jax.make_mesh((2,), ('X',), axis_types=(jax.sharding.AxisType.Explicit,))\n"
                   "with jax.set_mesh(xmesh):\n"
                   "    bx = jax.device_put(jnp.arange(8 * 4.).reshape(8, 4), jax.P('X', None))\n"
                   "    bw = jax.device_put(jnp.arange(4 * 2.).reshape(4, 2) / 10., jax.P(None, None))\n"
                   "def sq_loss(w, x):\n    return jnp.sum((x @ w) ** 2)\n")
              .ok());
  // x.T @ g contracts two dims sharded on 'X': JAX's transpose types the product like w (replicated) instead of
  // leaving the sharding rule to refuse the ambiguous contraction, and the sum's cotangent is typed like x @ w.
  CHECK(printed("with jax.set_mesh(xmesh):\n"
                "    dw, dx = jax.grad(sq_loss, argnums=(0, 1))(bw, bx)\n"
                "    print(jax.typeof(dw), jax.typeof(dx))\n"
                "    xn, wn = np.asarray(bx), np.asarray(bw)\n"
                "    print(np.allclose(dw, 2 * xn.T @ (xn @ wn)), np.allclose(dx, 2 * (xn @ wn) @ wn.T))") ==
        "float32[4,2] float32[8@X,4]\nTrue True\n");
  const std::string jaxpr = printed(
      "with jax.set_mesh(xmesh):\n"
      "    print(jax.jit(jax.grad(sq_loss)).trace(bw, bx).jaxpr)");
  CHECK(jaxpr.find("g:f32[8@X,2] = broadcast_in_dim f\n") != std::string::npos);
  CHECK(jaxpr.find("i:f32[2,4] = dot_general[") != std::string::npos);
}

TEST_CASE("PartitionSpec takes unreduced and reduced axis sets with JAX's checks and repr") {
  REQUIRE(run_cell("import jax\nfrom jax.sharding import PartitionSpec as P\n").ok());
  CHECK(printed("print(P(None, None, unreduced={'X'}), P(reduced={'i'}), P('x', unreduced={'y'}).partitions)") ==
        "P(None, None, unreduced={'X'}, unreduced_kind=sum) P(reduced={'i'}) ('x',)\n");
  CHECK(printed("s = P('x', unreduced={'y'})\nprint(s.unreduced, s.reduced, s.unreduced_kind, s == P('x'))") ==
        "frozenset({'y'}) frozenset() UnreducedKind.sum False\n");
  CHECK(printed("try:\n    P('x', unreduced={'x'})\nexcept ValueError as e:\n    print(e)") ==
        "partitions cannot overlap with unreduced axes passed to PartitionSpec. Got partitions: ('x',) and "
        "unreduced axes: frozenset({'x'})\n");
  CHECK(printed("try:\n    P(unreduced=['x'])\nexcept TypeError as e:\n    print(e)") ==
        "unreduced argument of PartitionSpec should of type `frozenset` or `set`. Got type <class 'list'>\n");
  CHECK(printed("try:\n    P(unreduced={'x'})[0]\nexcept ValueError as e:\n    print(e)") ==
        "Using pspec[...] is dangerous when PartitionSpec has non-empty unreduced/reduced set. Please use "
        "spec.partitions[...]\n");
}

TEST_CASE("an unreduced contraction keeps each device's partial sum until a reshard adds them up") {
  REQUIRE(run_cell("import numpy as np\nimport jax, jax.numpy as jnp\n"
                   "umesh = jax.make_mesh((2,), ('X',), axis_types=(jax.sharding.AxisType.Explicit,))\n"
                   "with jax.set_mesh(umesh):\n"
                   "    ua = jax.device_put(jnp.arange(4.).reshape(2, 2), jax.P(None, 'X'))\n"
                   "    ub = jax.device_put(jnp.arange(4., 8.).reshape(2, 2), jax.P('X', None))\n"
                   "U = jax.P(None, None, unreduced={'X'})\n")
              .ok());
  CHECK(printed("with jax.set_mesh(umesh):\n"
                "    c = jnp.einsum('ij,jk->ik', ua, ub, out_sharding=U)\n"
                "    print(jax.typeof(c), c.sharding.spec)\n"
                "    for s in c.addressable_shards:\n"
                "        print(s.device.id, np.asarray(s.data).tolist())\n"
                "    print(jax.reshard(c, jax.P(None, None)).tolist(), jax.typeof(c + c))") ==
        "float32[2,2]{U:X} P(None, None, unreduced={'X'}, unreduced_kind=sum)\n"
        "0 [[0.0, 0.0], [8.0, 10.0]]\n1 [[6.0, 7.0], [18.0, 21.0]]\n"
        "[[6.0, 7.0], [26.0, 31.0]] float32[2,2]{U:X}\n");
  // The compiled programs: no all-reduce while the product stays unreduced, one where the reshard sums it.
  CHECK(printed("def reduces(f):\n"
                "    with jax.set_mesh(umesh):\n"
                "        text = jax.jit(f).lower(ua, ub).compile().as_text()\n"
                "    return sum(' all-reduce(' in line for line in text.splitlines())\n"
                "unreduced = lambda a, b: jnp.einsum('ij,jk->ik', a, b, out_sharding=U)\n"
                "print(reduces(unreduced), reduces(lambda a, b: jax.reshard(unreduced(a, b), jax.P(None, None))))") ==
        "0 1\n");
  // Printing shows the layout, not the partial values.
  CHECK(printed("print(c)") ==
        "Array(shape=(2, 2), dtype=float32, sharding=NamedSharding(mesh=Mesh('X': 2, "
        "axis_types=(Explicit,)), spec=P(None, None, unreduced={'X'}, unreduced_kind=sum), "
        "memory_kind=device))\n");
  CHECK(printed("with jax.set_mesh(umesh):\n"
                "    try:\n        jnp.cos(c)\n    except NotImplementedError as e:\n        print(e)") ==
        "unreduced rule for cos is not implemented. Please file an issue at https://github.com/jax-ml/jax/issues\n");
  CHECK(printed(
            "with jax.set_mesh(umesh):\n"
            "    try:\n        c + jnp.ones((2, 2))\n    except Exception as e:\n        print(type(e).__name__, e)") ==
        "ShardingTypeError lhs is unreduced while rhs is not. `add` operation does not allow this because there will "
        "be implicit communication. Please reduce lhs via `reshard` before calling `add`.\n");
  // mul is bilinear: a partial sum scales only by a value reduced over the same axes, and stays unreduced.
  CHECK(printed("with jax.set_mesh(umesh):\n"
                "    try:\n        2 * c\n    except Exception as e:\n        print(type(e).__name__, e)\n"
                "    half = jax.reshard(jnp.full((2, 2), 0.5), jax.P(None, None, reduced={'X'}))\n"
                "    print(jax.typeof(c * half), jax.reshard(c * half, jax.P(None, None)).tolist())") ==
        "ShardingTypeError LHS should be reduced along the same axes RHS is unreduced on. Got lhs=float32[] and "
        "rhs=float32[2,2]{U:X}\n"
        "float32[2,2]{U:X} [[3.0, 3.5], [13.0, 15.5]]\n");
}

TEST_CASE("a reduced weight's gradient comes back unreduced and is summed by its reshard's transpose") {
  REQUIRE(run_cell("import numpy as np\nimport jax, jax.numpy as jnp\n"
                   "rmesh = jax.make_mesh((2,), ('X',), axis_types=(jax.sharding.AxisType.Explicit,))\n"
                   "with jax.set_mesh(rmesh):\n"
                   "    rx = jax.device_put(jnp.arange(8 * 4.).reshape(8, 4), jax.P('X', None))\n"
                   "    rw = jax.device_put(jnp.arange(4 * 2.).reshape(4, 2) / 10., jax.P(None, None))\n"
                   "def reduced_loss(w, x):\n"
                   "    w = jax.reshard(w, jax.P(None, None, reduced={'X'}))\n"
                   "    return jnp.sum((x @ w) ** 2)\n")
              .ok());
  CHECK(printed("with jax.set_mesh(rmesh):\n"
                "    print(jax.typeof(jax.reshard(rw, jax.P(None, None, reduced={'X'}))))") == "float32[4,2]{R:X}\n");
  const std::string jaxpr = printed(
      "with jax.set_mesh(rmesh):\n"
      "    print(jax.jit(jax.grad(reduced_loss)).trace(rw, rx).jaxpr)");
  CHECK(jaxpr.find("c:f32[4,2]{R:X} = reshard a\n") != std::string::npos);
  CHECK(jaxpr.find("j:f32[2,4]{U:X} = dot_general[") != std::string::npos);
  CHECK(jaxpr.find("k:f32[4,2]{U:X} = transpose[permutation=(1, 0)] j\n    l:f32[4,2] = reshard k\n") !=
        std::string::npos);
  CHECK(printed("with jax.set_mesh(rmesh):\n"
                "    g = jax.jit(jax.grad(reduced_loss))(rw, rx)\n"
                "xn, wn = np.arange(32.).reshape(8, 4), np.arange(8.).reshape(4, 2) / 10.\n"
                "print(jax.typeof(g), np.allclose(g, 2 * xn.T @ (xn @ wn)))") == "float32[4,2] True\n");
}

TEST_CASE("device_put to an unreduced sharding splits the value into partial parts that sum back to it") {
  REQUIRE(run_cell("import numpy as np\nimport jax, jax.numpy as jnp\n"
                   "pmesh = jax.make_mesh((4, 2), ('X', 'Y'), axis_types=(jax.sharding.AxisType.Explicit,) * 2)\n")
              .ok());
  // Each 'Y' pair splits its rows' columns: device Y=0 keeps the first half, Y=1 the second, zeros elsewhere.
  CHECK(printed("with jax.set_mesh(pmesh):\n"
                "    y = jax.device_put(jnp.arange(32.).reshape(8, 4), jax.P('X', None, unreduced={'Y'}))\n"
                "print(y.sharding.spec, jax.typeof(y))\n"
                "for s in y.addressable_shards[:2]:\n"
                "    print(s.device.id, np.asarray(s.data).tolist())\n"
                "with jax.set_mesh(pmesh):\n"
                "    print(jax.reshard(y, jax.P('X', None)).tolist() == np.arange(32.).reshape(8, 4).tolist())") ==
        "P('X', None, unreduced={'Y'}, unreduced_kind=sum) float32[8@X,4]{U:Y}\n"
        "0 [[0.0, 1.0, 0.0, 0.0], [4.0, 5.0, 0.0, 0.0]]\n1 [[0.0, 0.0, 2.0, 3.0], [0.0, 0.0, 6.0, 7.0]]\nTrue\n");
}

TEST_CASE("shard_map takes and returns unreduced and reduced values, and differentiates through their casts") {
  REQUIRE(run_cell("import numpy as np\nimport jax, jax.numpy as jnp\n"
                   "smesh = jax.make_mesh((2,), ('X',), axis_types=(jax.sharding.AxisType.Explicit,))\n"
                   "with jax.set_mesh(smesh):\n"
                   "    sa = jax.device_put(jnp.arange(4.).reshape(2, 2), jax.P(None, 'X'))\n"
                   "    sb = jax.device_put(jnp.arange(4., 8.).reshape(2, 2), jax.P('X', None))\n"
                   "    @jax.shard_map(in_specs=(jax.P(None, 'X'), jax.P('X', None)),\n"
                   "                   out_specs=jax.P(None, None, unreduced={'X'}))\n"
                   "    def partial_matmul(a, b):\n"
                   "        return jax.lax.pcast(a @ b, 'X', to='unreduced')\n")
              .ok());
  CHECK(printed("with jax.set_mesh(smesh):\n"
                "    c = partial_matmul(sa, sb)\n"
                "    print(jax.typeof(c), [np.asarray(s.data).tolist() for s in c.addressable_shards])\n"
                "    print(jax.reshard(c, jax.P(None, None)).tolist())") ==
        "float32[2,2]{U:X} [[[0.0, 0.0], [8.0, 10.0]], [[6.0, 7.0], [18.0, 21.0]]]\n[[6.0, 7.0], [26.0, 31.0]]\n");
  // Inside a body the spec's unreduced and reduced axes type the local values.
  CHECK(printed("with jax.set_mesh(smesh):\n"
                "    ur = jax.reshard(jnp.arange(4.), jax.P(reduced={'X'}))\n"
                "    @jax.shard_map(in_specs=(jax.P(unreduced={'X'}), jax.P(reduced={'X'})), out_specs=jax.P())\n"
                "    def show(u, r):\n"
                "        print(jax.typeof(u), jax.typeof(r))\n"
                "        return r\n"
                "    _ = show(c, ur)") == "float32[2,2]{U:X} float32[4]{R:X}\n");
  // The cast transposes to reduced_vary_cast_p on the reduced cotangent; gradients equal the plain matmul's.
  const std::string jaxpr = printed(
      "def loss(a, b):\n    return jnp.sum(jax.reshard(partial_matmul(a, b), jax.P(None, None)))\n"
      "with jax.set_mesh(smesh):\n    print(jax.jit(jax.grad(loss, argnums=(0, 1))).trace(sa, sb).jaxpr)");
  CHECK(jaxpr.find("k:f32[2,2]{R:X} = reshard j\n") != std::string::npos);
  CHECK(jaxpr.find("in_specs=(P(None, None, reduced={'X'}), P('X', None), P(None, 'X'))") != std::string::npos);
  CHECK(jaxpr.find("q:f32[2,2]{V:X} = reduced_vary_cast_p[axes=('X',)] n\n") != std::string::npos);
  CHECK(printed("with jax.set_mesh(smesh):\n"
                "    ga, gb = jax.grad(loss, argnums=(0, 1))(sa, sb)\n"
                "print(np.asarray(ga).tolist(), np.asarray(gb).tolist())") ==
        "[[9.0, 13.0], [9.0, 13.0]] [[2.0, 2.0], [4.0, 4.0]]\n");
}

TEST_CASE("auto_axes called eagerly runs its function on concrete arrays typed under the Auto axes") {
  REQUIRE(run_cell("import numpy as np\nimport jax, jax.numpy as jnp\n"
                   "amesh = jax.make_mesh((4, 2), ('X', 'Y'), axis_types=(jax.sharding.AxisType.Explicit,) * 2)\n"
                   "@jax.sharding.auto_axes\n"
                   "def inspect(x):\n"
                   "    print(jax.sharding.get_abstract_mesh().axis_types, jax.typeof(x).sharding.spec)\n"
                   "    try:\n"
                   "        print(x.sharding.spec)\n"
                   "    except Exception:\n"
                   "        pass  # a traced value has no concrete layout\n"
                   "    return x * 2\n")
              .ok());
  // The concrete value keeps its layout; its type names no Auto axis; the result is placed as asked.
  CHECK(printed("with jax.set_mesh(amesh):\n"
                "    a = jax.device_put(jnp.arange(8.), jax.P('X'))\n"
                "    out = inspect(a, out_sharding=jax.P('X'))\n"
                "print(out.sharding.spec, jax.typeof(out), out.tolist()[:3])") ==
        "(Auto, Auto) P(None,)\nP('X',)\nP('X',) float32[8@X] [0.0, 2.0, 4.0]\n");
  // Under jit it is traced as before.
  CHECK(printed("with jax.set_mesh(amesh):\n"
                "    print(jax.typeof(jax.jit(lambda a: inspect(a, out_sharding=jax.P(('X', 'Y'))))(a)))") ==
        "(Auto, Auto) P(None,)\nfloat32[8@(X,Y)]\n");
}

TEST_CASE("a captured Explicit-sharded array keeps its type inside jit, split's zero cotangents keep theirs") {
  REQUIRE(run_cell(kPrelude).ok());
  // The closed-over array is typed like an argument, so concatenating it with one type-checks.
  CHECK(printed("print(types(lambda b: jnp.concatenate([b, a], axis=0).sum(), r * 0 + a))") == "['float32[]']\n");
  CHECK(printed("print(types(lambda b: jnp.concatenate([b, a], axis=0), a))") == "['float32[16@x,8@y]']\n");
  // grad through split: the unused piece's zero cotangent is typed like the piece, so the concatenate agrees.
  CHECK(printed("print(types(jax.grad(lambda m: (jnp.split(m, 2, axis=1)[0] * 2).sum()), r))") ==
        "['float32[8@x,8]']\n");
  CHECK(printed("with jax.set_mesh(emesh):\n"
                "    g = jax.grad(lambda m: (jnp.split(m, 2, axis=1)[0] * 2).sum())(r)\n"
                "print(np.asarray(g)[0].tolist())") == "[2.0, 2.0, 2.0, 2.0, 0.0, 0.0, 0.0, 0.0]\n");
}

TEST_CASE("use_abstract_mesh sets the abstract mesh for a block, inside jit too, and keeps the mesh's size") {
  REQUIRE(run_cell("import _shardscope\nprofile_before = _shardscope.jax_version()\n"
                   "_shardscope.set_jax_version('0.11.2')\n")
              .ok());
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("am = jax.sharding.AbstractMesh((4, 2), ('x', 'y'), (AxisType.Explicit, AxisType.Auto))\n").ok());
  CHECK(printed("with jax.set_mesh(emesh):\n"
                "    with jax.sharding.use_abstract_mesh(am):\n"
                "        print(jax.sharding.get_abstract_mesh().axis_types)\n"
                "    print(jax.sharding.get_abstract_mesh().axis_types)") ==
        "(Explicit, Auto)\n(Explicit, Explicit)\n");
  // Inside jit a bare spec then names the block's mesh: 'y' is Auto there, so only 'x' stays in the type.
  CHECK(printed("def f(t):\n"
                "    with jax.sharding.use_abstract_mesh(am):\n"
                "        return jax.reshard(t, P('x', None)) * 2\n"
                "print(types(f, a))") == "['float32[8@x,8]']\n");
  CHECK(printed("with jax.set_mesh(emesh):\n"
                "    try:\n"
                "        with jax.sharding.use_abstract_mesh(jax.sharding.AbstractMesh((4,), ('a',))):\n"
                "            pass\n"
                "    except ValueError as ex:\n"
                "        print(str(ex).split(' Got new mesh')[0])\n"
                "try:\n"
                "    jax.sharding.use_abstract_mesh(emesh)\n"
                "except ValueError as ex:\n"
                "    print(str(ex).split(' Got type')[0])") ==
        "use_abstract_mesh cannot change the size of the mesh.\nExpected mesh of type "
        "`jax.sharding.AbstractMesh`.\n");
  // Before 0.7.2 jax.sharding had no such name.
  REQUIRE(run_cell("_shardscope.set_jax_version('0.7.1')\n").ok());
  CHECK(printed("print(hasattr(jax.sharding, 'use_abstract_mesh'))") == "False\n");
  REQUIRE(run_cell("_shardscope.set_jax_version(profile_before)\n").ok());
}

TEST_CASE(
    "with_sharding_constraint under an all-Explicit mesh asserts the type from 0.7.1, and `with mesh:` sets none") {
  REQUIRE(run_cell("import _shardscope\nprofile_before = _shardscope.jax_version()\n"
                   "_shardscope.set_jax_version('0.11.2')\n")
              .ok());
  REQUIRE(run_cell(kPrelude).ok());
  // A matching constraint binds nothing (the jaxpr has no sharding_constraint), a different one is an AssertionError.
  CHECK(printed("with jax.set_mesh(emesh):\n"
                "    print(jax.make_jaxpr(lambda t: lax.with_sharding_constraint(t, P('x', 'y')) * 2)(a))") ==
        "{ lambda ; a:f32[8@x,8@y]. let b:f32[8@x,8@y] = mul a 2.0:f32[] in (b,) }\n");
  CHECK(printed("print(types(lambda t: lax.with_sharding_constraint(t, P('x', None)), a))") ==
        "AssertionError: `with_sharding_constraint` acts as an assert when all axes of mesh are of type `Explicit`. "
        "The array sharding: P('x', 'y') did not match the sharding provided: P('x', None). Please use "
        "`jax.sharding.reshard` to shard your input to the sharding you want.\n");
  // `with mesh:` is JAX's resource environment: bare specs resolve on it, but the abstract mesh stays empty, so a
  // constraint there steers the partitioner, which an Explicit mesh's axes refuse.
  CHECK(printed("import warnings\nwarnings.simplefilter('ignore')\n"
                "amesh = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Auto, AxisType.Auto))\n"
                "with amesh:\n"
                "    print(jax.sharding.get_abstract_mesh())\n"
                "    print(jax.jit(lambda t: lax.with_sharding_constraint(t, P(None, 'y')))(jnp.ones((8, 8)))"
                ".sharding.spec)\n"
                "    with emesh:\n"
                "        try:\n"
                "            jax.jit(lambda t: lax.with_sharding_constraint(t, P(None, 'y')))(a)\n"
                "        except ValueError as ex:\n"
                "            print(str(ex).split(' Got')[0])\n"
                "print(jax.sharding.get_abstract_mesh())") ==
        "AbstractMesh((), axis_types=())\nP(None, 'y')\nThe spec of NamedSharding passed to with_sharding_constraint "
        "can only refer to Auto axes of the mesh.\nAbstractMesh((), axis_types=())\n");
  // Before 0.7.1 a constraint naming Explicit axes was refused outright.
  REQUIRE(run_cell("_shardscope.set_jax_version('0.7.0')\n").ok());
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("print(types(lambda t: lax.with_sharding_constraint(t, P('x', 'y')), a).split(' Got')[0])") ==
        "ValueError: The spec of NamedSharding passed to with_sharding_constraint can only refer to Auto axes of the "
        "mesh.\n");
  REQUIRE(run_cell("_shardscope.set_jax_version(profile_before)\n").ok());
}

TEST_CASE("outside any mesh context an Explicit array's derivatives and broadcast constants take its sharding") {
  REQUIRE(run_cell(kPrelude).ok());
  // make_mesh's axes are Explicit from 0.7; the array carries its mesh in its type without jax.set_mesh.
  REQUIRE(
      run_cell("own = jax.device_put(jnp.arange(64.).reshape(8, 8) - 30, NamedSharding(emesh, P('x', None)))\n").ok());
  // relu's derivative at 0 is 0 (JAX's custom rule); maximum's at a tie is 1/2: 2 * 33 + 30 + 1/2.
  CHECK(printed("g = jax.grad(lambda t: (jax.nn.relu(t) * 2 + jnp.maximum(t, 3.)).sum())(own)\n"
                "print(jax.typeof(g), float(g.sum()))") == "float32[8@x,8] 96.5\n");
  CHECK(printed("print(jax.typeof(jax.jit(jax.grad(lambda t: jnp.abs(jax.nn.gelu(t)).sum()))(own)))") ==
        "float32[8@x,8]\n");
  CHECK(printed("print(jax.typeof(jax.jit(lambda t: jnp.where(t > 0, t, 0.))(own)), "
                "jax.typeof(jax.jit(lambda t: jnp.where(t > 0, 1., 0.))(own)))") == "float32[8@x,8] ~float32[8@x,8]\n");
  CHECK(printed("print(jax.jit(jnp.zeros_like)(own).sharding.spec)") == "P('x', None)\n");
  CHECK(printed("print(jax.sharding.get_abstract_mesh().empty)") == "True\n");
}

TEST_CASE("eval_shape outside a mesh context: Explicit arguments, arrays or ShapeDtypeStructs, type the outputs") {
  REQUIRE(run_cell(kPrelude).ok());
  // JAX's Traced.out_info: each output's type sharding over the arguments' AbstractMesh (unsharded dims too).
  CHECK(printed(
            "xe = jax.device_put(jnp.arange(32.).reshape(8, 4), NamedSharding(emesh, P('x', None)))\n"
            "print(jax.eval_shape(lambda t: t * 2, xe).sharding.spec, jax.eval_shape(lambda t: t.sum(0), "
            "xe).sharding.spec)\n"
            "sds = jax.ShapeDtypeStruct((8, 4), jnp.float32, sharding=NamedSharding(emesh, P('x', None)))\n"
            "out = jax.eval_shape(lambda t: t.T, sds)\nprint(out.shape, out.sharding.spec, repr(out.sharding.mesh) == "
            "repr(emesh.abstract_mesh))\n"
            "amesh = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Auto, AxisType.Auto))\n"
            "xa = jax.device_put(jnp.ones((8, 4)), NamedSharding(amesh, P('x')))\n"
            "print(jax.eval_shape(lambda t: t * 2, xa).sharding)\n") ==
        "P('x', None) P(None,)\n(4, 8) P(None, 'x') True\nNone\n");
}
