// flax.nnx.bridge against the values Flax's bridge guide recorded: ToNNX's lazy init (keys taken as they are
// before Flax 0.10.5, drawn from the stream after), Linen collections as NNX Variable types and back, ToLinen's
// collections (with the 'nnx' GraphDef before Flax 0.10.6), NNXMeta boxes and partition specs, vmap over ToLinen.
#include <doctest/doctest.h>

#include <string>

#include "app/python_test_support.h"
#include "python/host.h"

using python_test::printed;
using shardscope::python::run_cell;

namespace {

std::string prelude(const std::string& jax_version) {
  return "import _shardscope\n_shardscope.set_jax_version('" + jax_version +
         "')\n_shardscope.set_device_preset('cpu:8')\n"
         "import jax\nimport jax.numpy as jnp\nfrom flax import nnx\nfrom flax import linen as nn\n"
         "from flax.nnx import bridge\n"
         "class LinenMultiCollections(nn.Module):\n"
         "  out_dim: int\n"
         "  def setup(self):\n"
         "    self.w = self.param('w', nn.initializers.lecun_normal(), (4, self.out_dim))\n"
         "    self.b = self.param('b', nn.zeros_init(), (self.out_dim,))\n"
         "    self.count = self.variable('counter', 'count', lambda: jnp.zeros((), jnp.int32))\n"
         "  def __call__(self, x):\n"
         "    if not self.is_initializing():\n"
         "      self.count.value += 1\n"
         "    y = x @ self.w + self.b\n"
         "    self.sow('intermediates', 'dot_sum', jnp.sum(y))\n"
         "    return y\n"
         "x = jax.random.normal(jax.random.key(42), (2, 4))\n"
         "model = bridge.lazy_init(bridge.ToNNX(LinenMultiCollections(3), rngs=nnx.Rngs(0)), x)\n";
}

// The guide's NNX module with a LoRA and a registered 'counts' collection.
constexpr const char* kMultiCollections =
    "@nnx.register_variable_name('counts', overwrite=True)\n"
    "class Count(nnx.Variable): pass\n"
    "class NNXMultiCollections(nnx.Module):\n"
    "  def __init__(self, din, dout, rngs):\n"
    "    self.w = nnx.Param(nnx.initializers.lecun_normal()(rngs.params(), (din, dout)))\n"
    "    self.lora = nnx.LoRA(din, 3, dout, rngs=rngs)\n"
    "    self.count = Count(jnp.array(0))\n"
    "  def __call__(self, x):\n"
    "    self.count.value += 1\n"
    "    return (x @ self.w.value) + self.lora(x)\n"
    "xkey, pkey, dkey = jax.random.split(jax.random.key(0), 3)\n"
    "xm = jax.random.normal(xkey, (2, 4))\n"
    "lm = bridge.to_linen(NNXMultiCollections, 4, 3)\n"
    "var = lm.init({'params': pkey, 'dropout': dkey}, xm)\n";

}  // namespace

TEST_CASE("ToNNX before Flax 0.10.5: Linen init takes the Rngs' keys as they are, collections become Variables") {
  REQUIRE(run_cell(prelude("0.4.31")).ok());
  // The guide's first recording (September 2024) of model.w.
  CHECK(printed("print(model.w.value[0], type(model.w).__name__)") == "[ 0.35401407  0.38010964 -0.20674096] Param\n");
  CHECK(printed("print(type(model.count), type(model.count).__bases__[0].__name__)") ==
        "<class 'flax.nnx.variablelib.counter'> Variable\n");
  CHECK(printed("print(hasattr(model, 'dot_sum'), sorted(model.linen_attributes))") == "False ['b', 'count', 'w']\n");
  CHECK(printed("y = model(x, mutable=True)\nprint(type(model.dot_sum).__name__, type(model.dot_sum[0]).__name__, "
                "int(model.count.value))") == "tuple Intermediate 1\n");
  CHECK(printed("static, params, counter, rest = nnx.split(model, nnx.Param, type(model.count), ...)\n"
                "print(list(params.keys()), list(counter.keys()), list(rest.keys()))") ==
        "['b', 'w'] ['count'] ['dot_sum', 'rngs']\n");
  CHECK(printed("model = nnx.merge(static, params, counter, rest)\ny = model(x, mutable=True)\n"
                "print(int(model.count.value), bool(jnp.allclose(model.dot_sum[0].value, y.sum())))") == "2 True\n");
}

TEST_CASE("ToNNX from Flax 0.10.5: init draws a key from each stream, and every attribute round-trips") {
  REQUIRE(run_cell(prelude("0.6.0")).ok());
  // The guide's April 2025 recording of model.w and of the sown sum.
  CHECK(printed("print(model.w.value[0])") == "[ 0.53824717  0.7668343  -0.38585317]\n");
  CHECK(printed("y = model(x, mutable=True)\nprint(model.dot_sum[0].value, hasattr(model, 'linen_attributes'))") ==
        "0.5475821 False\n");
  // dot_sum is a tuple of Variables, which Flax's conversion back to Linen variables rejects.
  CHECK(printed("try:\n  model(x, mutable=True)\nexcept ValueError as e:\n  print(str(e)[:39])") ==
        "Cannot infer collection name from value\n");
}

TEST_CASE("to_linen builds the NNX module from the Linen streams and stores its Variables per collection") {
  REQUIRE(run_cell(prelude("0.4.31") + kMultiCollections).ok());
  CHECK(printed("print(var['params']['w'][0])") == "[0.2916921  0.22780475 0.06553137]\n");
  CHECK(printed("print(sorted(var), type(var['nnx']['graphdef']).__name__)") ==
        "['LoRAParam', 'counts', 'nnx', 'params'] GraphDef\n");
  // The module runs after its variables are stored: init keeps the count it was built with.
  CHECK(printed("print(var['LoRAParam']['lora']['lora_a'].shape, var['counts']['count'])") == "(4, 3) 0\n");
  CHECK(printed("y, upd = lm.apply(var, xm, mutable=['counts'])\nprint(upd['counts']['count'], y.shape)") ==
        "1 (2, 3)\n");
  REQUIRE(run_cell(prelude("0.6.0") + kMultiCollections).ok());
  CHECK(printed("print(sorted(var))") == "['LoRAParam', 'counts', 'params']\n");
}

TEST_CASE("NNX metadata rides in NNXMeta boxes, Linen Partitioned boxes become sharding annotations and back") {
  REQUIRE(run_cell(prelude("0.4.31") +
                   "class Dot(nnx.Module):\n"
                   "  def __init__(self, din, dout, rngs):\n"
                   "    init = nnx.with_partitioning(nnx.initializers.lecun_normal(), ('in', 'out'))\n"
                   "    self.w = nnx.Param(init(rngs.params(), (din, dout)))\n"
                   "  def __call__(self, x):\n"
                   "    return x @ self.w\n"
                   "v = bridge.to_linen(Dot, 4, 8).init(jax.random.key(0), x)\n")
              .ok());
  CHECK(printed("w = v['params']['w']\nprint(type(w).__name__, w.metadata['sharding'], nn.get_partition_spec(v)"
                "['params']['w'])") == "NNXMeta ('in', 'out') PartitionSpec('in', 'out')\n");
  CHECK(printed("print(nn.unbox(v)['params']['w'].shape)") == "(4, 8)\n");
  CHECK(printed("class P(nn.Module):\n"
                "  @nn.compact\n"
                "  def __call__(self, x):\n"
                "    init = nn.with_partitioning(nn.initializers.ones, ('in', 'out'))\n"
                "    return x @ self.param('w', init, (x.shape[-1], 2))\n"
                "m = bridge.lazy_init(bridge.ToNNX(P(), rngs=nnx.Rngs(0)), x)\n"
                "print(type(m.w).__name__, m.w.sharding, nnx.get_partition_spec(nnx.state(m))['w'].value)") ==
        "Param ('in', 'out') PartitionSpec('in', 'out')\n");
  CHECK(printed("print(bridge.variables.nnx_attrs_to_linen_vars({'w': m.w})['params']['w'].names)") ==
        "('in', 'out')\n");
}

TEST_CASE("nn.vmap over ToLinen stacks the NNX module's parameters, named VmapToLinen_0") {
  REQUIRE(run_cell(prelude("0.4.31") +
                   "class LinenVmapped(nn.Module):\n"
                   "  dout: int\n"
                   "  @nn.compact\n"
                   "  def __call__(self, x):\n"
                   "    inner = nn.vmap(bridge.ToLinen, variable_axes={'params': 0}, split_rngs={'params': True}\n"
                   "                    )(nnx.Linear, args=(x.shape[-1], self.dout))\n"
                   "    return inner(x)\n"
                   "xv = jax.random.normal(jax.random.key(42), (4, 32))\n"
                   "lv = LinenVmapped(64)\nvv = lv.init(jax.random.key(0), xv)\n")
              .ok());
  CHECK(printed("k = vv['params']['VmapToLinen_0']['kernel']\nprint(k.shape, bool((k[0] != k[1]).any()))") ==
        "(4, 32, 64) True\n");
  CHECK(printed("print(lv.apply(vv, xv).shape)") == "(4, 64)\n");
}

TEST_CASE("nnx.with_sharding_constraint places a ToNNX model's state by its annotations inside nnx.jit") {
  REQUIRE(run_cell(prelude("0.4.31") +
                   "from jax.experimental import mesh_utils\n"
                   "class LinenDotP(nn.Module):\n"
                   "  @nn.compact\n"
                   "  def __call__(self, x):\n"
                   "    init = nn.with_partitioning(nn.initializers.lecun_normal(), ('in', 'out'))\n"
                   "    return x @ self.param('w', init, (x.shape[-1], 64))\n"
                   "@nnx.jit\n"
                   "def create(x):\n"
                   "  m = bridge.lazy_init(bridge.ToNNX(LinenDotP(), rngs=nnx.Rngs(0)), x)\n"
                   "  state = nnx.state(m)\n"
                   "  nnx.update(m, nnx.with_sharding_constraint(state, nnx.get_partition_spec(state)))\n"
                   "  return m\n"
                   "mesh = jax.sharding.Mesh(mesh_utils.create_device_mesh((2, 4)), ('in', 'out'))\n"
                   "xs = jax.random.normal(jax.random.key(42), (4, 32))\n")
              .ok());
  CHECK(printed("with jax.set_mesh(mesh):\n  m = create(xs)\nprint(m.w.sharding, m.w.value.sharding.spec)") ==
        "('in', 'out') PartitionSpec('in', 'out')\n");
  // Without a mesh in context Flax leaves the values where they are.
  CHECK(printed("st = nnx.state(bridge.lazy_init(bridge.ToNNX(LinenDotP(), rngs=nnx.Rngs(0)), xs))\n"
                "w = nnx.with_sharding_constraint(st, nnx.get_partition_spec(st))['w'].value\n"
                "print(type(w.sharding).__name__, w is st['w'].value)") == "SingleDeviceSharding True\n");
  // Flax 0.12.10 (jax 0.11's) no longer has it.
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  CHECK(printed("try:\n  nnx.with_sharding_constraint\nexcept AttributeError as ex:\n  print(ex)") ==
        "Module flax.nnx has no attribute 'with_sharding_constraint'\n");
}

TEST_CASE("ToNNX from Flax 0.12: a sown tuple is one Intermediate, and the modules split and merge back") {
  REQUIRE(run_cell(prelude("0.11.2")).ok());
  // As real Flax 0.12.10 printed it in the bridge guide.
  CHECK(
      printed("y = model(x, mutable=True)\nprint(type(model.dot_sum).__name__, type(model.dot_sum.value).__name__)") ==
      "Intermediate tuple\n");
  CHECK(printed("static, params, counter, rest = nnx.split(model, nnx.Param, type(model.count), ...)\n"
                "print(list(params.keys()), list(counter.keys()), list(rest.keys()))") ==
        "['b', 'w'] ['count'] ['dot_sum', 'to_nnx__rngs']\n");
  CHECK(printed("model = nnx.merge(static, params, counter, rest)\ny = model(x, mutable=True)\n"
                "print(int(model.count.value), bool(jnp.allclose(model.dot_sum.value[0], y.sum())))") == "2 True\n");
}

TEST_CASE("a ToNNX module lazily initialized inside nnx.vmap keeps its stacked parameters") {
  // The bridge guide's NNXVmapped, as real Flax 0.12.10 printed it: (4, 32, 64) and (4, 64).
  REQUIRE(run_cell(prelude("0.11.2") +
                   "class NNXVmapped(nnx.Module):\n"
                   "  def __init__(self, out_dim, vmap_axis_size, rngs):\n"
                   "    self.linen_dot = nnx.bridge.ToNNX(nn.Dense(out_dim, use_bias=False), rngs=rngs)\n"
                   "    self.vmap_axis_size = vmap_axis_size\n"
                   "  def __call__(self, x):\n"
                   "    @nnx.split_rngs(splits=self.vmap_axis_size)\n"
                   "    @nnx.vmap(in_axes=(0, 0), axis_size=self.vmap_axis_size)\n"
                   "    def vmap_fn(submodule, x):\n"
                   "      return submodule(x)\n"
                   "    return vmap_fn(self.linen_dot, x)\n")
              .ok());
  CHECK(printed("xv = jax.random.normal(jax.random.key(0), (4, 32))\n"
                "vm = bridge.lazy_init(NNXVmapped(64, 4, rngs=nnx.Rngs(0)), xv)\n"
                "print(vm.linen_dot.kernel.shape, vm(xv).shape)") == "(4, 32, 64) (4, 64)\n");
}
