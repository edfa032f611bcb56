// What a tutorial CNN needs: lax.reduce_window's monoid forms and the pools built on them (values against numpy,
// the equations JAX binds, gradients through max pools), and Flax's Conv layers (Linen and NNX) with pooling,
// whose data-parallel gradient step equals the one-device step and all-reduces only.
#include <doctest/doctest.h>

#include <string>

#include "app/python_test_support.h"
#include "python/host.h"

using python_test::printed;
using shardscope::python::run_cell;

namespace {

constexpr const char* kPrelude =
    "import _shardscope\n_shardscope.set_jax_version('0.11.2')\n_shardscope.set_device_preset('cpu:8')\n"
    "import re\nimport numpy as np\nimport jax\nimport jax.numpy as jnp\nfrom jax import lax\n"
    "import flax.linen as nn\nfrom flax import nnx\nimport optax\n"
    "from jax.sharding import PartitionSpec as P, NamedSharding, AxisType\n"
    "x = (jnp.arange(2 * 6 * 5 * 3, dtype=jnp.float32).reshape(2, 6, 5, 3) * 7 % 11) / 16\n"
    "def ref_pool(x, win, strides, pads, fn, init):\n"
    "    xp = np.pad(np.asarray(x, np.float64), [(0, 0)] + list(pads) + [(0, 0)], constant_values=init)\n"
    "    oh = (xp.shape[1] - win[0]) // strides[0] + 1\n"
    "    ow = (xp.shape[2] - win[1]) // strides[1] + 1\n"
    "    out = np.zeros((xp.shape[0], oh, ow, xp.shape[3]))\n"
    "    for i in range(oh):\n"
    "        for j in range(ow):\n"
    "            block = xp[:, i * strides[0]:i * strides[0] + win[0], j * strides[1]:j * strides[1] + win[1]]\n"
    "            out[:, i, j] = fn(block, axis=(1, 2))\n"
    "    return out\n";

}  // namespace

TEST_CASE("pools are reduce_window equations whose values match a direct numpy loop") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("print(np.abs(np.asarray(nn.avg_pool(x, (2, 2), (2, 2))) - "
                "ref_pool(x, (2, 2), (2, 2), [(0, 0), (0, 0)], np.mean, 0)).max())") == "0.0\n");
  CHECK(printed("print(np.abs(np.asarray(nn.max_pool(x, (3, 2), (1, 2), 'SAME')) - "
                "ref_pool(x, (3, 2), (1, 2), [(1, 1), (0, 1)], np.max, -np.inf)).max())") == "0.0\n");
  CHECK(printed("print(np.abs(np.asarray(nn.min_pool(x, (2, 3), (2, 1), ((1, 0), (1, 1)))) - "
                "ref_pool(x, (2, 3), (2, 1), [(1, 0), (1, 1)], np.min, np.inf)).max())") == "0.0\n");
  CHECK(printed("print(lax.reduce_window(jnp.arange(10.), 0., lax.add, (2,), (1,)))") ==
        "[ 1.  3.  5.  7.  9. 11. 13. 15. 17.]\n");
  CHECK(printed("try:\n    lax.reduce_window(jnp.arange(10.), 1., lax.mul, (2,))\n"
                "except NotImplementedError as e:\n    print('NotImplementedError')") == "NotImplementedError\n");
  CHECK(printed("print(jax.make_jaxpr(lambda x: nn.avg_pool(x, (2, 2), (2, 2)))(x))") ==
        "{ lambda ; a:f32[2,6,5,3]. let\n"
        "    b:f32[2,3,2,3] = reduce_window_sum[\n"
        "      base_dilation=(1, 1, 1, 1)\n"
        "      padding=((0, 0), (0, 0), (0, 0), (0, 0))\n"
        "      window_dilation=(1, 1, 1, 1)\n"
        "      window_dimensions=(1, 2, 2, 1)\n"
        "      window_strides=(1, 2, 2, 1)\n"
        "    ] a\n"
        "    c:f32[2,3,2,3] = div b 4.0:f32[]\n"
        "  in (c,) }\n");
}

TEST_CASE("a max pool's gradient goes to each window's first maximum, through select_and_scatter_add") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("v = jnp.array([[1., 3., 3., 2.], [0., 5., 4., 4.]])[None, :, :, None]\n"
                "g = jax.grad(lambda v: nn.max_pool(v, (2, 2), (1, 2)).sum())(v)\n"
                "print(g[0, :, :, 0])") == "[[0. 0. 0. 0.]\n [0. 1. 1. 0.]]\n");
  CHECK(printed("g = jax.grad(lambda v: nn.max_pool(v, (1, 2), (1, 1), 'SAME').sum())(v)\n"
                "print(g[0, :, :, 0])") == "[[0. 2. 1. 1.]\n [0. 2. 1. 1.]]\n");
  CHECK(printed("text = str(jax.make_jaxpr(jax.grad(lambda v: nn.max_pool(v, (2, 2), (1, 2)).sum()))(v))\n"
                "print(re.findall(r'= (\\w+)\\[', text))") ==
        "['reduce_window_max', 'reduce_sum', 'select_and_scatter_add']\n");
  // Forward mode gathers the tangent at the same element; vmap adds a window of one on the mapped dim.
  CHECK(printed("t = jnp.arange(8.).reshape(v.shape)\n"
                "print(jax.jvp(lambda v: nn.max_pool(v, (2, 2), (1, 2)), (v,), (t,))[1].ravel())") == "[5. 6.]\n");
  CHECK(printed("vs = jnp.stack([v, -v])\n"
                "gv = jax.vmap(jax.grad(lambda a: nn.max_pool(a, (2, 2), (1, 2)).sum()))(vs)\n"
                "print(gv[1, 0, :, :, 0])") == "[[0. 0. 0. 1.]\n [1. 0. 0. 0.]]\n");
}

TEST_CASE("a Linen CNN of Conv and pools trains data-parallel like on one device, all-reducing its gradients") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("class CNN(nn.Module):\n"
                   "    @nn.compact\n"
                   "    def __call__(self, x):\n"
                   "        x = nn.relu(nn.Conv(features=8, kernel_size=(3, 3))(x))\n"
                   "        x = nn.avg_pool(x, window_shape=(2, 2), strides=(2, 2))\n"
                   "        x = nn.Conv(features=16, kernel_size=(3, 3), feature_group_count=2)(x)\n"
                   "        x = nn.max_pool(nn.relu(x), (2, 2), (2, 2))\n"
                   "        return nn.Dense(features=10)(x.reshape((x.shape[0], -1)))\n"
                   "model = CNN()\n"
                   "images = jnp.arange(16 * 12 * 12, dtype=jnp.float32).reshape(16, 12, 12, 1) % 7 / 8\n"
                   "params = model.init(jax.random.key(0), images)\n")
              .ok());
  CHECK(printed("print(jax.tree.map(jnp.shape, params))") ==
        "{'params': {'Conv_0': {'bias': (8,), 'kernel': (3, 3, 1, 8)}, 'Conv_1': {'bias': (16,), 'kernel': (3, 3, 4, "
        "16)}, 'Dense_0': {'bias': (10,), 'kernel': (144, 10)}}}\n");
  REQUIRE(run_cell("mesh = jax.make_mesh((8,), ('data',), axis_types=(AxisType.Auto,))\n"
                   "sharded = jax.device_put(images, NamedSharding(mesh, P('data')))\n"
                   "loss = lambda p, x: jnp.mean(model.apply(p, x) ** 2)\n"
                   "step = jax.jit(jax.grad(loss))\n"
                   "g_sharded, g_one = step(params, sharded), step(params, images)\n")
              .ok());
  CHECK(printed("print(all(jax.tree.leaves(jax.tree.map(lambda a, b: bool(jnp.allclose(a, b, rtol=1e-5, atol=1e-6)), "
                "g_sharded, g_one))))") == "True\n");
  CHECK(printed("print(set(jax.tree.leaves(jax.tree.map(lambda a: str(a.sharding.spec), g_sharded))))") == "{'P()'}\n");
  CHECK(printed("print(sorted(set(re.findall(r'\\b(all-gather|all-reduce|all-to-all|collective-permute)\\(', "
                "step.lower(params, sharded).compile().as_text()))))") == "['all-reduce']\n");
}

TEST_CASE("an NNX CNN of Conv, avg_pool and Linear draws its parameters in order and its loss falls under training") {
  REQUIRE(run_cell(kPrelude).ok());
  REQUIRE(run_cell("from functools import partial\n"
                   "class CNN(nnx.Module):\n"
                   "    def __init__(self, *, rngs):\n"
                   "        self.conv1 = nnx.Conv(1, 4, kernel_size=(3, 3), rngs=rngs)\n"
                   "        self.conv2 = nnx.Conv(4, 8, kernel_size=(3, 3), strides=2, rngs=rngs)\n"
                   "        self.pool = partial(nnx.avg_pool, window_shape=(2, 2), strides=(2, 2))\n"
                   "        self.linear = nnx.Linear(32, 10, rngs=rngs)\n"
                   "    def __call__(self, x):\n"
                   "        x = self.pool(nnx.relu(self.conv1(x)))\n"
                   "        x = nnx.relu(self.conv2(x))\n"
                   "        return self.linear(x.reshape(x.shape[0], -1))\n"
                   "model = CNN(rngs=nnx.Rngs(0))\n"
                   "optimizer = nnx.Optimizer(model, optax.sgd(0.1), wrt=nnx.Param)\n"
                   "batch = jnp.arange(8 * 8 * 8, dtype=jnp.float32).reshape(8, 8, 8, 1) % 5 / 4\n"
                   "labels = jnp.arange(8) % 10\n"
                   "@nnx.jit\n"
                   "def train_step(model, optimizer):\n"
                   "    def loss_fn(model):\n"
                   "        logits = model(batch)\n"
                   "        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()\n"
                   "    loss, grads = nnx.value_and_grad(loss_fn)(model)\n"
                   "    optimizer.update(model, grads)\n"
                   "    return loss\n")
              .ok());
  CHECK(printed("print(model.conv1.kernel.shape, model.conv2.kernel.shape, model(batch).shape)") ==
        "(3, 3, 1, 4) (3, 3, 4, 8) (8, 10)\n");
  CHECK(printed("losses = [float(train_step(model, optimizer)) for _ in range(4)]\n"
                "print(all(b < a for a, b in zip(losses, losses[1:])))") == "True\n");
}
