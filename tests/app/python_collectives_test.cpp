// jax.lax collectives from Python: per-device values inside eager and jitted shard_map (1-D mesh of 8, 2x4
// mesh), JAX's keyword forms and errors, the collectives the communication log records, vmap and grad rules,
// and the primitive names and params make_jaxpr prints. Every expected value is a numpy reference computed
// in the same cell from the same blocks.
#include <doctest/doctest.h>

#include <string>

#include "api/transforms.h"
#include "app/python_test_support.h"
#include "python/host.h"
#include "spmd/comm_log.h"

using python_test::printed;
using shardscope::python::run_cell;

namespace {

constexpr const char* kPrelude = R"(import numpy as np
import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import PartitionSpec as P, NamedSharding
mesh = jax.make_mesh((8,), ('i',))
mesh2 = jax.make_mesh((2, 4), ('x', 'y'))
def put(a, m, spec):
    return jax.device_put(jnp.asarray(a), NamedSharding(m, spec))
def smap(f, m, ins, outs, **kw):
    return jax.shard_map(f, mesh=m, in_specs=ins, out_specs=outs, **kw)
def same(f, args, ref):
    # The eager shard_map and its jit must both equal the reference exactly.
    eager = np.asarray(f(*args))
    jitted = np.asarray(jax.jit(f)(*args))
    return eager.shape == ref.shape and np.array_equal(eager, ref) and np.array_equal(jitted, ref)
def err(thunk):
    try:
        thunk()
    except Exception as e:
        print(type(e).__name__ + ': ' + str(e))
    else:
        print('no error')
a = np.arange(32, dtype=np.int32)
blocks = a.reshape(8, 4)
x = put(a, mesh, P('i'))
)";

std::string last_run_kinds() {
  const auto run = shardscope::api::last_program_run();
  if (run == nullptr) return "";
  std::string kinds;
  for (const auto& record : run->log.records()) kinds += shardscope::collective_name(record.kind) + " ";
  return kinds;
}

}  // namespace

TEST_CASE("psum, pmean, pmax and pmin reduce every device's block, with JAX's keywords and pytrees") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("print(same(smap(lambda b: lax.psum(b, axis_name='i'), mesh, P('i'), P()), [x], blocks.sum(0)))") ==
        "True\n");
  CHECK(printed("print(same(smap(lambda b: lax.pmax(b, 'i'), mesh, P('i'), P()), [x], blocks.max(0)))") == "True\n");
  CHECK(printed("print(same(smap(lambda b: lax.pmin(x=b, axis_name='i'), mesh, P('i'), P()), [x], blocks.min(0)))") ==
        "True\n");
  // Means of integers are floats: (0 + 4 + ... + 28) / 8 = 14 etc., exact in float32.
  CHECK(printed("print(same(smap(lambda b: lax.pmean(b, axis_name=('i',)), mesh, P('i'), P()), [x], "
                "blocks.mean(0).astype(np.float32)))") == "True\n");
  // A pytree maps leaf by leaf; a Python number is the axis size times itself, as a Python number.
  CHECK(printed("def tree_body(b):\n"
                "    out = lax.psum({'s': b, 't': (2 * b, b)}, 'i')\n"
                "    n = lax.psum(1, 'i')\n"
                "    print(type(n).__name__, n, lax.psum(0.5, 'i'))\n"
                "    return out['s'] + out['t'][0] - out['t'][1] + n\n"
                "print(same(smap(tree_body, mesh, P('i'), P()), [x], 2 * blocks.sum(0) + 8))") ==
        "int 8 4.0\nint 8 4.0\nTrue\n");
  // One all-reduce per array leaf; the Python number needed none.
  CHECK(last_run_kinds() == "all-reduce all-reduce all-reduce ");
}

TEST_CASE("reductions over one axis or a tuple of axes of a 2x4 mesh") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("a2 = np.arange(64, dtype=np.int32).reshape(8, 8)\n"
                   "x2 = put(a2, mesh2, P('x', 'y'))\n"
                   "tiles = a2.reshape(2, 4, 4, 2)  # [bx, row, by, col]\n")
              .ok());
  // Over 'y': each row band adds its four (4, 2) blocks.
  CHECK(printed("print(same(smap(lambda b: lax.psum(b, 'y'), mesh2, P('x', 'y'), P('x', None)), [x2], "
                "tiles.sum(axis=2).reshape(8, 2)))") == "True\n");
  CHECK(printed("print(same(smap(lambda b: lax.psum(b, ('x', 'y')), mesh2, P('x', 'y'), P()), [x2], "
                "tiles.sum(axis=(0, 2))))") == "True\n");
  CHECK(printed("print(same(smap(lambda b: lax.pmax(b, axis_name=['x', 'y']), mesh2, P('x', 'y'), P()), [x2], "
                "tiles.max(axis=(0, 2))))") == "True\n");
  // axis_index over a tuple is row-major in the order written; axis_size is the product.
  CHECK(printed("print(same(smap(lambda: lax.axis_index(('x', 'y'))[None, None], mesh2, (), P('x', 'y')), [], "
                "np.arange(8, dtype=np.int32).reshape(2, 4)))") == "True\n");
  CHECK(printed("print(same(smap(lambda: lax.axis_index(('y', 'x'))[None, None], mesh2, (), P('x', 'y')), [], "
                "np.arange(8, dtype=np.int32).reshape(4, 2).T))") == "True\n");
  CHECK(printed("print(int(smap(lambda b: lax.axis_size(('x', 'y')), mesh2, P('x', 'y'), P())(x2)), "
                "lax.axis_size)")
            .find("8 <function") == 0);
}

TEST_CASE("all_gather stacks or concatenates the blocks in axis order") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("print(same(smap(lambda b: lax.all_gather(b, 'i'), mesh, P('i'), P(), check_vma=False), [x], "
                "blocks))") == "True\n");
  CHECK(printed("print(same(smap(lambda b: lax.all_gather(b, axis_name='i', tiled=True), mesh, P('i'), P(), "
                "check_vma=False), [x], a))") == "True\n");
  // The gathered value is typed varying, so out_specs P('i') concatenates eight identical copies.
  CHECK(printed("print(same(smap(lambda b: lax.all_gather(b, 'i', axis=1), mesh, P('i'), P('i')), [x], "
                "np.tile(blocks.T, (8, 1))))") == "True\n");
  CHECK(last_run_kinds() == "all-gather ");
}

TEST_CASE("psum_scatter leaves each device its piece of the sum (tiled, untiled, other dimensions)") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("c = np.arange(8 * 16, dtype=np.int32)\nxc = put(c, mesh, P('i'))\ncb = c.reshape(8, 16)\n").ok());
  CHECK(printed("print(same(smap(lambda b: lax.psum_scatter(b, 'i', tiled=True), mesh, P('i'), P('i')), [xc], "
                "cb.sum(0)))") == "True\n");
  CHECK(last_run_kinds() == "reduce-scatter ");
  // Untiled: the (8,) block's dim is the axis size and disappears; device k keeps element k of the sum.
  CHECK(printed("print(same(smap(lambda b: lax.psum_scatter(b.reshape(2, 8), axis_name='i', scatter_dimension=1)"
                "[None], mesh, P('i'), P('i')), [xc], cb.reshape(8, 2, 8).sum(0).T.reshape(8, 2)))") == "True\n");
  // FSDP-style: rows of a (16, 8) gradient block scattered in tiles of two.
  CHECK(printed("print(same(smap(lambda b: lax.psum_scatter(b.reshape(2, 8), 'i', scatter_dimension=1, tiled=True),"
                " mesh, P('i'), P(None, 'i')), [xc], cb.reshape(8, 2, 8).sum(0)))") == "True\n");
}

TEST_CASE("ppermute moves blocks along (source, destination) pairs, devices that receive nothing get zeros") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("ring = [(j, (j + 1) % 8) for j in range(8)]\n"
                "print(same(smap(lambda b: lax.ppermute(b, axis_name='i', perm=ring), mesh, P('i'), P('i')), [x], "
                "np.roll(blocks, 1, axis=0).reshape(-1)))") == "True\n");
  CHECK(last_run_kinds() == "collective-permute ");
  CHECK(printed("ref = np.zeros_like(blocks); ref[1] = blocks[0]; ref[2] = blocks[1]\n"
                "print(same(smap(lambda b: lax.ppermute(b, 'i', [(0, 1), (1, 2)]), mesh, P('i'), P('i')), [x], "
                "ref.reshape(-1)))") == "True\n");
  // pshuffle: destination k takes the block of source perm[k].
  CHECK(printed("perm = [3, 0, 1, 2, 7, 4, 5, 6]\n"
                "print(same(smap(lambda b: lax.pshuffle(b, 'i', perm), mesh, P('i'), P('i')), [x], "
                "blocks[perm].reshape(-1)))") == "True\n");
  // Over ('x', 'y') of a 2x4 mesh the indices run over the flattened mesh: a shift by 2 of eight blocks.
  CHECK(printed("x8 = put(a, mesh2, P(('x', 'y')))\n"
                "shift = [(j, (j + 2) % 8) for j in range(8)]\n"
                "print(same(smap(lambda b: lax.ppermute(b, ('x', 'y'), shift), mesh2, P(('x', 'y')), P(('x', 'y'))), "
                "[x8], np.roll(blocks, 2, axis=0).reshape(-1)))") == "True\n");
}

TEST_CASE("all_to_all splits, exchanges and concatenates blocks (tiled and untiled)") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("m = np.arange(64, dtype=np.int32).reshape(8, 8)\nxm = put(m, mesh, P('i', None))\n"
                   "t = np.arange(64 * 3, dtype=np.int32).reshape(64, 3)\nxt = put(t, mesh, P('i'))\n")
              .ok());
  // Rows split over the devices become columns: JAX's test_all_to_all.
  CHECK(printed("print(same(smap(lambda b: lax.all_to_all(b, 'i', 1, 1, tiled=True), mesh, P('i', None), "
                "P(None, 'i')), [xm], m.T.reshape(1, 64)))") == "True\n");
  CHECK(last_run_kinds() == "all-to-all ");
  // Untiled, split 0 concat 0: device p's row q is device q's row p.
  CHECK(printed("print(same(smap(lambda b: lax.all_to_all(b, 'i', split_axis=0, concat_axis=0), mesh, P('i'), "
                "P('i')), [xt], t.reshape(8, 8, 3).transpose(1, 0, 2).reshape(64, 3)))") == "True\n");
  // Untiled, split 0 concat 1: the received rows become the columns of a (3, 8) block.
  CHECK(printed("print(same(smap(lambda b: lax.all_to_all(b, axis_name='i', split_axis=0, concat_axis=1), mesh, "
                "P('i'), P('i')), [xt], t.reshape(8, 8, 3).transpose(1, 2, 0).reshape(24, 8)))") == "True\n");
  CHECK(printed("print(same(smap(lambda b: lax.pswapaxes(b, 'i', 0), mesh, P('i'), P('i')), [xt], "
                "t.reshape(8, 8, 3).transpose(1, 0, 2).reshape(64, 3)))") == "True\n");
}

TEST_CASE("axis_index, axis_size and pcast on a 1-D mesh") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("print(same(smap(lambda: lax.axis_index(axis_name='i')[None], mesh, (), P('i')), [], "
                "np.arange(8, dtype=np.int32)))") == "True\n");
  CHECK(printed("print(smap(lambda b: lax.axis_size('i'), mesh, P('i'), P())(x))") == "8\n");
  // pcast(to='varying') only retypes: out_specs P('i') then concatenates the replicated value.
  CHECK(printed("print(same(smap(lambda b: lax.pcast(b.sum(keepdims=True), 'i', to='varying'), mesh, P(), P('i')), "
                "[put(a, mesh, P())], np.full(8, a.sum(), np.int32)))") == "True\n");
}

TEST_CASE("collective errors carry JAX's exception types and messages") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("err(lambda: lax.psum(jnp.ones(3), 'z'))") == "NameError: unbound axis name: z\n");
  CHECK(printed("err(lambda: jax.jit(lambda v: lax.psum(v, 'z'))(jnp.ones(3)))") ==
        "NameError: Found an unbound axis name: z. To fix this, please call psum under `jax.shard_map`.\n");
  CHECK(printed("err(lambda: smap(lambda b: lax.ppermute(b, 'z', [(0, 1)]), mesh, P('i'), P('i'), "
                "check_vma=False)(x))") ==
        "NameError: Found an unbound axis name: z. To fix this, please call ppermute under `jax.shard_map`.\n");
  CHECK(printed("err(lambda: smap(lambda b: lax.all_gather(b, 'z'), mesh, P('i'), P('i'))(x))") ==
        "NameError: unbound axis name: z\n");
  CHECK(printed("err(lambda: smap(lambda b: lax.psum_scatter(b, 'i'), mesh, P('i'), P('i'))(x))") ==
        "ValueError: reduce_scatter operand scatter dimension size 4 must match shard count 8\n");
  CHECK(printed("err(lambda: smap(lambda b: lax.psum_scatter(b, 'i', tiled=True), mesh, P('i'), P('i'))(x))") ==
        "ValueError: tiled reduce_scatter operand scatter dimension size 4 must be divisible by shard_count 8\n");
  CHECK(printed("err(lambda: smap(lambda b: lax.ppermute(b, 'i', [(0, 1), (1, 1)]), mesh, P('i'), P('i'))(x))") ==
        "ValueError: ppermute sources and destinations must be unique, got ((0, 1), (1, 1)).\n");
  CHECK(printed("err(lambda: smap(lambda b: lax.ppermute(b, 'i', {(0, 1)}), mesh, P('i'), P('i'))(x))") ==
        "TypeError: `perm` passed to `jax.lax.ppermute` must be a list or a tuple. Got perm of type <class 'set'>\n");
  CHECK(printed("err(lambda: lax.pshuffle(x, 'i', [0, 0]))") ==
        "ValueError: `perm` does not represent a permutation: [0, 0]\n");
  CHECK(printed("err(lambda: smap(lambda b: lax.all_to_all(b, 'i', 0, 0, tiled=True), mesh, P('i'), P('i'))(x))") ==
        "ValueError: The size of all_to_all split_axis (4) has to be divisible by the size of the named axis i (8)\n");
  CHECK(printed("err(lambda: smap(lambda b: lax.pcast(b, 'i', to='varying'), mesh, P('i'), P('i'))(x))") ==
        "ValueError: Unsupported pcast from=varying, to='varying'\n");
  CHECK(printed("err(lambda: lax.psum(x, 'i', axis_index_groups=[[0, 1], [2, 3]]))") ==
        "NotImplementedError: jax.lax.psum with axis_index_groups is not supported by shardscope\n");
  CHECK(printed("err(lambda: lax.pvary)") == "AttributeError: module 'jax.lax' has no attribute 'pvary'\n");
}

TEST_CASE("grad through collectives uses their transposes") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("w = np.arange(32, dtype=np.float32) / 16\nxw = put(w, mesh, P('i'))\n"
                   "coef = put(np.arange(32, dtype=np.float32), mesh, P('i'))\n")
              .ok());
  // d/dx sum(coef * ppermute(x)): the cotangent travels back along the inverse permutation.
  CHECK(
      printed("ring = [(j, (j + 1) % 8) for j in range(8)]\n"
              "def loss(v, c):\n"
              "    f = smap(lambda b, cb: lax.psum(jnp.sum(cb * lax.ppermute(b, 'i', ring)), 'i'), mesh, "
              "(P('i'), P('i')), P())\n"
              "    return f(v, c)\n"
              "g = jax.grad(loss)(xw, coef)\n"
              "print(np.array_equal(np.asarray(g), np.roll(np.arange(32.0).reshape(8, 4), -1, axis=0).reshape(-1)))") ==
      "True\n");
  // all_gather's transpose is psum_scatter: each block's gradient is the sum of the eight copies' weights.
  CHECK(printed("def loss2(v):\n"
                "    f = smap(lambda b: jnp.sum(lax.all_gather(b, 'i', tiled=True) * jnp.arange(32.0))[None], mesh, "
                "P('i'), P('i'))\n"
                "    return f(v).sum()\n"
                "print(np.array_equal(np.asarray(jax.grad(loss2)(xw)), 8 * np.arange(32.0)))") == "True\n");
  // all_to_all's transpose swaps split and concat axes: the gradient of a weighted sum is the weight itself.
  CHECK(printed("m = put(np.arange(64, dtype=np.float32).reshape(8, 8) / 16, mesh, P('i', None))\n"
                "wt = put(np.arange(64, dtype=np.float32).reshape(8, 8), mesh, P(None, 'i'))\n"
                "def loss3(v, wv):\n"
                "    f = smap(lambda b, wb: lax.psum(jnp.sum(lax.all_to_all(b, 'i', 1, 0, tiled=True) * wb), 'i'), "
                "mesh, (P('i', None), P(None, 'i')), P())\n"
                "    return f(v, wv)\n"
                "print(np.array_equal(np.asarray(jax.grad(loss3)(m, wt)), np.arange(64.0).reshape(8, 8)))") ==
        "True\n");
}

TEST_CASE("vmap with an axis_name runs psum, all_gather, ppermute, all_to_all and axis_index over the batch") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("v = np.arange(12.0, dtype=np.float32).reshape(3, 4)\n").ok());
  CHECK(printed("print(jax.vmap(lambda r: lax.psum(r, 'b'), axis_name='b')(v))") ==
        "[[12. 15. 18. 21.]\n [12. 15. 18. 21.]\n [12. 15. 18. 21.]]\n");
  CHECK(printed("print(np.array_equal(jax.vmap(lambda r: lax.all_gather(r, 'b'), axis_name='b')(v), "
                "np.stack([v] * 3)))") == "True\n");
  CHECK(printed("print(np.array_equal(jax.vmap(lambda r: lax.ppermute(r, 'b', [(0, 1), (1, 2), (2, 0)]), "
                "axis_name='b')(v), np.roll(v, 1, axis=0)))") == "True\n");
  CHECK(printed("print(jax.vmap(lambda r: lax.axis_index('b'), axis_name='b')(v))") == "[0 1 2]\n");
  // all_to_all over the batch axis: instance p's element q is instance q's element p (v[:, :3] transposed).
  CHECK(printed("print(np.array_equal(jax.vmap(lambda r: lax.all_to_all(r, 'b', 0, 0), axis_name='b')(v[:, :3]), "
                "v[:, :3].T))") == "True\n");
}

TEST_CASE("make_jaxpr shows JAX 0.11's collective primitives and params") {
  REQUIRE(run_cell(kPrelude).ok());
  const std::string text = printed(
      "def body(b):\n"
      "    s = lax.psum(b, 'i')\n"
      "    g = lax.all_gather(b, 'i', tiled=True)\n"
      "    r = lax.psum_scatter(g, 'i', tiled=True)\n"
      "    p = lax.ppermute(r, 'i', [(0, 1), (1, 0)])\n"
      "    t = lax.all_to_all(g, 'i', 0, 0, tiled=True)\n"
      "    return t, p + s + lax.axis_index('i') + lax.pmax(b, 'i')\n"
      "print(jax.make_jaxpr(smap(body, mesh, P('i'), P('i')))(x))");
  CHECK(text.find("psum_invariant[axes=('i',)]") != std::string::npos);
  CHECK(text.find("all_gather[") != std::string::npos);
  CHECK(text.find("all_gather_dimension=0") != std::string::npos);
  CHECK(text.find("reduce_scatter[") != std::string::npos);
  CHECK(text.find("axis_name=('i',)") != std::string::npos);
  CHECK(text.find("axis_size=8") != std::string::npos);
  CHECK(text.find("scatter_dimension=0") != std::string::npos);
  CHECK(text.find("ppermute[axis_name=('i',) perm=((0, 1), (1, 0))]") != std::string::npos);
  CHECK(text.find("axis_name=i") != std::string::npos);  // all_to_all keeps the bare name
  CHECK(text.find("axis_index[axis_name=i]") != std::string::npos);
  CHECK(text.find("pmax[axes=('i',) axis_index_groups=None]") != std::string::npos);
  CHECK(printed("print(jax.make_jaxpr(smap(lambda b: lax.psum(2.0, 'i') + lax.psum(b.sum(), 'i'), mesh, P('i'), "
                "P()))(x))")
            .find("psum_invariant") != std::string::npos);
  // A psum of an invariant value is cast to varying first.
  CHECK(printed("print(jax.make_jaxpr(smap(lambda b: lax.psum(lax.psum(b, 'i'), 'i'), mesh, P('i'), P()))(x))")
            .find("e:i32[4]{V:i} = pvary[axes=('i',)] d\n          f:i32[4] = psum_invariant[axes=('i',)] e") !=
        std::string::npos);
  // Without check_vma, psum keeps its own name.
  CHECK(printed("print(jax.make_jaxpr(smap(lambda b: lax.psum(b, 'i'), mesh, P('i'), P(), check_vma=False))(x))")
            .find("psum[axes=('i',) axis_index_groups=None]") != std::string::npos);
}

TEST_CASE("jit(shard_map) logs the collectives its body ran") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("ring = [(j, (j + 1) % 8) for j in range(8)]\n"
                   "jf = jax.jit(smap(lambda b: lax.ppermute(lax.psum_scatter(jnp.tile(b, 2), 'i', tiled=True), 'i', "
                   "ring), mesh, P('i'), P('i')))\n"
                   "out = jf(x)\n")
              .ok());
  CHECK(last_run_kinds().find("reduce-scatter collective-permute") != std::string::npos);
}

TEST_CASE("grad through psum_scatter gathers the cotangent back") {
  REQUIRE(run_cell(kPrelude).ok());
  // d/dv sum(w_k * psum_scatter(v)_k): every device's block gets the gathered weights.
  CHECK(printed("def loss(v):\n"
                "    f = smap(lambda b: lax.psum(jnp.sum(lax.psum_scatter(b, 'i', tiled=True) * "
                "(lax.axis_index('i') + 1.0)), 'i'), mesh, P('i'), P())\n"
                "    return f(v)\n"
                "g = jax.grad(loss)(put(np.zeros(128, np.float32), mesh, P('i')))\n"
                "print(np.array_equal(np.asarray(g), np.tile(np.repeat(np.arange(1.0, 9.0), 2), 8)))") == "True\n");
}

TEST_CASE("all_gather(to='invarying') gathers into a value typed invariant over the axis") {
  REQUIRE(run_cell(kPrelude).ok());
  // Invariant, so out_specs P() passes the check without check_vma=False.
  CHECK(printed("print(same(smap(lambda b: lax.all_gather(b, 'i', tiled=True, to='invarying'), mesh, P('i'), P()), "
                "[x], a))") == "True\n");
  CHECK(printed("print(jax.make_jaxpr(smap(lambda b: lax.all_gather(b, 'i', to='invarying'), mesh, P('i'), "
                "P()))(x))")
            .find("i32[8,4] = all_gather_invariant[") != std::string::npos);
  CHECK(printed("err(lambda: lax.all_gather(x, 'i', to='sideways'))")
            .starts_with("ValueError: Got unexpected `to` value for `jax.lax.all_gather`. Allowed `to` values are: "));
}

TEST_CASE("shard_map without a mesh takes the context mesh at its first call and keeps it") {
  REQUIRE(run_cell("import jax, jax.numpy as jnp\n"
                   "@jax.shard_map(in_specs=jax.P('stages'), out_specs=jax.P())\n"
                   "def total(x):\n    return jax.lax.psum(x.sum(), 'stages')\n")
              .ok());
  // Decorated before any mesh is set (JAX checks the context at the call, not at decoration).
  CHECK(printed("auto = (jax.sharding.AxisType.Auto,)\n"
                "jax.set_mesh(jax.make_mesh((2,), ('stages',), axis_types=auto))\nprint(total(jnp.arange(8.)))") ==
        "28.0\n");
  CHECK(printed("jax.set_mesh(jax.make_mesh((4,), ('other',), axis_types=auto))\n"
                "print(total(jnp.arange(8.)))") == "28.0\n");
  CHECK(printed("jax.set_mesh(None)\n"
                "try:\n    jax.shard_map(lambda x: x, out_specs=jax.P())(jnp.ones(2))\n"
                "except ValueError as e:\n    print(e)") ==
        "The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to enter into a mesh context\n");
}

TEST_CASE("out_specs and pmap's out_axes are prefixes of the output tree, broadcast once the body has run") {
  REQUIRE(run_cell(kPrelude).ok());
  // A train step's (state, metrics) pair under out_specs=(P(), P()): the metrics dict holds several leaves.
  CHECK(
      printed("auto = jax.make_mesh((8,), ('i',), axis_types=(jax.sharding.AxisType.Auto,))\n"
              "def step(state, metrics, batch):\n"
              "    m = {'loss': (batch.sum(), 3), 'n': batch.shape[0]}\n"
              "    m = jax.tree_util.tree_map(lambda v: lax.psum(v, 'i'), m)\n"
              "    if metrics is not None:\n"
              "        m = jax.tree_util.tree_map(jnp.add, metrics, m)\n"
              "    return state, m\n"
              "f = jax.jit(jax.shard_map(step, mesh=auto, in_specs=(P(), P(), P('i')), out_specs=(P(), P()), "
              "check_vma=False))\n"
              "state, metrics = f(jnp.ones(2), None, jnp.arange(16.))\n"
              "state, metrics = f(state, metrics, jnp.arange(16.))\n"
              "print(jax.tree_util.tree_map(lambda v: (v.tolist(), str(v.sharding.spec)), metrics))\n"
              "g = jax.shard_map(lambda v: (v, (v.sum(), v * 2)), mesh=auto, in_specs=P('i'), out_specs=(P('i'), (P(), "
              "P('i'))), check_vma=False)\n"
              "a, (b, c) = g(jnp.arange(8.))\n"
              "print(a.tolist(), b.tolist(), c.tolist())\n"
              "try:\n"
              "    jax.shard_map(lambda v: (v, v), mesh=auto, in_specs=P('i'), out_specs=(P('i'),) * 3)(jnp.ones(8))\n"
              "except ValueError as e:\n"
              "    print(str(e).splitlines()[0])\n") ==
      "{'loss': ((240.0, 'P()'), (48, 'P()')), 'n': (32, 'P()')}\n"
      "[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0] 0.0 [0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0]\n"
      "pytree structure error: different lengths of tuple at key path\n");
  CHECK(printed("out = jax.pmap(lambda v: (v * 2, {'s': v.sum(), 't': (v, -v)}), out_axes=(0, "
                "None))(jnp.arange(8.).reshape(8, 1))\n"
                "print(out[0].shape, jax.tree_util.tree_map(lambda a: a.tolist(), out[1]))\n") ==
        "(8, 1) {'s': 0.0, 't': ([0.0], [-0.0])}\n");
}
