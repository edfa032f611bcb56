// The embedded flax and optax packages: Linen module naming and parameter shapes, keys and initial values equal
// to what real Flax recorded, Adam against a hand computation, logical axis rules, and a sharded training step
// that matches the same step computed on one device while its communication log shows the gradient all-reduce
// over `data` and the collectives of the `model` axis.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "api/transforms.h"
#include "app/python_test_support.h"
#include "python/host.h"

using python_test::printed;
using shardscope::python::CellResult;
using shardscope::python::run_cell;

namespace {

// Seed 004's profile (JAX 0.5.1 on 8 CPU devices): Auto mesh axes from make_mesh, PartitionSpec(...) reprs.
constexpr const char* kPrelude =
    "import _shardscope\n_shardscope.set_jax_version('0.5.1')\n_shardscope.set_device_preset('cpu:8')\n"
    "import numpy as np\nimport jax\nimport jax.numpy as jnp\nimport flax\nfrom flax import linen as nn\n"
    "import optax\nfrom flax.training import train_state\n"
    "from jax.sharding import Mesh, NamedSharding, PartitionSpec as P\n";

}  // namespace

TEST_CASE("Dense kernels and biases get Flax's shapes, and submodules are named ClassName_N per parent") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("v = nn.Dense(3).init(jax.random.key(0), jnp.ones((2, 5)))\n"
                "print(jax.tree.map(jnp.shape, v))") == "{'params': {'bias': (3,), 'kernel': (5, 3)}}\n");
  CHECK(printed("class Two(nn.Module):\n"
                "  @nn.compact\n"
                "  def __call__(self, x):\n"
                "    return nn.Dense(4, use_bias=False)(nn.Dense(2)(x))\n"
                "class Outer(nn.Module):\n"
                "  @nn.compact\n"
                "  def __call__(self, x):\n"
                "    return Two()(x) + Two(name='named')(x) + Two()(x)\n"
                "v = Outer().init(jax.random.key(1), jnp.ones((1, 3)))\n"
                "print(jax.tree.map(jnp.shape, v['params']))") ==
        "{'Two_0': {'Dense_0': {'kernel': (2, 4)}, 'Dense_1': {'bias': (2,), 'kernel': (3, 2)}}, "
        "'Two_1': {'Dense_0': {'kernel': (2, 4)}, 'Dense_1': {'bias': (2,), 'kernel': (3, 2)}}, "
        "'named': {'Dense_0': {'kernel': (2, 4)}, 'Dense_1': {'bias': (2,), 'kernel': (3, 2)}}}\n");
  // Submodules assigned in setup() take the attribute's name; apply reuses the parameters init made.
  CHECK(printed("class WithSetup(nn.Module):\n"
                "  def setup(self):\n"
                "    self.encoder = nn.Dense(2)\n"
                "  def __call__(self, x):\n"
                "    return self.encoder(x)\n"
                "v = WithSetup().init(jax.random.key(2), jnp.ones((1, 3)))\n"
                "print(list(v['params']))\n"
                "y = WithSetup().apply(v, jnp.ones((1, 3)))\n"
                "k = v['params']['encoder']['kernel']\n"
                "print(y.shape, np.allclose(np.asarray(y), np.ones((1, 3)) @ np.asarray(k)))") ==
        "['encoder']\n(1, 2) True\n");
}

TEST_CASE("make_rng keys and initial parameters equal the values real Flax printed (flax rng guide)") {
  REQUIRE(run_cell(kPrelude).ok());
  // The rng guide ran with jax_threefry_partitionable=True; its printed keys and arrays are the references.
  REQUIRE(run_cell("jax.config.update('jax_threefry_partitionable', True)").ok());
  CHECK(printed("class RNGSubModule(nn.Module):\n"
                "  @nn.compact\n"
                "  def __call__(self):\n"
                "    print(self.name, jax.random.key_data(self.make_rng('rng_stream')))\n"
                "class RNGModule(nn.Module):\n"
                "  @nn.compact\n"
                "  def __call__(self):\n"
                "    print(jax.random.key_data(self.make_rng('rng_stream')))\n"
                "    print(jax.random.key_data(self.make_rng('rng_stream')))\n"
                "    RNGSubModule()()\n"
                "    RNGSubModule()()\n"
                "_ = RNGModule().init({'rng_stream': jax.random.key(0)})") ==
        "[1428664606 3351135085]\n[3456700291 3873160899]\nRNGSubModule_0 [3858825717 2323087578]\n"
        "RNGSubModule_1 [ 426957352 2006350344]\n");
  CHECK(
      printed("class Model(nn.Module):\n"
              "  @nn.compact\n"
              "  def __call__(self, x):\n"
              "    x = nn.Dense(2, kernel_init=jax.random.normal, use_bias=False)(x)\n"
              "    return x + self.param('model_param', jax.random.normal, x.shape)\n"
              "v = Model().init(jax.random.key(0), jnp.ones((2, 2)))['params']\n"
              "print(v['Dense_0']['kernel'])\nprint(v['model_param'])") ==
      "[[-1.6185919   0.700908  ]\n [-1.3146383  -0.79342234]]\n[[ 0.0761425 -1.6157459]\n [-1.6857724  0.7126891]]\n");
}

TEST_CASE("optax.adam's two updates equal a hand computation, with its state shaped like the parameters") {
  REQUIRE(run_cell(kPrelude).ok());
  // By hand: mu = 0.1 g + 0.9 mu, nu = 0.001 g^2 + 0.999 nu, p -= 0.1 * mu/(1-0.9^t) / (sqrt(nu/(1-0.999^t)) + 1e-8);
  // after g = (0.5, -0.25) then (0.1, 0.3): p = (0.8196959063846518, -1.914294476547747), mu = (0.055, 0.0075).
  CHECK(printed("tx = optax.adam(0.1)\n"
                "params = {'w': jnp.array([1.0, -2.0])}\n"
                "state = tx.init(params)\n"
                "for g in ([0.5, -0.25], [0.1, 0.3]):\n"
                "  updates, state = tx.update({'w': jnp.array(g)}, state, params)\n"
                "  params = optax.apply_updates(params, updates)\n"
                "print(np.allclose(np.asarray(params['w']), [0.8196959063846518, -1.914294476547747], atol=1e-6))\n"
                "print(np.allclose(np.asarray(state[0].mu['w']), [0.055, 0.0075], atol=1e-7))\n"
                "print(int(state[0].count), type(state[0]).__name__, type(state[1]).__name__)") ==
        "True\nTrue\n2 ScaleByAdamState EmptyState\n");
  // sgd without momentum: p - lr * g.
  CHECK(printed("tx = optax.sgd(0.5)\n"
                "u, s = tx.update({'w': jnp.array([2.0])}, tx.init({'w': jnp.array([1.0])}))\n"
                "print(optax.apply_updates({'w': jnp.array([1.0])}, u)['w'])") == "[0.]\n");
}

TEST_CASE("optax's losses give the formulas' values, integer-label cross-entropy needs float logits and int labels") {
  REQUIRE(run_cell(kPrelude).ok());
  // By hand: logits (1, 2, 3) and label 2: log(e + e^2 + e^3) - 3 = 0.40760596; one-hot gives the same; the
  // squared error of (1, 2) against (0, 4) is (1, 4), the L2 loss half that; sigmoid BCE of 0 is log 2.
  CHECK(printed("z = jnp.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])\n"
                "print(optax.softmax_cross_entropy_with_integer_labels(z, jnp.array([2, 0])))\n"
                "print(optax.softmax_cross_entropy(z, jax.nn.one_hot(jnp.array([2, 0]), 3)))\n"
                "print(optax.squared_error(jnp.array([1.0, 2.0]), jnp.array([0.0, 4.0])), "
                "optax.l2_loss(jnp.array([1.0, 2.0]), jnp.array([0.0, 4.0])))\n"
                "print(optax.sigmoid_binary_cross_entropy(jnp.array([0.0]), jnp.array([1.0])), "
                "optax.losses.l2_loss is optax.l2_loss)") ==
        "[0.40760595 1.0986123 ]\n[0.40760595 1.0986123 ]\n[1. 4.] [0.5 2. ]\n[0.6931472] True\n");
  CHECK(printed("try:\n  optax.softmax_cross_entropy_with_integer_labels(jnp.ones((2, 3)), jnp.array([0.0, 1.0]))\n"
                "except AssertionError as e:\n  print(str(e)[:40])") == "[Chex] Assertion assert_type failed: Err\n");
}

TEST_CASE("logical axis rules map names to mesh axes by priority, and FrozenDict round-trips") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("mesh = jax.make_mesh((2, 4), ('data', 'model'))\n"
                "rules = (('batch', 'data'), ('hidden', 'model'))\n"
                "s = nn.logical_to_mesh_sharding({'k': P('embed', 'hidden'), 'x': P('batch', None)}, mesh, rules)\n"
                "print(s['k'].spec, s['x'].spec)\n"
                // The first rule takes `x`; a later rule naming the same mesh axis leaves its dimension unsharded.
                "print(nn.logical_to_mesh_axes(('a', 'b'), (('a', 'x'), ('b', 'x'), ('b', 'y'))))") ==
        "PartitionSpec(None, 'model') PartitionSpec('data', None)\nPartitionSpec('x', 'y')\n");
  // Without rules in context a logical constraint changes nothing; with them it constrains like the mapped spec.
  CHECK(printed("x = jnp.ones((8, 4))\n"
                "print(nn.with_logical_constraint(x, ('batch', None)) is x)\n"
                "with nn.logical_axis_rules(rules), jax.sharding.use_mesh(mesh):\n"
                "  y = jax.jit(lambda v: nn.with_logical_constraint(v * 2, ('batch', None)))(x)\n"
                "print(y.sharding.spec)") == "True\nPartitionSpec('data',)\n");
  CHECK(printed("from flax.core import freeze, unfreeze, FrozenDict\n"
                "f = freeze({'a': {'b': 1}, 'c': 2})\n"
                "print(f)\nprint(type(f['a']).__name__, unfreeze(f) == {'a': {'b': 1}, 'c': 2})\n"
                "try:\n  f['c'] = 3\nexcept ValueError as e:\n  print(e)") ==
        "FrozenDict({\n    a: {\n        b: 1,\n    },\n    c: 2,\n})\nFrozenDict True\nFrozenDict is immutable.\n");
}

TEST_CASE("a sharded train_step equals the step on one device and all-reduces gradients over data") {
  REQUIRE(run_cell(kPrelude).ok());
  // Seed 004's model at a small size: Dense kernels (None, 'model'), W2 ('model', None), activations constrained.
  REQUIRE(
      run_cell(
          "MESH = [None]\n"
          "class DotReluDot(nn.Module):\n"
          "  depth: int\n"
          "  @nn.compact\n"
          "  def __call__(self, x):\n"
          "    y = nn.Dense(self.depth, use_bias=False,\n"
          "                 kernel_init=nn.with_partitioning(nn.initializers.xavier_normal(), (None, 'model')))(x)\n"
          "    y = jax.lax.with_sharding_constraint(jax.nn.relu(y), NamedSharding(MESH[0], P('data', 'model')))\n"
          "    w2 = self.param('W2', nn.with_partitioning(nn.initializers.xavier_normal(), ('model', None)),\n"
          "                    (self.depth, x.shape[-1]))\n"
          "    return jax.lax.with_sharding_constraint(jnp.dot(y, w2), NamedSharding(MESH[0], P('data', None)))\n"
          "class MLP(nn.Module):\n"
          "  @nn.compact\n"
          "  def __call__(self, x):\n"
          "    for _ in range(2):\n"
          "      x = DotReluDot(16)(x)\n"
          "    return x\n"
          "model, tx = MLP(), optax.adam(0.001)\n"
          "def init_fn(k, x):\n"
          "  return train_state.TrainState.create(apply_fn=model.apply, params=model.init(k, x)['params'], tx=tx)\n"
          "def step(state, x):\n"
          "  grads = jax.grad(lambda p: model.apply({'params': p}, x).sum())(state.params)\n"
          "  return state.apply_gradients(grads=grads)\n"
          "def run(mesh, x_host):\n"
          "  MESH[0] = mesh\n"
          "  x_sharding = NamedSharding(mesh, P('data', None))\n"
          "  x = jax.device_put(x_host, x_sharding)\n"
          "  shardings = nn.get_sharding(jax.eval_shape(init_fn, jax.random.key(0), x), mesh)\n"
          "  state = jax.jit(init_fn, in_shardings=(NamedSharding(mesh, P()), x_sharding),\n"
          "                  out_shardings=shardings)(jax.random.key(0), x)\n"
          "  with mesh:\n"
          "    new = jax.jit(step, in_shardings=(shardings, x_sharding), out_shardings=shardings)(state, x)\n"
          "  return state, new\n"
          "x_host = np.linspace(-1.0, 1.0, 8 * 16, dtype=np.float32).reshape(8, 16)\n"
          "one = Mesh(np.array(jax.devices()[:1]).reshape(1, 1), ('data', 'model'))\n"
          "state1, new1 = run(one, x_host)\n"
          "state8, new8 = run(jax.make_mesh((2, 4), ('data', 'model')), x_host)\n")
          .ok());
  // The sharded run's last program is the training step: its collectives.
  const auto record = shardscope::api::last_program_run();
  REQUIRE(record != nullptr);
  bool data_all_reduce = false;
  bool model_collective = false;
  for (const shardscope::CollectiveRecord& c : record->log.records()) {
    const bool over_data = std::find(c.axes.begin(), c.axes.end(), "data") != c.axes.end();
    const bool over_model = std::find(c.axes.begin(), c.axes.end(), "model") != c.axes.end();
    data_all_reduce = data_all_reduce || (c.kind == shardscope::CollectiveKind::kAllReduce && over_data);
    model_collective = model_collective || over_model;
  }
  CHECK(data_all_reduce);
  CHECK(model_collective);
  CHECK(printed("leaves = lambda s: [np.asarray(v) for v in jax.tree.leaves(nn.meta.unbox(s.params))]\n"
                "print(all(np.array_equal(a, b) for a, b in zip(leaves(state1), leaves(state8))))\n"
                "print(all(np.allclose(a, b, atol=1e-6) for a, b in zip(leaves(new1), leaves(new8))))\n"
                "print(new8.params['DotReluDot_1']['W2'].value.sharding.spec, int(new8.step))") ==
        "True\nTrue\nPartitionSpec('model', None) 1\n");
  // The same step by hand in float64 numpy: backpropagation through relu(x @ W1) @ W2 twice, then Adam's
  // first step p - 0.001 * g / (|g| + 1e-8).
  CHECK(printed("p = {k: {n: np.asarray(v, np.float64) for n, v in [('W1', l['Dense_0']['kernel'].value),\n"
                "     ('W2', l['W2'].value)]} for k, l in state8.params.items()}\n"
                "acts, h = [], x_host.astype(np.float64)\n"
                "for name in ('DotReluDot_0', 'DotReluDot_1'):\n"
                "  pre = h @ p[name]['W1']\n"
                "  acts.append((h, pre))\n"
                "  h = np.maximum(pre, 0) @ p[name]['W2']\n"
                "dz, grads = np.ones_like(h), {}\n"
                "for name, (inp, pre) in reversed(list(zip(('DotReluDot_0', 'DotReluDot_1'), acts))):\n"
                "  grads[name] = {'W2': np.maximum(pre, 0).T @ dz}\n"
                "  dpre = (dz @ p[name]['W2'].T) * (pre > 0)\n"
                "  grads[name]['W1'] = inp.T @ dpre\n"
                "  dz = dpre @ p[name]['W1'].T\n"
                "ok = True\n"
                "for name in grads:\n"
                "  for w, got in (('W1', new8.params[name]['Dense_0']['kernel'].value), ('W2', "
                "new8.params[name]['W2'].value)):\n"
                "    g = grads[name][w]\n"
                "    want = p[name][w] - 0.001 * g / (np.abs(g) + 1e-8)\n"
                "    ok = ok and np.allclose(np.asarray(got), want, atol=2e-6)\n"
                "print(ok)") == "True\n");
}

// truncated_normal (every Flax kernel initializer) ends in jnp.clip, a nested jit whose rule needs replicated
// operands: when out_shardings shard its result, the whole result is computed and then cut to the blocks.
TEST_CASE("a nested jit whose result out_shardings shard gives the values numpy computes") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("mesh = jax.make_mesh((2, 4), ('data', 'model'))\n"
                "x_host = np.linspace(-2.0, 2.0, 8 * 16, dtype=np.float32).reshape(8, 16)\n"
                "w_host = np.linspace(-3.0, 3.0, 16 * 16, dtype=np.float32).reshape(16, 16)\n"
                "def f(x, w):\n"
                "  w = jnp.clip(w, -1.0, 1.0)\n"
                "  y = jax.lax.with_sharding_constraint(x, NamedSharding(mesh, P('data', 'model')))\n"
                "  return jnp.dot(y, w), w\n"
                "outs = jax.jit(f, out_shardings=(NamedSharding(mesh, P('data', None)),\n"
                "                                 NamedSharding(mesh, P('model', None))))(x_host, w_host)\n"
                "w_ref = np.clip(w_host, -1.0, 1.0)\n"
                "print(np.allclose(np.asarray(outs[0]), x_host @ w_ref, atol=1e-4),\n"
                "      np.array_equal(np.asarray(outs[1]), w_ref), outs[1].sharding.spec)") ==
        "True True PartitionSpec('model', None)\n");
}

TEST_CASE("flax.struct dataclasses are pytrees with static fields, and traverse_util flattens nested dicts") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("from flax import struct, traverse_util\n"
                "@struct.dataclass\n"
                "class Pair:\n"
                "  a: object\n"
                "  tag: str = struct.field(pytree_node=False, default='t')\n"
                "p = Pair(jnp.ones(2))\n"
                "print(len(jax.tree.leaves(p)), jax.tree.map(lambda v: v * 3, p).a, p.replace(tag='u').tag)\n"
                "flat = traverse_util.flatten_dict({'a': {'b': 1, 'c': {'d': 2}}})\n"
                "print(flat)\nprint(traverse_util.unflatten_dict(flat))\n"
                "print(traverse_util.flatten_dict({'a': {'b': 1}}, sep='/'))") ==
        "1 [3. 3.] u\n{('a', 'b'): 1, ('a', 'c', 'd'): 2}\n{'a': {'b': 1, 'c': {'d': 2}}}\n{'a/b': 1}\n");
}
