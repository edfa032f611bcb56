# %% [markdown]
# # shardscope: a first look at sharding
# A 2x4 mesh over the eight devices of a TPU v3-8, a few arrays with different partition specs, and a
# jit program. Select an array in Variables to see its shard grid; edit its spec in the Spec tab.

# %%
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ('x', 'y'))
print(mesh)

# %%
x = jax.device_put(jnp.arange(64.0).reshape(8, 8), NamedSharding(mesh, P('x', 'y')))
rows = jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, P('x', None)))
cols = jax.device_put(jnp.zeros((16, 8)), NamedSharding(mesh, P(None, 'y')))
both = jax.device_put(jnp.arange(32.0), NamedSharding(mesh, P(('x', 'y'))))
replicated = jax.device_put(jnp.eye(8), NamedSharding(mesh, P()))
jax.debug.visualize_array_sharding(x)

# %%
@jax.jit
def layer(a, b):
    return jnp.tanh(a @ b)

# Rows over 'x' times columns over 'y': the contraction is local, the result is sharded P('x', 'y').
y = layer(rows, cols)
jax.debug.visualize_array_sharding(y)

# %%
# Summing over both sharded dimensions: each device adds up its own block, then the partitioner all-reduces
# the partial sums over 'x' and 'y' (the Program tab lists the collective and the bytes each device sends).
total = jax.jit(lambda a: jnp.sum(a * a))(x)
print(total)
