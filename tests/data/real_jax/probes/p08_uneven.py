# Shardings of results whose sizes do not divide by the mesh axes they could take (sliced, padded, concatenated
# and gathered dims), as the partitioner leaves them; and the collectives it uses.
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
    found = sorted(m.group(1) for m in COLLECTIVE.finditer(text))
    return found


def spec(a):
    return a.sharding.spec


mesh = jax.make_mesh((4, 2), ('data', 'model'), axis_types=(AxisType.Auto, AxisType.Auto))
x = jax.device_put(jnp.arange(32.).reshape(8, 4) / 16, NamedSharding(mesh, P('data', None)))
w = jax.device_put(jnp.arange(24.).reshape(4, 6) / 16 - 0.5, NamedSharding(mesh, P(None, 'model')))
print(jax.__version__, len(jax.devices()))
# %%
a = jax.device_put(jnp.arange(64.).reshape(8, 8), NamedSharding(mesh, P('data', 'model')))
r = jax.device_put(jnp.arange(64.).reshape(8, 8), NamedSharding(mesh, P('data', None)))
v = jax.device_put(jnp.arange(16.), NamedSharding(mesh, P(('data', 'model'))))
def show(name, fn, *args):
    jf = jax.jit(fn)
    try:
        out = jf(*args)
        outs = out if isinstance(out, tuple) else (out,)
        print(name, [(o.shape, spec(o)) for o in outs], collectives(jf, *args))
    except Exception as ex:
        print(name, type(ex).__name__, str(ex)[:200])
# %%
for name, fn in [('first7', lambda a: a[:7]), ('first1', lambda a: a[:1]), ('last1', lambda a: a[7:]),
                 ('first6', lambda a: a[:6]), ('first4', lambda a: a[:4]), ('mid2', lambda a: a[3:5]),
                 ('stride2', lambda a: a[::2]), ('stride4', lambda a: a[::4]), ('cols3', lambda a: a[:, :3]),
                 ('pad_rows', lambda a: jnp.pad(a, ((1, 1), (0, 0)))), ('pad_rows4', lambda a: jnp.pad(a, ((2, 2), (0, 0)))),
                 ('pad_cols', lambda a: jnp.pad(a, ((0, 0), (1, 1)))), ('pad_lo', lambda a: jnp.pad(a, ((4, 0), (0, 0)))),
                 ('lax_pad', lambda a: lax.pad(a, 0., ((1, 1, 0), (0, 0, 0)))), ('lax_pad_int', lambda a: lax.pad(a, 0., ((0, 0, 1), (0, 0, 0)))),
                 ('concat_1', lambda a: jnp.concatenate([a, a[:1]], 0)), ('concat_8', lambda a: jnp.concatenate([a, a[:4]], 0)),
                 ('concat_cols', lambda a: jnp.concatenate([a, a], 1)), ('roll2', lambda a: jnp.roll(a, 2, 0)),
                 ('roll_cols', lambda a: jnp.roll(a, 1, 1)), ('slice_then_concat', lambda a: jnp.concatenate([a[1:], a[:1]], 0)),
                 ('cumsum_rows', lambda a: jnp.cumsum(a, 0)), ('cummax', lambda a: lax.cummax(a, 1)),
                 ('rev0', lambda a: a[::-1]), ('rev1', lambda a: a[:, ::-1]), ('dus', lambda a: lax.dynamic_update_slice(a, jnp.ones((2, 8)), (3, 0))),
                 ('dus_full', lambda a: a.at[2:6].set(0.)), ('at_add', lambda a: a.at[0].add(1.)),
                 ('take_rows', lambda a: a[jnp.array([1, 2, 3, 4])]), ('sort1', lambda a: jnp.sort(a, 1)),
                 ('argsort0', lambda a: jnp.argsort(a, 0)), ('top_k', lambda a: lax.top_k(a, 2)[0]),
                 ('reshape_16_4', lambda a: a.reshape(16, 4)), ('reshape_2_32', lambda a: a.reshape(2, 32)),
                 ('reshape_4_2_8', lambda a: a.reshape(4, 2, 8)), ('split', lambda a: jnp.split(a, 2, 0)[0]),
                 ('split_cols', lambda a: jnp.split(a, 2, 1)[1]), ('triu', lambda a: jnp.triu(a)), ('diag', lambda a: jnp.diag(a)),
                 ('tile', lambda a: jnp.tile(a, (2, 1))), ('repeat', lambda a: jnp.repeat(a, 2, 0)), ('mean0', lambda a: a.mean(0)),
                 ('var1', lambda a: a.var(1)), ('max_all', lambda a: a.max()), ('norm', lambda a: jnp.linalg.norm(a, axis=1)),
                 ('softmax0', lambda a: jax.nn.softmax(a, 0)), ('logsumexp', lambda a: jax.nn.logsumexp(a, 1)),
                 ('one_hot', lambda a: jax.nn.one_hot(jnp.argmax(a, 1), 8)), ('clip', lambda a: jnp.clip(a, 1, 5)),
                 ('matmul_T', lambda a: a @ a.T), ('matmul_self', lambda a: a @ a), ('outer_sum', lambda a: a.sum(0)[:, None] + a.sum(1)[None, :])]:
    show(name, fn, a)
# %%
for name, fn in [('r_first7', lambda a: a[:7]), ('r_pad', lambda a: jnp.pad(a, 1)), ('r_roll', lambda a: jnp.roll(a, 3, 0)),
                 ('r_cumsum', lambda a: jnp.cumsum(a, 0)), ('r_sort0', lambda a: jnp.sort(a, 0)), ('r_T_matmul', lambda a: a.T @ a),
                 ('r_concat', lambda a: jnp.concatenate([a, a], 0)), ('r_reshape64', lambda a: a.reshape(64)),
                 ('r_reshape_4_16', lambda a: a.reshape(4, 16)), ('r_transpose_reshape', lambda a: a.T.reshape(64))]:
    show(name, fn, r)
# %%
for name, fn in [('v_first10', lambda t: t[:10]), ('v_reshape', lambda t: t.reshape(4, 4)), ('v_reshape2', lambda t: t.reshape(2, 8)),
                 ('v_cumsum', lambda t: jnp.cumsum(t)), ('v_pad', lambda t: jnp.pad(t, 8)), ('v_roll', lambda t: jnp.roll(t, 1)),
                 ('v_outer', lambda t: jnp.outer(t, t)), ('v_dot', lambda t: t @ t), ('v_sum', lambda t: t.sum())]:
    show(name, fn, v)
# %%
def hlo_shardings(fn, *args):
    text = fn.lower(*args).compile().as_text()
    return [line.strip()[:160] for line in text.splitlines() if 'sharding=' in line][:12]
for line in hlo_shardings(jax.jit(lambda a: jnp.pad(a, ((1, 1), (0, 0)))), a):
    print(line)
print('--')
for line in hlo_shardings(jax.jit(lambda a: jnp.roll(a, 1, 0)), a):
    print(line)
# %%
print(jax.jit(lambda a: jnp.pad(a, ((1, 1), (0, 0)))).lower(a).as_text()[:3000])
