// flax.linen's lifted transforms as the parallelism course uses them: map_variables (a masked kernel, the stacked
// per-device parameters of a tensor-parallel layer), a scope's RNG streams replaced by key, scan with broadcast
// variables and scan of a function (the pipeline).
#include <doctest/doctest.h>

#include <string>

#include "app/python_test_support.h"
#include "python/host.h"

using python_test::printed;
using shardscope::python::run_cell;

namespace {

constexpr const char* kPrelude =
    "import _shardscope\n_shardscope.set_jax_version('0.4.30')\n_shardscope.set_device_preset('cpu:8')\n"
    "import functools\nfrom typing import Any, Callable, Dict\nimport numpy as np\nimport jax\n"
    "import jax.numpy as jnp\nimport flax.linen as nn\nfrom jax.experimental.shard_map import shard_map\n"
    "from jax.sharding import Mesh, PartitionSpec as P\n";

// The course's tensor-parallel Dense: params initialised per model-axis device (its key folded with the axis
// index), stacked along a new leading 'model' axis on the way out and unstacked on the way in.
constexpr const char* kTensorParallel =
    "def fold_rng_over_axis(rng, axis_name):\n"
    "    axis_index = jax.lax.axis_index(axis_name)\n"
    "    return jax.random.fold_in(rng, axis_index)\n"
    "\n"
    "def stack_params(params, axis_name, axis=0, mask_except=None):\n"
    "    def _stack(x):\n"
    "        if isinstance(x, nn.Partitioned):\n"
    "            value, names = x.value, x.names\n"
    "        else:\n"
    "            value, names = x, (None,) * x.ndim\n"
    "        if mask_except is not None:\n"
    "            axis_index = jax.lax.axis_index(axis_name)\n"
    "            value = jnp.where(axis_index == mask_except, value, 0.0)\n"
    "        value = jnp.expand_dims(value, axis)\n"
    "        names = names[:axis] + (axis_name,) + names[axis:]\n"
    "        return nn.Partitioned(value, names=names)\n"
    "    return jax.tree_util.tree_map(_stack, params, is_leaf=lambda x: isinstance(x, nn.Partitioned))\n"
    "\n"
    "def unstack_params(params, axis_name):\n"
    "    def _unstack(x):\n"
    "        if isinstance(x, nn.Partitioned) and axis_name in x.names:\n"
    "            value = x.value\n"
    "            names = x.names\n"
    "            axis_idx = names.index(axis_name)\n"
    "            value = value.squeeze(axis_idx)\n"
    "            names = names[:axis_idx] + names[axis_idx + 1 :]\n"
    "            if all([n is None for n in names]):\n"
    "                return value\n"
    "            else:\n"
    "                return nn.Partitioned(value, names=names)\n"
    "        else:\n"
    "            return x\n"
    "    return jax.tree_util.tree_map(_unstack, params, is_leaf=lambda x: isinstance(x, nn.Partitioned))\n"
    "\n"
    "class ModelParallelismWrapper(nn.Module):\n"
    "    model_axis_name: str\n"
    "    module_fn: Callable[..., nn.Module]\n"
    "    mask_except_model_idx: int | None = None\n"
    "    split_rngs: bool = True\n"
    "    module_kwargs: Dict[str, Any] = None\n"
    "\n"
    "    @nn.compact\n"
    "    def __call__(self, *args, **kwargs):\n"
    "        if self.is_initializing() and self.split_rngs:\n"
    "            self.scope.rngs[\"params\"] = self.scope.rngs[\"params\"].replace(\n"
    "                rng=fold_rng_over_axis(self.scope.rngs[\"params\"].rng, self.model_axis_name))\n"
    "        if self.mask_except_model_idx is not None:\n"
    "            model_idx = jax.lax.axis_index(self.model_axis_name)\n"
    "            args = jax.lax.cond(model_idx == self.mask_except_model_idx, lambda: args, lambda: "
    "jax.tree_util.tree_map(jnp.zeros_like, args))\n"
    "        module = nn.map_variables(\n"
    "            target=functools.partial(self.module_fn, name=\"sharded\", **(self.module_kwargs or {})),\n"
    "            trans_in_fn=functools.partial(unstack_params, axis_name=self.model_axis_name),\n"
    "            trans_out_fn=functools.partial(stack_params, axis_name=self.model_axis_name),\n"
    "            mapped_collections=\"params\",\n"
    "            mutable=True)()\n"
    "        return module(*args, **kwargs)\n"
    "\n"
    "class TPDense(nn.Module):\n"
    "    features: int\n"
    "    model_axis_name: str = \"model\"\n"
    "    @nn.compact\n"
    "    def __call__(self, x):\n"
    "        tp_size = jax.lax.psum(1, self.model_axis_name)\n"
    "        dense = functools.partial(ModelParallelismWrapper, model_axis_name=self.model_axis_name,\n"
    "                                  module_fn=functools.partial(nn.Dense, features=self.features // tp_size))\n"
    "        x = jax.lax.all_gather(x, self.model_axis_name, axis=-1, tiled=True)\n"
    "        return dense(name=\"module\")(x)\n"
    "\n"
    "mesh = Mesh(np.array(jax.devices()).reshape(2, 4), (\"data\", \"model\"))\n"
    "x = jnp.ones((8, 16))\n"
    "model = TPDense(features=32)\n"
    "def init_fn(rng, x):\n"
    "    return model.init(rng, x)\n"
    "init_sm = shard_map(init_fn, mesh, in_specs=(P(), P(\"data\", \"model\")), out_specs=P(), check_rep=False)\n"
    "\n";

}  // namespace

TEST_CASE("map_variables masks a kernel on the way in and leaves the stored one whole (init=True in setup)") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(
      printed(
          "class CausalDense(nn.Module):\n"
          "    features: int\n"
          "    def apply_mask(self, variables):\n"
          "        return (jax.tree_util.tree_map(jnp.triu, variables) if not self.is_initializing() else variables)\n"
          "    def setup(self):\n"
          "        _CausalDense = nn.map_variables(nn.Dense, 'params', self.apply_mask, init=self.is_initializing())\n"
          "        self.dense = _CausalDense(features=self.features, use_bias=False)\n"
          "    def __call__(self, x):\n"
          "        return self.dense(x)\n"
          "module = CausalDense(features=5)\n"
          "variables = module.init(jax.random.key(0), jnp.ones((1, 5)))\n"
          "print(jax.tree_util.tree_map(jnp.shape, variables))\n"
          "k = variables['params']['dense']['kernel']\n"
          "x = jnp.arange(5.)[None] / 16\n"
          "y = module.apply(variables, x)\n"
          "print(jnp.allclose(y, x @ jnp.triu(k)), jnp.allclose(y, x @ k))\n"
          "\n") == "{'params': {'dense': {'kernel': (5, 5)}}}\nTrue False\n");
}

TEST_CASE("a tensor-parallel Dense through map_variables: stacked Partitioned params, per-device keys, exact output") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell(kTensorParallel).ok());
  CHECK(
      printed("params_shapes = jax.eval_shape(init_sm, jax.random.PRNGKey(0), x)\n"
              "params_specs = nn.get_partition_spec(params_shapes)\nprint(params_specs)\n"
              "init_sm2 = shard_map(init_fn, mesh, in_specs=(P(), P('data', 'model')), out_specs=params_specs,\n"
              "                     check_rep=False)\n"
              "params = jax.jit(init_sm2)(jax.random.PRNGKey(0), x)\n"
              "k = params['params']['module']['sharded']['kernel'].value\n"
              "b = params['params']['module']['sharded']['bias'].value\n"
              "print(k.shape, k.sharding.spec, b.shape)\n"
              "print(all(not jnp.allclose(k[0], k[i]) for i in range(1, 4)))\n"
              "xs = (jnp.arange(8 * 16.).reshape(8, 16) % 7) / 16\n"
              "apply = shard_map(lambda p, v: model.apply(p, v), mesh, in_specs=(params_specs, P('data', 'model')),\n"
              "                  out_specs=P('data', 'model'), check_rep=False)\n"
              "y = jax.jit(apply)(params, xs)\n"
              "full_k = jnp.concatenate([k[i] for i in range(4)], axis=1)\n"
              "full_b = jnp.concatenate([b[i] for i in range(4)], axis=0)\n"
              "print(y.shape, y.sharding.spec, bool(jnp.allclose(y, xs @ full_k + full_b, atol=1e-5)))\n") ==
      "{'params': {'module': {'sharded': {'bias': PartitionSpec('model', None), 'kernel': PartitionSpec('model', None, "
      "None)}}}}\n(4, 16, 8) PartitionSpec('model',) (4, 8)\nTrue\n(8, 32) PartitionSpec('data', 'model') True\n");
}

TEST_CASE("scan with variable_broadcast: one set of params created once and shared by every iteration") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("class Cell(nn.Module):\n"
                "    @nn.compact\n"
                "    def __call__(self, c, x):\n"
                "        h = nn.Dense(3)(c) + x\n"
                "        return h, h.sum()\n"
                "S = nn.scan(Cell, variable_broadcast='params', split_rngs={'params': False}, length=4)\n"
                "xs = (jnp.arange(12.).reshape(4, 3) % 5) / 16\n"
                "v = S().init(jax.random.key(0), jnp.ones(3), xs)\n"
                "print(jax.tree_util.tree_map(jnp.shape, v))\n"
                "c, ys = S().apply(v, jnp.ones(3), xs)\n"
                "k, b = v['params']['Dense_0']['kernel'], v['params']['Dense_0']['bias']\n"
                "ref, sums = jnp.ones(3), []\n"
                "for t in range(4):\n"
                "    ref = ref @ k + b + xs[t]\n"
                "    sums.append(ref.sum())\n"
                "print(bool(jnp.allclose(c, ref)), bool(jnp.allclose(ys, jnp.stack(sums))))\n") ==
        "{'params': {'Dense_0': {'bias': (3,), 'kernel': (3, 3)}}}\nTrue True\n");
}

TEST_CASE("scan of a function over a module: the course's pipeline (microbatches moved on by ppermute)") {
  REQUIRE(run_cell(kPrelude).ok());
  // Four stages sharing one MLP: the last stage's outputs are the MLP applied four times to each microbatch.
  CHECK(printed("mesh = Mesh(np.array(jax.devices()).reshape(2, 4), (\"data\", \"pipe\"))\n"
                "class MLPLayers(nn.Module):\n"
                "    hidden: int\n"
                "    num_layers: int\n"
                "    @nn.compact\n"
                "    def __call__(self, x):\n"
                "        for i in range(self.num_layers):\n"
                "            x = nn.Dense(self.hidden, name=f\"dense_{i}\")(x)\n"
                "            x = nn.silu(x)\n"
                "        return x\n"
                "def execute_pipeline_step(module, state, input, *args, model_axis_name, **kwargs):\n"
                "    num_stages = jax.lax.psum(1, model_axis_name)\n"
                "    stage_index = jax.lax.axis_index(model_axis_name)\n"
                "    state = jnp.where(stage_index == 0, input, state)\n"
                "    state = module(state, *args, **kwargs)\n"
                "    output = jnp.where(stage_index == num_stages - 1, state, jnp.zeros_like(state))\n"
                "    state = jax.lax.ppermute(state, model_axis_name, perm=[(i, (i + 1) % num_stages) for i in "
                "range(num_stages)])\n"
                "    return (state, output)\n"
                "class PipelineModule(nn.Module):\n"
                "    model_axis_name: str\n"
                "    num_microbatches: int\n"
                "    module_fn: callable\n"
                "    @nn.compact\n"
                "    def __call__(self, *args, **kwargs):\n"
                "        num_stages = jax.lax.psum(1, self.model_axis_name)\n"
                "        microbatches = jnp.reshape(args[0], (self.num_microbatches, -1, *args[0].shape[1:]))\n"
                "        inputs = jnp.concatenate([microbatches, jnp.zeros((num_stages - 1, *microbatches.shape[1:]), "
                "dtype=microbatches.dtype)], axis=0)\n"
                "        state = jnp.zeros_like(microbatches[0])\n"
                "        num_iterations = inputs.shape[0]\n"
                "        _, outputs = nn.scan(functools.partial(execute_pipeline_step, "
                "model_axis_name=self.model_axis_name),\n"
                "                             variable_broadcast={\"params\": True}, split_rngs={\"params\": False, "
                "\"dropout\": True},\n"
                "                             length=num_iterations, in_axes=0, out_axes=0)(self.module_fn(), state, "
                "inputs, *args[1:], **kwargs)\n"
                "        outputs = jnp.concatenate(outputs[-self.num_microbatches:], axis=0)\n"
                "        return outputs\n"
                "model = PipelineModule(model_axis_name=\"pipe\", num_microbatches=4, "
                "module_fn=functools.partial(MLPLayers, hidden=16, num_layers=2))\n"
                "x = jnp.ones((32, 16))\n"
                "def init_fn(rng, x):\n"
                "    return model.init(rng, x)\n"
                "params = jax.jit(shard_map(init_fn, mesh, in_specs=(P(), P(\"data\")), out_specs=P(), "
                "check_rep=False))(jax.random.PRNGKey(0), x)\n"
                "print(jax.tree_util.tree_map(jnp.shape, params))\n"
                "xs = (jnp.arange(32 * 16.).reshape(32, 16) % 5) / 16\n"
                "apply = jax.jit(shard_map(lambda p, v: jax.lax.psum(model.apply(p, v), \"pipe\"), mesh, "
                "in_specs=(P(), P(\"data\")), out_specs=P(\"data\"), check_rep=False))\n"
                "y = apply(params, xs)\n"
                "mlp = MLPLayers(hidden=16, num_layers=2)\n"
                "inner = {'params': params['params']['MLPLayers_0']}\n"
                "ref = xs\n"
                "for _ in range(4):\n"
                "    ref = mlp.apply(inner, ref)\n"
                "print(y.shape, jnp.allclose(y, ref, atol=1e-5))\n") ==
        "{'params': {'MLPLayers_0': {'dense_0': {'bias': (16,), 'kernel': (16, 16)}, 'dense_1': {'bias': (16,), "
        "'kernel': (16, 16)}}}}\n(32, 16) True\n");
}

TEST_CASE(
    "remat runs a module under jax.checkpoint: same params, dropout and gradients, static_argnums counting self") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("class MLP(nn.Module):\n"
                "    @nn.compact\n"
                "    def __call__(self, x, train):\n"
                "        h = nn.Dense(4)(x)\n"
                "        h = nn.Dropout(0.5, deterministic=not train)(h)\n"
                "        return nn.Dense(2)(jax.nn.relu(h))\n"
                "class Net(nn.Module):\n"
                "    @nn.compact\n"
                "    def __call__(self, x, train):\n"
                "        block = nn.remat(MLP, static_argnums=(2,))\n"
                "        return block()(x, train)\n"
                "class NetPlain(nn.Module):\n"
                "    @nn.compact\n"
                "    def __call__(self, x, train):\n"
                "        return MLP(name='CheckpointMLP_0')(x, train)\n"
                "x = jnp.arange(6.).reshape(2, 3) / 16\n"
                "v = Net().init(jax.random.key(0), x, False)\n"
                "vp = NetPlain().init(jax.random.key(0), x, False)\n"
                "print(jax.tree_util.tree_map(jnp.shape, v))\n"
                "print(jax.tree_util.tree_all(jax.tree_util.tree_map(lambda a, b: bool((a == b).all()), v, vp)))\n"
                "y = Net().apply(v, x, True, rngs={'dropout': jax.random.key(1)})\n"
                "yp = NetPlain().apply(v, x, True, rngs={'dropout': jax.random.key(1)})\n"
                "print(bool(jnp.allclose(y, yp)))\n"
                "g = jax.grad(lambda p: Net().apply(p, x, False).sum())(v)\n"
                "gp = jax.grad(lambda p: NetPlain().apply(p, x, False).sum())(v)\n"
                "print(jax.tree_util.tree_all(jax.tree_util.tree_map(lambda a, b: bool(jnp.allclose(a, b)), g, gp)))\n"
                "print(nn.checkpoint is nn.remat)\n"
                "print([e.primitive.name for e in jax.make_jaxpr(lambda p: Net().apply(p, x, False))(v).eqns])") ==
        "{'params': {'CheckpointMLP_0': {'Dense_0': {'bias': (4,), 'kernel': (3, 4)}, 'Dense_1': {'bias': (2,), "
        "'kernel': (4, 2)}}}}\nTrue\nTrue\nTrue\nTrue\n['remat2']\n");
}

TEST_CASE("lifted classes are named after the transform, capitalized: Map_variablesDense, CheckpointDense") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("print(nn.map_variables(nn.Dense, 'params').__name__, nn.remat(nn.Dense).__name__, "
                "nn.scan(nn.Dense, length=2).__name__, nn.vmap(nn.Dense).__name__)") ==
        "Map_variablesDense CheckpointDense ScanDense VmapDense\n");
}

TEST_CASE("setup names modules in containers by their path: list indices count non-modules, dict keys, nesting") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("class Holder(nn.Module):\n"
                "    def setup(self):\n"
                "        self.layers = [nn.Dense(2), jax.nn.relu, nn.Dense(3)]\n"
                "        self.named = {'enc': nn.Dense(2), 'dec': [nn.Dense(1)]}\n"
                "    def __call__(self, x):\n"
                "        for layer in self.layers:\n"
                "            x = layer(x)\n"
                "        return self.named['dec'][0](self.named['enc'](x))\n"
                "v = Holder().init(jax.random.key(0), jnp.ones((1, 4)))\n"
                "print(sorted(v['params']))") == "['layers_0', 'layers_2', 'named_dec_0', 'named_enc']\n");
}
