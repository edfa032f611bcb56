# XLA's own partitioning strategies: for many single ops over several input layouts, the result's
# sharding and the collectives the compiler inserts (kind, count). Recorded under real JAX (8 CPU
# devices); the last cells dump each collective's HLO line for study of the exact strategy.
# %%
import re
import collections
import numpy as np
import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import PartitionSpec as P, NamedSharding, AxisType

COLLECTIVE = re.compile(r"\b(all-gather|all-reduce|reduce-scatter|all-to-all|collective-permute)(-start)?\(")


def collectives(fn, *args):
    text = fn.lower(*args).compile().as_text()
    return sorted(m.group(1) for m in COLLECTIVE.finditer(text))


def spec(a):
    return a.sharding.spec


mesh = jax.make_mesh((4, 2), ('data', 'model'), axis_types=(AxisType.Auto, AxisType.Auto))
print(jax.__version__, len(jax.devices()))
ops = [('index3', lambda a: a[3]), ('first1', lambda a: a[:1]), ('last1', lambda a: a[-1:]),
       ('mid2', lambda a: a[2:4]), ('first2', lambda a: a[:2]), ('first4', lambda a: a[:4]), ('last4', lambda a: a[4:]),
       ('stride2', lambda a: a[::2]), ('stride4', lambda a: a[::4]), ('drop1', lambda a: a[1:]), ('drop_last', lambda a: a[:-1]),
       ('inner', lambda a: a[1:7]), ('col3', lambda a: a[:, 3]), ('cols2', lambda a: a[:, 2:4]),
       ('diag', lambda a: jnp.diag(a)), ('trace', lambda a: jnp.trace(a)), ('triu', lambda a: jnp.triu(a)),
       ('outer_rows', lambda a: a[:, :, None] * a[:, None, :]), ('outer_vec', lambda a: jnp.outer(a[0], a[:, 0])),
       ('swap_T', lambda a: a.T + 0), ('concat0', lambda a: jnp.concatenate([a, a], 0)),
       ('concat1', lambda a: jnp.concatenate([a, a], 1)), ('stack0', lambda a: jnp.stack([a, a], 0)),
       ('sort0', lambda a: jnp.sort(a, 0)), ('sort1', lambda a: jnp.sort(a, 1)), ('argsort0', lambda a: jnp.argsort(a, 0)),
       ('cumsum0', lambda a: jnp.cumsum(a, 0)), ('cummax1', lambda a: lax.cummax(a, 1)),
       ('reshape64', lambda a: a.reshape(64)), ('reshape4x16', lambda a: a.reshape(4, 16)), ('reshape16x4', lambda a: a.reshape(16, 4)),
       ('reshape2x32', lambda a: a.reshape(2, 32)), ('reshape2x4x8', lambda a: a.reshape(2, 4, 8)), ('reshape8x2x4', lambda a: a.reshape(8, 2, 4)),
       ('repeat0', lambda a: jnp.repeat(a, 2, 0)), ('tile', lambda a: jnp.tile(a, (2, 1))), ('flip1', lambda a: a[:, ::-1]),
       ('roll1', lambda a: jnp.roll(a, 3, 1)), ('pad0', lambda a: jnp.pad(a, ((2, 0), (0, 0)))),
       ('bcast_to', lambda a: jnp.broadcast_to(a[:, :1], (8, 8))), ('sum_keep', lambda a: a.sum(0, keepdims=True) + a),
       ('max1', lambda a: a.max(1)), ('argmax0', lambda a: jnp.argmax(a, 0)), ('matmul_self', lambda a: a @ a),
       ('matmul_T', lambda a: a @ a.T), ('einsum_ii', lambda a: jnp.einsum('ij,ij->i', a, a)),
       ('gather_take0', lambda a: jnp.take(a, jnp.array([7, 0, 3]), axis=0)), ('scatter_add', lambda a: a.at[jnp.array([1, 6])].add(1.)),
       ('set_row', lambda a: a.at[2].set(0.)), ('dyn_upd', lambda a: lax.dynamic_update_slice(a, jnp.ones((2, 2)), (3, 5)))]
layouts = [P('data', 'model'), P('data', None), P(None, 'data'), P(('data', 'model'), None), P('model', 'data')]
# %%
for lay in layouts:
    a = jax.device_put(jnp.arange(64.).reshape(8, 8), NamedSharding(mesh, lay))
    print('layout', lay)
    for name, fn in ops:
        jf = jax.jit(fn)
        try:
            out = jf(a)
            print(' ', name, out.shape, spec(out), collectives(jf, a))
        except Exception as e:
            print(' ', name, type(e).__name__, e)
# %%
# A vector over both axes, and uneven sizes.
v = jax.device_put(jnp.arange(16.), NamedSharding(mesh, P(('data', 'model'))))
for name, fn in [('outer', lambda v: jnp.outer(v, v)), ('reshape2x8', lambda v: v.reshape(2, 8)), ('reshape8x2', lambda v: v.reshape(8, 2)),
                 ('reshape4x4', lambda v: v.reshape(4, 4)), ('first3', lambda v: v[:3]), ('rev', lambda v: v[::-1]),
                 ('cumsum', jnp.cumsum), ('sort', jnp.sort), ('roll', lambda v: jnp.roll(v, 1)), ('diff', jnp.diff),
                 ('conv_same', lambda v: jnp.convolve(v, jnp.ones(3), mode='same'))]:
    jf = jax.jit(fn)
    try:
        out = jf(v)
        print(name, out.shape, spec(out), collectives(jf, v))
    except Exception as e:
        print(name, type(e).__name__, e)
# %%
# Collective details (for study): each collective's HLO line, trimmed of metadata.
DETAIL = re.compile(r"^\s*(?:ROOT )?%?\S+ = (\S+) (all-gather|all-reduce|reduce-scatter|all-to-all|collective-permute)(?:-start)?\((.*)$")


def detail(fn, *args):
    text = fn.lower(*args).compile().as_text()
    rows = []
    for line in text.splitlines():
        m = DETAIL.match(line)
        if m:
            rest = re.sub(r", metadata=\{.*?\}", "", m.group(3))
            rest = re.sub(r"%[\w.\-]+", "%", rest)
            rows.append(f"{m.group(2)} {m.group(1)} ({rest}")
    return rows


for lay in [P('data', 'model'), P('data', None), P('model', 'data')]:
    a = jax.device_put(jnp.arange(64.).reshape(8, 8), NamedSharding(mesh, lay))
    for name, fn in ops:
        try:
            rows = detail(jax.jit(fn), a)
        except Exception as e:
            rows = [type(e).__name__]
        if rows:
            print(lay, name)
            for r in rows:
                print('   ', r[:400])
# %%
# Reshards between layouts: what XLA inserts for each pair (jit with out_shardings).
pairs = [(P('data', 'model'), P('model', 'data')), (P('data', None), P(None, 'data')), (P('data', None), P('model', None)),
         (P(('data', 'model'), None), P(('model', 'data'), None)), (P(('data', 'model'), None), P('data', 'model')),
         (P('data', 'model'), P(('data', 'model'), None)), (P('data', None), P(None, 'model')), (P(None, 'model'), P('model', None)),
         (P('data', 'model'), P(None, ('data', 'model'))), (P('model', None), P('data', None))]
for src, dst in pairs:
    a = jax.device_put(jnp.arange(64.).reshape(8, 8), NamedSharding(mesh, src))
    jf = jax.jit(lambda a: a + 0, out_shardings=NamedSharding(mesh, dst))
    print(src, '->', dst, collectives(jf, a))
    for r in detail(jf, a):
        print('   ', r[:400])
# %%
# psums inside one shard_map body, and a psum of a pytree: how many all-reduce instructions XLA emits.
m8 = jax.make_mesh((8,), ('i',), axis_types=(AxisType.Auto,))
u = jax.device_put(jnp.arange(16.), NamedSharding(m8, P('i')))
for name, body in [('two_psums', lambda b: (lax.psum(b, 'i'), lax.psum(b * 2, 'i'))),
                   ('tree_psum', lambda b: lax.psum({'a': b, 'b': b * 3, 'c': b.sum()}, 'i')),
                   ('psum_then_use', lambda b: lax.psum(lax.psum(b, 'i') * b, 'i')),
                   ('pmax_psum', lambda b: (lax.pmax(b, 'i'), lax.psum(b, 'i')))]:
    sm = jax.jit(jax.shard_map(body, mesh=m8, in_specs=P('i'), out_specs=P()))
    print(name, collectives(sm, u))
    for r in detail(sm, u):
        print('   ', r[:400])
