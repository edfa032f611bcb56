# shardscope-run: --devices cpu:8 --jax-version 0.11.2
# %% [markdown]
# # Lesson 5: the four cases of a sharded matmul
#
# The scaling book ("How to Scale Your Model", chapter 3) sorts every sharded matrix multiply
# `C[I, K] = A[I, J] @ B[J, K]` into four cases, by where the mesh axes sit. We write a sharded
# dimension with its mesh axis as a subscript: `A[I_X, J]` has its rows split over axis `X`.
#
# | case | example | what communication is needed |
# |---|---|---|
# | 1 | `A[I_X, J] @ B[J, K_Y]` | none: each device multiplies its own blocks |
# | 2 | `A[I, J_X] @ B[J, K]` | all-gather `A` over `X` first (one operand's contracting dim is sharded) |
# | 3 | `A[I, J_X] @ B[J_X, K]` | local matmul, then all-reduce (or reduce-scatter) the partial sums over `X` |
# | 4 | `A[I_X, J] @ B[J, K_X]` | not allowed as is: all-gather one operand so `X` appears once |
#
# We look at each case in the compiled program. The listing is shardscope's HLO-like text: it
# shows per-device shapes and the collectives inserted, which is what matters here.

# %%
import re
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ('X', 'Y'), axis_types=(AxisType.Auto, AxisType.Auto))

def put(shape, spec):
    return jax.device_put(jnp.ones(shape), NamedSharding(mesh, spec))

def collectives(f, *args):
    text = f.lower(*args).compile().as_text()
    found = []
    for line in text.splitlines():
        # Real XLA writes layouts after shapes ({1,0}) and may write groups as an iota or mesh expression.
        m = re.search(r"= (f32\[[0-9,]*\])(?:\{[0-9,]*\})? (all-gather|all-reduce|reduce-scatter|all-to-all|collective-permute)\(.*"
                      r"replica_groups=(\{[0-9,{}]*\}|\[[0-9,]*\]<=\[[0-9,]*\](?:T\([0-9,]*\))?|mesh\[[^\]]*\] \{[^}]*\})", line)
        if m:
            found.append(f"{m.group(2)} -> {m.group(1)} per device, groups {m.group(3)}")
    return found or ["no collectives"]

matmul = jax.jit(lambda a, b: a @ b)

# %% [markdown]
# ## Case 1: no contracting dimension is sharded
#
# `A[I_X, J] @ B[J, K_Y]`: device (x, y) holds rows block x of `A` and column block y of `B`, which
# is exactly what it needs for block (x, y) of `C`. The result is `C[I_X, K_Y]`.

# %%
A = put((64, 128), P('X', None))
B = put((128, 32), P(None, 'Y'))
C = matmul(A, B)
print(C.sharding.spec, collectives(matmul, A, B))
jax.debug.visualize_array_sharding(C)

# %% [markdown]
# ## Case 2: one operand has a sharded contracting dimension
#
# `A[I, J_X] @ B[J, K]` with `B` replicated. The book's recipe is to all-gather `A` along `X`
# (turning it into `A[I, J]`) and then proceed as in case 1. We state that plan with
# `with_sharding_constraint`, so the compiler has no other choice to make.

# %%
@jax.jit
def gather_then_multiply(a, b):
    a = jax.lax.with_sharding_constraint(a, NamedSharding(mesh, P()))
    return a @ b

A = put((64, 128), P(None, 'X'))
B = put((128, 32), P())
for line in collectives(gather_then_multiply, A, B):
    print(line)
print(gather_then_multiply(A, B).sharding.spec)

# %% [markdown]
# The all-gather runs within groups `{0,4}`, `{1,5}`, ...: the pairs of devices that differ only in
# their `X` coordinate. Each device receives the half of `A` it lacks.
#
# ## Case 3: both contracting dimensions are sharded on the same axis
#
# `A[I, J_X] @ B[J_X, K]`: each device multiplies its slice of `J` and gets a *partial sum* of the
# whole `C`. The partial sums must be added across `X`.
#
# ### Exercise: predict, then run
#
# Which collective will appear, over which groups of devices, and what is the per-device shape of
# its result? What is the sharding of `C`?

# %%
A = put((64, 128), P(None, 'X'))
B = put((128, 32), P('X', None))
C = matmul(A, B)
for line in collectives(matmul, A, B):
    print(line)
print(C.sharding.spec)

# %% [markdown]
# An all-reduce over the `X` pairs, each device ending with the full 64x32 `C`, replicated. The
# same holds with `Y` (groups of four devices in a mesh row):

# %%
A = put((64, 128), P(None, 'Y'))
B = put((128, 32), P('Y', None))
print(collectives(matmul, A, B))

# %% [markdown]
# ## Case 4: the same axis on both non-contracting dimensions
#
# `A[I_X, J] @ B[J, K_X]` would give `C[I_X, K_X]`, which names `X` twice: no sharding can say
# that. One operand has to be gathered. Here we choose to gather `B`, which gives `C[I_X, K]`.

# %%
@jax.jit
def gather_b(a, b):
    b = jax.lax.with_sharding_constraint(b, NamedSharding(mesh, P()))
    return a @ b

A = put((64, 128), P('X', None))
B = put((128, 32), P(None, 'X'))
print(collectives(gather_b, A, B))
jax.debug.visualize_array_sharding(gather_b(A, B))

# %% [markdown]
# A spec that repeats a mesh axis is rejected outright:

# %%
try:
    NamedSharding(mesh, P('X', 'X'))
except Exception as e:  # JAX raises its own DuplicateSpecError
    print(f"{type(e).__name__}: {e}")
