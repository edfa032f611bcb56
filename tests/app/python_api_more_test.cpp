// More of JAX's top-level API beyond sharding: jax.typing, naming and jit switches, caches, process queries,
// jax.nn's attention, vmap's unmapped arguments, deprecations in jax.sharding, ClosedJaxpr and the test mesh helper.
#include <doctest/doctest.h>

#include <string>

#include "app/python_test_support.h"
#include "python/host.h"

using python_test::printed;
using shardscope::python::run_cell;

namespace {

constexpr const char* kPrelude =
    "import _shardscope\n_shardscope.set_device_preset('cpu:8')\n"
    "import collections, dataclasses, functools\nimport numpy as np\nimport jax\nimport jax.numpy as jnp\n"
    "from jax.sharding import PartitionSpec as P, NamedSharding, SingleDeviceSharding\n"
    "mesh = jax.make_mesh((4, 2), ('x', 'y'))\n";

}  // namespace

TEST_CASE("a ClosedJaxpr's jaxpr prints as the closed one does") {
  REQUIRE(run_cell(kPrelude).ok());
  const std::string closed = printed("print(jax.make_jaxpr(lambda x: jnp.sin(x) * 2)(1.0))");
  CHECK(closed.find("sin") != std::string::npos);
  CHECK(printed("print(jax.make_jaxpr(lambda x: jnp.sin(x) * 2)(1.0).jaxpr)") == closed);
  CHECK(printed("print(type(jax.make_jaxpr(jnp.cos)(1.0).jaxpr).__name__)") == "Jaxpr\n");
}

TEST_CASE("jax._src.test_util.create_mesh: Auto axes by default, device-id order, a skip when devices are short") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("from jax._src import test_util as jtu\nimport unittest\n").ok());
  CHECK(printed("m = jtu.create_mesh((2, 2), ('a', 'b'))\nprint(dict(m.shape), m.axis_types)") ==
        "{'a': 2, 'b': 2} (Auto, Auto)\n");
  CHECK(printed("m = jtu.create_mesh((4,), ('x',), iota_order=True)\nprint([d.id for d in m.devices])") ==
        "[0, 1, 2, 3]\n");
  CHECK(printed("try:\n    jtu.create_mesh((4, 4), ('a', 'b'))\nexcept unittest.SkipTest as e:\n    print(e)") ==
        "Test requires 16 global devices and found 8.\n");
}

TEST_CASE(
    "jax.sharding's PositionalSharding warns from 0.6.0, names its removal in 0.7.0, and use_mesh goes in 0.7.1") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("profile_before = _shardscope.jax_version()\nimport warnings\n"
                   "def probe(name):\n"
                   "    with warnings.catch_warnings(record=True) as caught:\n"
                   "        warnings.simplefilter('always')\n"
                   "        try:\n"
                   "            value = getattr(jax.sharding, name)\n"
                   "            print(value.__name__, [str(w.message) for w in caught])\n"
                   "        except AttributeError as e:\n"
                   "            print('AttributeError', e)\n")
              .ok());
  REQUIRE(run_cell("_shardscope.set_jax_version('0.5.3')\n").ok());
  CHECK(printed("probe('PositionalSharding')\nprobe('use_mesh')") == "PositionalSharding []\nuse_mesh []\n");
  REQUIRE(run_cell("_shardscope.set_jax_version('0.6.2')\n").ok());
  CHECK(printed("probe('PositionalSharding')") ==
        "PositionalSharding ['jax.sharding.PositionalSharding is deprecated. Use jax.NamedSharding instead.']\n");
  REQUIRE(run_cell("_shardscope.set_jax_version('0.7.0')\n").ok());
  CHECK(printed("probe('PositionalSharding')\nprobe('use_mesh')") ==
        "AttributeError jax.sharding.PositionalSharding was deprecated in JAX v0.6.0 and removed in JAX v0.7.0\n"
        "use_mesh []\n");
  REQUIRE(run_cell("_shardscope.set_jax_version('0.7.1')\n").ok());
  CHECK(printed("probe('PositionalSharding')\nprobe('use_mesh')") ==
        "AttributeError module 'jax.sharding' has no attribute 'PositionalSharding'\n"
        "AttributeError module 'jax.sharding' has no attribute 'use_mesh'\n");
  REQUIRE(run_cell("_shardscope.set_jax_version(profile_before)\n").ok());
}

TEST_CASE("jax.typing, named_scope/named_call, disable_jit, clear_caches, float0 and default_matmul_precision") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("from jax.typing import ArrayLike, DTypeLike\n"
                "def f(x: ArrayLike, dtype: DTypeLike = None) -> jax.Array:\n    return jnp.asarray(x, dtype)\n"
                "print(f(3, jnp.float32), isinstance(jnp.ones(2), jax.typing.ArrayLike.__args__[0]))") == "3.0 True\n");
  // Names reach only profiles: the values and the printed jaxpr stay as without them.
  CHECK(
      printed("@jax.named_scope('layer')\ndef layer(x):\n    with jax.named_scope('act'):\n        return jnp.sin(x)\n"
              "g = jax.named_call(lambda x: x * 2, name='double')\n"
              "print(jax.jit(layer)(0.0), g(2.0), str(jax.make_jaxpr(layer)(1.0)).count('sin'))") == "0.0 4.0 1\n");
  CHECK(printed("try:\n    jax.named_scope(3)\nexcept TypeError as e:\n    print(e)") ==
        "named_scope name argument must be a string.\n");
  // Under disable_jit a jitted function runs its Python: a print inside shows the value, not a tracer.
  CHECK(printed("@jax.jit\ndef show(x):\n    print('inside', x)\n    return x + 1\n"
                "with jax.disable_jit():\n    print(show(jnp.float32(1.5)))\n"
                "r = show(jnp.float32(1.5))\nprint(type(r).__name__, jax.config.jax_disable_jit)") ==
        "inside 1.5\n2.5\ninside JitTracer(float32[])\nArrayImpl False\n");
  // clear_caches: the next call traces again (its Python side effect runs again).
  CHECK(printed("calls = []\n@jax.jit\ndef traced(x):\n    calls.append(1)\n    return x\n"
                "traced(1.0); traced(2.0)\njax.clear_caches()\ntraced(3.0)\nprint(len(calls))") == "2\n");
  CHECK(printed("print(jax.float0, jax.float0.itemsize)\n"
                "with jax.default_matmul_precision('highest'):\n"
                "    print(jax.config.jax_default_matmul_precision, jnp.dot(jnp.ones(2), jnp.ones(2)))\n"
                "print(jax.config.jax_default_matmul_precision)") == "[('float0', 'V')] 0\nhighest 2.0\nNone\n");
}

TEST_CASE("process_indices, the host_* aliases with JAX's rename warnings, and copy_to_host_async") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("import warnings\nwith warnings.catch_warnings(record=True) as caught:\n"
                "    warnings.simplefilter('always')\n"
                "    print(jax.process_indices(), jax.host_id(), jax.host_count(), jax.host_ids())\n"
                "for w in caught:\n    print(w.category.__name__, w.message)\n"
                "print(jax.copy_to_host_async({'a': jnp.ones(2)}))") ==
        "[0] 0 1 [0]\n"
        "UserWarning jax.process_index has been renamed to jax.process_index. This alias will eventually be removed; "
        "please update your code.\n"
        "UserWarning jax.process_count has been renamed to jax.process_count. This alias will eventually be removed; "
        "please update your code.\n"
        "UserWarning jax.process_indexs has been renamed to jax.process_indices. This alias will eventually be "
        "removed; please update your code.\n"
        "None\n");
}

TEST_CASE(
    "jax.nn.dot_product_attention (grouped heads, causal, residual) and identity, sparse_sigmoid, log1mexp, "
    "logmeanexp") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("k1, k2, k3 = jax.random.split(jax.random.key(0), 3)\n"
                   "q = jax.random.normal(k1, (2, 5, 4, 8))\nk = jax.random.normal(k2, (2, 5, 2, 8))\n"
                   "v = jax.random.normal(k3, (2, 5, 2, 8))\n")
              .ok());
  // Against the formula with the two key/value heads repeated for the four query heads, and a causal mask.
  CHECK(printed("out = jax.nn.dot_product_attention(q, k, v, is_causal=True)\n"
                "kr, vr = jnp.repeat(k, 2, axis=2), jnp.repeat(v, 2, axis=2)\n"
                "logits = jnp.einsum('btnh,bsnh->bnts', q, kr) / np.sqrt(8)\n"
                "logits = jnp.where(jnp.tril(jnp.ones((5, 5), bool)), logits, -1e30)\n"
                "ref = jnp.einsum('bnts,bsnh->btnh', jax.nn.softmax(logits, -1), vr)\n"
                "print(out.shape, float(jnp.abs(out - ref).max()) < 1e-5)") == "(2, 5, 4, 8) True\n");
  CHECK(
      printed(
          "o, lse = jax.nn.dot_product_attention(q[0], k[0], v[0], return_residual=True)\nprint(o.shape, lse.shape)") ==
      "(5, 4, 8) (5, 4)\n");
  CHECK(printed("try:\n    jax.nn.dot_product_attention(q[:, :, :3], k, v)\nexcept ValueError as e:\n    print(e)") ==
        "The number of query heads must be a multiple of key/value heads, but got 3 vs 2\n");
  CHECK(
      printed(
          "print(jax.nn.identity(3), jax.nn.sparse_sigmoid(jnp.array([-2., 0., 0.5, 2.])), "
          "jax.nn.log1mexp(jnp.array([0.1, 2.0])), jax.grad(jax.nn.log1mexp)(2.0), "
          "jax.nn.logmeanexp(jnp.zeros(3)), jax.nn.logmeanexp(jnp.array([0., 5.]), where=jnp.array([True, False])))") ==
      "3 [0.   0.5  0.75 1.  ] [-2.3521686  -0.14541346] 0.15651764 0.0 0.0\n");
}

TEST_CASE("vmap passes arguments mapped over no axis in as they are, so a Python flag can steer the function") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("def f(x, flag, n):\n    return x * 2 if flag else sum(x for _ in range(n))\n"
                "print(jax.vmap(f, in_axes=(0, None, None))(jnp.arange(3.), True, 2), "
                "jax.vmap(f, in_axes=(0, None, None))(jnp.arange(3.), False, 3))") == "[0. 2. 4.] [0. 3. 6.]\n");
  // An unmapped array is read as it is; the size error still names the mapped arguments.
  CHECK(printed("print(jax.vmap(lambda x, w: x * w.shape[0], in_axes=(0, None))(jnp.arange(2.), jnp.ones(3)))") ==
        "[0. 3.]\n");
  CHECK(printed("def g(a, s, b):\n    return a + b\n"
                "try:\n    jax.vmap(g, in_axes=(0, None, 0))(jnp.ones(2), 5, jnp.ones(3))\nexcept ValueError as e:\n"
                "    print(str(e).splitlines()[1:])") ==
        "['  * one axis had size 2: axis 0 of argument a of type float32[2];', '  * one axis had size 3: axis 0 of "
        "argument b of type float32[3]']\n");
}

TEST_CASE("device_buffers and device_buffer per profile: per-device arrays, deprecated in 0.4.22, gone in 0.4.27") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("profile_before = _shardscope.jax_version()\nimport warnings\n"
                   "def buffers():\n"
                   "    with warnings.catch_warnings(record=True) as caught:\n"
                   "        warnings.simplefilter('always')\n"
                   "        try:\n"
                   "            x = jax.device_put(jnp.arange(8.), NamedSharding(mesh, P('x')))\n"
                   "            print(len(x.device_buffers), x.device_buffers[2], x.device_buffers[2].devices())\n"
                   "            print(jax.device_put(jnp.ones(2), jax.devices()[1]).device_buffer)\n"
                   "            try:\n"
                   "                x.device_buffer\n"
                   "            except ValueError as e:\n"
                   "                print(e)\n"
                   "        except AttributeError as e:\n"
                   "            print('AttributeError', str(e).split('. Did you mean')[0])\n"
                   "    print(sorted({str(w.message) for w in caught}))\n")
              .ok());
  REQUIRE(run_cell("_shardscope.set_jax_version('0.4.20')\n").ok());
  // The mesh's device order: device 2 holds the second block of 'x' (mesh (4, 2) over devices 0..7).
  CHECK(printed("buffers()") ==
        "8 [2. 3.] {CpuDevice(id=2)}\n[1. 1.]\nLength of buffers is greater than 1. Please use `.device_buffers` "
        "instead.\n[]\n");
  REQUIRE(run_cell("_shardscope.set_jax_version('0.4.25')\n").ok());
  CHECK(printed("buffers()")
            .find("['arr.device_buffer is deprecated. Use arr.addressable_data(0)', "
                  "'arr.device_buffers is deprecated. Use [x.data for x in arr.addressable_shards]']") !=
        std::string::npos);
  REQUIRE(run_cell("_shardscope.set_jax_version('0.11.2')\n").ok());
  CHECK(printed("buffers()\nx = jax.device_put(jnp.ones((8, 2)), NamedSharding(mesh, P('x')))\n"
                "print(x.on_device_size_in_bytes(), jnp.ones(8).on_device_size_in_bytes(), "
                "jnp.array([1, 2], jnp.int8).tobytes())") ==
        "AttributeError arr.device_buffers has been deprecated. Use [x.data for x in arr.addressable_shards]\n[]\n"
        "128 32 b'\\x01\\x02'\n");
  REQUIRE(run_cell("_shardscope.set_jax_version(profile_before)\n").ok());
}
