# shardscope-run: --devices cpu:8 --jax-version 0.11.2
# %% [markdown]
# # Lesson 9: `shard_map` and the collectives
#
# `jit` with shardings lets the compiler write the per-device program. `jax.shard_map` lets *you*
# write it: the function runs once per device on that device's block, and communication happens
# only where you call a collective. `in_specs` says how each argument is cut into blocks,
# `out_specs` how the per-device results are stitched back together.
#
# We use a one-dimensional mesh of 8 devices named `'i'` and a 16-element vector, two elements per
# device. `per_device` shows what every device returned.

# %%
import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((8,), ('i',), axis_types=(AxisType.Auto,))
x = jax.device_put(jnp.arange(16.0), NamedSharding(mesh, P('i')))

def per_device(f, out_specs=P('i')):
    out = jax.jit(jax.shard_map(f, mesh=mesh, in_specs=P('i'), out_specs=out_specs))(x)
    return out.reshape(8, -1) if out_specs == P('i') else out

print(per_device(lambda b: b))
print(per_device(lambda b: b * 0 + lax.axis_index('i')))

# %% [markdown]
# Row `k` is what device `k` holds: elements `2k` and `2k+1`. `lax.axis_index('i')` is each
# device's position along the axis.
#
# ## psum: everyone gets the total
#
# `lax.psum(v, 'i')` adds `v` over all devices of the axis and gives every device the sum: an
# all-reduce. The result is the same everywhere, so it may leave the `shard_map` replicated
# (`out_specs=P()`).

# %%
print(per_device(lambda b: lax.psum(b, 'i')))
print(per_device(lambda b: lax.psum(b, 'i'), out_specs=P()))

# %% [markdown]
# ## all_gather: everyone gets every block
#
# `lax.all_gather(v, 'i')` stacks the blocks of all devices along a new leading axis; with
# `tiled=True` it concatenates them instead. Each device then holds the whole vector.

# %%
stacked = jax.jit(jax.shard_map(lambda b: lax.all_gather(b, 'i'), mesh=mesh, in_specs=P('i'), out_specs=P('i')))(x)
print(stacked.shape, "= 8 devices, each returning", stacked.addressable_shards[0].data.shape)
print(per_device(lambda b: lax.all_gather(b, 'i', tiled=True))[:2])

# %% [markdown]
# ## psum_scatter: sum, then keep one piece
#
# `lax.psum_scatter(v, 'i', tiled=True)` is a reduce-scatter: the sum of every device's `v`, cut
# into 8 pieces, device `k` keeping piece `k`. Here every device contributes a full-length vector
# of its own index, so the sum is `0 + 1 + ... + 7 = 28` everywhere, and each device keeps 2 of the
# 16 entries.

# %%
def reduce_scatter(b):
    mine = jnp.full((16,), lax.axis_index('i'), dtype=jnp.float32)
    return lax.psum_scatter(mine, 'i', tiled=True)

print(per_device(reduce_scatter))

# %% [markdown]
# ## ppermute: send to a neighbour
#
# `lax.ppermute(v, 'i', perm)` sends each device's block along the `(source, destination)` pairs in
# `perm`. A ring shift sends device `k`'s block to device `k+1` (mod 8); a device that receives
# nothing gets zeros.
#
# ### Exercise: predict, then run
#
# With `perm = [(k, (k + 1) % 8) for k in range(8)]`, what does device 0 hold afterwards? And with
# the ring left open, `perm = [(k, k + 1) for k in range(7)]`?

# %%
ring = [(k, (k + 1) % 8) for k in range(8)]
print(per_device(lambda b: lax.ppermute(b, 'i', ring)))
print(per_device(lambda b: lax.ppermute(b, 'i', [(k, k + 1) for k in range(7)])))

# %% [markdown]
# Device 0 receives device 7's block `[14, 15]` around the ring; with the ring open, nobody sends to
# device 0 and it gets zeros. Repeating a ring shift 7 times lets every device see every block,
# which is how a ring all-gather (and collective matmuls) are built.
#
# ## all_to_all: transpose the blocks
#
# `lax.all_to_all(v, 'i', split_axis, concat_axis)` cuts each device's block into 8 pieces along
# `split_axis`, sends piece `j` to device `j`, and concatenates what arrives along `concat_axis`.
# Below each device starts with 8 copies of its own index and ends with one value from every
# device: the classic re-layout of mixture-of-experts routing and of switching which dimension is
# sharded.

# %%
def exchange(b):
    mine = jnp.full((8,), lax.axis_index('i'), dtype=jnp.float32)
    return lax.all_to_all(mine, 'i', 0, 0, tiled=True)

print(per_device(exchange))

# %% [markdown]
# ## What the tracer sees
#
# Inside `shard_map` every value's type records which mesh axes it *varies* over: `f32[2]{V:i}`
# differs from device to device along `'i'`, a plain `f32[2]` is the same on all of them. `psum`
# makes a varying value invariant; `ppermute` needs a varying input, so JAX inserts `pvary`, a
# type cast that moves no data. Only `psum` and `ppermute` communicate.

# %%
f = jax.jit(jax.shard_map(lambda b: lax.ppermute(lax.psum(b, 'i'), 'i', ring), mesh=mesh,
                          in_specs=P('i'), out_specs=P('i')))
print(jax.make_jaxpr(f)(x))
