# shardscope-run: --devices cpu:8 --jax-version 0.11.2
# %% [markdown]
# # Lesson 3: `device_put` and resharding
#
# A freshly created array lives on one device. `jax.device_put(x, sharding)` lays it out across
# the mesh; calling it again with another sharding *reshards*: JAX builds a new array whose shards
# are copied from wherever the old ones were. Arrays are immutable, so the original is untouched.

# %%
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ('x', 'y'), axis_types=(AxisType.Auto, AxisType.Auto))
a = jnp.arange(8 * 8.0).reshape(8, 8)
print(a.sharding)
jax.debug.visualize_array_sharding(a)

# %% [markdown]
# `jnp.arange` put the whole array on the default device, device 0. Now spread its rows over
# `'x'`:

# %%
rows = jax.device_put(a, NamedSharding(mesh, P('x', None)))
print(rows.sharding)
print("fully replicated?", rows.is_fully_replicated, "| devices:", sorted(d.id for d in rows.devices()))
jax.debug.visualize_array_sharding(rows)

# %% [markdown]
# ## Resharding
#
# Putting `rows` onto a column sharding changes every shard: device 1 held rows 0-3 (all
# columns) and now needs columns 2-3 of *every* row. Half of that block it already has; the other
# half comes from a device in the other mesh row. The values are the same, only the layout moved.

# %%
cols = jax.device_put(rows, NamedSharding(mesh, P(None, 'y')))
jax.debug.visualize_array_sharding(cols)
print("same values:", bool((cols == a).all()))
print("rows is unchanged:", rows.sharding.spec)

# %%
def pieces(x, device_id):
    return [s.index for s in x.addressable_shards if s.device.id == device_id]

print("device 1 before:", pieces(rows, 1))
print("device 1 after: ", pieces(cols, 1))

# %% [markdown]
# ## Exercise: predict, then run
#
# `both` below is sharded `P('x', 'y')`. Which slice of the global array does device 6 hold after
# `device_put(both, NamedSharding(mesh, P('y', 'x')))`? Work it out from the mesh (device 6 sits at
# x=1, y=2), then run the cell.

# %%
both = jax.device_put(a, NamedSharding(mesh, P('x', 'y')))
swapped = jax.device_put(both, NamedSharding(mesh, P('y', 'x')))
print("device 6 before:", pieces(both, 6))
print("device 6 after: ", pieces(swapped, 6))
jax.debug.visualize_array_sharding(swapped)

# %% [markdown]
# Under `P('y', 'x')` the rows are cut 4 ways by `'y'` (y=2 takes rows 4-5) and the columns 2 ways
# by `'x'` (x=1 takes columns 4-7).
#
# ## Back to one device
#
# A `Device` is also a valid target: the shards are gathered onto it. `jax.device_get` instead
# copies the array to the host as a NumPy array.

# %%
one = jax.device_put(cols, jax.devices()[3])
print(one.sharding)
host = jax.device_get(cols)
print(type(host).__name__, host.shape)
