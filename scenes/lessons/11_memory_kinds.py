# shardscope-run: --devices tpu-v5e-8 --jax-version 0.11.2
# %% [markdown]
# # Lesson 11: memory kinds and host offload
#
# An accelerator has more than one place to keep an array. Besides its own high-bandwidth memory
# (memory kind `device`), a TPU can address the host's RAM: `pinned_host` (page-locked, so the
# chip can copy to and from it directly) and `unpinned_host`. Host RAM is far larger and far
# slower; moving arrays that are not needed right now (optimizer state, activations saved for the
# backward pass) to the host frees device memory. That is **host offloading**.
#
# In JAX the memory kind is part of the sharding. **What shardscope simulates:** it keeps the
# memory kind of every sharding and array, moves values between kinds where JAX would, and
# computes the same numbers. It does not model memory capacity or transfer time, so it shows
# *where* values live, not how long it takes to move them.

# %%
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ('x', 'y'), axis_types=(AxisType.Auto, AxisType.Auto))
s_dev = NamedSharding(mesh, P('x', 'y'))
s_host = s_dev.with_memory_kind('pinned_host')
print(s_dev)
print(s_host)

# %% [markdown]
# `with_memory_kind` keeps the mesh and the spec: the layout over devices is the same, only the
# memory changes. Every device's shard of `arr_host` sits in the pinned host memory attached to
# that device.

# %%
arr = jnp.arange(32.0).reshape(4, 8)
arr_host = jax.device_put(arr, s_host)
arr_dev = jax.device_put(arr, s_dev)
print(arr_host.sharding.memory_kind, arr_dev.sharding.memory_kind)
jax.debug.visualize_array_sharding(arr_host)

# %% [markdown]
# ## Moving data inside `jit`
#
# A jitted function can move data in either direction: `out_shardings` with a host memory kind
# copies its result device-to-host, and `jax.device_put` inside the function copies an argument
# host-to-device before computing on it.
#
# ### Exercise: predict, then run
#
# `to_host` doubles a device array and returns it with `out_shardings=s_host`. What memory kind
# does the result have, and does its shard grid differ from `arr_dev`'s?

# %%
to_host = jax.jit(lambda x: x * 2, out_shardings=s_host)
out_host = to_host(arr_dev)
print(out_host.sharding.memory_kind)
jax.debug.visualize_array_sharding(out_host)

# %% [markdown]
# The result lives in pinned host memory with exactly the same layout: each device wrote its own
# block to its own host. Now the other direction:

# %%
def add_one_on_device(x):
    x = jax.device_put(x, s_dev)   # host -> device
    return x + 1

to_device = jax.jit(add_one_on_device, out_shardings=s_dev)
out_dev = to_device(arr_host)
print(out_dev.sharding.memory_kind)
print(out_dev[:2])

# %% [markdown]
# ## Offloading activations
#
# During training, `jax.checkpoint` (remat) decides which intermediate values the backward pass
# keeps and which it recomputes. The policy `save_and_offload_only_these_names` adds a third
# option: keep a named value, but in host memory. The forward pass copies it out, the backward
# pass copies it back.

# %%
from jax.ad_checkpoint import checkpoint_name

policy = jax.checkpoint_policies.save_and_offload_only_these_names(
    names_which_can_be_saved=[],
    names_which_can_be_offloaded=["hidden"],
    offload_src="device",
    offload_dst="pinned_host",
)

def layer(w, x):
    h = checkpoint_name(jnp.tanh(x @ w), "hidden")
    return jnp.sum(h @ w.T)

w = jax.device_put(jnp.ones((8, 8)) / 8, NamedSharding(mesh, P()))
x = jax.device_put(jnp.ones((16, 8)), NamedSharding(mesh, P('x', None)))
plain = jax.jit(jax.grad(layer))(w, x)
offloaded = jax.jit(jax.grad(jax.checkpoint(layer, policy=policy)))(w, x)
print("same gradient:", bool(jnp.allclose(plain, offloaded)))

# %% [markdown]
# Offloading changes where the saved activation waits between the passes, never the values: the
# gradients agree. On a real TPU you would compare `compiled.memory_analysis()` of the two
# versions to see the device memory saved; shardscope does not model those sizes.
