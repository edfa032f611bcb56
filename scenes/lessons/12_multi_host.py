# shardscope-run: --devices tpu-v5e-16 --jax-version 0.11.2
# %% [markdown]
# # Lesson 12: multi-host meshes, processes and DCN
#
# Larger TPU slices are driven by several host machines. A TPU v5e-16 slice is a 4x4 grid of
# chips served by **4 hosts**, each attached to a 2x2 block of 4 chips. JAX runs one Python
# **process** per host, all executing the same program (multi-controller SPMD): every process
# sees all 16 devices, but can only touch the 4 attached to its own host, its *addressable*
# devices.
#
# shardscope simulates the view of process 0.

# %%
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

print("processes:", jax.process_count(), "| this is process", jax.process_index())
print("devices:", jax.device_count(), "| local:", jax.local_device_count())
print([d.id for d in jax.local_devices()])
for d in jax.devices()[:8]:
    print(d.id, tuple(d.coords[:2]), "process", d.process_index)

# %% [markdown]
# Device ids run along `x` over the whole 4x4 grid, but `jax.devices()` lists them host by host:
# process 0 owns chips 0, 1, 4, 5, the 2x2 block in the corner.
#
# ## Exercise: predict, then run
#
# `jax.make_mesh((4, 4), ('data', 'model'))` lays the 16 chips out row-major by id. Which process
# owns each position of the mesh? Draw the 4x4 table of process indices before running the cell.

# %%
mesh = jax.make_mesh((4, 4), ('data', 'model'), axis_types=(AxisType.Auto, AxisType.Auto))
print(np.vectorize(lambda d: d.id)(mesh.devices))
print(np.vectorize(lambda d: d.process_index)(mesh.devices))

# %% [markdown]
# Each host owns a 2x2 block of the mesh: the first two `'data'` rows and the first two `'model'`
# columns belong to process 0, and so on.
#
# ## Addressable shards
#
# An array sharded over the whole mesh is **not fully addressable** from any one process: process
# 0 holds 4 of its 16 shards. `addressable_shards` lists only those; `global_shards` lists all.

# %%
x_sharding = NamedSharding(mesh, P('data', 'model'))
x = jax.device_put(jnp.arange(16 * 16.0).reshape(16, 16), x_sharding)
print(x.is_fully_addressable, len(x.addressable_shards), "of", len(x.global_shards))
for shard in x.addressable_shards:
    print(shard.device.id, shard.index)
jax.debug.visualize_array_sharding(x)

# %% [markdown]
# In a real multi-process run, turning such an array into a NumPy array on one process
# (`np.asarray(x)`, printing its values) raises a `RuntimeError`: the other processes' shards are
# not in this host's memory. Use `.addressable_shards`, or gather explicitly with
# `jax.experimental.multihost_utils.process_allgather`. (shardscope runs every process's devices in
# one program and does not enforce this, so don't take its leniency as a promise.)
#
# ## Loading data per process
#
# Each process should load only the part of the batch its own devices need.
# `jax.make_array_from_callback(shape, sharding, load)` asks for exactly those slices: on each
# process it calls `load` once per addressable device, with the index that
# `sharding.addressable_devices_indices_map(shape)` gives for that device.

# %%
batch = np.arange(16 * 8, dtype=np.float32).reshape(16, 8)
batch_sharding = NamedSharding(mesh, P('data'))
for device, index in batch_sharding.addressable_devices_indices_map(batch.shape).items():
    print("device", device.id, "needs rows", index[0].start, "to", index[0].stop - 1)

arr = jax.make_array_from_callback(batch.shape, batch_sharding, lambda index: batch[index])
print(arr.sharding.spec, arr.is_fully_addressable)

# %% [markdown]
# Process 0's devices sit in `'data'` rows 0 and 1 of the mesh, so it needs batch rows 0-7;
# processes 2 and 3 load rows 8-15. Devices in the same `'data'` row get the same slice, because
# the batch is replicated over `'model'`.
#
# ## ICI and DCN
#
# Inside one slice every chip talks to its neighbours over **ICI**, the inter-chip links, host
# boundaries or not: a collective over `'model'` is as fast between chips 1 and 2 (different
# hosts) as between chips 0 and 1. Separate slices are connected only through the hosts' network,
# the datacenter network (**DCN**), with roughly an order of magnitude less bandwidth per chip.
# Multi-slice training therefore puts an outer mesh axis across slices and gives it the traffic that
# is cheapest per step: usually pure data parallelism, whose gradient all-reduce happens once per
# step, while FSDP and tensor parallelism stay on ICI inside each slice.
#
# shardscope's presets are single slices, so this lesson shows the host boundaries within one;
# it does not simulate multi-slice (DCN) meshes.
