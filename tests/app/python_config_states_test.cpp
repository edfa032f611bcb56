// jax's config context managers (jax.enable_x64, jax.debug_infs, ...), the values shardscope does not simulate,
// and the rest of jax's top-level surface that was missing: jax.ops, jax.profiler, jax.stages, get_mesh, debug.log.
#include <doctest/doctest.h>

#include <string>

#include "app/python_test_support.h"
#include "python/host.h"

using python_test::kAttemptHelper;
using python_test::printed;
using shardscope::python::run_cell;

namespace {

constexpr const char* kPrelude =
    "import _shardscope\n_shardscope.set_device_preset('cpu:8')\n_shardscope.set_jax_version('0.11.2')\n"
    "import numpy as np\nimport jax\nimport jax.numpy as jnp\n";

}  // namespace

TEST_CASE("jax.enable_x64 and jax.debug_infs set their option for a block, read through .value, and decorate") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell(kAttemptHelper).ok());
  CHECK(printed("print(jax.enable_x64.value, jax.enable_x64.name)\nwith jax.enable_x64(True):\n"
                "    print(jnp.arange(3.0).dtype, jax.config.jax_enable_x64)\nprint(jnp.arange(3.0).dtype)") ==
        "False jax_enable_x64\nfloat64 True\nfloat32\n");
  // A boolean state's context defaults to True; bool() of the state is JAX's TypeError.
  CHECK(printed("@jax.enable_x64()\ndef wide():\n    return jnp.zeros(2).dtype\nprint(wide(), jnp.zeros(2).dtype)") ==
        "float64 float32\n");
  CHECK(printed("attempt(lambda: bool(jax.enable_x64))") ==
        "TypeError bool() not supported for instances of type 'State' (did you mean to use 'State.value' "
        "instead?)\n");
  // debug_infs: the eager op that made the infinity raises; under jit JAX reports, then reruns op by op.
  CHECK(printed("with jax.debug_infs(True):\n    attempt(lambda: jnp.log(jnp.zeros(2)))\n"
                "    attempt(lambda: jnp.log(-jnp.ones(2)))\nattempt(lambda: jnp.log(jnp.zeros(2)))") ==
        "Invalid nan value encountered in the output of a jax.jit function. Calling the de-optimized version.\n"
        "FloatingPointError invalid value (inf) encountered in log\nOK\nOK\n");
  CHECK(printed("f = jax.jit(lambda x: 1.0 / x)\nwith jax.debug_infs():\n    attempt(lambda: f(jnp.zeros(2)))\n"
                "print(jax.config.jax_debug_infs)") ==
        // Twice: f's rerun calls the division, itself a jitted function as in jax.numpy.
        "Invalid nan value encountered in the output of a jax.jit function. Calling the de-optimized version.\n"
        "Invalid nan value encountered in the output of a jax.jit function. Calling the de-optimized version.\n"
        "FloatingPointError invalid value (inf) encountered in div\nFalse\n");
}

TEST_CASE("config values shardscope does not simulate raise NotImplementedError naming the option and the value") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell(kAttemptHelper).ok());
  CHECK(printed("def enter(context):\n    with context:\n        pass\n"
                "attempt(lambda: enter(jax.numpy_rank_promotion('raise')))\n"
                "attempt(lambda: enter(jax.numpy_rank_promotion('allow')))\n"
                "attempt(lambda: jax.numpy_rank_promotion('bogus'))\n"
                "attempt(lambda: jax.config.update('jax_numpy_dtype_promotion', 'strict'))\n"
                "attempt(lambda: enter(jax.transfer_guard('disallow')))\n"
                "attempt(lambda: enter(jax.transfer_guard('allow')))\n"
                "attempt(lambda: enter(jax.log_compiles(True)))\n"
                "print(jax.config.jax_numpy_dtype_promotion, jax.config.jax_transfer_guard_host_to_device)") ==
        "NotImplementedError jax_numpy_rank_promotion='raise' is not supported by shardscope (it simulates "
        "'allow')\nOK\nValueError new enum value must be in ['allow', 'warn', 'raise'], got bogus of type <class "
        "'str'>.\nNotImplementedError jax_numpy_dtype_promotion='strict' is not supported by shardscope (it "
        "simulates 'standard')\nNotImplementedError jax_transfer_guard_host_to_device='disallow' is not supported by "
        "shardscope (it simulates None or 'allow')\nOK\nNotImplementedError jax_log_compiles=True is not supported "
        "by shardscope (it simulates False)\nstandard None\n");
  // The default device: the first device (or its platform) is what the simulation does; another is refused.
  CHECK(printed("with jax.default_device(jax.devices()[0]):\n    print(jnp.ones(2).devices())\n"
                "with jax.default_device('cpu'):\n    pass\n"
                "attempt(lambda: enter(jax.default_device(jax.devices()[3])))") ==
        "{CpuDevice(id=0)}\nNotImplementedError jax_default_device=CpuDevice(id=3) is not supported by shardscope "
        "(arrays are placed on the first device, CpuDevice(id=0))\n");
}

TEST_CASE("config states and the x64 context managers exist from the JAX release that exported them") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell(kAttemptHelper).ok());
  REQUIRE(run_cell("_shardscope.set_jax_version('0.7.2')\n").ok());
  CHECK(printed("attempt(lambda: jax.enable_x64)\nattempt(lambda: jax.thread_guard)\nprint(jax.no_execution.name)\n"
                "from jax.experimental import enable_x64, disable_x64\n"
                "with enable_x64():\n    print(jnp.arange(2.).dtype)\n    with disable_x64():\n"
                "        print(jnp.arange(2.).dtype)") ==
        "AttributeError module 'jax' has no attribute 'enable_x64'\n"
        "AttributeError module 'jax' has no attribute 'thread_guard'\njax_no_execution\nfloat64\nfloat32\n");
  REQUIRE(run_cell("_shardscope.set_jax_version('0.11.2')\n").ok());
  CHECK(printed("attempt(lambda: __import__('jax.experimental', fromlist=['enable_x64']).enable_x64)") ==
        "AttributeError module 'jax.experimental' has no attribute 'enable_x64'\n");
}

TEST_CASE("jax modules and names that are not simulated raise NotImplementedError on access and on import") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell(kAttemptHelper).ok());
  CHECK(printed("attempt(lambda: jax.export)\nattempt(lambda: __import__('jax.export'))\n"
                "attempt(lambda: __import__('jax.distributed'))\nattempt(lambda: jax.ensure_compile_time_eval)\n"
                "attempt(lambda: jax.profiler.start_trace)\nattempt(lambda: jax.tree_util.default_registry)\n"
                "attempt(lambda: jax.debug.DebugEffect)\nattempt(lambda: jax.no_such_name)") ==
        "NotImplementedError jax.export is not supported by shardscope\n"
        "NotImplementedError jax.export is not supported by shardscope\n"
        "NotImplementedError jax.distributed is not supported by shardscope\n"
        "NotImplementedError jax.ensure_compile_time_eval is not supported by shardscope\n"
        "NotImplementedError jax.profiler.start_trace is not supported by shardscope\n"
        "NotImplementedError jax.tree_util.default_registry is not supported by shardscope\n"
        "NotImplementedError jax.debug.DebugEffect is not supported by shardscope\n"
        "AttributeError module 'jax' has no attribute 'no_such_name'\n");
}

TEST_CASE("jax.ops' segment reductions drop ids out of range and fill empty segments with the identity") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("ids = jnp.array([0, 0, 1, 1, 2, 7])\ndata = jnp.arange(6.)\n"
                "print(jax.ops.segment_sum(data, ids, num_segments=4))\n"
                "print(jax.ops.segment_max(data, ids, 4), jax.ops.segment_min(jnp.arange(6), ids, 4))\n"
                "print(jax.ops.segment_prod(data + 1, ids, 3))\n"
                "print(jax.ops.segment_sum(jnp.ones((4, 2)), jnp.array([1, 0, 1, 1])))\n"
                "print(jax.jit(lambda d, i: jax.ops.segment_sum(d, i, 3))(data, ids))") ==
        "[1. 5. 4. 0.]\n[  1.   3.   4. -inf] [         0          2          4 2147483647]\n[ 2. 12.  5.]\n"
        "[[1. 1.]\n [3. 3.]]\n[1. 5. 4.]\n");
}

TEST_CASE("profiler annotations pass calls through, jax.stages names jit's stages, and Shard is the shard type") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("with jax.profiler.TraceAnnotation('step', n=1):\n    print('inside')\n"
                "g = jax.profiler.annotate_function(lambda x: x + 1, name='inc')\nprint(g(1))\n"
                "lowered = jax.jit(jnp.sin).lower(1.0)\n"
                "print(isinstance(lowered, jax.stages.Lowered), isinstance(lowered.compile(), jax.stages.Compiled))\n"
                "print(isinstance(jax.jit(jnp.sin), jax.stages.Wrapped))\n"
                "print(all(isinstance(s, jax.Shard) for s in jnp.arange(8.).addressable_shards))\n"
                "print(jax.custom_derivatives.custom_jvp is jax.custom_jvp, jax.typing.ArrayLike is not None)") ==
        "inside\n2\nTrue True\nTrue\nTrue\nTrue True\n");
}

TEST_CASE("get_mesh, make_single_device_sharding, flatten_one_level_with_keys and process-local data") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell(kAttemptHelper).ok());
  CHECK(printed("mesh = jax.make_mesh((4, 2), ('a', 'b'))\nwith jax.set_mesh(mesh):\n"
                "    print(jax.sharding.get_mesh() == mesh)\n"
                "    attempt(lambda: jax.jit(lambda x: jax.sharding.get_mesh())(1.0))\n"
                "print(jax.sharding.make_single_device_sharding(jax.devices()[1]))") ==
        "True\nValueError `get_mesh` can only be used outside of `jax.jit`. Maybe you want "
        "`jax.sharding.get_abstract_mesh()`?\nSingleDeviceSharding(device=CpuDevice(id=1), memory_kind=device)\n");
  CHECK(printed("print(jax.tree_util.flatten_one_level_with_keys({'b': 1, 'a': None}))\n"
                "print(jax.tree_util.flatten_one_level_with_keys((1, (2, 3))))\n"
                "attempt(lambda: jax.tree_util.flatten_one_level_with_keys(1.0))") ==
        "([(DictKey(key='a'), None), (DictKey(key='b'), 1)], ['a', 'b'])\n"
        "([(SequenceKey(idx=0), 1), (SequenceKey(idx=1), (2, 3))], None)\n"
        "ValueError can't tree-flatten type: <class 'float'>\n");
  CHECK(printed("a = jax.make_array_from_process_local_data(jax.NamedSharding(mesh, jax.P('a')), np.arange(8.))\n"
                "print(a.sharding.spec, a.addressable_shards[2].data)\n"
                "print(jax.print_environment_info(True).splitlines()[4])") ==
        "P('a',) [2. 3.]\ndevice info: cpu-8, 8 local devices\"\n");
}

TEST_CASE("jax.debug.log formats as jax.debug.print does and logs at INFO, eagerly and inside jit") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("import logging, io\nstream = io.StringIO()\nhandler = logging.StreamHandler(stream)\n"
                "logger = logging.getLogger('jax._src.debugging')\nlogger.addHandler(handler)\n"
                "logger.setLevel(logging.INFO)\njax.debug.log('x is {x}', x=jnp.arange(2))\n"
                "jax.jit(lambda y: jax.debug.log('y={}', y * 2))(jnp.ones(2))\nlogger.removeHandler(handler)\n"
                "print(repr(stream.getvalue()))") == "'x is [0 1]\\ny=[2. 2.]\\n'\n");
}

TEST_CASE("multihost_utils with one process, and jax.experimental modules that are not simulated") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell(kAttemptHelper).ok());
  CHECK(printed("from jax.experimental import multihost_utils\nfrom jax.sharding import PartitionSpec as P\n"
                "print(multihost_utils.process_allgather(jnp.arange(4)), "
                "multihost_utils.process_allgather(jnp.arange(4), tiled=True))\n"
                "print(multihost_utils.process_allgather(jnp.float32(2), tiled=True).shape)\n"
                "print(multihost_utils.broadcast_one_to_all({'a': jnp.ones(2)}))\n"
                "multihost_utils.sync_global_devices('step')\nmultihost_utils.assert_equal(jnp.ones(3))\n"
                "mesh = jax.make_mesh((4, 2), ('a', 'b'))\n"
                "g = multihost_utils.host_local_array_to_global_array({'x': np.arange(8.)}, mesh, P('a'))['x']\n"
                "print(g.sharding.spec, g.addressable_shards[2].data)\n"
                "attempt(lambda: __import__('jax.experimental.checkify'))\n"
                "attempt(lambda: __import__('jax.experimental.sparse.bcoo'))") ==
        "[[0 1 2 3]] [0 1 2 3]\n()\n{'a': array([1., 1.], dtype=float32)}\nP('a',) [2. 3.]\n"
        "NotImplementedError jax.experimental.checkify is not supported by shardscope\n"
        "NotImplementedError jax.experimental.sparse is not supported by shardscope\n");
}

TEST_CASE("NamedSharding._to_xla_hlo_sharding prints XLA's HloSharding text (iota tile assignments)") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("from jax.sharding import NamedSharding, PartitionSpec as P\n"
                "mesh = jax.make_mesh((4, 2), ('data', 'model'))\n"
                "for spec in [P('data', None), P(), P('model', 'data'), P(('data', 'model'))]:\n"
                "    print(NamedSharding(mesh, spec)._to_xla_hlo_sharding(2))\n"
                "print(NamedSharding(mesh, P())._to_xla_hlo_sharding(2).is_replicated())") ==
        "{devices=[4,1,2]<=[8] last_tile_dim_replicate}\n{replicated}\n{devices=[2,4]<=[4,2]T(1,0)}\n"
        "{devices=[8,1]<=[8]}\nTrue\n");
}
