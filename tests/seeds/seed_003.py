# %%
import jax
jax.devices()

# %%
# arrays are sharded on a single device
import jax.numpy as jnp
arr = jnp.arange(32.0).reshape(4, 8)
arr.devices()

# %%
arr.sharding

# %%
jax.debug.visualize_array_sharding(arr)

# %%
from jax.sharding import Mesh, PartitionSpec, NamedSharding
from jax.experimental import mesh_utils

P = PartitionSpec
devices = mesh_utils.create_device_mesh((2, 4))
mesh = jax.sharding.Mesh(devices, ('x', 'y'))
sharding = jax.sharding.NamedSharding(mesh, P('x', 'y'))
print(sharding)

# %%
arr_sharded = jax.device_put(arr, sharding)

print(arr_sharded)
jax.debug.visualize_array_sharding(arr_sharded)
