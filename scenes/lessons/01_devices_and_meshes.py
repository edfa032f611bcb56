# shardscope-run: --devices tpu-v5e-8 --jax-version 0.11.2
# %% [markdown]
# # Lesson 1: devices and meshes
#
# Every sharded program starts from two objects: the **devices** JAX can see, and a **mesh**, a
# named n-dimensional grid of those devices. This lesson runs on a simulated TPU v5e-8 (eight chips,
# one host) with the JAX 0.11.2 profile; re-run it with `--devices cpu:8` or `--devices tpu-v3-8`
# to see how the same code lays out on other hardware.

# %%
import jax
import numpy as np
from jax.sharding import AxisType, Mesh

print(jax.device_count(), "devices,", jax.local_device_count(), "of them local to this process")
print(jax.devices()[0].device_kind)
for d in jax.devices():
    print(d.id, tuple(d.coords), d.process_index)

# %% [markdown]
# ## Physical topology
#
# TPU chips are wired to their neighbours by the inter-chip interconnect (ICI). `Device.coords`
# gives each chip's position in that physical grid: a v5e-8 is a 4x2 slab of chips (the third
# coordinate is always 0 on v5e). Device ids run along `x` first, so chips 3 and 4 are **not**
# neighbours: 3 is at (3, 0) and 4 at (0, 1).
#
# A mesh is a *logical* view. Its axes get names (`'data'`, `'model'`, ...) and collectives along
# an axis are fastest when consecutive devices on that axis are physical neighbours.

# %%
mesh = jax.make_mesh((2, 4), ('x', 'y'), axis_types=(AxisType.Auto, AxisType.Auto))
print(mesh)
print(mesh.shape, mesh.size)
print(np.vectorize(lambda d: d.id)(mesh.devices))

# %% [markdown]
# `jax.make_mesh` does not simply reshape the device list: on an eight-chip v5e it walks the chips
# in a **ring** (0, 1, 2, 3, then back along the second row 7, 6, 5, 4), so the flattened mesh
# visits every chip once with each step crossing one ICI link. Compare a `Mesh` built by hand from
# the id order:

# %%
by_hand = Mesh(np.array(jax.devices()).reshape(2, 4), ('x', 'y'))
print(np.vectorize(lambda d: d.id)(by_hand.devices))
# The chips the ring visits, as (x, y) coordinates:
print([tuple(d.coords[:2]) for d in mesh.devices.reshape(-1)])

# %% [markdown]
# ## Axis types
#
# Since JAX 0.9, `make_mesh` makes every axis `Explicit` unless told otherwise (lesson 10 is about
# what that means). Lessons 2 to 9 use `Auto` axes, where the compiler decides how intermediate
# values are sharded, so we pass `axis_types` explicitly:

# %%
print(jax.make_mesh((2, 4), ('x', 'y')))
print(mesh.axis_types)

# %% [markdown]
# ## Exercise: predict, then run
#
# Predict the device ids, row by row, of `jax.make_mesh((4, 2), ('a', 'b'))` on this v5e-8.
# (Hint: the ring order is fixed first, then reshaped to the requested shape.)

# %%
m42 = jax.make_mesh((4, 2), ('a', 'b'), axis_types=(AxisType.Auto,) * 2)
print(np.vectorize(lambda d: d.id)(m42.devices))

# %% [markdown]
# The ring (0 1 2 3 7 6 5 4) reshaped to 4x2 gives rows [0 1], [2 3], [7 6], [5 4]: every pair
# along `'b'` is a pair of neighbouring chips.
#
# A one-dimensional mesh over all eight chips is the ring itself, which is what a ring all-reduce
# over that axis wants:

# %%
ring = jax.make_mesh((8,), ('i',), axis_types=(AxisType.Auto,))
ids = [d.id for d in ring.devices]
print(ids)
print([tuple(d.coords[:2]) for d in ring.devices])
