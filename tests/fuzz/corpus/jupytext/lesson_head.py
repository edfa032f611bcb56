# shardscope-run: --devices cpu:8 --jax-version 0.11.2
# %% [markdown]
# # Lesson 2: partition specs and shard grids
#
# A `PartitionSpec` says, for each dimension of an array, which mesh axes split it. A
# `NamedSharding` pairs a spec with a mesh. `jax.debug.visualize_array_sharding` draws the result:
# one box per shard, labelled with the devices that hold it.
#
# This lesson uses eight simulated CPU devices and a 2x4 mesh with axes `'x'` (2) and `'y'` (4).

# %%
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ('x', 'y'), axis_types=(AxisType.Auto, AxisType.Auto))
a = jnp.arange(8 * 16.0).reshape(8, 16)

def show(spec):
    x = jax.device_put(a, NamedSharding(mesh, spec))
    print(spec, "-> each shard is", x.sharding.shard_shape(x.shape))
    jax.debug.visualize_array_sharding(x)

show(P('x', 'y'))

# %% [markdown]
# Rows are split over `'x'` (2 ways) and columns over `'y'` (4 ways): eight blocks of 4x4, one per
# device. Swapping the entries swaps which mesh axis cuts which dimension:

# %%
show(P('y', 'x'))

# %% [markdown]
# ## Replication
#
# A dimension marked `None` (or left out at the end of the spec) is not split. A mesh axis that the
# spec does not mention at all **replicates** the array along that axis: every device in a row of
# the mesh holds a copy. The grid lists all the devices that hold a block.

# %%
show(P('x', None))

# %%
show(P(None, 'y'))

# %%
show(P())

# %% [mark