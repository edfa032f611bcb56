// x.at[idx] updates, integer-array indexing, take/take_along_axis, sorting, triangles, diagonals, norm and
// stop_gradient: values, JAX 0.11's jaxprs (its primitives and params) and result shardings on 8 devices.
#include <doctest/doctest.h>

#include <string>

#include "app/python_test_support.h"
#include "python/host.h"

using python_test::printed;
using shardscope::python::run_cell;

namespace {

constexpr const char* kPrelude =
    "import _shardscope\n_shardscope.set_jax_version('0.11.2')\n_shardscope.set_device_preset('cpu:8')\n"
    "import numpy as np\nimport jax\nimport jax.numpy as jnp\nfrom jax import lax\n"
    "from jax.sharding import PartitionSpec as P, NamedSharding, AxisType\n"
    "mesh = jax.make_mesh((4, 2), ('data', 'model'), axis_types=(AxisType.Auto, AxisType.Auto))\n"
    "x = jnp.arange(8.)\nm = jnp.arange(12.).reshape(3, 4)\n"
    "def attempt(thunk):\n"
    "    try:\n"
    "        print(thunk())\n"
    "    except Exception as ex:\n"
    "        print(type(ex).__name__, ex)\n";

}  // namespace

TEST_CASE(".at[] updates scatter into a copy, with JAX's modes and repeated indices") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("print(x.at[2].set(5.), x)") == "[0. 1. 5. 3. 4. 5. 6. 7.] [0. 1. 2. 3. 4. 5. 6. 7.]\n");
  // Repeated indices accumulate for add; negative ones count from the end.
  CHECK(printed("print(x.at[jnp.array([1, 1, -1])].add(1.))") == "[0. 3. 2. 3. 4. 5. 6. 8.]\n");
  CHECK(printed("print(x.at[1:3].multiply(2.), x.at[1:3].mul(3.))") ==
        "[0. 2. 4. 3. 4. 5. 6. 7.] [0. 3. 6. 3. 4. 5. 6. 7.]\n");
  CHECK(printed("print(x.at[jnp.array([0, 7])].min(-1.), x.at[-1].max(100.))") ==
        "[-1.  1.  2.  3.  4.  5.  6. -1.] [  0.   1.   2.   3.   4.   5.   6. 100.]\n");
  CHECK(printed("print(x.at[3].subtract(1.), x.at[3].divide(2.), x.at[3].power(2.))") ==
        "[0. 1. 2. 2. 4. 5. 6. 7.] [0.  1.  2.  1.5 4.  5.  6.  7. ] [0. 1. 2. 9. 4. 5. 6. 7.]\n");
  CHECK(printed("print(x.at[4].apply(lambda v: v * 10))") == "[ 0.  1.  2.  3. 40.  5.  6.  7.]\n");
  // Out-of-bounds updates are dropped (FILL_OR_DROP) unless mode='clip'.
  CHECK(printed("print(x.at[10].set(-1.), x.at[10].set(-1., mode='clip'))") ==
        "[0. 1. 2. 3. 4. 5. 6. 7.] [ 0.  1.  2.  3.  4.  5.  6. -1.]\n");
  CHECK(printed("print(x.at[jnp.array([0, 9])].get(mode='fill', fill_value=-1.), x.at[20].get())") ==
        "[ 0. -1.] 7.0\n");
  CHECK(printed("print(m.at[:, 1].set(jnp.array([10., 20., 30.])))") ==
        "[[ 0. 10.  2.  3.]\n [ 4. 20.  6.  7.]\n [ 8. 30. 10. 11.]]\n");
  CHECK(printed("print(repr(jnp.arange(4).at[0].add(2)))") == "Array([2, 1, 2, 3], dtype=int32)\n");
}

TEST_CASE("integer-array indexing, take and take_along_axis gather like numpy") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("print(m[jnp.array([0, 2])])") == "[[ 0.  1.  2.  3.]\n [ 8.  9. 10. 11.]]\n");
  CHECK(printed("print(m[:, jnp.array([1, 3])])") == "[[ 1.  3.]\n [ 5.  7.]\n [ 9. 11.]]\n");
  CHECK(printed("print(m[jnp.array([0, 1]), jnp.array([3, -2])], m[np.array([2, 0]), 1])") == "[3. 6.] [9. 1.]\n");
  CHECK(printed("print(m[np.array([True, False, True])])") == "[[ 0.  1.  2.  3.]\n [ 8.  9. 10. 11.]]\n");
  CHECK(printed("print(m[None, jnp.array([1]), ::-2])") == "[[[7. 5.]]]\n");
  // take's default mode fills out-of-bounds entries with NaN; clip and wrap as numpy.
  CHECK(printed("print(jnp.take(x, jnp.array([1, -1, 10])), jnp.take(x, jnp.array([10]), mode='clip'), "
                "jnp.take(x, jnp.array([9]), mode='wrap'))") == "[ 1.  7. nan] [7.] [1.]\n");
  CHECK(printed("print(jnp.take(m, jnp.array([3, 0]), axis=1), m.take(jnp.array([5])))") ==
        "[[ 3.  0.]\n [ 7.  4.]\n [11.  8.]] [5.]\n");
  CHECK(printed("print(jnp.take_along_axis(m, jnp.array([[3], [0], [1]]), axis=1))") == "[[3.]\n [4.]\n [9.]]\n");
  CHECK(printed("attempt(lambda: m[[0, 1]])") ==
        "TypeError Using a non-tuple sequence for multidimensional indexing is not allowed; use `arr[array(seq)]` "
        "instead of `arr[seq]`. See https://github.com/jax-ml/jax/issues/4564 for more information.\n");
  CHECK(printed("attempt(lambda: m[jnp.array([0.5])])") ==
        "TypeError Indexer must have integer or boolean type, got indexer with type float32\n");
}

TEST_CASE("sorting, top_k, triangles, diagonals, norms and stop_gradient") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("print(jnp.sort(jnp.array([3., 1., jnp.nan, -1.])), jnp.sort(m, axis=0, descending=True)[0])") ==
        "[-1.  1.  3. nan] [ 8.  9. 10. 11.]\n");
  CHECK(printed("print(jnp.argsort(jnp.array([3., 1., 2., 1.])), "
                "jnp.argsort(jnp.array([3., 1., 2., 1.]), descending=True), m.argsort(axis=None)[:3])") ==
        "[1 3 2 0] [0 2 1 3] [0 1 2]\n");
  CHECK(printed("print(lax.sort((jnp.array([2, 1, 2, 1]), jnp.array([0., 1., 2., 3.])), num_keys=1))") ==
        "(Array([1, 1, 2, 2], dtype=int32), Array([1., 3., 0., 2.], dtype=float32))\n");
  CHECK(printed("print(lax.top_k(jnp.array([1., 5., 3., 5.]), 2))") ==
        "(Array([5., 5.], dtype=float32), Array([1, 3], dtype=int32))\n");
  CHECK(printed("print(jnp.triu(jnp.ones((3, 3)), 1))") == "[[0. 1. 1.]\n [0. 0. 1.]\n [0. 0. 0.]]\n");
  CHECK(printed("print(jnp.tril(m, -1))") == "[[0. 0. 0. 0.]\n [4. 0. 0. 0.]\n [8. 9. 0. 0.]]\n");
  CHECK(printed("print(jnp.diag(jnp.array([1, 2])), jnp.diag(m, 1), jnp.diagonal(m, -1))") ==
        "[[1 0]\n [0 2]] [ 1.  6. 11.] [4. 9.]\n");
  CHECK(printed("print(jnp.linalg.norm(x), jnp.linalg.norm(m, 'fro'), jnp.linalg.norm(m, 1), "
                "jnp.linalg.norm(m, jnp.inf), jnp.linalg.norm(x, 1), jnp.linalg.norm(m, axis=1))") ==
        "11.83216 22.494444 21.0 38.0 28.0 [ 3.7416575 11.224972  19.131126 ]\n");
  CHECK(printed("print(lax.stop_gradient(x)[:3], jax.grad(lambda v: (lax.stop_gradient(v) * v).sum())(x)[:3])") ==
        "[0. 1. 2.] [0. 1. 2.]\n");
  CHECK(printed("attempt(lambda: lax.top_k(x, 9))") ==
        "ValueError k argument to top_k must be no larger than size along axis; got k=9 with shape=(8,) and axis=0\n");
  CHECK(printed("attempt(lambda: jnp.triu(x))") == "ValueError Argument to jax.numpy.triu must be at least 2D\n");
}

TEST_CASE("grad and vmap through gathers, scatters and sorts") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("print(jax.grad(lambda v: v[jnp.array([1, 1, 2])].sum())(x))") == "[0. 2. 1. 0. 0. 0. 0. 0.]\n");
  CHECK(printed("print(jax.grad(lambda v: v.at[1].set(0.).sum())(x))") == "[1. 0. 1. 1. 1. 1. 1. 1.]\n");
  CHECK(printed("print(jax.grad(lambda y: x.at[jnp.array([1, 1])].add(y * 3.).sum())(jnp.ones(2)))") == "[3. 3.]\n");
  CHECK(printed("print(jax.vmap(lambda v, i: v.at[i].set(-1.))(jnp.ones((2, 3)), jnp.array([0, 2])))") ==
        "[[-1.  1.  1.]\n [ 1.  1. -1.]]\n");
  // sort's and top_k's tangents follow the permutation they chose (lax._sort_jvp, _top_k_jvp).
  CHECK(printed("v = jnp.array([3., 1., 2., 5.])\n"
                "print(jax.grad(lambda v: (jnp.sort(v) * jnp.arange(4.)).sum())(v), "
                "jax.grad(lambda v: lax.top_k(v, 2)[0].sum())(v), "
                "jax.grad(lambda v: jnp.sort(v.reshape(2, 2), axis=0)[0].sum())(v))") ==
        "[2. 0. 1. 3.] [1. 0. 0. 1.] [0. 1. 1. 0.]\n");
  CHECK(printed("print(jax.vmap(jnp.sort)(jnp.array([[3., 1., 2.], [0., -1., 5.]])))") ==
        "[[ 1.  2.  3.]\n [-1.  0.  5.]]\n");
}

TEST_CASE("make_jaxpr prints JAX 0.11's gather, scatter, sort, top_k and stop_gradient") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("v5 = jnp.arange(5.)").ok());
  CHECK(printed("print(jax.make_jaxpr(lambda v, i: v[i])(v5, jnp.array([1, 2])))") ==
        "{ lambda ; a:f32[5] b:i32[2]. let\n"
        "    c:bool[2] = lt b 0:i32[]\n"
        "    d:i32[2] = add b 5:i32[]\n"
        "    e:i32[2] = select_n c b d\n"
        "    f:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e\n"
        "    g:f32[2] = gather[\n"
        "      dimension_numbers=GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), "
        "start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())\n"
        "      fill_value=None\n"
        "      indices_are_sorted=False\n"
        "      mode=GatherScatterMode.PROMISE_IN_BOUNDS\n"
        "      slice_sizes=(1,)\n"
        "      unique_indices=False\n"
        "    ] a f\n"
        "  in (g,) }\n");
  CHECK(printed("print(jax.make_jaxpr(lambda v: v.at[2].set(5.))(v5))") ==
        "{ lambda ; a:f32[5]. let\n"
        "    b:i32[1] = broadcast_in_dim 2:i32[]\n"
        "    c:f32[5] = scatter[\n"
        "      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), "
        "scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())\n"
        "      indices_are_sorted=True\n"
        "      mode=GatherScatterMode.FILL_OR_DROP\n"
        "      unique_indices=True\n"
        "      update_consts=()\n"
        "      update_jaxpr=None\n"
        "    ] a b 5.0:f32[]\n"
        "  in (c,) }\n");
  CHECK(printed("print(jax.make_jaxpr(lambda v, i: v.at[i].add(1.))(v5, jnp.array([1, 2])))") ==
        "{ lambda ; a:f32[5] b:i32[2]. let\n"
        "    c:bool[2] = lt b 0:i32[]\n"
        "    d:i32[2] = add b 5:i32[]\n"
        "    e:i32[2] = select_n c b d\n"
        "    f:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e\n"
        "    g:f32[2] = broadcast_in_dim 1.0:f32[]\n"
        "    h:f32[5] = scatter-add[\n"
        "      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), "
        "scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())\n"
        "      indices_are_sorted=False\n"
        "      mode=GatherScatterMode.FILL_OR_DROP\n"
        "      unique_indices=False\n"
        "      update_consts=()\n"
        "      update_jaxpr={ lambda ; i:f32[] j:f32[]. let k:f32[] = add i j in (k,) }\n"
        "    ] a f g\n"
        "  in (h,) }\n");
  CHECK(printed("print(jax.make_jaxpr(lambda v: lax.sort((v, v), num_keys=2))(v5))") ==
        "{ lambda ; a:f32[5]. let\n"
        "    b:f32[5] c:f32[5] = sort[dimension=0 is_stable=True num_keys=2] a a\n"
        "  in (b, c) }\n");
  CHECK(printed("print(jax.make_jaxpr(lambda v: lax.top_k(v, 3))(v5))") ==
        "{ lambda ; a:f32[5]. let\n"
        "    b:f32[3] c:i32[3] = top_k[axis=0 is_stable=True k=3] a\n"
        "  in (b, c) }\n");
  CHECK(printed("print(jax.make_jaxpr(lax.stop_gradient)(v5))") ==
        "{ lambda ; a:f32[5]. let b:f32[5] = stop_gradient a in (b,) }\n");
}

TEST_CASE("a traced scalar index takes JAX's dynamic_slice path") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("print(jax.make_jaxpr(lambda v, i: v[i])(jnp.arange(5.), 3))") ==
        "{ lambda ; a:f32[5] b:i32[]. let\n"
        "    c:bool[] = lt b 0:i32[]\n"
        "    d:i32[] = add b 5:i32[]\n"
        "    e:i32[] = select_n c b d\n"
        "    f:f32[1] = dynamic_slice[slice_sizes=(1,)] a e\n"
        "    g:f32[] = squeeze[dimensions=(0,)] f\n"
        "  in (g,) }\n");
  CHECK(printed("print(jax.jit(lambda v, i: v[i])(x, -2), jax.jit(lambda v, i: v[i, 1:3])(m, 2), "
                "jax.jit(lambda v, i: v[None, i, ::-1])(m, 0))") == "6.0 [ 9. 10.] [[3. 2. 1. 0.]]\n");
  CHECK(printed("print(lax.fori_loop(0, 8, lambda i, c: c + x[i], 0.))") == "28.0\n");
}

TEST_CASE("under jit on an 8-device mesh the results keep JAX's shardings") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("a = jax.device_put(jnp.arange(64.).reshape(8, 8), NamedSharding(mesh, P('data', 'model')))\n"
                   "def show(name, fn, *args):\n"
                   "    out = jax.jit(fn)(*args)\n"
                   "    print(name, out.shape, out.sharding.spec, np.asarray(out).ravel()[:3])\n")
              .ok());
  // The sorted dim is gathered for the kernel; the result keeps the operand's layout, as XLA's does.
  CHECK(printed("show('sort0', lambda a: jnp.sort(a, 0), a)") == "sort0 (8, 8) P('data', 'model') [0. 1. 2.]\n");
  CHECK(printed("show('argsort1', lambda a: jnp.argsort(a, 1), a)") == "argsort1 (8, 8) P('data', 'model') [0 1 2]\n");
  CHECK(printed("show('top_k', lambda a: lax.top_k(a, 2)[0], a)") == "top_k (8, 2) P('data',) [ 7.  6. 15.]\n");
  CHECK(printed("show('at_col', lambda a: a.at[:, 2].add(1.), a)") == "at_col (8, 8) P('data', 'model') [0. 1. 3.]\n");
  CHECK(printed("show('take_rows', lambda a: jnp.take(a, jnp.array([1, 5]), axis=0), a)") ==
        "take_rows (2, 8) P(None, 'model') [ 8.  9. 10.]\n");
  CHECK(printed("show('triu', jnp.triu, a)") == "triu (8, 8) P('data', 'model') [0. 1. 2.]\n");
  CHECK(printed("show('norm', lambda a: jnp.linalg.norm(a, axis=1), a)") ==
        "norm (8,) P('data',) [11.83216  33.16625  55.533775]\n");
  // Rows of an embedding table sharded over 'model', looked up with ids sharded over 'data': the result's batch
  // dims follow the ids.
  REQUIRE(run_cell("table = jax.device_put(jnp.ones((64, 16)), NamedSharding(mesh, P('model', None)))\n"
                   "ids = jax.device_put(jnp.arange(16).reshape(4, 4) % 64, NamedSharding(mesh, P('data', None)))\n")
              .ok());
  CHECK(
      printed("out = jax.jit(lambda t, i: t[i])(table, ids)\nprint(out.shape, out.sharding.spec, float(out.sum()))") ==
      "(4, 4, 16) P('data',) 256.0\n");
}

TEST_CASE("Explicit mode: JAX's sharding rules and errors for sort, top_k, scatter and gather") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("em = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Explicit, AxisType.Explicit))\n"
                   "ea = jax.device_put(jnp.arange(64.).reshape(8, 8), NamedSharding(em, P('x', None)))\n"
                   "eb = jax.device_put(jnp.arange(64.).reshape(8, 8), NamedSharding(em, P('x', 'y')))\n")
              .ok());
  CHECK(printed("with jax.set_mesh(em):\n    print(jax.typeof(jnp.sort(ea, 1)), jax.typeof(lax.top_k(ea, 2)[1]))") ==
        "float32[8@x,8] int32[8@x,2]\n");
  CHECK(printed("with jax.set_mesh(em):\n    print(jax.typeof(jax.jit(lambda a: a.at[:, 0].set(1.))(ea)), "
                "jax.typeof(lax.stop_gradient(eb)))") == "float32[8@x,8] float32[8@x,8@y]\n");
  CHECK(printed("with jax.set_mesh(em):\n    attempt(lambda: jnp.sort(eb, 1))") ==
        "ShardingTypeError Arguments to sort must be unsharded over the sorting dimension. Got arg "
        "sharding=NamedSharding(mesh=AbstractMesh('x': 4, 'y': 2, axis_types=(Explicit, Explicit), device_kind=cpu, "
        "num_cores=None, platform=cpu), spec=P('x', 'y')) and sorting dimension=1\n");
  CHECK(
      printed("with jax.set_mesh(em):\n    attempt(lambda: jax.jit(lambda b: b.at[0].set(1.))(eb))") ==
      "ShardingTypeError Use `.at[...].set/add/mul/...(out_sharding=)` to provide output PartitionSpec for the "
      "scatter update as out sharding could not be resolved unambiguously (or would require collectives on inputs). "
      "Got operand=ShapedArray(float32[8@x,8@y]), indices=ShapedArray(int32[1]), updates=ShapedArray(float32[8@y])\n");
  // out_sharding= runs the update or lookup with the Explicit axes made Auto and types the result.
  CHECK(printed("with jax.set_mesh(em):\n"
                "    out = jax.jit(lambda b: b.at[0].set(1., out_sharding=P('x', 'y')))(eb)\n"
                "    print(jax.typeof(out), np.asarray(out)[:2, :2].tolist())\n"
                "    out = jax.jit(lambda b: b.at[jnp.array([0, 3])].get(out_sharding=P(None, 'y')))(eb)\n"
                "    print(jax.typeof(out), np.asarray(out)[:, :2].tolist())") ==
        "float32[8@x,8@y] [[1.0, 1.0], [8.0, 9.0]]\nfloat32[2,8@y] [[0.0, 1.0], [24.0, 25.0]]\n");
  CHECK(printed("with jax.set_mesh(em):\n    attempt(lambda: lax.top_k(eb, 2))") ==
        "ShardingTypeError The input should be unsharded over the axis along which to compute the top_k values. Got "
        "input type=float32[8@x,8@y] and axis=1\n");
}

TEST_CASE("an out-of-bounds static index with mode='fill' gathers and fills, where a plain index clamps") {
  REQUIRE(run_cell("import jax, jax.numpy as jnp\n").ok());
  CHECK(printed("x = jnp.arange(12.).reshape(3, 4)\n"
                "print(x.at[5, 1].get(mode='fill', fill_value=-1), x.at[1, 9].get(mode='fill'), x[5, 1])") ==
        "-1.0 nan 9.0\n");
  CHECK(printed("print(x.at[-4].get(mode='fill', fill_value=0).tolist(), x.at[2].get(mode='fill').tolist())") ==
        "[0.0, 0.0, 0.0, 0.0] [8.0, 9.0, 10.0, 11.0]\n");
  // jnp.array of traced scalars converts each where it is expanded, as JAX's jaxpr shows.
  const std::string jaxpr = printed("print(jax.make_jaxpr(lambda a, b: jnp.array([a, b]))(1, 2))");
  CHECK(jaxpr.find("c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a\n"
                   "    d:i32[1] = broadcast_in_dim c\n") != std::string::npos);
}
