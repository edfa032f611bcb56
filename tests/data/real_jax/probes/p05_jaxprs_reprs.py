# What JAX prints: jaxprs of common programs and the reprs of arrays, meshes and shardings.
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
print(jax.make_jaxpr(lambda t: jnp.sin(t) @ t.T + 1)(a))
# %%
print(jax.make_jaxpr(lambda t: jax.nn.softmax(t, axis=-1))(a))
# %%
print(jax.make_jaxpr(lambda t: jax.lax.with_sharding_constraint(t, NamedSharding(mesh, P('data'))))(a))
# %%
print(jax.make_jaxpr(jax.grad(lambda t: (t ** 2).sum()))(a))
# %%
print(jax.make_jaxpr(jax.vmap(lambda r: r.sum()))(a))
# %%
print(jax.make_jaxpr(lambda t: t[1:3, ::2].reshape(-1).astype(jnp.int32))(a))
# %%
print(jax.make_jaxpr(lambda k: jax.random.normal(k, (3,)))(jax.random.key(0)))
# %%
print(jax.make_jaxpr(lambda k: jax.random.split(k))(jax.random.key(0)))
# %%
print(jax.make_jaxpr(lambda k: jax.random.normal(k, (3,)))(jax.random.PRNGKey(0)))
# %%
print(jax.make_jaxpr(lambda t: jnp.einsum('ij,jk->ik', t, t))(a))
# %%
print(jax.make_jaxpr(lambda t: jnp.argmax(t, 1))(a))
# %%
print(jax.make_jaxpr(jax.nn.gelu)(a))
# %%
print(jax.make_jaxpr(lambda t: jnp.cumsum(t, 0))(a))
# %%
print(jax.make_jaxpr(lambda t: lax.conv_general_dilated(t[None, None], jnp.ones((1, 1, 3, 3)), (1, 1), 'SAME'))(a))
# %%
a
# %%
print(a)
# %%
a.sharding
# %%
mesh
# %%
jax.typeof(a)
# %%
jax.devices()[:2]
# %%
[s.index for s in a.addressable_shards][:3]
# %%
a.addressable_shards[0]
# %%
jax.random.key(0)
# %%
jax.random.PRNGKey(0)
# %%
jax.ShapeDtypeStruct((8, 8), jnp.float32, sharding=NamedSharding(mesh, P('data')))
# %%
jax.debug.visualize_array_sharding(a)
# %%
jax.debug.visualize_array_sharding(jax.device_put(jnp.arange(8.), NamedSharding(mesh, P('data'))))
# %%
jax.debug.visualize_array_sharding(jax.device_put(jnp.arange(64.).reshape(8, 8), NamedSharding(mesh, P(('data', 'model')))))
# %%
jax.debug.visualize_array_sharding(jax.device_put(jnp.arange(64.).reshape(8, 8), NamedSharding(mesh, P('model', 'data'))))
# %%
jax.jit(lambda t: t * 2).lower(a).as_text()[:1500]
# %%
print(jax.jit(lambda t: t @ t).lower(a).compile().as_text())
# %%
jnp.arange(5)
# %%
jnp.ones((2, 3), jnp.bfloat16)
# %%
jnp.float32(3)
# %%
jax.sharding.SingleDeviceSharding(jax.devices()[0])
# %%
jax.sharding.PositionalSharding if hasattr(jax.sharding, 'PositionalSharding') else 'no PositionalSharding'
# %%
P('a', ('b', 'c'), None, P.UNCONSTRAINED)
# %%
jax.make_mesh((2, 4), ('a', 'b'))
# %%
jax.sharding.AbstractMesh((2, 4), ('a', 'b'))
