// Linen's RNG rules against the values real Flax printed in its RNG guide (JAX 0.4.23, partitionable threefry):
// the flax_fix_rng_separator flag, lifted vmap and scan splitting (scan's body traced twice), Dropout's
// 'dropout' stream, init's DenyList('intermediates'), and jit in_shardings given as a prefix of the arguments.
#include <doctest/doctest.h>

#include <string>

#include "app/python_test_support.h"
#include "python/host.h"

using python_test::printed;
using shardscope::python::run_cell;

namespace {

constexpr const char* kPrelude =
    "import _shardscope\n_shardscope.set_jax_version('0.4.23')\n_shardscope.set_device_preset('cpu:8')\n"
    "import jax\nimport jax.numpy as jnp\nimport flax\nfrom flax import linen as nn\n"
    "jax.config.update('jax_threefry_partitionable', True)\n"
    "flax.config.update('flax_fix_rng_separator', False)\n";

// Model of the guide's vmap cells: a Dense and a variable drawn from the 'other' stream.
constexpr const char* kOtherModel =
    "class Model(nn.Module):\n"
    "  @nn.compact\n"
    "  def __call__(self, x):\n"
    "    x = nn.Dense(2)(x)\n"
    "    k = self.variable('other_collection', 'kernel', lambda: jax.random.normal(self.make_rng('other'), x.shape))\n"
    "    return x + k.value\n";

}  // namespace

TEST_CASE("flax_fix_rng_separator puts a zero byte before each folded part: ('ab', 'c') and ('a', 'bc') differ") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("from flax.linen.scope import _hash_to_uint32 as h\nprint(h(('A', 'B', 'C', 1)), h(('ABC', 1)))") ==
        "947574064 947574064\n");
  CHECK(printed("print(flax.config.flax_fix_rng_separator)") == "False\n");
  REQUIRE(run_cell("flax.config.update('flax_fix_rng_separator', True)").ok());
  CHECK(printed("print(h(('A', 'B', 'C', 1)) != h(('ABC', 1)))") == "True\n");
  // The guide's Dense(2) kernel, drawn from fold_in(key(0), sha1(b'\\0' + b'\\x01')).
  CHECK(printed("print(nn.Dense(2).init(jax.random.key(0), jnp.ones(2))['params']['kernel'])") ==
        "[[-1.2488099  -0.6127134 ]\n [-0.07084481  0.60130936]]\n");
  CHECK_FALSE(run_cell("flax.config.update('flax_no_such_flag', True)").ok());
  REQUIRE(run_cell("flax.config.update('flax_fix_rng_separator', False)").ok());
}

TEST_CASE("nn.vmap lifts only the listed collections and streams, a split stream gives example i split(key)[i]") {
  REQUIRE(run_cell(kPrelude + std::string("flax.config.update('flax_fix_rng_separator', True)\n") + kOtherModel +
                   "x = jnp.ones((3, 2))\nkeys = {'params': jax.random.key(0), 'other': jax.random.key(1)}\n")
              .ok());
  CHECK(printed("B = nn.vmap(nn.Dense, variable_axes={'params': None}, split_rngs={'params': False})\n"
                "v = B(2).init(jax.random.key(0), x)['params']\nprint(v['kernel'].shape, v['bias'].shape, list(v))") ==
        "(2, 2) (2,) ['bias', 'kernel']\n");  // the collections come back from jax.vmap: keys sorted
  CHECK(printed("B = nn.vmap(nn.Dense, variable_axes={'params': 0}, split_rngs={'params': True})\n"
                "print(B(2).init(jax.random.key(0), x)['params']['kernel'][0])") ==
        "[[-0.2526208  -0.15088455]\n [-1.1987205  -0.40843305]]\n");
  CHECK(printed("B = nn.vmap(Model, variable_axes={'params': 0, 'other_collection': None},\n"
                "            split_rngs={'params': True, 'other': False})\n"
                "v = B().init(keys, x)\nprint(v['params']['Dense_0']['kernel'][2])\nprint(v['other_collection'])") ==
        "[[-0.44171348  0.43430036]\n [-0.40732604  0.29774475]]\n{'kernel': Array([ 0.44956833, -1.1854612 ], "
        "dtype=float32)}\n");
  CHECK(printed("B = nn.vmap(Model, variable_axes={'params': 0, 'other_collection': 0},\n"
                "            split_rngs={'params': True, 'other': True})\n"
                "v = B().init(keys, x)\nprint(v['other_collection']['kernel'][0], type(B).__name__, B.__name__)") ==
        "[-0.8193048  0.711106 ] type VmapModel\n");
  // 'other' is not lifted here, so make_rng('other') falls back to the params stream inside.
  CHECK(printed("B = nn.vmap(Model, variable_axes={'params': 0, 'other_collection': 0}, split_rngs={'params': True})\n"
                "v = B().init(keys, x)\nprint(v['other_collection']['kernel'].shape)") == "(3, 2)\n");
  REQUIRE(run_cell("flax.config.update('flax_fix_rng_separator', False)").ok());
}

TEST_CASE("nn.scan traces its body twice, as Flax's axes_scan does: draws inside see the counters advanced once") {
  REQUIRE(run_cell(kPrelude + std::string("flax.config.update('flax_fix_rng_separator', True)\n"
                                          "class Block(nn.Module):\n"
                                          "  @nn.compact\n"
                                          "  def __call__(self, x, _):\n"
                                          "    return x + nn.relu(nn.Dense(2)(x)), None\n"
                                          "x = jnp.ones((3, 2))\n"))
              .ok());
  CHECK(printed("S = nn.scan(Block, variable_axes={'params': 0}, split_rngs={'params': True}, length=3)\n"
                "print(S().init(jax.random.key(0), x, None)['params']['Dense_0']['kernel'][1])") ==
        "[[ 0.97309333  0.9087693 ]\n [-0.12564984 -1.0920651 ]]\n");
  CHECK(printed("S = nn.scan(Block, variable_axes={'params': 0}, split_rngs={'params': False}, length=3)\n"
                "k = S().init(jax.random.key(0), x, None)['params']['Dense_0']['kernel']\n"
                "print(k[0], bool((k[0] == k[2]).all()))") ==
        "[[-0.66715515 -0.0484313 ]\n [ 0.9867164   0.75408363]] True\n");
  REQUIRE(run_cell("flax.config.update('flax_fix_rng_separator', False)").ok());
}

TEST_CASE("Dropout masks with a Bernoulli draw from the 'dropout' stream, deterministic passes inputs through") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("d = nn.Dropout(0.5)\nx = jnp.ones(8)\nprint(d.apply({}, x, deterministic=True))") ==
        "[1. 1. 1. 1. 1. 1. 1. 1.]\n");
  CHECK(printed("from flax.linen.scope import _derive_key\nk = jax.random.key(3)\n"
                "y = d.apply({}, x, deterministic=False, rngs={'dropout': k})\n"
                "m = jax.random.bernoulli(_derive_key(k, (1,)), 0.5, (8,))\n"
                "print(bool((y == jnp.where(m, 2.0, 0.0)).all()), sorted(set(y.tolist())))") == "True [0.0, 2.0]\n");
  CHECK_FALSE(run_cell("nn.Dropout(0.5).apply({}, x)").ok());  // deterministic given nowhere
  CHECK_FALSE(run_cell("nn.Dropout(0.5, deterministic=True).apply({}, x, deterministic=True)").ok());
}

TEST_CASE("init leaves out 'intermediates' and is the only call that is initializing, sow appends when mutable") {
  REQUIRE(run_cell(kPrelude + std::string("class M(nn.Module):\n"
                                          "  def setup(self):\n"
                                          "    self.w = self.param('w', nn.initializers.ones, (2,))\n"
                                          "    self.count = self.variable('counter', 'count', lambda: 0)\n"
                                          "  def __call__(self, x):\n"
                                          "    if not self.is_initializing():\n"
                                          "      self.count.value += 1\n"
                                          "    self.sow('intermediates', 'y', x * self.w)\n"
                                          "    return x * self.w\n"
                                          "v = M().init(jax.random.key(0), jnp.ones(2))\n"))
              .ok());
  CHECK(printed("print(list(v), v['counter'])") == "['params', 'counter'] {'count': 0}\n");
  CHECK(printed("_, u = M().apply(v, jnp.ones(2), rngs={'params': jax.random.key(1)}, mutable=True)\n"
                "print(sorted(u), u['counter'], u['intermediates'])") ==
        "['counter', 'intermediates', 'params'] {'count': 1} {'y': (Array([1., 1.], dtype=float32),)}\n");
  CHECK(printed("print(M().apply(v, jnp.ones(2), mutable=['counter'])[1])") == "{'counter': {'count': 1}}\n");
}

TEST_CASE("jit in_shardings: an entry of the tuple covers every leaf of its argument, None leaving them free") {
  REQUIRE(run_cell(kPrelude + std::string("from jax.sharding import Mesh, NamedSharding, PartitionSpec\n"
                                          "from jax.experimental import mesh_utils\n"
                                          "mesh = Mesh(mesh_utils.create_device_mesh((8,)), ('data',))\n"
                                          "s = NamedSharding(mesh, PartitionSpec('data'))\n"
                                          "module = nn.Dense(1)\n"
                                          "v = module.init(jax.random.key(0), jnp.ones((8, 1)))\n"))
              .ok());
  CHECK(printed("f = jax.jit(lambda v, x, flag: module.apply(v, x) * flag, in_shardings=(None, s, None),\n"
                "            out_shardings=s)\nout = f(v, jnp.ones((8, 1)), 2.0)\n"
                "print(out.sharding.spec, bool((out == 2 * module.apply(v, jnp.ones((8, 1)))).all()))") ==
        "PartitionSpec('data',) True\n");
  CHECK_FALSE(run_cell("jax.jit(lambda v, x: x, in_shardings=(s, s))(v, jnp.ones((8, 1)))").ok());
}
