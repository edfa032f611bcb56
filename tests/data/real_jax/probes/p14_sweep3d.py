# Rank-3 arrays and pairs of differently sharded operands: for each op and layout, the result's sharding
# and the collectives XLA inserts (kind, count). Recorded under real JAX (8 CPU devices) to check that the
# engine's partition rules are general, not fitted to the rank-2 cases.
# %%
import re
import numpy as np
import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import PartitionSpec as P, NamedSharding, AxisType

COLLECTIVE = re.compile(r"\b(all-gather|all-reduce|reduce-scatter|all-to-all|collective-permute)(-start)?\(")


def collectives(fn, *args):
    text = fn.lower(*args).compile().as_text()
    return sorted(m.group(1) for m in COLLECTIVE.finditer(text))


def run(name, fn, *args):
    jf = jax.jit(fn)
    try:
        out = jf(*args)
        outs = out if isinstance(out, tuple) else (out,)
        print(' ', name, [o.shape for o in outs], [o.sharding.spec for o in outs], collectives(jf, *args))
    except Exception as e:
        print(' ', name, type(e).__name__, str(e)[:300])


mesh = jax.make_mesh((4, 2), ('data', 'model'), axis_types=(AxisType.Auto, AxisType.Auto))
print(jax.__version__, len(jax.devices()))
ops3 = [('sum0', lambda a: a.sum(0)), ('sum1', lambda a: a.sum(1)), ('sum2', lambda a: a.sum(2)), ('sum01', lambda a: a.sum((0, 1))),
        ('mean2_keep', lambda a: a.mean(2, keepdims=True)), ('max1', lambda a: a.max(1)), ('argmax2', lambda a: jnp.argmax(a, 2)),
        ('softmax2', lambda a: jax.nn.softmax(a, axis=2)), ('softmax1', lambda a: jax.nn.softmax(a, axis=1)),
        ('logsumexp0', lambda a: jax.nn.logsumexp(a, axis=0)), ('var2', lambda a: a.var(2)),
        ('T021', lambda a: a.transpose(0, 2, 1) + 0), ('T120', lambda a: a.transpose(1, 2, 0) + 0), ('T210', lambda a: a.T + 0),
        ('moveaxis', lambda a: jnp.moveaxis(a, 2, 0) + 0), ('swap01', lambda a: jnp.swapaxes(a, 0, 1) + 0),
        ('reshape_8x32', lambda a: a.reshape(8, 32)), ('reshape_32x8', lambda a: a.reshape(32, 8)),
        ('reshape_2x4x4x8', lambda a: a.reshape(2, 4, 4, 8)), ('reshape_8x4x2x4', lambda a: a.reshape(8, 4, 2, 4)),
        ('reshape_flat', lambda a: a.reshape(-1)), ('expand', lambda a: a[:, None] * 2), ('bcast_vec', lambda a: a + jnp.arange(8.)),
        ('bcast_col', lambda a: a * a[:, :, :1]), ('bmm', lambda a: jnp.einsum('bij,bkj->bik', a, a)),
        ('bmm_T', lambda a: jnp.einsum('bij,bik->bjk', a, a)), ('contract_b', lambda a: jnp.einsum('bij,bij->ij', a, a)),
        ('einsum_perm', lambda a: jnp.einsum('bij->jbi', a) + 0), ('outer_last', lambda a: jnp.einsum('bij,bik->bijk', a, a)),
        ('concat0', lambda a: jnp.concatenate([a, a], 0)), ('concat2', lambda a: jnp.concatenate([a, a], 2)),
        ('cumsum1', lambda a: jnp.cumsum(a, 1)), ('sort2', lambda a: jnp.sort(a, 2)), ('flip0', lambda a: a[::-1]),
        ('slice_mid', lambda a: a[:, 1:3]), ('index_last', lambda a: a[..., 0]), ('layernorm', lambda a: (a - a.mean(-1, keepdims=True)) / (a.std(-1, keepdims=True) + 1)),
        ('top_k', lambda a: lax.top_k(a, 2)[0]), ('take_along', lambda a: jnp.take_along_axis(a, jnp.argsort(a, 2), 2)),
        ('norm', lambda a: jnp.linalg.norm(a, axis=-1)), ('where', lambda a: jnp.where(a > 5, a, -a)),
        ('dot_w', lambda a: a @ jnp.ones((8, 3))), ('astype', lambda a: a.astype(jnp.int32)), ('squeeze', lambda a: a[:, :1].squeeze(1))]
layouts3 = [P('data', 'model', None), P(None, 'data', 'model'), P('model', None, 'data'), P(('data', 'model'), None, None),
            P(None, None, 'data'), P('data')]
# %%
for lay in layouts3:
    a = jax.device_put(jnp.arange(256.).reshape(8, 4, 8) / 64, NamedSharding(mesh, lay))
    print('layout', lay)
    for name, fn in ops3:
        run(name, fn, a)
# %%
# Two operands with different layouts: which sharding wins, and what XLA moves.
lay2 = [P('data', 'model'), P('model', 'data'), P('data', None), P(None, 'data'), P(None, 'model'), P(), P(('data', 'model'), None)]
pair_ops = [('add', lambda a, b: a + b), ('matmul', lambda a, b: a @ b), ('matmul_bT', lambda a, b: a @ b.T),
            ('rowdot', lambda a, b: jnp.einsum('ij,ij->i', a, b)), ('concat0', lambda a, b: jnp.concatenate([a, b], 0)),
            ('where', lambda a, b: jnp.where(a > b, a, b))]
base = jnp.arange(64.).reshape(8, 8) / 8
for la in lay2:
    for lb in lay2:
        a = jax.device_put(base, NamedSharding(mesh, la))
        b = jax.device_put(base.T, NamedSharding(mesh, lb))
        print('pair', la, lb)
        for name, fn in pair_ops:
            run(name, fn, a, b)
# %%
# A weight stack and a batch: the layouts of an MLP layer's pieces under three shardings each.
for lx in [P('data', None), P(None, 'model'), P('data', 'model')]:
    for lw in [P(None, 'model'), P('model', None), P('data', 'model'), P()]:
        x = jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, lx))
        w = jax.device_put(jnp.ones((16, 8)) / 16, NamedSharding(mesh, lw))
        print('mlp', lx, lw)
        run('relu', lambda x, w: jax.nn.relu(x @ w), x, w)
        run('grad_w', jax.grad(lambda w, x: jnp.sum(jax.nn.relu(x @ w) ** 2)), w, x)
        run('grad_x', jax.grad(lambda x, w: jnp.sum(jnp.tanh(x @ w))), x, w)
