# The GPU as JAX sees it: device reprs, default shardings, and a lowered program.
# %%
import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P, NamedSharding
print(jax.__version__, jax.default_backend(), jax.device_count())
jax.devices()
# %%
d = jax.devices()[0]
print(repr(d), str(d), d.platform, d.device_kind, d.id, getattr(d, 'coords', None), getattr(d, 'core_on_chip', None))
# %%
a = jnp.arange(8.)
a.sharding
# %%
a.device if hasattr(a, 'device') else a.devices()
# %%
mesh = jax.make_mesh((1,), ('x',))
mesh
# %%
b = jax.device_put(jnp.arange(16.).reshape(4, 4), NamedSharding(mesh, P('x')))
jax.debug.visualize_array_sharding(b)
# %%
b.sharding.memory_kind, d.default_memory().kind if hasattr(d, 'default_memory') else None, [m.kind for m in d.addressable_memories()]
# %%
c = jax.jit(lambda t: t @ t).lower(b).compile()
print(c.memory_analysis())
ca = c.cost_analysis()
print(ca if not isinstance(ca, list) else ca[0])
# %%
jnp.ones(3).devices()
# %%
print(jax.random.normal(jax.random.key(0), (4,)))
print(jax.random.uniform(jax.random.key(1), (4,)))
