# Explicit sharding over a wider surface: for each op, the type jax.typeof gives the result (or the error JAX
# raises), over rank-2 and rank-3 operands in several layouts, and pairs of operands that disagree.
# Recorded under real JAX (8 CPU devices).
# %%
import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import PartitionSpec as P, NamedSharding, AxisType

mesh = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Explicit, AxisType.Explicit))
jax.set_mesh(mesh)
print(jax.__version__)


def typ(name, fn, *args):
    try:
        out = jax.jit(fn)(*args)
        outs = out if isinstance(out, tuple) else (out,)
        print(' ', name, ' '.join(str(jax.typeof(o)) for o in outs))
    except Exception as e:
        print(' ', name, type(e).__name__, str(e).splitlines()[0][:300])


ops2 = [('neg', lambda a: -a), ('sum0', lambda a: a.sum(0)), ('sum1', lambda a: a.sum(1)), ('sum_all', jnp.sum), ('max0', lambda a: a.max(0)),
        ('argmax1', lambda a: jnp.argmax(a, 1)), ('T', lambda a: a.T), ('reshape64', lambda a: a.reshape(64)), ('reshape4x16', lambda a: a.reshape(4, 16)),
        ('reshape2x4x8', lambda a: a.reshape(2, 4, 8)), ('reshape8x2x4', lambda a: a.reshape(8, 2, 4)), ('expand0', lambda a: a[None]),
        ('slice_rows', lambda a: a[:4]), ('slice_cols', lambda a: a[:, 2:6]), ('index0', lambda a: a[3]), ('col', lambda a: a[:, 1]),
        ('stride', lambda a: a[::2]), ('flip', lambda a: a[::-1]), ('concat0', lambda a: jnp.concatenate([a, a], 0)),
        ('concat1', lambda a: jnp.concatenate([a, a], 1)), ('stack', lambda a: jnp.stack([a, a])), ('matmul_self', lambda a: a @ a),
        ('matmul_T', lambda a: a @ a.T), ('outer', lambda a: jnp.outer(a[0], a[:, 0])), ('cumsum0', lambda a: jnp.cumsum(a, 0)),
        ('sort1', lambda a: jnp.sort(a, 1)), ('softmax', jax.nn.softmax), ('where', lambda a: jnp.where(a > 3, a, 0.)),
        ('pad', lambda a: jnp.pad(a, 1)), ('roll', lambda a: jnp.roll(a, 1, 0)), ('take', lambda a: jnp.take(a, jnp.array([1, 2]), 0)),
        ('astype', lambda a: a.astype(jnp.bfloat16)), ('bcast_to', lambda a: jnp.broadcast_to(a[:, :1], (8, 8))),
        ('tile', lambda a: jnp.tile(a, (2, 1))), ('repeat', lambda a: jnp.repeat(a, 2, 0)), ('diag', jnp.diag), ('triu', jnp.triu),
        ('einsum_ij_j', lambda a: jnp.einsum('ij->j', a)), ('top_k', lambda a: lax.top_k(a, 3)[1]), ('dot_vec', lambda a: a @ jnp.ones(8)),
        ('zeros_like', jnp.zeros_like), ('full_like', lambda a: jnp.full_like(a, 2.)), ('set_row', lambda a: a.at[1].set(0.)),
        ('scatter', lambda a: a.at[jnp.array([0, 5])].add(1.)), ('clip', lambda a: jnp.clip(a, 1, 5)), ('mean_keep', lambda a: a.mean(1, keepdims=True))]
# %%
for lay in [P('x', 'y'), P('x', None), P(None, 'y'), P(('x', 'y'), None), P('y', 'x'), P(None, ('y', 'x'))]:
    a = jax.device_put(jnp.arange(64.).reshape(8, 8), NamedSharding(mesh, lay))
    print('layout', lay)
    for name, fn in ops2:
        typ(name, fn, a)
# %%
lay2 = [P('x', 'y'), P('y', 'x'), P('x', None), P(None, 'x'), P(None, 'y'), P(), P(('x', 'y'), None)]
for la in lay2:
    for lb in lay2:
        a = jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, la))
        b = jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, lb))
        print('pair', la, lb)
        for name, fn in [('add', lambda a, b: a + b), ('matmul', lambda a, b: a @ b), ('mul_T', lambda a, b: a * b.T),
                         ('concat0', lambda a, b: jnp.concatenate([a, b])), ('where', lambda a, b: jnp.where(a > 0, a, b))]:
            typ(name, fn, a, b)
# %%
for lay in [P('x', 'y', None), P(None, 'x', 'y'), P('y', None, 'x'), P(None, None, ('x', 'y'))]:
    a = jax.device_put(jnp.arange(256.).reshape(8, 4, 8), NamedSharding(mesh, lay))
    print('layout3', lay)
    for name, fn in [('sum1', lambda a: a.sum(1)), ('T120', lambda a: a.transpose(1, 2, 0)), ('reshape_8x32', lambda a: a.reshape(8, 32)),
                     ('reshape_32x8', lambda a: a.reshape(32, 8)), ('bmm', lambda a: jnp.einsum('bij,bkj->bik', a, a)),
                     ('contract_b', lambda a: jnp.einsum('bij,bij->ij', a, a)), ('dot_w', lambda a: a @ jnp.ones((8, 2))),
                     ('softmax1', lambda a: jax.nn.softmax(a, 1)), ('index_last', lambda a: a[..., 0]), ('split_last', lambda a: a.reshape(8, 4, 2, 4))]:
        typ(name, fn, a)
# %%
# Resolving conflicts explicitly: out_sharding on dot and einsum, reshard and auto_axes, sharding_cast errors.
a = jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P('x', 'y')))
b = jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P('y', 'x')))
typ('dot_out_x', lambda a, b: jnp.dot(a, b, out_sharding=P('x', None)), a, b)
typ('matmul_out_y', lambda a, b: jnp.matmul(a, b, out_sharding=P(None, 'y')), a, b)
typ('einsum_out', lambda a, b: jnp.einsum('ij,jk->ik', a, b, out_sharding=P('x', 'y')), a, b)
typ('reshard_then', lambda a, b: jax.sharding.reshard(a, P(None, 'x')) @ b, a, b)
typ('auto_axes', lambda a, b: jax.sharding.auto_axes(lambda a, b: a @ b, out_sharding=P('x', None))(a, b), a, b)
typ('reshape_out', lambda a: jnp.reshape(a, (64,), out_sharding=P(('x', 'y'))), a)
typ('zeros_out', lambda a: a + jnp.zeros((8, 8), out_sharding=P('x', 'y')), a)
typ('ones_bad', lambda a: a + jnp.ones((8, 8), out_sharding=P('y', 'x')), a)
