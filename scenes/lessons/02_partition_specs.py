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

# %% [markdown]
# ## Several mesh axes on one dimension
#
# A tuple of axis names splits one dimension over the product of their sizes, the first name being
# the major one. `P(('x', 'y'), None)` cuts the rows into 8 blocks.

# %%
show(P(('x', 'y'), None))

# %% [markdown]
# ## Exercise: predict, then run
#
# Predict the grid for `P(None, ('y', 'x'))`: how many column blocks, and which device holds the
# second block from the left?

# %%
show(P(None, ('y', 'x')))

# %% [markdown]
# Eight column blocks of width 2. With `'y'` major, the blocks walk `'x'` fastest: device 0 (x=0,
# y=0), then device 4 (x=1, y=0), then 1, 5, ... so the second block belongs to device 4.
#
# ## Where each shard lives
#
# `addressable_shards` lists the pieces with their device and the slice of the global array each
# one holds.

# %%
x = jax.device_put(a, NamedSharding(mesh, P('x', 'y')))
for shard in x.addressable_shards[:4]:
    print(shard.device, shard.index, shard.data.shape)

# %% [markdown]
# ## Specs must divide the shape
#
# `device_put` requires each split dimension to divide evenly by the product of its mesh axes. A
# length-6 dimension cannot be cut 4 ways. (JAX 0.11 also prints the source location on a line of
# its own just before it raises, which is why a `<cell ...>` line appears first.)

# %%
try:
    jax.device_put(jnp.zeros((8, 6)), NamedSharding(mesh, P('x', 'y')))
except ValueError as e:
    print(f"{type(e).__name__}: {e}")
