# How XLA partitions slices, indexing and pads of a sharded dimension: for 1-D and 2-D arrays over several
# shard counts, the result's sharding and each collective the compiler inserts, with its shape and its
# source-target pairs or replica groups. Recorded under real JAX (8 CPU devices) to learn the rule.
# %%
import re
import numpy as np
import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import PartitionSpec as P, NamedSharding, Mesh, AxisType

LINE = re.compile(r"^\s*(?:ROOT )?%?\S+ = (.+?) (all-gather|all-reduce|reduce-scatter|all-to-all|collective-permute)(?:-start)?\((.*)$")


def detail(fn, *args):
    text = fn.lower(*args).compile().as_text()
    rows = []
    for line in text.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        rest = m.group(3)
        keep = re.findall(r"(source_target_pairs=\{[^ ]*\}|replica_groups=(?:\{[^ ]*\}|\[[^ ]*|mesh\[[^\]]*\] \{[^}]*\})|dimensions=\{[^}]*\})", rest)
        shape = re.sub(r"\{[0-9,]*\}", "", m.group(1))
        rows.append(f"{m.group(2)} {shape} {' '.join(keep)}")
    return rows


def show(label, fn, arr):
    jf = jax.jit(fn)
    try:
        out = jf(arr)
        print(label, out.shape, out.sharding.spec)
        for r in detail(jf, arr):
            print('   ', r)
    except Exception as e:
        print(label, type(e).__name__, str(e)[:200])


print(jax.__version__, len(jax.devices()))
# %%
m8 = jax.make_mesh((8,), ('x',), axis_types=(AxisType.Auto,))
m4 = Mesh(np.array(jax.devices()[:4]), ('x',), axis_types=(AxisType.Auto,))
for mesh, n in [(m4, 16), (m8, 16), (m4, 10)]:
    v = jax.device_put(jnp.arange(float(n)), NamedSharding(mesh, P('x')))
    print('== size', n, 'over', mesh.shape)
    for k in [0, 1, 3, 5, n - 1]:
        show(f'[{k}]', lambda a, k=k: a[k], v)
    for lo, hi in [(0, 1), (0, 2), (0, 3), (0, 4), (0, 8), (1, 2), (1, 5), (2, 4), (3, 7), (4, 12), (1, n), (0, n - 1), (2, n - 2), (n - 4, n), (n - 1, n)]:
        if hi <= n:
            show(f'[{lo}:{hi}]', lambda a, lo=lo, hi=hi: a[lo:hi], v)
    for st in [2, 3, 4]:
        show(f'[::{st}]', lambda a, st=st: a[::st], v)
        show(f'[1::{st}]', lambda a, st=st: a[1::st], v)
    for lo, hi in [(1, 0), (0, 1), (2, 2), (3, 0), (0, 5), (4, 4)]:
        show(f'pad({lo},{hi})', lambda a, lo=lo, hi=hi: jnp.pad(a, (lo, hi)), v)
    show('rev', lambda a: a[::-1], v)
    show('roll1', lambda a: jnp.roll(a, 1), v)
    show('roll5', lambda a: jnp.roll(a, 5), v)
    show('concat', lambda a: jnp.concatenate([a, a]), v)
    show('concat_part', lambda a: jnp.concatenate([a[:2], a]), v)
    show('sort', jnp.sort, v)
    show('cumsum', jnp.cumsum, v)
# %%
# The same slices kept sharded by an out_sharding: is the replicate step the only difference?
v = jax.device_put(jnp.arange(16.), NamedSharding(m8, P('x')))
for lo, hi in [(0, 8), (2, 10), (1, 9), (0, 4)]:
    show(f'[{lo}:{hi}] -> P(x)', jax.jit(lambda a, lo=lo, hi=hi: a[lo:hi], out_shardings=NamedSharding(m8, P('x'))), v)
for lo, hi in [(0, 1), (2, 4), (0, 3)]:
    show(f'[{lo}:{hi}] -> P()', jax.jit(lambda a, lo=lo, hi=hi: a[lo:hi], out_shardings=NamedSharding(m8, P())), v)
# Replicating uneven and even shardings directly.
for n in [16, 10, 7, 3]:
    w = jax.device_put(jnp.arange(float(n)), NamedSharding(m4, P('x')))
    show(f'replicate size {n}', jax.jit(lambda a: a * 2, out_shardings=NamedSharding(m4, P())), w)
# %%
# Gathers with computed indices and dynamic slices over a sharded dim.
v = jax.device_put(jnp.arange(16.), NamedSharding(m8, P('x')))
show('dyn_slice', lambda a: lax.dynamic_slice(a, (jnp.int32(3),), (4,)), v)
show('dyn_index', lambda a: a[jnp.int32(5)], v)
show('take', lambda a: a[jnp.array([1, 9, 14])], v)
show('take_sorted', lambda a: jnp.take(a, jnp.arange(4) * 4), v)
x2 = jax.device_put(jnp.arange(64.).reshape(16, 4), NamedSharding(m8, P('x', None)))
show('2d row 5', lambda a: a[5], x2)
show('2d rows 2:6', lambda a: a[2:6], x2)
show('2d last row', lambda a: a[-1], x2)
show('2d [:, 1]', lambda a: a[:, 1], x2)
show('2d [::2, ::2]', lambda a: a[::2, ::2], x2)
