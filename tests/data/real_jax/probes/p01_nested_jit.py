# Nested jit: an inner jit's own in/out shardings, shardings through helpers, and the collectives the
# compiler inserts. Run under real JAX (8 CPU devices) and under shardscope; outputs are compared.
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
f = jax.jit(lambda x, w: jax.nn.relu(x @ w))
y = f(x, w)
print(spec(y), collectives(f, x, w))
# %%
@jax.jit
def helper(a):
    return jnp.maximum(a, 0.)

g = jax.jit(lambda x, w: helper(x @ w) * 2)
y = g(x, w)
print(spec(y), collectives(g, x, w))
# %%
g2 = jax.jit(lambda x, w: jax.nn.softmax(jax.nn.gelu(x @ w), axis=0))
y = g2(x, w)
print(spec(y), collectives(g2, x, w))
# %%
inner = jax.jit(lambda a: a * 2, out_shardings=NamedSharding(mesh, P(None, 'model')))
outer = jax.jit(lambda a: inner(a) + 1)
y = outer(x)
print(spec(y), collectives(outer, x))
# %%
inner_in = jax.jit(lambda a: a.sum(axis=0), in_shardings=NamedSharding(mesh, P(None, 'model')))
outer2 = jax.jit(lambda a: inner_in(a))
y = outer2(jnp.arange(32.).reshape(8, 4))
print(spec(y), collectives(outer2, jnp.arange(32.).reshape(8, 4)))
# %%
print(jax.make_jaxpr(outer)(x))
# %%
print(jax.make_jaxpr(outer2)(x))
# %%
outer3 = jax.jit(lambda a: inner(a), out_shardings=NamedSharding(mesh, P('data', None)))
y = outer3(x)
print(spec(y), collectives(outer3, x))
# %%
h = jax.jit(lambda a: jax.lax.with_sharding_constraint(a, P(None, 'data')) * 3)
with jax.sharding.use_mesh(mesh):
    y = h(x)
    print(spec(y), collectives(h, x))
# %%
k = jax.jit(lambda a, b: (a @ b).sum(axis=1))
y = k(x, w)
print(spec(y), collectives(k, x, w))
# %%
k2 = jax.jit(lambda a, b: (a @ b).T)
y = k2(x, w)
print(spec(y), collectives(k2, x, w))
# %%
x2 = jax.device_put(jnp.arange(32.).reshape(8, 4), NamedSharding(mesh, P('data', 'model')))
w2 = jax.device_put(jnp.arange(24.).reshape(4, 6), NamedSharding(mesh, P('model', None)))
k3 = jax.jit(lambda a, b: a @ b)
y = k3(x2, w2)
print(spec(y), collectives(k3, x2, w2))
# %%
k4 = jax.jit(lambda a, b: a @ b, out_shardings=NamedSharding(mesh, P('data', 'model')))
y = k4(x2, w2)
print(spec(y), collectives(k4, x2, w2))
# %%
a = jax.device_put(jnp.arange(64.).reshape(8, 8), NamedSharding(mesh, P('data', 'model')))
for name, fn in [('reshape', lambda a: a.reshape(64)), ('reshape2', lambda a: a.reshape(4, 16)),
                 ('reshape3', lambda a: a.reshape(8, 2, 4)), ('transpose', lambda a: a.T),
                 ('sum0', lambda a: a.sum(0)), ('sum1', lambda a: a.sum(1)), ('sumall', lambda a: a.sum()),
                 ('cumsum0', lambda a: jnp.cumsum(a, 0)), ('cumsum1', lambda a: jnp.cumsum(a, 1)),
                 ('sort0', lambda a: jnp.sort(a, 0)), ('argmax1', lambda a: jnp.argmax(a, 1)),
                 ('concat0', lambda a: jnp.concatenate([a, a], 0)), ('concat1', lambda a: jnp.concatenate([a, a], 1)),
                 ('slice', lambda a: a[2:6]), ('slice1', lambda a: a[:, 1:5]), ('index', lambda a: a[3]),
                 ('bcast', lambda a: a[None] * jnp.ones((3, 1, 1))), ('expand', lambda a: a[:, None, :]),
                 ('pad', lambda a: jnp.pad(a, 1)), ('roll', lambda a: jnp.roll(a, 1, 0)), ('flip', lambda a: a[::-1]),
                 ('outer', lambda a: a[:, :, None] * a[:, None, :]), ('einsum', lambda a: jnp.einsum('ij,jk->ik', a, a)),
                 ('mean_keep', lambda a: a.mean(1, keepdims=True)), ('where', lambda a: jnp.where(a > 3, a, 0.)),
                 ('astype', lambda a: a.astype(jnp.bfloat16)), ('iota_add', lambda a: a + jnp.arange(8.)),
                 ('dyn_slice', lambda a: lax.dynamic_slice(a, (2, 0), (4, 8))), ('take', lambda a: jnp.take(a, jnp.array([1, 3]), axis=1)),
                 ('gather_rows', lambda a: a[jnp.array([0, 5, 7])]), ('max_pool', lambda a: a.reshape(4, 2, 8).max(1))]:
    jf = jax.jit(fn)
    try:
        out = jf(a)
        print(name, out.shape, spec(out), collectives(jf, a))
    except Exception as e:
        print(name, type(e).__name__, e)
