// Shardings through nested calls and shard_map inside jit: the output shardings JAX gives, no collective JAX
// would not insert, and gradients through a checked shard_map's psum counted once per device.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "api/transforms.h"
#include "app/python_test_support.h"
#include "python/host.h"

using python_test::printed;
using shardscope::python::run_cell;

namespace {

constexpr const char* kPrelude =
    "import numpy as np\nimport jax\nimport jax.numpy as jnp\nfrom jax import lax\n"
    "from jax.sharding import PartitionSpec as P, NamedSharding, AxisType\n"
    "mesh = jax.make_mesh((4, 2), ('data', 'model'), axis_types=(AxisType.Auto, AxisType.Auto))\n"
    "mesh_xy = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Auto, AxisType.Auto))\n"
    "x = jax.device_put(jnp.arange(32.).reshape(8, 4) / 16, NamedSharding(mesh, P('data', None)))\n"
    "w = jax.device_put(jnp.arange(24.).reshape(4, 6) / 16 - 0.5, NamedSharding(mesh, P(None, 'model')))\n"
    "expected = np.maximum(np.asarray(x) @ np.asarray(w), 0)\n";

std::size_t collectives_of_last_run() {
  const auto record = shardscope::api::last_program_run();
  REQUIRE(record != nullptr);
  return record->log.records().size();
}

}  // namespace

TEST_CASE("a jitted activation inside jit keeps the matmul's sharding and moves nothing") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("y = jax.jit(lambda x, w: jax.nn.relu(x @ w))(x, w)\nprint(y.sharding.spec)\n"
                "print(np.array_equal(np.asarray(y), expected))") == "P('data', 'model')\nTrue\n");
  CHECK(collectives_of_last_run() == 0);
  // A user's own jitted helper called inside another jit is partitioned with its caller.
  CHECK(printed("@jax.jit\ndef helper(a):\n    return jnp.maximum(a, 0.)\n"
                "y = jax.jit(lambda x, w: helper(x @ w) * 2)(x, w)\nprint(y.sharding.spec)\n"
                "print(np.array_equal(np.asarray(y), 2 * expected))") == "P('data', 'model')\nTrue\n");
  CHECK(collectives_of_last_run() == 0);
  // gelu and softmax are jitted functions in JAX: the row sharding survives them.
  CHECK(printed("y = jax.jit(lambda x, w: jax.nn.softmax(jax.nn.gelu(x @ w), axis=0))(x, w)\n"
                "print(y.sharding.spec)") == "P('data', 'model')\n");
}

TEST_CASE("jnp.where under jit keeps a 2-D sharding") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("a = jax.device_put(jnp.arange(64.).reshape(8, 8), NamedSharding(mesh_xy, P('x', 'y')))\n"
                "b = jax.jit(lambda a: jnp.where(a > 3, a, 0.))(a)\nprint(b.sharding.spec)\n"
                "print(np.array_equal(np.asarray(b), np.where(np.asarray(a) > 3, np.asarray(a), 0.)))") ==
        "P('x', 'y')\nTrue\n");
  CHECK(collectives_of_last_run() == 0);
}

TEST_CASE("jit of shard_map returns the out_specs sharding without gathering its operand") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("a = jax.device_put(jnp.arange(64.).reshape(8, 8), NamedSharding(mesh_xy, P('x', 'y')))\n"
                   "f = jax.shard_map(lambda b: b * 2 + lax.axis_index('y'), mesh=mesh_xy, in_specs=P('x', 'y'),\n"
                   "                  out_specs=P('x', 'y'))\n")
              .ok());
  CHECK(printed("eager = f(a)\njitted = jax.jit(f)(a)\nprint(jitted.sharding.spec)\n"
                "print(np.array_equal(np.asarray(eager), np.asarray(jitted)))") == "P('x', 'y')\nTrue\n");
  CHECK(collectives_of_last_run() == 0);
  // The body's psum is the only collective; the result is replicated as out_specs=P() says.
  CHECK(printed("g = jax.shard_map(lambda b: lax.psum(b.sum(), ('x', 'y')), mesh=mesh_xy, in_specs=P('x', 'y'),\n"
                "                  out_specs=P())\nr = jax.jit(g)(a)\nprint(r, r.sharding.spec)") == "2016.0 P()\n");
  CHECK(collectives_of_last_run() == 1);
  CHECK(printed("print('all-reduce' in jax.jit(g).lower(a).compile().as_text())") == "True\n");
  // An operand placed otherwise moves to the in_specs first.
  CHECK(printed("c = jax.device_put(jnp.arange(64.).reshape(8, 8), NamedSharding(mesh_xy, P('y', 'x')))\n"
                "print(np.array_equal(np.asarray(jax.jit(f)(c)), np.asarray(f(c))))") == "True\n");
}

TEST_CASE("grad through a checked shard_map's psum hands each device its cotangent once") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("m8 = jax.make_mesh((8,), ('x',), axis_types=(AxisType.Auto,))\n"
                   "def loss(w, v):\n"
                   "    return jax.shard_map(lambda w, v: lax.psum((w * v).sum(), 'x'), mesh=m8,\n"
                   "                         in_specs=(P('x'), P('x')), out_specs=P())(w, v)\n"
                   "wv = jnp.arange(16.) / 16\nvv = jnp.arange(16.) / 4 - 1\n")
              .ok());
  CHECK(printed("print(np.array_equal(np.asarray(jax.grad(loss)(wv, vv)), np.asarray(vv)))") == "True\n");
  CHECK(printed("print(np.array_equal(np.asarray(jax.jit(jax.grad(loss))(wv, vv)), np.asarray(vv)))") == "True\n");
  CHECK(printed("print(loss(wv, vv) == (np.asarray(wv) * np.asarray(vv)).sum())") == "True\n");
  // The checked body sums into an invariant value, as JAX 0.11 prints it.
  const std::string jaxpr = printed("print(jax.make_jaxpr(loss)(wv, vv))");
  CHECK(jaxpr.find("psum_invariant[axes=('x',)]") != std::string::npos);
  // An invariant operand is cast to varying first, so it is counted once per device.
  CHECK(printed("h = jax.shard_map(lambda v: lax.psum(v, 'x'), mesh=m8, in_specs=P(), out_specs=P())\n"
                "print(h(jnp.float32(1.5)))") == "12.0\n");
  CHECK(printed("print(jax.make_jaxpr(h)(jnp.float32(1.5)))").find("pvary[axes=('x',)]") != std::string::npos);
}

TEST_CASE("a ring matmul: ppermute inside fori_loop inside a jitted shard_map") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("from functools import partial\n"
                   "m8 = jax.make_mesh((8,), ('x',), axis_types=(AxisType.Auto,))\n"
                   "@partial(jax.shard_map, mesh=m8, in_specs=(P('x', None), P('x', None)), out_specs=P('x', None))\n"
                   "def ring(lhs, blk):\n"
                   "    n, i = lax.axis_size('x'), lax.axis_index('x')\n"
                   "    def step(k, carry):\n"
                   "        acc, blk = carry\n"
                   "        cols = lax.dynamic_slice_in_dim(lhs, ((i - k) % n) * blk.shape[0], blk.shape[0], axis=1)\n"
                   "        return acc + cols @ blk, lax.ppermute(blk, 'x', [(j, (j + 1) % n) for j in range(n)])\n"
                   "    acc0 = lax.pcast(jnp.zeros((lhs.shape[0], blk.shape[1])), ('x',), to='varying')\n"
                   "    return lax.fori_loop(0, n, step, (acc0, blk))[0]\n"
                   "lhs = jnp.arange(64.).reshape(8, 8) / 16\nrhs = jnp.arange(64.).reshape(8, 8) / 16 - 1\n")
              .ok());
  CHECK(
      printed("out = jax.jit(ring)(lhs, rhs)\nprint(np.array_equal(np.asarray(out), np.asarray(lhs) @ np.asarray(rhs)),"
              " out.sharding.spec)") == "True P('x',)\n");
  // Eight steps, each a collective-permute of one block; nothing else moves.
  const auto record = shardscope::api::last_program_run();
  REQUIRE(record != nullptr);
  CHECK(record->log.records().size() == 8);
  CHECK(printed("print(lax.slice_in_dim(lhs, 1, 3)[:, 0] * 16, lax.index_in_dim(lhs, -1, keepdims=False)[:2] * 16)") ==
        "[ 8. 16.] [56. 57.]\n");
}

TEST_CASE("a nested jit's own shardings pin the values crossing its boundary") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("inner = jax.jit(lambda a: a * 2, out_shardings=NamedSharding(mesh, P(None, 'model')))\n"
                   "inner_in = jax.jit(lambda a: a.sum(axis=0), in_shardings=NamedSharding(mesh, P(None, 'model')))\n")
              .ok());
  CHECK(printed("print(jax.jit(lambda a: inner(a) + 1)(x).sharding.spec)") == "P(None, 'model')\n");
  // The caller's argument is uncommitted: the inner in_shardings places it, and the sum keeps the columns' axis.
  CHECK(printed("print(jax.jit(lambda a: inner_in(a))(jnp.arange(32.).reshape(8, 4)).sharding.spec)") ==
        "P('model',)\n");
  const std::string jaxpr = printed("print(jax.make_jaxpr(jax.jit(lambda a: inner_in(a)))(x))");
  CHECK(jaxpr.find("in_shardings=(NamedSharding(mesh=Mesh('data': 4, 'model': 2, axis_types=(Auto, Auto)), "
                   "spec=P(None, 'model'), memory_kind=device),)") != std::string::npos);
  // Transformations drop the per-argument shardings of the original signature.
  CHECK(printed("print(jax.grad(lambda a: inner(a).sum())(x).shape)") == "(8, 4)\n");
}

TEST_CASE("sliced, padded, concatenated and cumulative dims keep a sharding that divides their new size") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("a = jax.device_put(jnp.arange(64.).reshape(8, 8), NamedSharding(mesh, P('data', 'model')))\n"
                   "def spec_of(fn):\n    return jax.jit(fn)(a).sharding.spec\n")
              .ok());
  CHECK(printed("print(spec_of(lambda a: a[:4]), spec_of(lambda a: a[:7]), spec_of(lambda a: a[:, 1:5]))") ==
        "P('data', 'model') P(None, 'model') P('data', 'model')\n");
  CHECK(printed("print(spec_of(lambda a: jnp.pad(a, ((2, 2), (0, 0)))), spec_of(lambda a: jnp.pad(a, 1)))") ==
        "P('data', 'model') P(None, 'model')\n");
  CHECK(printed("print(spec_of(lambda a: jnp.concatenate([a, a], 0)), spec_of(lambda a: jnp.cumsum(a, 1)))") ==
        "P('data', 'model') P('data', 'model')\n");
  CHECK(printed("print(spec_of(lambda a: a[::-1]), np.array_equal(np.asarray(jax.jit(lambda a: jnp.pad(a, 1))(a)),"
                " np.pad(np.asarray(a), 1)))") == "P('data', 'model') True\n");
}

TEST_CASE("a permuted dim that stays sharded moves only neighbours' elements") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell(
              "a = jax.device_put(jnp.arange(64.).reshape(8, 8), NamedSharding(mesh, P('data', 'model')))\n"
              "import re\n"
              "def kinds(fn):\n"
              "    text = jax.jit(fn).lower(a).compile().as_text()\n"
              "    return sorted(set(re.findall(r'(all-gather|all-reduce|all-to-all|collective-permute)\\(', text)))\n")
              .ok());
  // Every device reads rows devices before it hold: a left halo three rows wide at most (device 3 reads row 3),
  // sent as one collective-permute per block width (from one and from two devices back), and the run logs them.
  CHECK(printed("print(kinds(lambda a: a[:4]), jax.jit(lambda a: a[:4])(a).sharding.spec)") ==
        "['collective-permute'] P('data', 'model')\n");
  const auto record = shardscope::api::last_program_run();
  REQUIRE(record != nullptr);
  REQUIRE(record->log.records().size() == 2);
  CHECK(record->log.records()[0].origin.find("slice operand 0: neighbours' elements along dim 0") != std::string::npos);
  // Each device's even rows and its own padded columns are already local: nothing moves.
  CHECK(printed("print(kinds(lambda a: a[::2]), kinds(lambda a: jnp.pad(a, ((0, 0), (1, 1)))))") == "[] []\n");
  REQUIRE(run_cell("padded = jax.jit(lambda a: jnp.pad(a, ((0, 0), (1, 1))))(a)").ok());
  CHECK(collectives_of_last_run() == 0);
  // Reversal sends blocks across the mesh; a concatenation regroups blocks with an all-to-all, as XLA does.
  CHECK(printed("print(kinds(lambda a: a[::-1]), kinds(lambda a: jnp.concatenate([a, a], 0)))") ==
        "['collective-permute'] ['all-to-all']\n");
  CHECK(printed("print(np.array_equal(np.asarray(jax.jit(lambda a: jnp.concatenate([a[::-1], a[:4]], 0))(a)),"
                " np.concatenate([np.asarray(a)[::-1], np.asarray(a)[:4]], 0)))") == "True\n");
}

TEST_CASE("a reduction over two sharded dims all-reduces each dim on its own") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("a = jax.device_put(jnp.arange(64.).reshape(8, 8), NamedSharding(mesh, P('data', 'model')))\n"
                "print(jax.jit(lambda a: a.sum())(a))") == "2016.0\n");
  const auto record = shardscope::api::last_program_run();
  REQUIRE(record != nullptr);
  REQUIRE(record->log.records().size() == 2);
  CHECK(record->log.records()[0].axes == std::vector<std::string>{"data"});
  CHECK(record->log.records()[1].axes == std::vector<std::string>{"model"});
  CHECK(printed("print(jax.jit(lambda a: a.sum()).lower(a).compile().as_text().count('all-reduce('))") == "2\n");
}

TEST_CASE("lax.dynamic_update_slice and the cumulative lax ops keep their operand's sharding") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("a = jax.device_put(jnp.arange(64.).reshape(8, 8), NamedSharding(mesh, P('data', 'model')))").ok());
  CHECK(printed("r = jax.jit(lambda a: lax.dynamic_update_slice(a, jnp.ones((2, 8)), (3, 0)))(a)\n"
                "print(r.sharding.spec, np.asarray(r)[3:5, :2].tolist(), float(r.sum()))") ==
        "P('data', 'model') [[1.0, 1.0], [1.0, 1.0]] 1528.0\n");
  CHECK(printed("print(jax.jit(lambda a: lax.cummax(a, 1))(a).sharding.spec, lax.cummax(jnp.array([1., 3., 2.])),"
                " lax.cumsum(jnp.arange(4), reverse=True))") == "P('data', 'model') [1. 3. 3.] [6 6 5 3]\n");
  CHECK(printed("print(lax.dynamic_update_index_in_dim(jnp.zeros((3, 2)), jnp.ones(2), 1, 0).tolist())") ==
        "[[0.0, 0.0], [1.0, 1.0], [0.0, 0.0]]\n");
}

TEST_CASE("a gradient on an all-Explicit mesh types its filled zeros like the values beside them") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("em = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Explicit, AxisType.Explicit))\n"
                "with jax.set_mesh(em):\n"
                "    w = jax.device_put(jnp.ones((8, 16)), P(None, 'y'))\n"
                "    xe = jax.device_put(jnp.ones((4, 8)), P('x', None))\n"
                "    g = jax.jit(jax.grad(lambda w, t: jnp.mean(jax.nn.relu(t @ w) ** 2)))(w, xe)\n"
                "    print(jax.typeof(g), g.sharding.spec, float(g.sum()))") == "float32[8,16@y] P(None, 'y') 128.0\n");
}

TEST_CASE("a lookup into a table sharded along the indexed dim sums the devices' partial rows, as XLA does") {
  REQUIRE(run_cell(kPrelude).ok());
  // The vocabulary dim of the table is split over 'model': each device holds half the rows. XLA looks each id up in
  // the device's own half (zeros for ids it does not hold) and all-reduces over 'model', never gathering the table.
  REQUIRE(run_cell("table = jax.device_put(jnp.arange(64.).reshape(16, 4) - 20, NamedSharding(mesh, P('model', "
                   "None)))\nids = jax.device_put(jnp.array([3, 15, 0, 8, 8, 1, 14, 7]), NamedSharding(mesh, "
                   "P('data')))\n")
              .ok());
  CHECK(printed("rows = jax.jit(lambda t, i: t[i])(table, ids)\nprint(rows.sharding.spec)\n"
                "print(np.array_equal(np.asarray(rows), np.asarray(table)[np.asarray(ids)]))") == "P('data',)\nTrue\n");
  const auto record = shardscope::api::last_program_run();
  REQUIRE(record != nullptr);
  REQUIRE(record->log.records().size() == 1);
  CHECK(record->log.records()[0].kind == shardscope::CollectiveKind::kAllReduce);
  CHECK(record->log.records()[0].axes == std::vector<std::string>{"model"});
  // Signed zeros and the fill value of an out-of-bounds id come through the sum unchanged.
  CHECK(printed("t = jax.device_put(jnp.array([[-0.0, 1.0]] * 8), NamedSharding(mesh, P('model', None)))\n"
                "r = jax.jit(lambda t, i: t.at[i].get(mode='fill', fill_value=jnp.nan))(t, jnp.array([5, 9, 2]))\n"
                "print(np.signbit(np.asarray(r))[:, 0], np.asarray(r)[1])") == "[ True False  True] [nan nan]\n");
  // jnp.take_along_axis over model-sharded classes (a cross-entropy's label logits) likewise all-reduces only.
  CHECK(printed("z = jax.device_put(jnp.arange(64.).reshape(8, 8), NamedSharding(mesh, P('data', 'model')))\n"
                "lab = jax.device_put(jnp.arange(8) % 8, NamedSharding(mesh, P('data')))\n"
                "picked = jax.jit(lambda z, y: jnp.take_along_axis(z, y[:, None], axis=1))(z, lab)\n"
                "print(np.asarray(picked).ravel())") == "[ 0.  9. 18. 27. 36. 45. 54. 63.]\n");
  for (const auto& record_entry : shardscope::api::last_program_run()->log.records()) {
    CHECK(record_entry.kind == shardscope::CollectiveKind::kAllReduce);
  }
}

TEST_CASE("halo exchanges send one collective-permute per direction, and a static roll rotates with one") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("import re\n"
                   "mesh8 = jax.make_mesh((8,), ('x',), axis_types=(AxisType.Auto,))\n"
                   "a = jax.device_put(jnp.arange(64.).reshape(8, 8), NamedSharding(mesh, P('data', 'model')))\n"
                   "b = jax.device_put(jnp.arange(16.), NamedSharding(mesh8, P('x')))\n"
                   "c = jax.device_put(jnp.arange(36.).reshape(12, 3), NamedSharding(mesh, P('data', None)))\n"
                   "def counts(fn, v=a):\n"
                   "    text = jax.jit(fn).lower(v).compile().as_text()\n"
                   "    out = jax.jit(fn)(v)\n"
                   "    same = np.array_equal(np.asarray(out), np.asarray(fn(jnp.asarray(np.asarray(v)))))\n"
                   "    found = re.findall(r'(all-gather|all-reduce|all-to-all|collective-permute)\\(', text)\n"
                   "    return (found.count('collective-permute'), len(found) - found.count('collective-permute'),"
                   " same, str(out.sharding.spec))\n")
              .ok());
  // a[2:6]: device 0 reads a row of device 1 (from the right), device 3 one of device 2 (from the left).
  CHECK(printed("print(counts(lambda a: a[2:6]))") == "(2, 0, True, \"P('data', 'model')\")\n");
  {
    const auto record = shardscope::api::last_program_run();
    REQUIRE(record != nullptr);
    REQUIRE(record->log.records().size() == 2);
    for (const auto& r : record->log.records()) {
      CHECK(r.kind == shardscope::CollectiveKind::kCollectivePermute);
      // One row of a 4-column block from each of the 3 devices per model group that have a neighbour that way.
      CHECK(r.total_bytes_sent() == 4 * 4 * 3 * 2);
    }
  }
  // One element from the first block of a sharded dim: sliced locally and broadcast by a masked all-reduce, as
  // XLA's partitioner does (real JAX 0.11.2 shows one all-reduce for a[:, :1], a[..., 0] and a * a[:, :1]).
  CHECK(printed("print(counts(lambda a: a[:, :1]), counts(lambda a: a[:, 0]), counts(lambda a: a * a[:, :1]))") ==
        "(0, 1, True, \"P('data',)\") (0, 1, True, \"P('data',)\") (0, 1, True, \"P('data', 'model')\")\n");
  // One direction stays one permute: columns 1:5 read only from the left; a reverse swaps whole blocks.
  CHECK(printed("print(counts(lambda a: a[:, 1:5]), counts(lambda a: a[::-1]))") ==
        "(1, 0, True, \"P('data', 'model')\") (1, 0, True, \"P('data', 'model')\")\n");
  CHECK(printed("print(counts(lambda a: lax.dynamic_slice(a, (2, 0), (4, 8))))") ==
        "(2, 0, True, \"P('data', 'model')\")\n");
  // Rolls by any static shift (negative, past a block, past the whole dim) keep the sharding: one permute per
  // distance the blocks' elements travel (a shift of 3 over blocks of 2 rows reads from two devices back).
  CHECK(printed("print([counts(lambda a: jnp.roll(a, s, 0))[:3] for s in (1, -1, 3, 9, -7)])") ==
        "[(1, 0, True), (1, 0, True), (2, 0, True), (1, 0, True), (1, 0, True)]\n");
  CHECK(printed("print([counts(lambda a: jnp.roll(a, s, 1)) for s in (1, -3)])") ==
        "[(1, 0, True, \"P('data', 'model')\"), (1, 0, True, \"P('data', 'model')\")]\n");
  CHECK(printed("print([counts(lambda a: jnp.roll(a, s, 0))[:3] for s in (0, 8)])") ==
        "[(0, 0, True), (0, 0, True)]\n");
  REQUIRE(run_cell("rolled = jax.jit(lambda a: jnp.roll(a, 3, 0))(a)").ok());
  {
    const auto record = shardscope::api::last_program_run();
    REQUIRE(record != nullptr);
    REQUIRE(record->log.records().size() == 2);
    // A shift of 3 past blocks of 2 rows: each device's two rows come from two others (4 columns each).
    for (const auto& r : record->log.records()) {
      CHECK(r.kind == shardscope::CollectiveKind::kCollectivePermute);
      CHECK(r.total_bytes_sent() == 8 * 4 * 4);
    }
  }
  // A pad sent as XLA's halo functions say: rows padded with the operand's sharding (the last shard's block
  // padded out), each halo one permute per block width, and a result that drops the row sharding gathers rows
  // once; padding four rows in front reads three rows back, two permutes.
  CHECK(printed("print(counts(lambda a: jnp.pad(a, 1)), counts(lambda a: jnp.pad(a, ((4, 0), (0, 0)))))") ==
        "(1, 1, True, \"P(None, 'model')\") (2, 0, True, \"P('data', 'model')\")\n");
  REQUIRE(run_cell("padded = jax.jit(lambda a: jnp.pad(a, 1))(a)").ok());
  {
    const auto record = shardscope::api::last_program_run();
    REQUIRE(record != nullptr);
    REQUIRE(record->log.records().size() == 2);
    CHECK(record->log.records()[0].kind == shardscope::CollectiveKind::kCollectivePermute);
    CHECK(record->log.records()[1].kind == shardscope::CollectiveKind::kAllGather);
  }
  CHECK(printed("print(counts(lambda b: jnp.pad(b, 8), b))") == "(6, 0, True, \"P('x',)\")\n");
  // A concatenation of values that are not slices (jnp.diag's index columns, of lower rank) is no rotation.
  CHECK(printed("print(jax.jit(jnp.diag)(a))") == "[ 0.  9. 18. 27. 36. 45. 54. 63.]\n");
  // A slice whose result drops the row sharding (3 of 8 columns over 2 devices): halo, then one gather.
  CHECK(printed("print(counts(lambda a: a[:, :3]))") == "(1, 1, True, \"P('data',)\")\n");
  // A one-dimensional mesh of eight, and rows of three per device whose slices cut evenly or not.
  CHECK(printed("print([counts(lambda b: jnp.roll(b, s), b) for s in (1, -5, 17)])") ==
        "[(1, 0, True, \"P('x',)\"), (2, 0, True, \"P('x',)\"), (1, 0, True, \"P('x',)\")]\n");
  CHECK(printed("print([counts(lambda c: jnp.roll(c, s, 0), c) for s in (1, 4, -2)])") ==
        "[(1, 0, True, \"P('data', None)\"), (2, 0, True, \"P('data', None)\"), (1, 0, True, \"P('data', None)\")]\n");
}

TEST_CASE("x.at[i].set/add/mul into a dim sharded where each update is one element wide moves nothing, as XLA does") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("a = jax.device_put(jnp.arange(64.).reshape(8, 8), NamedSharding(mesh, P('data', 'model')))\n"
                   "an = np.asarray(a)\n")
              .ok());
  // Each device offsets the indices by its block's start and drops the updates outside its block: the result keeps
  // the operand's sharding and no collective runs, for any combiner, repeated indices and out-of-bounds ones.
  const char* const cases[] = {
      "f = lambda a: a.at[0].add(1.)\nexpected = an.copy(); expected[0] += 1",
      "f = lambda a: a.at[5].set(jnp.arange(8.))\nexpected = an.copy(); expected[5] = np.arange(8.)",
      "f = lambda a: a.at[jnp.array([1, 6, 6, 40])].add(2.)\nexpected = an.copy(); expected[1] += 2; expected[6] += 4",
      "f = lambda a: a.at[:, 3].mul(-1.)\nexpected = an.copy(); expected[:, 3] *= -1",
      "f = lambda a: a.at[2, 7].max(100.)\nexpected = an.copy(); expected[2, 7] = 100",
  };
  for (const char* const code : cases) {
    INFO(code);
    REQUIRE(run_cell(code).ok());
    CHECK(printed("r = jax.jit(f)(a)\nprint(r.sharding.spec, np.array_equal(np.asarray(r), expected))") ==
          "P('data', 'model') True\n");
    CHECK(collectives_of_last_run() == 0);
    CHECK(printed("print(any(c in jax.jit(f).lower(a).compile().as_text() for c in ('all-gather', 'all-reduce')))") ==
          "False\n");
  }
  // A static slice wider than one element is an update of a window along the sharded dim: XLA gathers it there.
  CHECK(printed("r = jax.jit(lambda a: a.at[2:6].set(0.))(a)\nprint(r.sharding.spec, float(r[2:6].sum()))") ==
        "P('data', 'model') 0.0\n");
  REQUIRE(collectives_of_last_run() == 1);
  CHECK(shardscope::api::last_program_run()->log.records()[0].kind == shardscope::CollectiveKind::kAllGather);
}

TEST_CASE("jnp.split partitions each result read as its own slice: halos instead of gathering the operand") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("a = jax.device_put(jnp.arange(64.).reshape(8, 8), NamedSharding(mesh, P('data', 'model')))\n"
                   "an = np.asarray(a)\n")
              .ok());
  // The program still holds one split (as JAX traces it); the partitioner sees the slices JAX lowers it to. Rows
  // 0-3 spread over the four 'data' blocks come from the two devices holding them now: two collective-permutes
  // (one per distance), as real JAX 0.11 partitions it.
  CHECK(printed("f = lambda a: jnp.split(a, 2, 0)[0]\nprint('split[axis=0' in str(jax.make_jaxpr(f)(a)))\n"
                "r = jax.jit(f)(a)\nprint(r.sharding.spec, np.array_equal(np.asarray(r), an[:4]))") ==
        "True\nP('data', 'model') True\n");
  REQUIRE(collectives_of_last_run() == 2);
  for (const auto& record : shardscope::api::last_program_run()->log.records()) {
    CHECK(record.kind == shardscope::CollectiveKind::kCollectivePermute);
  }
  CHECK(printed("print('all-gather' in jax.jit(f).lower(a).compile().as_text())") == "False\n");
  // Columns 4-7 are exactly the second 'model' block: one permute.
  CHECK(printed("r = jax.jit(lambda a: jnp.split(a, 2, 1)[1])(a)\n"
                "print(r.sharding.spec, np.array_equal(np.asarray(r), an[:, 4:]))") == "P('data', 'model') True\n");
  CHECK(collectives_of_last_run() == 1);
  // Every result read, unequal pieces, a gradient through the split: the values are the unsharded ones.
  CHECK(printed("parts = jax.jit(lambda a: jnp.split(a, [2, 3, 8], 0))(a)\n"
                "print([p.shape for p in parts], all(np.array_equal(np.asarray(p), q) for p, q in "
                "zip(parts, np.split(an, [2, 3, 8], 0))))") == "[(2, 8), (1, 8), (5, 8), (0, 8)] True\n");
  CHECK(printed("g = jax.jit(jax.grad(lambda a: (jnp.split(a, 4, 1)[2] ** 2).sum()))(a)\n"
                "e = np.zeros_like(an); e[:, 4:6] = 2 * an[:, 4:6]\nprint(np.array_equal(np.asarray(g), e))") ==
        "True\n");
}

TEST_CASE("independent all-reduces over the same devices run as one combined all-reduce, as XLA's combiner does") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("import re\n"
                   "def count(f, *args):\n"
                   "    return len(re.findall(r'\\ball-reduce\\(', f.lower(*args).compile().as_text()))\n"
                   "w1 = jax.device_put(jnp.ones((8, 16)) / 8, NamedSharding(mesh, P(None, 'model')))\n"
                   "w2 = jax.device_put(jnp.ones((16, 8)) / 16, NamedSharding(mesh, P('model', None)))\n"
                   "xb = jax.device_put(jnp.arange(64.).reshape(8, 8) / 64, NamedSharding(mesh, P('data', None)))\n"
                   "def mlp_loss(ws, xb):\n"
                   "    h = jax.nn.relu(xb @ ws[0])\n"
                   "    return ((h @ ws[1]) ** 2).mean()\n"
                   "step = jax.jit(jax.value_and_grad(mlp_loss))\n")
              .ok());
  // The forward all-reduce over 'model', then the loss and both weight gradients over 'data': none of those three
  // reads another, so they travel as one all-reduce of a tuple (real JAX 0.11.2 on 8 CPU devices: two all-reduces).
  CHECK(printed("l, gs = step((w1, w2), xb)\nprint(float(l), gs[0].sharding.spec, gs[1].sharding.spec, "
                "count(step, (w1, w2), xb))") == "0.32427978515625 P(None, 'model') P('model',) 2\n");
  const auto record = shardscope::api::last_program_run();
  REQUIRE(record != nullptr);
  CHECK(record->log.records().size() == 4);
  CHECK(record->log.count(shardscope::CollectiveKind::kAllReduce) == 2);
  std::set<int64_t> groups;
  for (const auto& r : record->log.records()) {
    if (r.combined >= 0) groups.insert(r.combined);
  }
  CHECK(groups.size() == 1);
  CHECK(printed("print('(f32[], f32[8,8], f32[8,8]) all-reduce(' in step.lower((w1, w2), xb).compile().as_text())") ==
        "True\n");
  // A reduction that reads another's result waits for it: a mean, then a variance, are two all-reduces.
  CHECK(printed("a = jax.device_put(jnp.arange(64.).reshape(8, 8), NamedSharding(mesh, P('data', 'model')))\n"
                "print(count(jax.jit(lambda a: a.var(1)), a))") == "2\n");
  // Different devices or dtypes are different keys; an all-reduce over 'data' and one over 'model' stay apart.
  CHECK(printed("print(count(jax.jit(lambda a: (a.sum(0), a.sum(1))), a))") == "2\n");
  CHECK(printed("ai = jax.device_put(jnp.arange(64).reshape(8, 8), NamedSharding(mesh, P('data', 'model')))\n"
                "print(count(jax.jit(lambda a, b: (a.sum(0), b.sum(0))), a, ai), "
                "count(jax.jit(lambda a, b: (a.sum(0), b.sum(0))), a, a * 2))") == "2 1\n");
}

TEST_CASE("XLA:GPU closes a combined all-reduce at 30 MiB, XLA:CPU combines any size") {
  // Abstract arguments: nothing is allocated. Each partial sum is a 12 MiB block per device: two fit in 30 MiB.
  const char* const program =
      "m = jax.make_mesh((8,), ('d',), axis_types=(AxisType.Auto,))\n"
      "s = jax.ShapeDtypeStruct((8, 1536, 2048), jnp.float32, sharding=NamedSharding(m, P('d')))\n"
      "f = jax.jit(lambda a, b, c: (a.sum(0), b.sum(0), c.sum(0)))\n"
      "t = f.lower(s, s, s).compile().as_text()\n"
      "print(t.count(' all-reduce('), t.count('get-tuple-element('))";
  for (const auto& [devices, expected] :
       std::vector<std::pair<std::string, std::string>>{{"cpu:8", "1 3\n"}, {"gpu:8", "2 2\n"}}) {
    INFO(devices);
    REQUIRE(run_cell("import jax, jax.numpy as jnp\nfrom jax.sharding import PartitionSpec as P, NamedSharding, "
                     "AxisType\nimport shardscope\nshardscope.use_devices('" +
                     devices + "')\n")
                .ok());
    CHECK(printed(program) == expected);
  }
}

TEST_CASE("argmax and argmin over a sharded dim move their index iota as their operand moves, as XLA does") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("a = jax.device_put(jnp.arange(64.).reshape(8, 8) % 5, NamedSharding(mesh, P('data', 'model')))\n"
                   "an = np.asarray(a)\n")
              .ok());
  // HLO reduces the values with an s32 iota of their shape (top_k sorts beside one), made with the operand's
  // sharding: gathering the reduced dim takes two all-gathers, the second of 4-byte indices (real JAX 0.11.2).
  for (const char* const code : {"r = jax.jit(lambda a: jnp.argmax(a, 1))(a)\nok = np.array_equal(r, an.argmax(1))",
                                 "r = jax.jit(lambda a: jnp.argmin(a, 1))(a)\nok = np.array_equal(r, an.argmin(1))"}) {
    INFO(code);
    CHECK(printed(std::string(code) + "\nprint(ok, r.sharding.spec)") == "True P('data',)\n");
    const auto record = shardscope::api::last_program_run();
    REQUIRE(record != nullptr);
    REQUIRE(record->log.records().size() == 2);
    for (const auto& r : record->log.records()) {
      CHECK(r.kind == shardscope::CollectiveKind::kAllGather);
      CHECK(r.axes == std::vector<std::string>{"model"});
    }
    CHECK(record->log.records()[1].origin.find("index iota") != std::string::npos);
    // f32 values and s32 indices: the same bytes per element.
    CHECK(record->log.records()[0].bytes_sent == record->log.records()[1].bytes_sent);
  }
  CHECK(printed("print(jax.jit(lambda a: jnp.argmax(a, 1)).lower(a).compile().as_text().count('all-gather('))") ==
        "2\n");
  // top_k has no partitioning rule in XLA: the default action replicates the operand, one all-gather per sharded
  // dim (real JAX 0.11.2: two for [data, model, -] and one for [(data, model), -, -], even with the sorted dim
  // whole), and the result is cut to its layout in place.
  CHECK(printed("r = jax.jit(lambda a: lax.top_k(a, 2)[0])(a)\n"
                "print(np.array_equal(r, -np.sort(-an, 1)[:, :2]), r.sharding.spec)") == "True P('data',)\n");
  {
    const auto record = shardscope::api::last_program_run();
    REQUIRE(record != nullptr);
    REQUIRE(record->log.records().size() == 2);
    std::vector<std::vector<std::string>> axes;
    for (const auto& r : record->log.records()) {
      CHECK(r.kind == shardscope::CollectiveKind::kAllGather);
      axes.push_back(r.axes);
    }
    std::sort(axes.begin(), axes.end());
    CHECK(axes == std::vector<std::vector<std::string>>{{"data"}, {"model"}});
  }
  CHECK(printed("b = jax.device_put(jnp.arange(256.).reshape(8, 4, 8), NamedSharding(mesh, P('data', 'model', None)))\n"
                "print(jax.jit(lambda b: lax.top_k(b, 2)[0]).lower(b).compile().as_text().count('all-gather('))") ==
        "2\n");
  // Along a dim that is not sharded, nothing moves.
  CHECK(printed("r = jax.jit(lambda a: jnp.argmax(a, 0))(jax.device_put(a, NamedSharding(mesh, P(None, 'model'))))\n"
                "print(np.array_equal(r, an.argmax(0)))") == "True\n");
  CHECK(collectives_of_last_run() == 0);
}
