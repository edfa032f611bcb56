# %%
import jax
jax.devices()

# %%
import jax.numpy as jnp
arr = jnp.arange(32.0).reshape(4, 8)
arr.devices()

# %%
arr.sharding

# %%
jax.debug.visualize_array_sharding(arr)

# %%
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ('x', 'y'))
sharding = jax.sharding.NamedSharding(mesh, P('x', 'y'))
print(sharding)

# %%
arr_sharded = jax.device_put(arr, sharding)

print(arr_sharded)
jax.debug.visualize_array_sharding(arr_sharded)

# %%
s_host = jax.NamedSharding(mesh, P('x', 'y'), memory_kind='pinned_host')
s_dev = s_host.with_memory_kind('device')
arr_host = jax.device_put(arr, s_host)
arr_dev = jax.device_put(arr, s_dev)
print(arr_host.sharding.memory_kind)
print(arr_dev.sharding.memory_kind)

# %%
@jax.jit
def f_elementwise(x):
  return 2 * jnp.sin(x) + 1

resul