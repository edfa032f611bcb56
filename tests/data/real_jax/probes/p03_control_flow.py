# Control flow under jit with sharded operands: output shardings, collectives and jaxprs.
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
# %%
def body(c, xs):
    c = c * 0.5 + xs
    return c, c.sum()
f = jax.jit(lambda a: lax.scan(body, jnp.zeros(8), a))
c, ys = f(a)
print(spec(c), spec(ys), collectives(f, a))
print(jax.make_jaxpr(f)(a))
# %%
f = jax.jit(lambda a: lax.scan(lambda c, r: (c + r, None), jnp.zeros_like(a[0]), a)[0])
print(spec(f(a)), collectives(f, a))
# %%
f = jax.jit(lambda a: lax.fori_loop(0, 3, lambda i, c: c * 2 + i, a))
y = f(a)
print(spec(y), collectives(f, a), float(y.sum()))
print(jax.make_jaxpr(f)(a))
# %%
f = jax.jit(lambda a: lax.while_loop(lambda c: c.sum() < 1e5, lambda c: c * 2 + 1, a))
y = f(a)
print(spec(y), collectives(f, a), float(y.sum()))
print(jax.make_jaxpr(f)(a))
# %%
f = jax.jit(lambda a, p: lax.cond(p, lambda t: t * 2, lambda t: t - 1, a))
y = f(a, True)
print(spec(y), collectives(f, a, True))
print(jax.make_jaxpr(f)(a, True))
# %%
f = jax.jit(lambda a, i: lax.switch(i, [lambda t: t, lambda t: t.T, lambda t: t @ t], a))
y = f(a, 2)
print(spec(y), collectives(f, a, 2))
# %%
f = jax.jit(lambda a: lax.map(lambda r: r * r.sum(), a))
y = f(a)
print(spec(y), collectives(f, a))
# %%
f = jax.jit(lambda a: jax.vmap(lambda r: r @ r)(a))
y = f(a)
print(spec(y), collectives(f, a))
# %%
f = jax.jit(jax.checkpoint(lambda a: jnp.sin(a) * 2))
print(spec(f(a)), collectives(f, a))
print(jax.make_jaxpr(f)(a))
# %%
f = jax.jit(jax.grad(lambda a: (jnp.tanh(a) ** 2).sum()))
print(spec(f(a)), collectives(f, a))
# %%
w1 = jax.device_put(jnp.ones((8, 16)) / 8, NamedSharding(mesh, P(None, 'model')))
w2 = jax.device_put(jnp.ones((16, 8)) / 16, NamedSharding(mesh, P('model', None)))
xb = jax.device_put(jnp.arange(64.).reshape(8, 8) / 64, NamedSharding(mesh, P('data', None)))
def mlp_loss(ws, xb):
    h = jax.nn.relu(xb @ ws[0])
    return ((h @ ws[1]) ** 2).mean()
step = jax.jit(jax.value_and_grad(mlp_loss))
l, gs = step((w1, w2), xb)
print(float(l), spec(gs[0]), spec(gs[1]), collectives(step, (w1, w2), xb))
