// The embedded flax.linen's layers beyond Dense and Conv: normalization (with BatchNorm's batch_stats, also
// averaged across devices), DenseGeneral, Einsum, Embed, ConvTranspose, attention and its masks, Sequential and
// the activation re-exports; each checked against a numpy computation in the same cell and Flax's param trees.
#include <doctest/doctest.h>

#include <string>

#include "app/python_test_support.h"
#include "python/host.h"

using python_test::printed;
using shardscope::python::run_cell;

namespace {

// JAX 0.5.1 on 8 CPU devices (Flax 0.10's months), numpy for the references, `attempt` for expected errors.
const std::string kPrelude =
    std::string(
        "import _shardscope\n_shardscope.set_jax_version('0.5.1')\n"
        "_shardscope.set_device_preset('cpu:8')\n"
        "import numpy as np\nimport jax\nimport jax.numpy as jnp\nfrom flax import linen as nn\n"
        "rs = np.random.RandomState(0)\n"
        // Inputs on a 1/16 grid, so sums and means are exact in float32.
        "def grid(*shape):\n"
        "    return jnp.asarray(rs.randint(-16, 16, shape) / 16, jnp.float32)\n") +
    python_test::kAttemptHelper;

}  // namespace

TEST_CASE("LayerNorm, RMSNorm, GroupNorm and InstanceNorm match numpy and create scale before bias") {
  REQUIRE(run_cell(kPrelude).ok());
  // Params in creation order, scale first (the order Flax prints them in).
  CHECK(printed("x = grid(3, 4, 6)\n"
                "print(nn.LayerNorm().init(jax.random.key(1), x))\n"
                "print(nn.RMSNorm().init(jax.random.key(1), x))") ==
        "{'params': {'scale': Array([1., 1., 1., 1., 1., 1.], dtype=float32), 'bias': Array([0., 0., 0., 0., 0., "
        "0.], dtype=float32)}}\n{'params': {'scale': Array([1., 1., 1., 1., 1., 1.], dtype=float32)}}\n");
  // The creation order decides the keys: scale gets the first draw of the params stream, bias the second.
  CHECK(printed("class Two(nn.Module):\n"
                "  @nn.compact\n"
                "  def __call__(self, x):\n"
                "    self.param('first', nn.initializers.normal(1.0), (6,))\n"
                "    self.param('second', nn.initializers.normal(1.0), (6,))\n"
                "    return x\n"
                "ref = Two().init(jax.random.key(3), x)['params']\n"
                "p = nn.LayerNorm(scale_init=nn.initializers.normal(1.0), bias_init=nn.initializers.normal(1.0))"
                ".init(jax.random.key(3), x)['params']\n"
                "print(np.array_equal(p['scale'], ref['first']), np.array_equal(p['bias'], ref['second']))") ==
        "True True\n");
  CHECK(printed("xn = np.asarray(x, np.float64)\n"
                "scale, bias = grid(6) + 2, grid(6)\n"
                "sn, bn = np.asarray(scale), np.asarray(bias)\n"
                "params = {'params': {'scale': scale, 'bias': bias}}\n"
                "y = nn.LayerNorm().apply(params, x)\n"
                "mu, var = xn.mean(-1, keepdims=True), xn.var(-1, keepdims=True)\n"
                "print(y.dtype, np.allclose(y, (xn - mu) / np.sqrt(var + 1e-6) * sn + bn, atol=1e-5))\n"
                "y = nn.LayerNorm(reduction_axes=(1, 2), epsilon=1e-3).apply(params, x)\n"
                "mu, var = xn.mean((1, 2), keepdims=True), xn.var((1, 2), keepdims=True)\n"
                "print(np.allclose(y, (xn - mu) / np.sqrt(var + 1e-3) * sn + bn, atol=1e-5))\n"
                "y = nn.RMSNorm().apply({'params': {'scale': scale}}, x)\n"
                "print(np.allclose(y, xn / np.sqrt((xn ** 2).mean(-1, keepdims=True) + 1e-6) * sn, atol=1e-5))\n"
                // GroupNorm: two groups of three channels, statistics over the middle axis and the group.
                "y = nn.GroupNorm(num_groups=2).apply(params, x)\n"
                "g = xn.reshape(3, 4, 2, 3)\n"
                "mu, var = g.mean((1, 3), keepdims=True), g.var((1, 3), keepdims=True)\n"
                "ref = ((g - mu) / np.sqrt(var + 1e-6)).reshape(3, 4, 6) * sn + bn\n"
                "print(np.allclose(y, ref, atol=1e-5))\n"
                "print(np.allclose(nn.GroupNorm(num_groups=None, group_size=3).apply(params, x), ref, atol=1e-5))\n"
                "y = nn.InstanceNorm().apply(params, x)\n"
                "mu, var = xn.mean(1, keepdims=True), xn.var(1, keepdims=True)\n"
                "print(np.allclose(y, (xn - mu) / np.sqrt(var + 1e-6) * sn + bn, atol=1e-5))\n"
                // A mask limits the statistics to the kept positions.
                "m = np.arange(6) < 4\n"
                "y = nn.LayerNorm(use_scale=False, use_bias=False).apply({}, x, mask=jnp.asarray(m))\n"
                "k = xn[..., :4]\n"
                "ref = (xn - k.mean(-1, keepdims=True)) / np.sqrt(k.var(-1, keepdims=True) + 1e-6)\n"
                "print(np.allclose(y, ref, atol=1e-5))") == "float32 True\nTrue\nTrue\nTrue\nTrue\nTrue\nTrue\n");
  // Statistics are float32 whatever the input; the result takes the dtype of the input and the params.
  CHECK(printed("xb = x.astype(jnp.bfloat16)\n"
                "v = nn.LayerNorm().init(jax.random.key(1), xb)\n"
                "print(nn.LayerNorm().apply(v, xb).dtype, nn.LayerNorm(use_scale=False, use_bias=False).apply({}, "
                "xb).dtype, nn.LayerNorm(dtype=jnp.bfloat16).apply(v, xb).dtype)\n"
                "print(nn.LayerNorm(param_dtype=jnp.bfloat16).init(jax.random.key(1), xb)['params']['scale'].dtype)\n"
                "print(jax.tree.map(jnp.shape, nn.LayerNorm(feature_axes=(1, 2), reduction_axes=(1, 2))"
                ".init(jax.random.key(0), x)))") ==
        "float32 bfloat16 bfloat16\nbfloat16\n{'params': {'bias': (4, 6), 'scale': (4, 6)}}\n");
  CHECK(printed("attempt(lambda: nn.GroupNorm(num_groups=4).init(jax.random.key(0), x))\n"
                "attempt(lambda: nn.GroupNorm(group_size=3).init(jax.random.key(0), x))\n"
                "attempt(lambda: nn.GroupNorm(num_groups=None, group_size=4).init(jax.random.key(0), x))\n"
                "attempt(lambda: nn.GroupNorm(num_groups=2, reduction_axes=(1,)).init(jax.random.key(0), x))\n"
                "attempt(lambda: nn.InstanceNorm(feature_axes=0).init(jax.random.key(0), x))") ==
        "ValueError Number of groups (4) does not divide the number of channels (6).\n"
        "ValueError Either `num_groups` or `group_size` should be specified. If `group_size` is to be specified, "
        "pass `num_groups=None` as argument to override the default `num_groups` value of 32.\n"
        "ValueError Number of channels (6) is not multiple of the group size (4).\n"
        "ValueError The reduction axes must include the final dimension as this is assumed to be the feature "
        "axis.\n"
        "ValueError The channel axes cannot include the leading dimension as this is assumed to be the batch "
        "axis.\n");
}

TEST_CASE("BatchNorm keeps mean and var in batch_stats and updates them only when applied with them mutable") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("x = grid(8, 3)\n"
                "xn = np.asarray(x, np.float64)\n"
                "bn = nn.BatchNorm(momentum=0.9, epsilon=1e-5)\n"
                "v = bn.init(jax.random.key(1), x, use_running_average=False)\n"
                "print(jax.tree.map(jnp.shape, v))\n"
                // init computes batch statistics but leaves the running averages at their zeros and ones.
                "print(v['batch_stats'])") ==
        "{'batch_stats': {'mean': (3,), 'var': (3,)}, 'params': {'bias': (3,), 'scale': (3,)}}\n"
        "{'mean': Array([0., 0., 0.], dtype=float32), 'var': Array([1., 1., 1.], dtype=float32)}\n");
  CHECK(printed("y, upd = bn.apply(v, x, use_running_average=False, mutable=['batch_stats'])\n"
                "print(list(upd), jax.tree.map(jnp.shape, upd))\n"
                "print(np.allclose(upd['batch_stats']['mean'], 0.1 * xn.mean(0), atol=1e-7),\n"
                "      np.allclose(upd['batch_stats']['var'], 0.9 + 0.1 * xn.var(0), atol=1e-6))\n"
                "print(np.allclose(y, (xn - xn.mean(0)) / np.sqrt(xn.var(0) + 1e-5), atol=1e-5))\n"
                // A second step starts from the updated averages.
                "y2, upd2 = bn.apply({**v, **upd}, 2 * x, use_running_average=False, mutable=['batch_stats'])\n"
                "print(np.allclose(upd2['batch_stats']['mean'], 0.9 * 0.1 * xn.mean(0) + 0.1 * 2 * xn.mean(0), "
                "atol=1e-6))\n"
                // Evaluation normalizes with the stored averages and changes nothing.
                "stats = {'mean': grid(3), 'var': grid(3) ** 2 + 0.5}\n"
                "ye = bn.apply({'params': v['params'], 'batch_stats': stats}, x, use_running_average=True)\n"
                "ref = (xn - np.asarray(stats['mean'])) / np.sqrt(np.asarray(stats['var']) + 1e-5)\n"
                "print(np.allclose(ye, ref, atol=1e-5))\n"
                "attempt(lambda: bn.apply(v, x, use_running_average=False))\n"
                "attempt(lambda: nn.BatchNorm().init(jax.random.key(0), x))") ==
        "['batch_stats'] {'batch_stats': {'mean': (3,), 'var': (3,)}}\nTrue True\nTrue\nTrue\nTrue\n"
        "ValueError Cannot update variable \"mean\" in \"/\" because collection \"batch_stats\" is immutable.\n"
        "ValueError Parameter \"use_running_average\" must be passed to the constructor or at call time.\n");
  // Statistics per feature of `axis`, over every other axis; a model in training mode threads the stats on.
  CHECK(printed("x4 = grid(2, 3, 5, 4)\n"
                "x4n = np.asarray(x4, np.float64)\n"
                "bn1 = nn.BatchNorm(use_running_average=False, axis=1, use_scale=False, use_bias=False)\n"
                "v = bn1.init(jax.random.key(0), x4)\n"
                "y, upd = bn1.apply(v, x4, mutable=['batch_stats'])\n"
                "mu, var = x4n.mean((0, 2, 3), keepdims=True), x4n.var((0, 2, 3), keepdims=True)\n"
                "print(jax.tree.map(jnp.shape, v), np.allclose(y, (x4n - mu) / np.sqrt(var + 1e-5), atol=1e-5))\n"
                "class CNN(nn.Module):\n"
                "  @nn.compact\n"
                "  def __call__(self, x, train):\n"
                "    x = nn.Conv(4, (3, 3))(x)\n"
                "    x = nn.BatchNorm(use_running_average=not train)(x)\n"
                "    return nn.relu(x)\n"
                "v = CNN().init(jax.random.key(0), x4, train=False)\n"
                "print(jax.tree.map(jnp.shape, v['batch_stats']))\n"
                "out, upd = CNN().apply(v, x4, train=True, mutable=['batch_stats'])\n"
                "print(out.shape, bool(jnp.any(upd['batch_stats']['BatchNorm_0']['mean'] != 0)))") ==
        "{'batch_stats': {'mean': (3,), 'var': (3,)}} True\n{'BatchNorm_0': {'mean': (4,), 'var': (4,)}}\n"
        "(2, 3, 5, 4) True\n");
}

TEST_CASE("BatchNorm with axis_name under pmap and shard_map gives the statistics of the whole batch") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("from jax.sharding import Mesh, PartitionSpec as P\n"
                "from jax.experimental.shard_map import shard_map\n"
                "x = grid(64, 4) + jnp.arange(4, dtype=jnp.float32)\n"
                "bn = nn.BatchNorm(use_running_average=False, momentum=0.5, axis_name='batch')\n"
                // init runs outside any mapped axis: the named axis is not used then.
                "v = bn.init(jax.random.key(0), x[:8])\n"
                "step = lambda v, xb: bn.apply(v, xb, mutable=['batch_stats'])\n"
                "y1, upd1 = nn.BatchNorm(use_running_average=False, momentum=0.5).apply(v, x, "
                "mutable=['batch_stats'])\n"
                "y, upd = jax.pmap(step, axis_name='batch', in_axes=(None, 0))(v, x.reshape(8, 8, 4))\n"
                "print(upd['batch_stats']['mean'].shape, np.allclose(np.asarray(y).reshape(64, 4), y1, atol=1e-5))\n"
                "print(all(np.allclose(upd['batch_stats'][s][d], upd1['batch_stats'][s], atol=1e-6)\n"
                "          for s in ('mean', 'var') for d in range(8)))\n"
                "mesh = Mesh(np.array(jax.devices()), ('batch',))\n"
                "f = shard_map(step, mesh=mesh, in_specs=(P(), P('batch')), out_specs=(P('batch'), P()), "
                "check_rep=False)\n"
                "y2, upd2 = f(v, x)\n"
                "print(np.allclose(y2, y1, atol=1e-5), np.allclose(upd2['batch_stats']['mean'], "
                "upd1['batch_stats']['mean'], atol=1e-6), np.allclose(upd2['batch_stats']['var'], "
                "upd1['batch_stats']['var'], atol=1e-6))\n"
                // Without axis_name each device normalizes with its own shard's statistics.
                "y3, _ = jax.pmap(lambda v, xb: nn.BatchNorm(use_running_average=False).apply(v, xb, "
                "mutable=['batch_stats']), in_axes=(None, 0))(v, x.reshape(8, 8, 4))\n"
                "print(np.allclose(np.asarray(y3).reshape(64, 4), y1, atol=1e-3))") ==
        "(8, 4) True\nTrue\nTrue True True\nFalse\n");
}

TEST_CASE("DenseGeneral, Einsum, Embed and ConvTranspose give Flax's param trees and match numpy") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("print(jax.tree.map(jnp.shape, nn.DenseGeneral(features=(4, 5)).init(jax.random.key(0), "
                "jnp.ones((1, 3)))))\n"
                "print(jax.tree.map(jnp.shape, nn.DenseGeneral(features=(4, 5), axis=(1, -1))"
                ".init(jax.random.key(0), jnp.ones((1, 3, 6, 7)))))\n"
                "print(jax.tree.map(jnp.shape, nn.DenseGeneral(3, batch_dims=(0,)).init(jax.random.key(0), "
                "jnp.ones((2, 4, 5)))))\n"
                "print(jax.tree.map(jnp.shape, nn.Einsum((5, 6, 7), 'abc,cde->abde').init(jax.random.key(0), "
                "jnp.ones((3, 4, 5)))))\n"
                "print(jax.tree.map(jnp.shape, nn.Einsum((2, 5, 6), '...bd,...df->...bf').init(jax.random.key(0), "
                "jnp.ones((2, 3, 5)))))\n"
                "print(jax.tree.map(jnp.shape, nn.Embed(num_embeddings=5, features=3).init(jax.random.key(0), "
                "jnp.array([1]))))\n"
                "out, v = nn.ConvTranspose(features=4, kernel_size=(3,), padding='VALID')"
                ".init_with_output(jax.random.key(0), jnp.ones((1, 8, 3)))\n"
                "print(jax.tree.map(jnp.shape, v), out.shape)\n"
                "out, v = nn.ConvTranspose(features=4, kernel_size=(6, 6), strides=(2, 2), padding='CIRCULAR', "
                "transpose_kernel=True).init_with_output(jax.random.key(0), jnp.ones((1, 15, 15, 3)))\n"
                "print(jax.tree.map(jnp.shape, v), out.shape)") ==
        "{'params': {'bias': (4, 5), 'kernel': (3, 4, 5)}}\n{'params': {'bias': (4, 5), 'kernel': (3, 7, 4, 5)}}\n"
        "{'params': {'bias': (2, 3), 'kernel': (2, 5, 3)}}\n{'params': {'bias': (6, 7), 'kernel': (5, 6, 7)}}\n"
        "{'params': {'bias': (2, 6), 'kernel': (2, 5, 6)}}\n{'params': {'embedding': (5, 3)}}\n"
        "{'params': {'bias': (4,), 'kernel': (3, 3, 4)}} (1, 10, 4)\n"
        "{'params': {'bias': (4,), 'kernel': (6, 6, 4, 3)}} (1, 30, 30, 4)\n");
  CHECK(printed("x = grid(2, 3, 4, 5)\n"
                "xn = np.asarray(x, np.float64)\n"
                "m = nn.DenseGeneral(features=(6, 7), axis=(-2, -1), bias_init=nn.initializers.normal(1.0))\n"
                "v = m.init(jax.random.key(0), x)\n"
                "k, b = np.asarray(v['params']['kernel']), np.asarray(v['params']['bias'])\n"
                "print(np.allclose(m.apply(v, x), np.einsum('abcd,cdef->abef', xn, k) + b, atol=1e-5))\n"
                // The kernel is kernel_init's draw for the flattened (4 * 5, 6 * 7) shape, reshaped.
                "d = nn.Dense(42).init(jax.random.key(0), jnp.ones((1, 20)))['params']['kernel']\n"
                "print(np.array_equal(np.asarray(d).reshape(4, 5, 6, 7), k))\n"
                "mb = nn.DenseGeneral(3, batch_dims=(0,))\n"
                "vb = mb.init(jax.random.key(0), x)\n"
                "print(np.allclose(mb.apply(vb, x), np.einsum('abcd,ade->abce', xn, np.asarray(vb['params']"
                "['kernel'])) + np.asarray(vb['params']['bias'])[:, None, None, :], atol=1e-5))\n"
                "attempt(lambda: nn.DenseGeneral(3, batch_dims=(1,)).init(jax.random.key(0), x))\n"
                "e = nn.Einsum((5, 6), '...d,df->...f', bias_init=nn.initializers.normal(1.0))\n"
                "ve = e.init(jax.random.key(0), x)\n"
                "print(np.allclose(e.apply(ve, x), xn @ np.asarray(ve['params']['kernel']) + "
                "np.asarray(ve['params']['bias']), atol=1e-5))\n"
                "attempt(lambda: nn.Einsum((5, 6), 'ad,df').init(jax.random.key(0), x))\n"
                "attempt(lambda: nn.Einsum((5, 6), 'ad,df,fg->ag').init(jax.random.key(0), x))") ==
        "True\nTrue\nTrue\nValueError batch_dims (1,) must be consecutive leading dimensions starting from 0.\n"
        "True\nValueError `einsum_str` equation must be explicit and include \"->\".\n"
        "ValueError `einsum_str` equation must have exactly two operands and therefore, exactly one comma "
        "character, instead of 2\n");
  // Embed's default init and lookup: the values real Flax prints in its docstring.
  CHECK(printed("layer = nn.Embed(num_embeddings=5, features=3)\n"
                "idx = jnp.array([[0, 1, 2], [-1, -2, -3]])\n"
                "v = layer.init(jax.random.key(0), idx)\n"
                "print(v['params']['embedding'])\n"
                "table = np.asarray(v['params']['embedding'])\n"
                "print(np.array_equal(layer.apply(v, idx), table[np.asarray(idx)]))\n"
                "q = grid(2, 3)\n"
                "print(np.allclose(layer.apply(v, q, method=nn.Embed.attend), np.asarray(q) @ table.T, atol=1e-6))\n"
                "print(np.isnan(layer.apply(v, jnp.array([7]))).all())\n"
                "attempt(lambda: layer.apply(v, jnp.ones((2,))))") ==
        "[[ 0.04396089 -0.9328513  -0.97328115]\n [ 0.41147125  0.66334754  0.49469155]\n"
        " [ 0.09719624  0.49861377  0.49519277]\n [-0.13316602  0.6697022   0.3710195 ]\n"
        " [-0.5039532   0.287319    1.4369922 ]]\nTrue\nTrue\nTrue\n"
        "ValueError Input type must be an integer or unsigned integer.\n");
  // A transposed convolution scatters each input position's kernel product to stride-spaced outputs (with the
  // kernel flipped unless transpose_kernel, lax.conv_transpose's convention).
  CHECK(printed("xc = grid(1, 5, 2)\n"
                "for tk in (False, True):\n"
                "    ct = nn.ConvTranspose(3, (3,), strides=(2,), padding='VALID', transpose_kernel=tk)\n"
                "    vc = ct.init(jax.random.key(0), xc)\n"
                "    w = np.asarray(vc['params']['kernel'])\n"
                "    ref = np.zeros((1, 11, 3))\n"
                "    for i in range(5):\n"
                "        for j in range(3):\n"
                "            if tk:\n"
                "                ref[0, i * 2 + j] += np.asarray(xc)[0, i] @ w[j].T\n"
                "            else:\n"
                "                ref[0, i * 2 + 2 - j] += np.asarray(xc)[0, i] @ w[j]\n"
                "    print(tk, np.allclose(ct.apply(vc, xc), ref, atol=1e-6))\n"
                "ct = nn.ConvTranspose(3, (3,), strides=(2,), padding='SAME')\n"
                "vc = ct.init(jax.random.key(0), xc)\n"
                "print(ct.apply(vc, xc).shape, ct.apply(vc, grid(2, 3, 5, 2)).shape)") ==
        "False True\nTrue True\n(1, 10, 3) (2, 3, 10, 3)\n");
}

TEST_CASE("MultiHeadDotProductAttention has query key value and out params and matches manual softmax attention") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("def softmax(l):\n"
                "    e = np.exp(l - l.max(-1, keepdims=True))\n"
                "    return e / e.sum(-1, keepdims=True)\n"
                "q, k, v = grid(2, 3, 2, 4), grid(2, 5, 2, 4), grid(2, 5, 2, 4)\n"
                "qn, kn, vn = (np.asarray(a, np.float64) for a in (q, k, v))\n"
                "logits = np.einsum('bqhd,bkhd->bhqk', qn, kn) / np.sqrt(4)\n"
                "print(np.allclose(nn.dot_product_attention_weights(q, k), softmax(logits), atol=1e-6))\n"
                "print(np.allclose(nn.dot_product_attention(q, k, v), np.einsum('bhqk,bkhd->bqhd', softmax(logits), "
                "vn), atol=1e-6))\n"
                "mask = nn.make_attention_mask(jnp.ones((2, 3)), jnp.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]]))\n"
                "print(mask.shape, mask.dtype)\n"
                "w = softmax(np.where(np.asarray(mask) > 0, logits, -np.inf))\n"
                "print(np.allclose(nn.dot_product_attention(q, k, v, mask=mask), np.einsum('bhqk,bkhd->bqhd', w, "
                "vn), atol=1e-6))\n"
                "bias = grid(2, 1, 3, 5)\n"
                "print(np.allclose(nn.dot_product_attention_weights(q, k, bias=bias), softmax(logits + "
                "np.asarray(bias)), atol=1e-6))\n"
                // Dropout keeps weights scaled by 1 / keep_prob; broadcast_dropout shares one mask across batch and
                // heads.
                "wd = np.asarray(nn.dot_product_attention_weights(q, k, dropout_rng=jax.random.key(3), "
                "dropout_rate=0.5))\n"
                "print(sorted(set(np.round(wd / softmax(logits), 4).ravel().tolist())))\n"
                "print(np.array_equal(wd[0, 0] == 0, wd[1, 1] == 0))\n"
                "print(np.allclose(nn.dot_product_attention_weights(q, k, dropout_rng=jax.random.key(3), "
                "dropout_rate=0.5, deterministic=True), softmax(logits), atol=1e-6))") ==
        "True\nTrue\n(2, 1, 3, 5) float32\nTrue\nTrue\n[0.0, 2.0]\nTrue\nTrue\n");
  CHECK(printed("x = grid(2, 3, 4)\n"
                "xn = np.asarray(x, np.float64)\n"
                "layer = nn.MultiHeadDotProductAttention(num_heads=2, qkv_features=4, out_features=6, "
                "bias_init=nn.initializers.normal(0.5))\n"
                "vs = layer.init(jax.random.key(0), x)\n"
                "print(list(vs['params']))\n"
                "print(jax.tree.map(jnp.shape, vs))\n"
                "p = jax.tree.map(lambda a: np.asarray(a, np.float64), vs['params'])\n"
                "proj = lambda name, a: np.einsum('bld,dhk->blhk', a, p[name]['kernel']) + p[name]['bias']\n"
                "def manual(xq, xkv):\n"
                "    Q, K, V = proj('query', xq), proj('key', xkv), proj('value', xkv)\n"
                "    att = np.einsum('bhqk,bkhd->bqhd', softmax(np.einsum('bqhd,bkhd->bhqk', Q, K) / np.sqrt(2)), V)\n"
                "    return np.einsum('bqhd,hdo->bqo', att, p['out']['kernel']) + p['out']['bias']\n"
                "print(np.allclose(layer.apply(vs, x), manual(xn, xn), atol=1e-5))\n"
                "y = grid(2, 5, 4)\n"
                "print(np.allclose(layer.apply(vs, x, y), manual(xn, np.asarray(y, np.float64)), atol=1e-5))\n"
                "print(np.allclose(layer.apply(vs, x, inputs_kv=y), layer.apply(vs, x, y), atol=1e-6))\n"
                "attempt(lambda: layer.apply(vs, x, inputs_v=y))\n"
                "print(list(nn.MultiHeadDotProductAttention(num_heads=2, normalize_qk=True).init(jax.random.key(0), "
                "x)['params']))\n"
                "print(list(nn.SelfAttention(num_heads=2).init(jax.random.key(0), x)['params']))\n"
                "class Two(nn.Module):\n"
                "  @nn.compact\n"
                "  def __call__(self, x):\n"
                "    return nn.MultiHeadAttention(num_heads=2)(x) + nn.MultiHeadDotProductAttention(num_heads=2)(x)\n"
                "print(list(Two().init(jax.random.key(0), x)['params']))") ==
        "['query', 'key', 'value', 'out']\n"
        "{'params': {'key': {'bias': (2, 2), 'kernel': (4, 2, 2)}, 'out': {'bias': (6,), 'kernel': (2, 2, 6)}, "
        "'query': {'bias': (2, 2), 'kernel': (4, 2, 2)}, 'value': {'bias': (2, 2), 'kernel': (4, 2, 2)}}}\n"
        "True\nTrue\nTrue\n"
        "ValueError `inputs_k` cannot be None if `inputs_v` is not None. To have both `inputs_k` and `inputs_v` be "
        "the same value, pass in the value to `inputs_k` and leave `inputs_v` as None.\n"
        "['query', 'key', 'value', 'query_ln', 'key_ln', 'out']\n['query', 'key', 'value', 'out']\n"
        "['MultiHeadAttention_0', 'MultiHeadDotProductAttention_0']\n");
  // Dropout needs `deterministic`; sow_weights stores the weights; decode fills a cache one position per call.
  CHECK(
      printed("drop = nn.MultiHeadDotProductAttention(num_heads=2, dropout_rate=0.5)\n"
              "attempt(lambda: drop.init(jax.random.key(0), x))\n"
              "vd = drop.init(jax.random.key(0), x, deterministic=True)\n"
              "o1 = drop.apply(vd, x, deterministic=False, rngs={'dropout': jax.random.key(1)})\n"
              "print(np.allclose(o1, drop.apply(vd, x, deterministic=True)), np.allclose(o1, drop.apply(vd, x, "
              "deterministic=False, dropout_rng=jax.random.key(2))))\n"
              "_, st = layer.apply(vs, x, sow_weights=True, mutable=['intermediates'])\n"
              "print(jax.tree.map(jnp.shape, st))\n"
              "dec = nn.MultiHeadDotProductAttention(num_heads=2, decode=True)\n"
              "full = grid(2, 4, 4)\n"
              "vs = dec.init(jax.random.key(0), full)\n"
              "print(jax.tree.map(jnp.shape, vs['cache']))\n"
              "cache, outs = vs['cache'], []\n"
              "for i in range(4):\n"
              "    o, upd = dec.apply({'params': vs['params'], 'cache': cache}, full[:, i:i + 1], mutable=['cache'])\n"
              "    cache = upd['cache']\n"
              "    outs.append(o)\n"
              "ref = nn.MultiHeadDotProductAttention(num_heads=2).apply({'params': vs['params']}, full, "
              "mask=nn.make_causal_mask(full[..., 0]))\n"
              "print(np.allclose(jnp.concatenate(outs, 1), ref, atol=1e-5), int(cache['cache_index']))") ==
      "ValueError Parameter \"deterministic\" must be passed to the constructor or at call time.\n"
      "False False\n{'intermediates': {'attention_weights': ((2, 2, 3, 3),)}}\n"
      "{'cache_index': (), 'cached_key': (2, 4, 2, 2), 'cached_value': (2, 4, 2, 2)}\nTrue 4\n");
  CHECK(printed("cm = nn.make_causal_mask(jnp.ones((2, 3)))\n"
                "print(cm.shape, cm.dtype)\n"
                "print(np.asarray(cm[1, 0]).tolist())\n"
                "print(nn.make_causal_mask(jnp.ones((3,)), extra_batch_dims=2).shape)\n"
                "pad = nn.make_attention_mask(jnp.array([[1, 1, 0]]), jnp.array([[1, 1, 0]]), dtype=jnp.bool_)\n"
                "both = nn.combine_masks(None, cm[:1], pad)\n"
                "print(both.dtype, np.asarray(both[0, 0]).tolist(), nn.combine_masks(None, None))") ==
        "(2, 1, 3, 3) float32\n[[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]\n(1, 1, 1, 3, 3)\n"
        "float32 [[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]] None\n");
}

TEST_CASE("Sequential chains layers, spreads tuple and dict outputs and names outside layers layers_N") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("x = grid(2, 3)\n"
                "seq = nn.Sequential([nn.Dense(4), nn.relu, nn.Dense(2)])\n"
                "v = seq.init(jax.random.key(0), x)\n"
                "print(jax.tree.map(jnp.shape, v))\n"
                "p = jax.tree.map(lambda a: np.asarray(a, np.float64), v['params'])\n"
                "h = np.maximum(np.asarray(x) @ p['layers_0']['kernel'] + p['layers_0']['bias'], 0)\n"
                "print(np.allclose(seq.apply(v, x), h @ p['layers_2']['kernel'] + p['layers_2']['bias'], "
                "atol=1e-6))\n"
                // One instance listed twice is one layer with one set of params.
                "d = nn.Dense(3)\n"
                "print(jax.tree.map(jnp.shape, nn.Sequential([d, nn.relu, d]).init(jax.random.key(0), x)))\n"
                // Layers made in a compact method belong to that method's module, as in Flax.
                "class Outer(nn.Module):\n"
                "  @nn.compact\n"
                "  def __call__(self, x):\n"
                "    return nn.Sequential([nn.Dense(4), nn.relu, nn.Dense(2)])(x)\n"
                "print(jax.tree.map(jnp.shape, Outer().init(jax.random.key(0), x)))\n"
                "class WithSetup(nn.Module):\n"
                "  def setup(self):\n"
                "    self.seq = nn.Sequential([nn.Dense(4), nn.relu, nn.Dense(2)])\n"
                "  def __call__(self, x):\n"
                "    return self.seq(x)\n"
                "print(jax.tree.map(jnp.shape, WithSetup().init(jax.random.key(0), x)))") ==
        "{'params': {'layers_0': {'bias': (4,), 'kernel': (3, 4)}, 'layers_2': {'bias': (2,), 'kernel': (4, "
        "2)}}}\nTrue\n{'params': {'layers_0': {'bias': (3,), 'kernel': (3, 3)}}}\n"
        "{'params': {'Dense_0': {'bias': (4,), 'kernel': (3, 4)}, 'Dense_1': {'bias': (2,), 'kernel': (4, 2)}}}\n"
        "{'params': {'seq': {'layers_0': {'bias': (4,), 'kernel': (3, 4)}, 'layers_2': {'bias': (2,), "
        "'kernel': (4, 2)}}}}\n");
  CHECK(printed("class Split(nn.Module):\n"
                "  def __call__(self, x):\n"
                "    return x, x * 2\n"
                "class ToDict(nn.Module):\n"
                "  def __call__(self, a, b):\n"
                "    return {'p': a + b, 'q': a}\n"
                "class FromDict(nn.Module):\n"
                "  def __call__(self, p, q):\n"
                "    return p * 10 + q\n"
                "print(nn.Sequential([Split(), ToDict(), FromDict()]).apply({}, jnp.array([1.0])))\n"
                "attempt(lambda: nn.Sequential([]).apply({}, 1.0))\n"
                "attempt(lambda: nn.Sequential(nn.Dense(2)))") ==
        "[31.]\nValueError Empty Sequential module None.\n"
        "ValueError 'layers' must be a sequence, got 'Dense'.\n");
}

TEST_CASE("flax.linen re-exports Flax's activations and PReLU") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("x = grid(3, 4)\n"
                "xn = np.asarray(x, np.float64)\n"
                "sig = lambda a: 1 / (1 + np.exp(-a))\n"
                "checks = [\n"
                "  (nn.elu(x), np.where(xn > 0, xn, np.expm1(xn))),\n"
                "  (nn.celu(x, alpha=2.0), np.where(xn > 0, xn, 2 * np.expm1(xn / 2))),\n"
                "  (nn.leaky_relu(x), np.where(xn >= 0, xn, 0.01 * xn)),\n"
                "  (nn.hard_tanh(x * 4), np.clip(xn * 4, -1, 1)),\n"
                "  (nn.log_sigmoid(x), np.log(sig(xn))),\n"
                "  (nn.glu(x), xn[:, :2] * sig(xn[:, 2:])),\n"
                "  (nn.tanh(x), np.tanh(xn)),\n"
                "  (nn.soft_sign(x), xn / (np.abs(xn) + 1)),\n"
                "  (nn.hard_sigmoid(x), np.clip(xn + 3, 0, 6) / 6),\n"
                "  (nn.hard_swish(x), xn * np.clip(xn + 3, 0, 6) / 6),\n"
                "  (nn.selu(x), 1.0507009873554805 * np.where(xn > 0, xn, 1.6732632423543772 * np.expm1(xn))),\n"
                "  (nn.standardize(x), (xn - xn.mean(-1, keepdims=True)) / np.sqrt(xn.var(-1, keepdims=True) + "
                "1e-5)),\n"
                "  (nn.normalize(x), (xn - xn.mean(-1, keepdims=True)) / np.sqrt(xn.var(-1, keepdims=True) + "
                "1e-5)),\n"
                "]\n"
                "print([bool(np.allclose(a, b, atol=1e-5)) for a, b in checks].count(True), len(checks))\n"
                "v = nn.PReLU().init(jax.random.key(0), x)\n"
                "print(v)\n"
                "print(np.allclose(nn.PReLU().apply({'params': {'negative_slope': jnp.float32(0.25)}}, x), "
                "np.where(xn >= 0, xn, 0.25 * xn)))\n"
                "attempt(lambda: nn.not_an_activation)") ==
        "13 13\n{'params': {'negative_slope': Array(0.01, dtype=float32)}}\nTrue\n"
        "AttributeError module 'flax.linen' has no attribute 'not_an_activation'\n");
}
