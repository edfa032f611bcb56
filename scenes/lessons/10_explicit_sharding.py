# shardscope-run: --devices cpu:8 --jax-version 0.11.2
# %% [markdown]
# # Lesson 10: explicit sharding, shardings in the types
#
# With `Auto` axes (lessons 2 to 9) the compiler decides how intermediates are sharded, and you
# find out afterwards. With **`Explicit`** axes the sharding is part of every value's *type*: JAX
# works it out while tracing, with a rule per operation, and you can read it with `jax.typeof`
# before anything is compiled. When a rule cannot decide (an ambiguous matmul), JAX stops with an
# error and asks you to say what you want instead of guessing.
#
# Since JAX 0.9, `jax.make_mesh` gives `Explicit` axes by default. `jax.set_mesh` makes a mesh the
# current one, so shardings can be written as bare `P(...)`.

# %%
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P, auto_axes, reshard

mesh = jax.make_mesh((2, 4), ('x', 'y'))
print(mesh.axis_types)
jax.set_mesh(mesh)

x = jax.device_put(jnp.arange(8 * 16.0).reshape(8, 16), P('x', 'y'))
print(jax.typeof(x))
print(x.sharding)

# %% [markdown]
# The type writes each dimension with the mesh axes that split it: `8@x` and `16@y`. The sharding
# is visible during tracing too:

# %%
@jax.jit
def f(a):
    print("inside jit, a is", jax.typeof(a))
    b = a * 2
    print("          b is", jax.typeof(b))
    c = b.sum(axis=0)
    print("          c is", jax.typeof(c))
    return c

c = f(x)
print(c.sharding.spec)

# %% [markdown]
# The `print` calls run at trace time and already know every sharding. Summing over the dimension
# split by `'x'` leaves a result split by `'y'` only; nothing to guess.
#
# ## When JAX will not guess
#
# A matmul whose contracting dimension is sharded on both sides produces partial sums. Should they
# be all-reduced into a replicated result or reduce-scattered into a sharded one? Under `Explicit`
# axes JAX refuses to choose:

# %%
a = jax.device_put(jnp.ones((8, 16)), P(None, 'y'))
w = jax.device_put(jnp.ones((16, 4)), P('y', None))
try:
    jnp.matmul(a, w)
except Exception as e:
    print(f"{type(e).__name__}: {e}")

# %% [markdown]
# The fix is to say which result you want. `jax.sharding.auto_axes` runs a function with the
# mesh axes switched to `Auto` (the compiler partitions the matmul as in lesson 5) and gives its
# result the `out_sharding` you name: replicated (an all-reduce of the partial sums) or split by
# rows (a reduce-scatter). (`jnp.matmul` and `jnp.einsum` also take `out_sharding=` in JAX 0.11;
# shardscope does not simulate that argument yet, so this lesson uses `auto_axes`.)

# %%
matmul_to = lambda spec: auto_axes(lambda a, w: a @ w, out_sharding=spec)
replicated = matmul_to(P())(a, w)
scattered = matmul_to(P('y', None))(a, w)
print(jax.typeof(replicated), jax.typeof(scattered))

# %% [markdown]
# ## Exercise: predict, then run
#
# `u` is split by rows over `'x'` and `v` by columns over `'y'`. What is `jax.typeof(u @ v)`? Does
# the product need an `out_sharding`?

# %%
u = jax.device_put(jnp.ones((8, 16)), P('x', None))
v = jax.device_put(jnp.ones((16, 4)), P(None, 'y'))
print(jax.typeof(u @ v))

# %% [markdown]
# Matmul case 1 of lesson 5: rows keep `'x'`, columns keep `'y'`, no contracting dimension is
# sharded, and the rule is unambiguous.
#
# ## reshard: changing the type on purpose
#
# `jax.sharding.reshard(value, spec)` moves a value to another sharding, inside or outside `jit`.
# It is the explicit-mode counterpart of `device_put` and of `with_sharding_constraint`.

# %%
moved = reshard(x, P(None, 'x'))
print(jax.typeof(moved))
jax.debug.visualize_array_sharding(moved)

# %% [markdown]
# ## Mixing modes
#
# Axes can be mixed: here `'x'` is explicit and `'y'` is left to the compiler. A dimension split by
# an `Auto` axis does not show up in the type.

# %%
mixed = jax.make_mesh((2, 4), ('x', 'y'), axis_types=(AxisType.Explicit, AxisType.Auto))
with jax.set_mesh(mixed):
    z = jax.device_put(jnp.ones((8, 16)), P('x', 'y'))
    print(mixed)
    print(jax.typeof(z))
    print(z.sharding.spec)
