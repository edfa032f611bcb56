# %% [markdown]
# # A five-minute tour of sharding
#
# Run it with `./shardscope run examples/tutorial.py --devices cpu:8 --jax-version 0.4.35`, or pick
# another preset and version: the code is the same, the printed reprs follow the version chosen.
# The full course is in `scenes/lessons/`.

# %%
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

print(jax.devices())
mesh = jax.make_mesh((2, 4), ('x', 'y'))
print(mesh)

# %% [markdown]
# Rows over `'x'`, columns over `'y'`: one 4x2 block per device.

# %%
x = jax.device_put(jnp.arange(64.0).reshape(8, 8), NamedSharding(mesh, P('x', 'y')))
print(x.sharding)
jax.debug.visualize_array_sharding(x)

# %% [markdown]
# Replicate over `'y'` by leaving it out of the spec.

# %%
rows = jax.device_put(x, NamedSharding(mesh, P('x', None)))
jax.debug.visualize_array_sharding(rows)

# %% [markdown]
# `jit` runs on the shards; an elementwise function keeps the layout.

# %%
y = jax.jit(lambda a: jnp.tanh(a) * 2)(x)
print(y.sharding.spec)
print(float(jnp.sum(x)))
