# Bad input: the exception type and message real JAX gives.
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
def attempt(label, thunk):
    try:
        r = thunk()
        print(label, 'OK', getattr(r, 'sharding', r))
    except Exception as ex:
        print(label, type(ex).__name__, str(ex)[:600])
# %%
attempt('axis not in mesh', lambda: NamedSharding(mesh, P('nope')))
attempt('spec too long', lambda: jax.device_put(jnp.ones(8), NamedSharding(mesh, P('data', 'model'))))
attempt('not divisible', lambda: jax.device_put(jnp.ones((6, 4)), NamedSharding(mesh, P('data'))))
attempt('axis used twice', lambda: NamedSharding(mesh, P('data', 'data')))
attempt('make_mesh too many', lambda: jax.make_mesh((4, 4), ('a', 'b')))
attempt('make_mesh names', lambda: jax.make_mesh((4, 2), ('a',)))
attempt('mesh dup names', lambda: jax.make_mesh((4, 2), ('a', 'a')))
attempt('P bad entry', lambda: P(3))
attempt('reshape bad', lambda: jnp.ones(8).reshape(3, 3))
attempt('matmul mismatch', lambda: jnp.ones((2, 3)) @ jnp.ones((4, 5)))
attempt('wsc outside jit', lambda: jax.lax.with_sharding_constraint(jnp.ones(8), NamedSharding(mesh, P('data'))))
attempt('device_put bad sharding', lambda: jax.device_put(jnp.ones(8), 'cpu'))
attempt('jit in_shardings count', lambda: jax.jit(lambda a: a, in_shardings=(NamedSharding(mesh, P()), NamedSharding(mesh, P())))(jnp.ones(8)))
attempt('jit out_shardings rank', lambda: jax.jit(lambda a: a, out_shardings=NamedSharding(mesh, P('data', 'model')))(jnp.ones(8)))
attempt('jit in_shardings mismatch', lambda: jax.jit(lambda a: a, in_shardings=NamedSharding(mesh, P('model')))(x))
attempt('psum outside', lambda: lax.psum(jnp.ones(3), 'i'))
attempt('axis_index outside', lambda: lax.axis_index('i'))
attempt('bool tracer', lambda: jax.jit(lambda a: 1 if a.sum() > 0 else 0)(jnp.ones(3)))
attempt('concrete shape', lambda: jax.jit(lambda n: jnp.ones(n))(3))
attempt('index oob dyn', lambda: jnp.arange(4)[10])
attempt('float index', lambda: jnp.arange(4)[1.5])
attempt('grad int', lambda: jax.grad(lambda a: a * 2)(3))
attempt('grad nonscalar', lambda: jax.grad(lambda a: a * 2)(jnp.ones(3)))
attempt('vmap axis size', lambda: jax.vmap(lambda a, b: a + b)(jnp.ones(3), jnp.ones(4)))
attempt('scan length', lambda: lax.scan(lambda c, t: (c, t), 0., jnp.ones(3), length=4))
attempt('cond branch types', lambda: lax.cond(True, lambda: jnp.ones(2), lambda: jnp.ones(3)))
attempt('fori carry type', lambda: lax.fori_loop(0, 2, lambda i, c: c + 0.5, 1))
attempt('reshard no mesh', lambda: jax.sharding.reshard(jnp.ones(8), P('data')))
attempt('spec str', lambda: NamedSharding(mesh, 'data'))
attempt('device_put devices', lambda: jax.device_put(jnp.ones(8), jax.devices()[:2]))
attempt('shard_map in_specs count', lambda: jax.shard_map(lambda a, b: a, mesh=mesh, in_specs=(P(),), out_specs=P())(jnp.ones(8), jnp.ones(8)))
attempt('shard_map spec axis', lambda: jax.shard_map(lambda a: a, mesh=mesh, in_specs=P('zzz'), out_specs=P())(jnp.ones(8)))
attempt('ppermute dup', lambda: jax.shard_map(lambda a: lax.ppermute(a, 'data', [(0, 1), (0, 2)]), mesh=mesh, in_specs=P('data'), out_specs=P('data'))(jnp.ones(8)))
attempt('all_to_all split', lambda: jax.shard_map(lambda a: lax.all_to_all(a, 'data', 0, 0), mesh=mesh, in_specs=P('data'), out_specs=P('data'))(jnp.ones(12)))
attempt('pvary dup', lambda: jax.shard_map(lambda a: lax.pvary(a, 'data'), mesh=mesh, in_specs=P('data'), out_specs=P('data'))(jnp.ones(8)))
# %%
em = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Explicit, AxisType.Explicit))
ea = jax.device_put(jnp.arange(64.).reshape(8, 8), NamedSharding(em, P('x', 'y')))
eb = jax.device_put(jnp.arange(64.).reshape(8, 8), NamedSharding(em, P('y', 'x')))
with jax.sharding.use_mesh(em):
    attempt('explicit add conflict', lambda: ea + eb)
    attempt('explicit matmul conflict', lambda: ea @ eb)
    attempt('explicit matmul ok', lambda: ea @ jax.sharding.reshard(eb, P('y', None)))
    attempt('explicit roll jit', lambda: jax.jit(lambda t: jnp.roll(t, 1, 0))(ea))
    attempt('explicit reshape', lambda: ea.reshape(64))
    attempt('explicit reshape jit', lambda: jax.jit(lambda t: t.reshape(4, 16))(ea))
    attempt('explicit transpose', lambda: ea.T)
    attempt('explicit sum', lambda: ea.sum(0))
    attempt('explicit concat', lambda: jnp.concatenate([ea, ea], 0))
    attempt('explicit einsum out', lambda: jnp.einsum('ij,jk->ik', ea, jax.sharding.reshard(eb, P('y', None)), out_sharding=P('x', None)))
    attempt('explicit typeof', lambda: print(jax.typeof(ea), jax.typeof(ea @ jax.sharding.reshard(eb, P('y', None)))))
    attempt('explicit reshard bad', lambda: jax.sharding.reshard(ea, P('x', 'x')))
    attempt('explicit where', lambda: jnp.where(ea > 3, ea, 0.))
    attempt('explicit dot_general out', lambda: jax.jit(lambda t: t @ t.T)(ea))
    attempt('explicit at set', lambda: ea.at[0].set(1.))
    attempt('explicit gather', lambda: ea[jnp.array([0, 2])])
