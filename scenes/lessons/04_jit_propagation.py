# shardscope-run: --devices cpu:8 --jax-version 0.11.2
# %% [markdown]
# # Lesson 4: `jit`, sharding propagation and `with_sharding_constraint`
#
# With `Auto` mesh axes you shard the *inputs* of a jitted function and let the compiler (XLA's
# GSPMD partitioner) choose the sharding of every intermediate and output. It propagates the
# input shardings through the program, inserting collectives where an operation needs data that
# lives elsewhere. You can pin any value with `jax.lax.with_sharding_constraint`, and pin inputs
# and outputs with `in_shardings` / `out_shardings`.

# %%
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ('x', 'y'), axis_types=(AxisType.Auto, AxisType.Auto))
x = jax.device_put(jnp.arange(8 * 16.0).reshape(8, 16), NamedSharding(mesh, P('x', 'y')))

@jax.jit
def scale(v):
    return jnp.sin(v) * 2 + 1

out = scale(x)
print(out.sharding.spec)
jax.debug.visualize_array_sharding(out)

# %% [markdown]
# Elementwise operations keep the input's layout: each device works on its own block and nothing
# moves.
#
# ## Exercise: predict, then run
#
# What is the sharding of `jnp.sum(x, axis=0)`, a reduction over the dimension sharded by `'x'`?
# Which devices end up holding each piece of the length-16 result?

# %%
col_sums = jax.jit(lambda v: jnp.sum(v, axis=0))(x)
print(col_sums.sharding.spec)
jax.debug.visualize_array_sharding(col_sums)

# %% [markdown]
# The surviving dimension keeps its `'y'` split. Each device first sums its own 4 rows; the two
# devices of a mesh column (same `y`, different `x`) then all-reduce their partial sums, so both
# end up with the same piece: the result is replicated over `'x'`.
#
# ## Seeing inside: jaxprs and the compiled program
#
# `jax.make_jaxpr` shows the traced program; `.lower(...).compile()` gives the partitioned one.
# The compiled text below is shardscope's own HLO-like listing (it says so in its first line): it
# shows the per-device shapes and the collectives the partitioner inserted, not XLA's exact text.

# %%
f = jax.jit(lambda v: jnp.sum(v, axis=0))
print(jax.make_jaxpr(f)(x))
compiled = f.lower(x).compile()
print(compiled.as_text())
print(compiled.output_shardings)

# %% [markdown]
# ## Pinning an intermediate
#
# `with_sharding_constraint` tells the partitioner which layout a value must have at that point of
# the program. Here the intermediate is forced to be replicated over `'y'` (rows over `'x'` only);
# the output follows the constrained value.

# %%
@jax.jit
def constrained(v):
    h = jnp.tanh(v)
    h = jax.lax.with_sharding_constraint(h, NamedSharding(mesh, P('x', None)))
    return h * 3

out = constrained(x)
print(out.sharding.spec)
jax.debug.visualize_array_sharding(out)

# %% [markdown]
# ## Pinning inputs and outputs
#
# `out_shardings` fixes the layout of the result, whatever propagation would have chosen.
# `in_shardings` does the same for arguments: an array that was never explicitly placed
# (*uncommitted*, like the result of `jnp.arange`) is laid out as `in_shardings` asks before the
# program runs.

# %%
transpose_layout = jax.jit(lambda v: v + 0, out_shardings=NamedSharding(mesh, P('y', 'x')))
jax.debug.visualize_array_sharding(transpose_layout(x))

placed = jax.jit(lambda v: v * 2, in_shardings=NamedSharding(mesh, P(None, 'y')))
fresh = jnp.ones((8, 16))
print(fresh.sharding)
print(placed(fresh).sharding.spec)
