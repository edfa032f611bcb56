# Programs written as for Auto sharding, run on jax.make_mesh's default (Explicit) axes: gradients, loops, vmap,
# remat and shard_map, with the types jax.typeof gives their results (or the error JAX raises), and the values.
# Recorded under real JAX (8 CPU devices).
# %%
import numpy as np
import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import PartitionSpec as P, NamedSharding

mesh = jax.make_mesh((4, 2), ('data', 'model'))
print(jax.__version__, mesh.axis_types)


def run(name, fn, *args):
    try:
        with jax.set_mesh(mesh):
            out = jax.jit(fn)(*args)
        leaves = jax.tree.leaves(out)
        print(name, [str(jax.typeof(l)) for l in leaves], [l.sharding.spec for l in leaves])
        print('   ', [np.round(np.asarray(l, np.float64).ravel()[:4], 4).tolist() for l in leaves])
    except Exception as e:
        print(name, type(e).__name__, str(e).splitlines()[0][:300])


x = jax.device_put(jnp.arange(64.).reshape(8, 8) / 64, NamedSharding(mesh, P('data', None)))
w = jax.device_put(jnp.eye(8) / 2 + 0.1, NamedSharding(mesh, P(None, 'model')))
wr = jax.device_put(jnp.eye(8) / 2 + 0.1, NamedSharding(mesh, P()))
b = jax.device_put(jnp.zeros(8), NamedSharding(mesh, P('model')))
# %%
run('mlp', lambda x, w, b: jax.nn.relu(x @ w + b), x, w, b)
run('loss_grad', jax.grad(lambda w, x: jnp.mean((x @ w) ** 2)), w, x)
run('value_and_grad', jax.value_and_grad(lambda w, b, x: jnp.sum(jnp.tanh(x @ w + b))), w, b, x)
run('grad_both', jax.grad(lambda p, x: jnp.sum(jax.nn.relu(x @ p['w'] + p['b'])), argnums=0), {'w': w, 'b': b}, x)
run('sgd_step', lambda p, x: jax.tree.map(lambda a, g: a - 0.1 * g, p, jax.grad(lambda p: jnp.mean((x @ p['w'] + p['b']) ** 2))(p)), {'w': w, 'b': b}, x)
run('softmax_ce', lambda x, w: -jnp.mean(jax.nn.log_softmax(x @ w, axis=-1)[:, 0]), x, w)
run('layernorm', lambda x: (x - x.mean(-1, keepdims=True)) / jnp.sqrt(x.var(-1, keepdims=True) + 1e-5), x)
run('attention', lambda x: jax.nn.softmax(x @ x.T / 8, axis=-1) @ x, x)
# %%
run('scan_rnn', lambda w, xs: lax.scan(lambda c, r: (jnp.tanh(c @ w + r), c.sum()), jnp.zeros(8), xs), wr, x)
run('scan_grad', jax.grad(lambda w, xs: lax.scan(lambda c, r: (jnp.tanh(c @ w + r), None), jnp.zeros(8), xs)[0].sum()), wr, x)
run('scan_batch', lambda x, w: lax.scan(lambda c, _: (jnp.tanh(c @ w), None), x, None, length=3)[0], x, wr)
run('fori', lambda x: lax.fori_loop(0, 3, lambda i, c: c * 0.5 + 1, x), x)
run('while', lambda x: lax.while_loop(lambda c: c[1] < 3, lambda c: (c[0] * 2, c[1] + 1), (x, 0))[0], x)
run('cond', lambda x: lax.cond(x.sum() > 1, lambda v: v * 2, lambda v: -v, x), x)
run('vmap_rows', jax.vmap(lambda r, w: r @ w, in_axes=(0, None)), x, w)
run('remat', jax.grad(lambda w, x: jax.checkpoint(lambda w: jnp.sin(x @ w) @ w.T)(w).sum()), w, x)
# %%
run('shard_map_psum', jax.shard_map(lambda a: lax.psum(a.sum(0), 'data'), mesh=mesh, in_specs=P('data', None), out_specs=P()), x)
run('shard_map_gather', jax.shard_map(lambda a: lax.all_gather(a, 'data', tiled=True), mesh=mesh, in_specs=P('data', None), out_specs=P()), x)
run('reshard', lambda x: jax.sharding.reshard(x, P(None, 'data')) * 2, x)
run('zeros_like', lambda x: jnp.zeros_like(x) + jnp.ones_like(x), x)
run('where_scalar', lambda x: jnp.where(x > 0.5, x, 0.), x)
run('concat_batch', lambda x: jnp.concatenate([x, x], axis=0), x)
run('sum_all', lambda x: x.sum(), x)
run('argmax', lambda x: jnp.argmax(x, axis=-1), x)
run('take_rows', lambda x: x[jnp.array([0, 3, 5])], x)
run('random_init', lambda x: x + jax.random.normal(jax.random.key(0), x.shape, out_sharding=P('data', None)), x)
