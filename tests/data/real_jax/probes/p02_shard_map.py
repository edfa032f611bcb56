# shard_map eager and under jit: results, shardings, printed jaxprs and the collectives compiled.
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
mesh_xy = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Auto, AxisType.Auto))
m8 = jax.make_mesh((8,), ('i',), axis_types=(AxisType.Auto,))
a = jax.device_put(jnp.arange(64.).reshape(8, 8), NamedSharding(mesh_xy, P('x', 'y')))
v = jax.device_put(jnp.arange(16.), NamedSharding(m8, P('i')))
# %%
f = jax.shard_map(lambda b: b * 2 + lax.axis_index('y'), mesh=mesh_xy, in_specs=P('x', 'y'), out_specs=P('x', 'y'))
e = f(a)
j = jax.jit(f)(a)
print(spec(e), spec(j), np.array_equal(np.asarray(e), np.asarray(j)), collectives(jax.jit(f), a))
print(type(e).__name__, e.sharding)
# %%
g = jax.shard_map(lambda b: lax.psum(b.sum(), ('x', 'y')), mesh=mesh_xy, in_specs=P('x', 'y'), out_specs=P())
r = jax.jit(g)(a)
print(r, spec(r), collectives(jax.jit(g), a))
# %%
c = jax.device_put(jnp.arange(64.).reshape(8, 8), NamedSharding(mesh_xy, P('y', 'x')))
print(collectives(jax.jit(f), c), spec(jax.jit(f)(c)))
# %%
print(jax.make_jaxpr(f)(a))
# %%
print(jax.make_jaxpr(g)(a))
# %%
ops = {
  'psum': (lambda b: lax.psum(b, 'i'), P()),
  'pmean': (lambda b: lax.pmean(b, 'i'), P()),
  'pmax': (lambda b: lax.pmax(b, 'i'), P()),
  'pmin': (lambda b: lax.pmin(b, 'i'), P()),
  'all_gather': (lambda b: lax.all_gather(b, 'i'), P()),
  'all_gather_tiled': (lambda b: lax.all_gather(b, 'i', tiled=True), P()),
  'all_gather_axis1': (lambda b: lax.all_gather(b, 'i', axis=1), P()),
  'psum_scatter': (lambda b: lax.psum_scatter(b, 'i', tiled=True), P('i')),
  'ppermute': (lambda b: lax.ppermute(b, 'i', [(k, (k + 1) % 8) for k in range(8)]), P('i')),
  'ppermute_partial': (lambda b: lax.ppermute(b, 'i', [(0, 1), (2, 3)]), P('i')),
  'axis_index': (lambda b: b + lax.axis_index('i'), P('i')),
  'axis_size': (lambda b: b * lax.axis_size('i') if hasattr(lax, 'axis_size') else b, P('i')),
}
for name, (fn, out) in ops.items():
    sm = jax.shard_map(fn, mesh=m8, in_specs=P('i'), out_specs=out, check_vma=False)
    try:
        res = sm(v)
        print(name, res.shape, spec(res), np.asarray(res).ravel()[:16].tolist(), collectives(jax.jit(sm), v))
    except Exception as ex:
        print(name, type(ex).__name__, ex)
# %%
m = jnp.arange(64.).reshape(8, 8)
sm = jax.shard_map(lambda b: lax.all_to_all(b, 'i', 0, 0, tiled=True), mesh=m8, in_specs=P('i'), out_specs=P('i'))
r = sm(jax.device_put(m, NamedSharding(m8, P('i'))))
print(np.asarray(r).tolist())
print(collectives(jax.jit(sm), jax.device_put(m, NamedSharding(m8, P('i')))))
print(jax.make_jaxpr(sm)(m))
# %%
sm = jax.shard_map(lambda b: lax.all_to_all(b, 'i', 1, 0, tiled=True), mesh=m8, in_specs=P('i', None), out_specs=P(None, 'i'))
r = sm(jax.device_put(m, NamedSharding(m8, P('i'))))
print(np.asarray(r).tolist(), spec(r))
# %%
sm = jax.shard_map(lambda b: lax.psum(b, 'i'), mesh=m8, in_specs=P('i'), out_specs=P())
print(jax.make_jaxpr(sm)(v))
print(sm(v))
# %%
try:
    sm = jax.shard_map(lambda b: b, mesh=m8, in_specs=P('i'), out_specs=P())
    print(sm(v))
except Exception as ex:
    print(type(ex).__name__, ex)
# %%
try:
    sm = jax.shard_map(lambda b: lax.psum(b, 'j'), mesh=m8, in_specs=P('i'), out_specs=P())
    print(sm(v))
except Exception as ex:
    print(type(ex).__name__, ex)
# %%
try:
    sm = jax.shard_map(lambda b: b, mesh=m8, in_specs=P('i'), out_specs=P('i'))
    print(sm(jnp.arange(12.)))
except Exception as ex:
    print(type(ex).__name__, ex)
# %%
def ring(x_blk, w_blk):
    acc = x_blk @ w_blk
    return lax.psum(acc, 'i')
xm = jax.device_put(jnp.arange(128.).reshape(8, 16) / 64, NamedSharding(m8, P(None, 'i')))
wm = jax.device_put(jnp.arange(64.).reshape(16, 4) / 64, NamedSharding(m8, P('i', None)))
sm = jax.shard_map(ring, mesh=m8, in_specs=(P(None, 'i'), P('i', None)), out_specs=P())
out = jax.jit(sm)(xm, wm)
print(spec(out), np.allclose(np.asarray(out), np.asarray(xm) @ np.asarray(wm)), collectives(jax.jit(sm), xm, wm))
# %%
def loss(w, v):
    return jax.shard_map(lambda w, v: lax.psum((w * v).sum(), 'i'), mesh=m8, in_specs=(P(), P('i')), out_specs=P())(w, v)
gw = jax.grad(loss)(jnp.ones(2), jnp.arange(16.))
print(gw, spec(gw))
print(jax.make_jaxpr(jax.grad(loss))(jnp.ones(2), jnp.arange(16.)))
# %%
sm = jax.shard_map(lambda b: jax.debug.print('blk {}', b) or b, mesh=m8, in_specs=P('i'), out_specs=P('i'))
_ = jax.jit(sm)(v)
jax.effects_barrier()
# %%
sm = jax.shard_map(lambda b: lax.pvary(b, 'i') if hasattr(lax, 'pvary') else b, mesh=m8, in_specs=P(), out_specs=P('i'))
print(jax.make_jaxpr(sm)(jnp.arange(2.)))
# %%
print(jax.shard_map(lambda b: b * 2, mesh=m8, in_specs=P('i'), out_specs=P('i'))(v))
