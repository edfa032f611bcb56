// The embedded flax.nnx: Rngs keys, initial values and an Adam step equal to what real Flax 0.12.10 recorded
// (tests/data/real_jax/probes/p07_nnx.py), Flax's reprs of Modules, Variables, Rngs and State, eager sharding of
// annotated Variables under a mesh, split/merge, transforms writing state back, and vmap's added partition axis.
#include <doctest/doctest.h>

#include <string>

#include "app/python_test_support.h"
#include "python/host.h"

using python_test::printed;
using shardscope::python::run_cell;

namespace {

// The recording's profile: JAX 0.11.2 (explicit make_mesh axes, flax 0.12.10) on 8 CPU devices.
constexpr const char* kPrelude =
    "import _shardscope\n_shardscope.set_jax_version('0.11.2')\n_shardscope.set_device_preset('cpu:8')\n"
    "import jax\nimport jax.numpy as jnp\nimport optax\nimport flax\nfrom flax import nnx\n"
    "from jax.sharding import PartitionSpec as P\nmesh = jax.make_mesh((2, 4), ('data', 'model'))\n";

}  // namespace

TEST_CASE("Rngs streams derive keys as Flax does: fold_in(key, count), falling back to the default stream") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("print(flax.__version__, optax.__version__)") == "0.12.10 0.2.8\n");
  CHECK(printed("print(jax.random.key_data(nnx.Rngs(0).params()))") == "[1797259609 2579123966]\n");
  CHECK(printed("r = nnx.Rngs(0, dropout=1)\nr.params()\nprint(jax.random.key_data(r.dropout()), "
                "r.params.count.value, r.default.count.value)") == "[ 507451445 1853169794] 1 1\n");
  CHECK(printed("print(nnx.Dropout(0.5, rngs=nnx.Rngs(dropout=0))(jnp.ones(8)))") == "[2. 0. 2. 0. 2. 2. 2. 0.]\n");
  CHECK(printed("print(nnx.Rngs(0))") ==
        "Rngs( # RngState: 2 (12 B)\n  default=RngStream( # RngState: 2 (12 B)\n    tag='default',\n"
        "    key=RngKey( # 1 (8 B)\n      value=Array((), dtype=key<fry>) overlaying:\n      [0 0],\n"
        "      tag='default'\n    ),\n    count=RngCount( # 1 (4 B)\n      value=Array(0, dtype=uint32),\n"
        "      tag='default'\n    )\n  )\n)\n");
}

TEST_CASE("Linear, Embed and LayerNorm draw Flax's initial values and print as Flax 0.12 prints them") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("print(nnx.Linear(2, 2, rngs=nnx.Rngs(0)).kernel)") ==
        "Param( # 4 (16 B)\n  value=Array([[ 0.7567299 , -0.68570054],\n         [-0.5688337 , -0.8757605 ]], "
        "dtype=float32)\n)\n");
  CHECK(printed("print(nnx.Embed(10, 4, rngs=nnx.Rngs(0)).embedding.value[:2])") ==
        "[[ 0.5020071  -0.4531686  -0.3740861  -0.58568347]\n [-0.4356164   0.29441905  0.36196497 -0.5127991 ]]\n");
  const std::string linear = printed("print(nnx.Linear(3, 4, rngs=nnx.Rngs(0)))");
  CHECK(
      linear.starts_with("Linear( # Param: 16 (64 B)\n  kernel=Param( # 12 (48 B)\n"
                         "    value=Array(shape=(3, 4), dtype=dtype('float32'))\n  ),\n  bias=Param( # 4 (16 B)\n"));
  CHECK(linear.find("  param_dtype=float32,\n") != std::string::npos);
  CHECK(printed("print(nnx.LayerNorm(4, rngs=nnx.Rngs(0))(jnp.arange(4.0)))") ==
        "[-1.3416404  -0.44721344  0.44721344  1.3416404 ]\n");
}

TEST_CASE("split gives Flax's GraphDef and a sorted State, merge rebuilds the module, grad and Adam step as Flax") {
  REQUIRE(run_cell(kPrelude + std::string("lin = nnx.Linear(3, 4, rngs=nnx.Rngs(0))\n")).ok());
  CHECK(printed("g, st = nnx.split(lin)\nprint(len(g.nodes), g.nodes[0].num_attributes, g.num_leaves, list(st))") ==
        "4 13 2 ['bias', 'kernel']\n");
  CHECK(printed("m2 = nnx.merge(g, st)\nprint(type(m2).__name__, bool((m2(jnp.ones((1, 3))) == lin(jnp.ones((1, "
                "3)))).all()), m2.kernel is not lin.kernel)") == "Linear True True\n");
  CHECK(printed("opt = nnx.Optimizer(lin, optax.adam(1e-3), wrt=nnx.Param)\n"
                "grads = nnx.grad(lambda m, x: (m(x) ** 2).mean())(lin, jnp.ones((2, 3)))\n"
                "print(type(grads).__name__, type(grads['kernel']).__name__)\nopt.update(lin, grads)\n"
                "print(lin.kernel.value[0], opt.step.value)") ==
        "State Param\n[ 0.6168674  -0.55887216 -0.4634508  -0.7140555 ] 1\n");
  // A transform's merge leaves the module's attributes sorted, as nnx.display then shows them.
  CHECK(printed("print(list(vars(lin))[2:5])") == "['bias', 'dot_general', 'dtype']\n");
}

TEST_CASE("annotated Variables shard eagerly under a mesh and need one otherwise") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("try:\n  nnx.Param(jnp.zeros((4, 8)), sharding=(None, 'model'))\nexcept ValueError as e:\n"
                "  print(str(e)[:100])") ==
        "An auto mesh context or metadata is required if creating a variable with annotation out_sharding=P(N\n");
  CHECK(printed("with jax.set_mesh(mesh):\n"
                "  lin = nnx.Linear(4, 8, use_bias=False, rngs=nnx.Rngs(0),\n"
                "      kernel_init=nnx.with_partitioning(nnx.initializers.lecun_normal(), (None, 'model')))\n"
                "print(lin.kernel.value.sharding.spec, lin.kernel.out_sharding)\n"
                "print(nnx.get_partition_spec(nnx.state(lin))['kernel'].value)\n"
                "print(nnx.get_named_sharding(nnx.state(lin), mesh)['kernel'].value.spec)") ==
        "P(None, 'model') (None, 'model')\nP(None, 'model')\nP(None, 'model')\n");
  CHECK(printed("with jax.set_mesh(mesh):\n"
                "  lin = jax.jit(lambda k: nnx.Linear(4, 8, rngs=nnx.Rngs(k),\n"
                "      kernel_init=nnx.with_partitioning(nnx.initializers.lecun_normal(), (None, 'model'))))(\n"
                "      jax.random.key(0))\n"
                "  y = jax.jit(lambda m, x: m(x))(lin, jax.device_put(jnp.ones((16, 4)), P('data', None)))\n"
                "print(lin.kernel.value.sharding.spec, y.sharding.spec)") == "P(None, 'model') P('data', 'model')\n");
}

TEST_CASE("nnx.jit writes mutations back, vmap adds the partition axis, abstract models carry shardings") {
  REQUIRE(run_cell(kPrelude + std::string("lin = nnx.Linear(3, 4, rngs=nnx.Rngs(0))\n")).ok());
  CHECK(printed("@nnx.jit\ndef bump(model, x):\n  model.bias.value = model.bias.value + 1.0\n  return model(x).sum()\n"
                "print(bump(lin, jnp.ones((2, 3))), lin.bias.value)") == "3.4548116 [1. 1. 1. 1.]\n");
  CHECK(printed("@nnx.vmap(transform_metadata={nnx.PARTITION_NAME: None})\ndef make(r):\n"
                "  return nnx.Linear(4, 4, rngs=r,\n"
                "      kernel_init=nnx.with_partitioning(nnx.initializers.lecun_normal(), (None, 'model')))\n"
                "with jax.set_mesh(mesh):\n  stacked = make(nnx.Rngs(0).fork(split=3))\n"
                "print(stacked.kernel.value.shape, stacked.kernel.out_sharding, stacked.kernel.value.sharding.spec)") ==
        "(3, 4, 4) (None, None, 'model') P(None, None, 'model')\n");
  CHECK(printed("gd, ab = nnx.get_abstract_model(lambda: nnx.Linear(3, 8, rngs=nnx.Rngs(0),\n"
                "    kernel_init=nnx.with_partitioning(nnx.initializers.lecun_normal(), (None, 'model'))), mesh)\n"
                "print(ab['kernel'].value.shape, ab['kernel'].value.sharding.spec)") == "(3, 8) P(None, 'model')\n");
  CHECK(printed("print(nnx.eval_shape(lambda: nnx.Linear(3, 4, rngs=nnx.Rngs(0))).kernel.value)") ==
        "ShapeDtypeStruct(shape=(3, 4), dtype=float32)\n");
}

TEST_CASE("before Flax 0.12 annotations stay metadata until a jitted constraint places the state") {
  REQUIRE(run_cell("import _shardscope\n_shardscope.set_jax_version('0.6.2')\n_shardscope.set_device_preset('cpu:8')\n"
                   "import jax\nimport jax.numpy as jnp\nfrom flax import nnx\n"
                   "mesh = jax.make_mesh((2, 4), ('data', 'model'))\n")
              .ok());
  CHECK(printed("w = nnx.Param(jnp.ones((4, 8)), sharding=(None, 'model'))\nprint(w.sharding, "
                "type(w.value.sharding).__name__)") == "(None, 'model') SingleDeviceSharding\n");
  CHECK(printed("class M(nnx.Module):\n"
                "  def __init__(self, rngs):\n"
                "    self.w = nnx.Param(rngs.params.lecun_normal()((4, 8)), sharding=(None, 'model'))\n"
                "@nnx.jit\ndef create():\n  m = M(nnx.Rngs(0))\n  st = nnx.state(m)\n"
                "  nnx.update(m, jax.lax.with_sharding_constraint(st, nnx.get_partition_spec(st)))\n  return m\n"
                "with mesh:\n  m = create()\nprint(m.w.value.sharding.spec)") == "PartitionSpec(None, 'model')\n");
}

TEST_CASE("a Linear keeps the attributes of the Flax release paired with the profile's JAX") {
  REQUIRE(run_cell("import _shardscope\n_shardscope.set_device_preset('cpu:8')\nimport jax\nfrom flax import nnx\n"
                   "def attrs(version):\n"
                   "  _shardscope.set_jax_version(version)\n"
                   "  lin = nnx.Linear(2, 2, rngs=nnx.Rngs(0))\n"
                   "  return [n for n in ('kernel_init', 'bias_init', 'promote_dtype', 'preferred_element_type')\n"
                   "          if n in vars(lin)]\n")
              .ok());
  CHECK(printed("print(attrs('0.5.1'))") == "['kernel_init', 'bias_init']\n");                   // Flax 0.10.4
  CHECK(printed("print(attrs('0.7.0'))") == "['kernel_init', 'bias_init', 'promote_dtype']\n");  // Flax 0.11.1
  CHECK(printed("print(attrs('0.7.2'))") ==
        "['kernel_init', 'bias_init', 'promote_dtype', 'preferred_element_type']\n");           // Flax 0.12.0
  CHECK(printed("print(attrs('0.11.2'))") == "['promote_dtype', 'preferred_element_type']\n");  // Flax 0.12.10
}

TEST_CASE("str() of an NNX object is in Flax's colours where Flax finds a terminal or notebook, repr() never") {
  REQUIRE(run_cell(kPrelude + std::string("import os\nw = nnx.Param(jnp.ones(2))\n")).ok());
  CHECK(printed("print(str(w) == repr(w))") == "True\n");
  CHECK(printed("os.environ['FORCE_COLOR'] = '1'\ntext, plain = str(w), repr(w)\ndel os.environ['FORCE_COLOR']\n"
                "print(text.split('\\n')[0].encode(), plain.split('\\n')[0])") ==
        "b'\\x1b[38;2;79;201;177mParam\\x1b[0m\\x1b[38;2;255;213;3m(\\x1b[0m\\x1b[38;2;105;105;105m # 2 (8 B)\\x1b[0m' "
        "Param( # 2 (8 B)\n");
}

TEST_CASE("split_rngs gives a vmapped constructor one key per layer and puts the streams back after the call") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("rngs = nnx.Rngs(params=0)\n"
                   "@nnx.split_rngs(splits=3)\n"
                   "@nnx.vmap(in_axes=0, out_axes=0)\n"
                   "def create(r):\n"
                   "    return nnx.Linear(2, 4, rngs=r)\n"
                   "stack = create(rngs)\n"
                   "keys = jax.random.split(jax.random.fold_in(jax.random.key(0), 0), 3)\n")
              .ok());
  CHECK(printed("print(stack.kernel.shape, rngs.params.count.value, rngs.params.key.shape)") == "(3, 2, 4) 1 ()\n");
  // Layer i is the Linear a stream keyed by split(next key, 3)[i] makes.
  CHECK(printed("same = jax.vmap(lambda k: nnx.Linear(2, 4, rngs=nnx.Rngs(params=k)).kernel.value)(keys)\n"
                "print(bool(jnp.array_equal(stack.kernel.value, same)))") == "True\n");
  // Called plainly it leaves the streams split, a key and a zero count per split; `only` picks the streams.
  CHECK(printed("r = nnx.Rngs(params=0, dropout=1)\nnnx.split_rngs(r, splits=5, only='dropout')\n"
                "print(r.dropout.key.shape, r.dropout.count.value.shape, r.params.key.shape)") == "(5,) (5,) ()\n");
  CHECK(printed("try:\n    nnx.split_rngs(r, splits=2, squeeze=True)\nexcept ValueError as ex:\n    print(ex)") ==
        "squeeze=True is only supported for splits=1\n");
  // A name nnx lacks is an AttributeError, not jax.nn's NotImplementedError.
  CHECK(printed("print(hasattr(nnx, 'no_such_name'), nnx.relu is jax.nn.relu)") == "False True\n");
}

TEST_CASE("nnx.vmap writes the mapped modules' new state back to the caller's objects") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("class Counter(nnx.Module):\n"
                "    def __init__(self):\n"
                "        self.count = nnx.BatchStat(jnp.zeros(3))\n"
                "c = Counter()\n"
                "@nnx.vmap(in_axes=0)\n"
                "def bump(m):\n"
                "    m.count.value = m.count.value + jnp.float32(2)\n"
                "bump(c)\nbump(c)\nprint(c.count.value)") == "[4. 4. 4.]\n");
}
