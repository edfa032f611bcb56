// Typed PRNG keys (key<fry>), jax.debug callbacks inside jit/vmap/shard_map, and the 2021-era maps/pjit APIs
// and arr.device() of older profiles, as the embedded jax package shows them.
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
         "import numpy as np\nimport jax\nimport jax.numpy as jnp\n"
         "from jax.sharding import PartitionSpec as P, NamedSharding\n";
}

}  // namespace

TEST_CASE("jax.random.key is a typed scalar over the same words PRNGKey gives") {
  REQUIRE(run_cell(prelude("0.11.0")).ok());
  CHECK(printed("k = jax.random.key(0)\nprint(k)") == "Array((), dtype=key<fry>) overlaying:\n[0 0]\n");
  CHECK(printed("print(k.shape, k.dtype, k.ndim, jax.random.split(k, 3).shape)") == "() key<fry> 0 (3,)\n");
  CHECK(printed("print(jax.random.key_data(jax.random.key(42)), jax.random.key_data(k).dtype)") == "[ 0 42] uint32\n");
  CHECK(printed("print(jax.random.key_impl(k), jnp.issubdtype(k.dtype, jax.dtypes.prng_key), "
                "jnp.issubdtype(jnp.zeros(2).dtype, jax.dtypes.prng_key))") == "threefry2x32 True False\n");
  CHECK(printed("print(jax.random.PRNGKey(0).dtype, jax.random.PRNGKey(0).shape)") == "uint32 (2,)\n");
  // Values are the raw-key path's, bit for bit (jax_prng.md: uniform(key(0), (3,)) partitionable).
  CHECK(printed("print(jax.random.uniform(k, (3,)))") == "[0.947667   0.9785799  0.33229148]\n");
  CHECK(printed("raw = jax.random.PRNGKey(7)\ntyped = jax.random.wrap_key_data(raw)\n"
                "for name, fn in [('normal', lambda q: jax.random.normal(q, (4,))),\n"
                "                 ('randint', lambda q: jax.random.randint(q, (4,), 0, 10)),\n"
                "                 ('bernoulli', lambda q: jax.random.bernoulli(q, 0.3, (4,))),\n"
                "                 ('split', lambda q: jax.random.key_data(jax.random.split(q, 3))),\n"
                "                 ('fold_in', lambda q: jax.random.key_data(jax.random.fold_in(q, 5)))]:\n"
                "    print(name, bool((np.asarray(fn(raw)) == np.asarray(fn(typed))).all()))") ==
        "normal True\nrandint True\nbernoulli True\nsplit True\nfold_in True\n");
}

TEST_CASE("typed keys go through jit, vmap and shardings and keep their type") {
  REQUIRE(run_cell(prelude("0.11.0")).ok());
  CHECK(printed("k = jax.random.key(0)\nks = jax.jit(lambda q: jax.random.split(q, 2))(k)\nprint(ks.dtype, ks.shape)\n"
                "print(bool((jax.random.key_data(ks) == jax.random.key_data(jax.random.split(k, 2))).all()))") ==
        "key<fry> (2,)\nTrue\n");
  CHECK(printed("u = jax.vmap(lambda q: jax.random.uniform(q, ()))(jax.random.split(k, 4))\n"
                "print(bool((u == jnp.stack([jax.random.uniform(q, ()) for q in jax.random.split(k, 4)])).all()))") ==
        "True\n");
  CHECK(printed("mesh = jax.make_mesh((8,), ('x',))\nsk = jax.device_put(jax.random.split(k, 8), NamedSharding(mesh, "
                "P('x')))\nprint(sk.sharding.spec, sk.shape)\n"
                "print(bool((jax.random.key_data(sk) == jax.random.key_data(jax.random.split(k, 8))).all()))") ==
        "P('x',) (8,)\nTrue\n");
  CHECK(printed("print(jax.jit(lambda q: q)(k))") == "Array((), dtype=key<fry>) overlaying:\n[0 0]\n");
  // Key arrays are not numbers.
  CHECK_FALSE(run_cell("np.asarray(k)").ok());
  CHECK_FALSE(run_cell("k + 1").ok());
}

TEST_CASE("jax.random.key does not exist before jax 0.4.11") {
  REQUIRE(run_cell(prelude("0.4.10")).ok());
  CHECK(printed("try:\n    jax.random.key(0)\nexcept AttributeError as e:\n    print(e)") ==
        "module 'jax.random' has no attribute 'key'\n");
}

TEST_CASE("jax.debug.print inside jit prints the runtime value on every call") {
  REQUIRE(run_cell(prelude("0.11.0")).ok());
  REQUIRE(
      run_cell("mesh = jax.make_mesh((4, 2), ('a', 'b'))\n"
               "x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P('a')))\n"
               "@jax.jit\ndef f(x):\n    jax.debug.print('x={x}', x=x)\n    jax.debug.print('sum {} {}', x.sum(), 3)\n"
               "    return x * 2\n")
          .ok());
  const std::string once = "x=[0. 1. 2. 3. 4. 5. 6. 7.]\nsum 28.0 3\n";
  CHECK(printed("_ = f(x)") == once);
  CHECK(printed("_ = f(x)") == once);
  const std::string jaxpr = printed("print(jax.make_jaxpr(f)(x))");
  CHECK(jaxpr.find("debug_print[\n            fmt=x={x}\n            has_placeholders=True\n") != std::string::npos);
  CHECK(jaxpr.find("in_tree=PyTreeDef(((), {'x': *}))") != std::string::npos);
  CHECK(jaxpr.find("] c 3:i32[]") != std::string::npos);
  // Before jax 0.7.2 print was a debug_callback.
  REQUIRE(run_cell("import _shardscope\n_shardscope.set_jax_version('0.6.2')").ok());
  CHECK(printed("print(jax.make_jaxpr(lambda v: jax.debug.print('{}', v))(1.0))").find("debug_callback[") !=
        std::string::npos);
}

TEST_CASE("jax.debug.breakpoint opens jdb on the user's frames with the values of this run, only when reached") {
  REQUIRE(run_cell(prelude("0.11.0")).ok());
  REQUIRE(run_cell("import io, sys\n"
                   "@jax.jit\ndef f(x):\n    y, z = jnp.sin(x), jnp.cos(x)\n    jax.debug.breakpoint()\n"
                   "    return y * z\n"
                   "def finite_or_break(x):\n"
                   "    jax.lax.cond(jnp.isfinite(x).all(), lambda x: None, lambda x: jax.debug.breakpoint(), x)\n"
                   "@jax.jit\ndef g(x, y):\n    z = x / y\n    finite_or_break(z)\n    return z\n")
              .ok());
  // The traced locals hold this call's values; other commands list the source, move frames and report errors.
  const std::string session = printed(
      "sys.stdin = io.StringIO('p x\\np y * z\\nl\\nu\\nd\\nd\\nmissing\\nc\\n')\n"
      "out = f(jnp.float32(0.5))\nsys.stdin = sys.__stdin__\nprint(out)");
  CHECK(
      session.starts_with("Entering jdb:\n(jdb) Array(0.5, dtype=float32)\n(jdb) Array(0.4207355, dtype=float32)\n"
                          "(jdb) > <cell "));
  CHECK(session.find("->      jax.debug.breakpoint()\n") != std::string::npos);
  CHECK(session.find("At bottommost frame.") != std::string::npos);
  CHECK(session.find("(jdb) *** NameError: name 'missing' is not defined\n") != std::string::npos);
  CHECK(session.ends_with("(jdb) 0.4207355\n"));
  // A breakpoint in a branch not taken never opens; q (or the end of input) stops the program, not the session.
  CHECK(printed("print(g(2., 1.))") == "2.0\n");
  CHECK(printed("sys.stdin = io.StringIO('q\\n')\ntry:\n    g(2., 0.)\nexcept jax.errors.JaxRuntimeError as e:\n"
                "    print(e)\nsys.stdin = sys.__stdin__") ==
        "Entering jdb:\n(jdb) INTERNAL: CpuCallback error calling callback: SystemExit: 0\n");
}

TEST_CASE("jax.debug.print per device in shard_map, per element in vmap, and its checks") {
  REQUIRE(run_cell(prelude("0.11.0")).ok());
  REQUIRE(run_cell("mesh = jax.make_mesh((4, 2), ('a', 'b'))\n"
                   "x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P('a')))\n")
              .ok());
  // Each of the 8 devices prints its block; devices along 'b' hold the same block.
  CHECK(printed("def g(v):\n    jax.debug.print('block {}', v)\n    return v\n"
                "_ = jax.shard_map(g, mesh=mesh, in_specs=P('a'), out_specs=P('a'))(x)") ==
        "block [0. 1.]\nblock [0. 1.]\nblock [2. 3.]\nblock [2. 3.]\nblock [4. 5.]\nblock [4. 5.]\n"
        "block [6. 7.]\nblock [6. 7.]\n");
  CHECK(printed("_ = jax.vmap(lambda v: jax.debug.print('v={v}', v=v))(jnp.arange(3))") == "v=0\nv=1\nv=2\n");
  CHECK(printed("_ = jax.jit(lambda v: jax.debug.callback(lambda a: print('cb', a), v))(jnp.ones(2))") ==
        "cb [1. 1.]\n");
  CHECK(printed("jax.debug.print('eager {}', jnp.arange(2))") == "eager [0 1]\n");
  // Static-only prints are staged too: every call prints, not only the trace.
  CHECK(printed("h = jax.jit(lambda v: (jax.debug.print('static only'), v + 1)[1])\n_ = h(1.0)\n_ = h(2.0)") ==
        "static only\nstatic only\n");
  CHECK(printed("_ = jax.grad(lambda v: (jax.debug.print('g {}', v), v * v)[1])(3.0)") == "g 3.0\n");
  CHECK(printed("try:\n    jax.debug.print('{x}', x=1, y=2)\nexcept ValueError as e:\n    print(str(e)[:50])") ==
        "Unused keyword arguments to `jax.debug.print`: ['y\n");
}

TEST_CASE("visualize_array_sharding and inspect_array_sharding inside jit report the partitioner's sharding") {
  REQUIRE(run_cell(prelude("0.11.0")).ok());
  REQUIRE(run_cell("mesh = jax.make_mesh((4, 2), ('a', 'b'))\n"
                   "x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P('a')))\n")
              .ok());
  CHECK(printed("_ = jax.jit(lambda v: (jax.debug.inspect_array_sharding(v * 2, callback=print), v)[1])(x)") ==
        "NamedSharding(mesh=Mesh('a': 4, 'b': 2, axis_types=(Explicit, Explicit)), spec=P('a',), "
        "memory_kind=device)\n");
  CHECK(printed("_ = jax.jit(lambda v: (jax.debug.visualize_array_sharding(v), v)[1])(x)") ==
        "┌───────┬───────┬───────┬───────┐\n│CPU 0,1│CPU 2,3│CPU 4,5│CPU 6,7│\n└───────┴───────┴───────┴───────┘\n");
}

TEST_CASE("2021-era maps.mesh and pjit with axis resources") {
  REQUIRE(run_cell(prelude("0.3.5")).ok());
  CHECK(printed("from jax.experimental.maps import mesh, Mesh\nfrom jax.experimental.pjit import pjit, PartitionSpec\n"
                "f = pjit(lambda v: v * 2, in_axis_resources=PartitionSpec('x', None),\n"
                "         out_axis_resources=PartitionSpec('x', 'y'))\n"
                "import warnings\nwarnings.simplefilter('ignore')\n"
                "with mesh(np.array(jax.devices()).reshape(4, 2), ('x', 'y')):\n"
                "    y = f(jnp.arange(8.0).reshape(4, 2))\nprint(repr(y))\nprint(type(y).__name__)") ==
        "ShardedDeviceArray([[ 0.,  2.],\n                    [ 4.,  6.],\n                    [ 8., 10.],\n"
        "                    [12., 14.]], dtype=float32)\n_ShardedDeviceArray\n");
  CHECK(printed("print(jnp.arange(3).device())") == "TFRT_CPU_0\n");
  CHECK(printed("from jax.experimental import PartitionSpec as PS\nprint(PS('x'))") == "PartitionSpec('x',)\n");
  CHECK_FALSE(run_cell("from jax.experimental.maps import xmap\nxmap(lambda v: v)").ok());
  REQUIRE(run_cell("_shardscope.set_jax_version('0.3.10')").ok());
  CHECK_FALSE(run_cell("from jax.experimental.maps import mesh").ok());
}

TEST_CASE("arr.device: a method until 0.4.26 (deprecated from 0.4.21), gone until 0.4.31, then a property") {
  REQUIRE(run_cell(prelude("0.4.20")).ok());
  CHECK(printed("print(jnp.arange(3).device())", true) == "TFRT_CPU_0\n");
  REQUIRE(run_cell("_shardscope.set_jax_version('0.4.26')").ok());
  CHECK(
      printed("import warnings\nwith warnings.catch_warnings(record=True) as w:\n    warnings.simplefilter('always')\n"
              "    d = jnp.arange(3).device()\nprint(d, w[0].category.__name__, w[0].message)") ==
      "TFRT_CPU_0 DeprecationWarning arr.device() is deprecated. Use arr.devices() instead.\n");
  REQUIRE(run_cell("_shardscope.set_jax_version('0.4.28')").ok());
  CHECK(printed("print(hasattr(jnp.arange(3), 'device'))") == "False\n");
  REQUIRE(run_cell("_shardscope.set_jax_version('0.4.35')").ok());
  CHECK(printed("print(jnp.arange(3).device)") == "TFRT_CPU_0\n");
}

TEST_CASE("pmap outputs carry PmapSharding from 0.4.1 until pmap became jit of shard_map") {
  REQUIRE(run_cell(prelude("0.4.30")).ok());
  CHECK(printed("y = jax.pmap(lambda v: v * 2)(jnp.arange(8.0))\nprint(y.sharding)\nprint(type(y).__name__)") ==
        "PmapSharding(sharding_spec=ShardingSpec((Unstacked(8),), (ShardedAxis(axis=0),)), device_ids=[0, 1, 2, 3, "
        "4, 5, 6, 7], device_platform=CPU, device_shape=(8,))\nArrayImpl\n");
  CHECK(printed("print(y.sharding.shard_shape((8,)), y.sharding.is_fully_replicated)") == "() False\n");
  REQUIRE(run_cell("_shardscope.set_jax_version('0.8.0')").ok());
  CHECK(printed("print(type(jax.pmap(lambda v: v)(jnp.arange(8.0)).sharding).__name__)") == "NamedSharding\n");
}

TEST_CASE("jax_default_prng_impl is threefry2x32, other implementations are not simulated") {
  REQUIRE(run_cell(prelude("0.11.0")).ok());
  CHECK(printed("print(jax.config.jax_default_prng_impl)") == "threefry2x32\n");
  CHECK_FALSE(run_cell("jax.config.update('jax_default_prng_impl', 'rbg')").ok());
}
