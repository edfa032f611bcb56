# Whole programs a learner writes: an MLP step, attention, layer norm, embeddings, an optimizer update, on
# data-, model- and 2-D-sharded layouts; their output shardings and the collectives compiled for them.
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
import optax
def kinds(fn, *args):
    return sorted(set(collectives(fn, *args)))
def specs(tree):
    return jax.tree.map(lambda t: t.sharding.spec, tree)
key = jax.random.key(0)
# %%
B, D, H = 16, 8, 32
params = {'w1': jax.device_put(jax.random.normal(key, (D, H)) / 8, NamedSharding(mesh, P(None, 'model'))),
          'b1': jax.device_put(jnp.zeros(H), NamedSharding(mesh, P('model'))),
          'w2': jax.device_put(jax.random.normal(key, (H, D)) / 8, NamedSharding(mesh, P('model', None)))}
xb = jax.device_put(jnp.ones((B, D)), NamedSharding(mesh, P('data', None)))
def mlp(p, t):
    return jax.nn.relu(t @ p['w1'] + p['b1']) @ p['w2']
def loss(p, t):
    return (mlp(p, t) ** 2).mean()
step = jax.jit(jax.value_and_grad(loss))
l, g = step(params, xb)
print(round(float(l), 5), specs(g), kinds(step, params, xb))
# %%
opt = optax.sgd(0.1)
state = opt.init(params)
@jax.jit
def train(p, s, t):
    l, g = jax.value_and_grad(loss)(p, t)
    u, s = opt.update(g, s, p)
    return optax.apply_updates(p, u), s, l
p2, s2, l2 = train(params, state, xb)
print(specs(p2), round(float(l2), 5), kinds(train, params, state, xb))
# %%
q = jax.device_put(jnp.ones((4, 8, 16)), NamedSharding(mesh, P('data', None, 'model')))
def attention(q, k, v):
    s = jnp.einsum('bqd,bkd->bqk', q, k) / 4.0
    return jnp.einsum('bqk,bkd->bqd', jax.nn.softmax(s, -1), v)
f = jax.jit(attention)
print(f(q, q, q).sharding.spec, kinds(f, q, q, q))
# %%
h = jax.device_put(jnp.ones((4, 8, 16)), NamedSharding(mesh, P('data', None, 'model')))
def layer_norm(t):
    m = t.mean(-1, keepdims=True)
    v = ((t - m) ** 2).mean(-1, keepdims=True)
    return (t - m) / jnp.sqrt(v + 1e-5)
f = jax.jit(layer_norm)
print(f(h).sharding.spec, kinds(f, h))
# %%
table = jax.device_put(jnp.ones((64, 16)), NamedSharding(mesh, P('model', None)))
ids = jax.device_put(jnp.arange(16).reshape(4, 4) % 64, NamedSharding(mesh, P('data', None)))
f = jax.jit(lambda t, i: t[i])
print(f(table, ids).shape, f(table, ids).sharding.spec, kinds(f, table, ids))
f = jax.jit(lambda t, i: jnp.take(t, i, axis=0))
print(f(table, ids).sharding.spec, kinds(f, table, ids))
# %%
logits = jax.device_put(jnp.ones((16, 32)), NamedSharding(mesh, P('data', 'model')))
labels = jax.device_put(jnp.arange(16) % 32, NamedSharding(mesh, P('data')))
f = jax.jit(lambda z, y: optax.softmax_cross_entropy_with_integer_labels(z, y).mean())
print(f(logits, labels), kinds(f, logits, labels))
# %%
x4 = jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, P('data', 'model')))
w4 = jax.device_put(jnp.ones((16, 32)), NamedSharding(mesh, P('model', None)))
for name, fn in [('fsdp', lambda t, w: t @ jax.lax.with_sharding_constraint(w, NamedSharding(mesh, P()))),
                 ('tp_rs', lambda t, w: jax.lax.with_sharding_constraint(t @ w, NamedSharding(mesh, P('data', 'model')))),
                 ('tp_ar', lambda t, w: jax.lax.with_sharding_constraint(t @ w, NamedSharding(mesh, P('data', None)))),
                 ('tp_T', lambda t, w: (t @ w).T), ('tp_sum', lambda t, w: (t @ w).sum(0))]:
    jf = jax.jit(fn)
    print(name, jf(x4, w4).sharding.spec, collectives(jf, x4, w4))
# %%
em = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Explicit, AxisType.Explicit))
with jax.set_mesh(em):
    ea = jax.device_put(jnp.ones((8, 16)), P('x', 'y'))
    ew = jax.device_put(jnp.ones((16, 4)), P('y', None))
    f = jax.jit(lambda a, w: a @ w)
    out = f(ea, ew)
    print(jax.typeof(out), out.sharding.spec, kinds(f, ea, ew))
    f = jax.jit(lambda a, w: jnp.einsum('ij,jk->ik', a, w, out_sharding=P('x', None)))
    print(jax.typeof(f(ea, ew)), kinds(f, ea, ew))
    print(jax.typeof(jax.jit(lambda a: a.sum(1))(ea)), jax.typeof(jax.jit(lambda a: a.T)(ea)))
    print(jax.typeof(jax.jit(lambda a: jax.sharding.reshard(a, P(None, 'x')))(ea)))
