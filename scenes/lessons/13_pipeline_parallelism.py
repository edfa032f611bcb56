# shardscope-run: --devices cpu:4 --jax-version 0.11.2
# %% [markdown]
# # Lesson 13: pipeline parallelism with `ppermute`
#
# Pipeline parallelism splits a model by **layers**: device `s` (a *stage*) holds layer `s`
# only. A batch flows through the stages in order, each stage passing its activations to the next
# with a point-to-point send, `lax.ppermute`. To keep every stage busy, the batch is cut into
# **microbatches**: while stage 1 works on microbatch 0, stage 0 already starts microbatch 1
# (the GPipe schedule).
#
# This lesson runs on 4 simulated CPU devices: 4 stages, one `tanh(x @ W)` layer each.

# %%
import re
import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

n_stages, n_micro, mb, d = 4, 6, 2, 8
mesh = jax.make_mesh((n_stages,), ('stage',), axis_types=(AxisType.Auto,))

weights = jnp.stack([jnp.eye(d) * (1.0 + 0.1 * s) + 0.01 * s for s in range(n_stages)])
weights = jax.device_put(weights, NamedSharding(mesh, P('stage')))
xs = jnp.arange(n_micro * mb * d, dtype=jnp.float32).reshape(n_micro, mb, d) / 100
jax.debug.visualize_array_sharding(weights.reshape(n_stages * d, d))

# %% [markdown]
# Each device holds one `8x8` layer (the grid shows the stacked weights as a 32x8 matrix, one
# block of rows per stage). The reference result applies the four layers in sequence:

# %%
def layer(w, x):
    return jnp.tanh(x @ w)

def sequential(weights, xs):
    h = xs
    for s in range(n_stages):
        h = layer(weights[s], h)
    return h

expected = sequential(weights, xs)
print(expected.shape)

# %% [markdown]
# ## The schedule
#
# At step `t`, stage `s` works on microbatch `t - s` (if that exists). Stage 0 reads a new
# microbatch every step; every other stage takes what its predecessor sent at the previous step.
# After `n_micro + n_stages - 1` steps the last microbatch leaves the last stage.
#
# ### Exercise: predict, then run
#
# With 4 stages and 6 microbatches, how many steps does the pipeline take, and for what fraction
# of the stage-steps is a stage idle (the *bubble*)?

# %%
n_steps = n_micro + n_stages - 1
for s in range(n_stages):
    row = [str(t - s) if 0 <= t - s < n_micro else "." for t in range(n_steps)]
    print(f"stage {s}: " + " ".join(row))
print(f"{n_steps} steps; bubble = {n_stages - 1}/{n_steps} = {(n_stages - 1) / n_steps:.2f}")

# %% [markdown]
# Each stage is idle for `n_stages - 1` of the `n_micro + n_stages - 1` steps: the bubble shrinks
# as the number of microbatches grows.
#
# ## The pipeline in `shard_map`
#
# Inside `shard_map` each device sees its own layer (`w_stage`, shape `1x8x8`) and the full list
# of microbatches. `lax.axis_index('stage')` tells a device which stage it is. After each step,
# `ppermute` shifts every stage's output to the next stage; the last stage keeps its output as a
# finished microbatch, and a final `psum` makes the results (which only the last stage filled
# in) available everywhere.

# %%
def pipeline(w_stage, xs):
    w = w_stage[0]
    stage = lax.axis_index('stage')
    state = jnp.zeros((mb, d))
    finished = []
    for t in range(n_steps):
        inp = jnp.where(stage == 0, xs[min(t, n_micro - 1)], state)
        out = layer(w, inp)
        if t >= n_stages - 1:  # microbatch t - (n_stages - 1) leaves the last stage
            finished.append(jnp.where(stage == n_stages - 1, out, 0.0))
        if t < n_steps - 1:
            state = lax.ppermute(out, 'stage', [(s, s + 1) for s in range(n_stages - 1)])
    return lax.psum(jnp.stack(finished), 'stage')

run = jax.jit(jax.shard_map(pipeline, mesh=mesh, in_specs=(P('stage'), P()), out_specs=P()))
result = run(weights, xs)
print(result.shape, "matches the sequential model:", bool(jnp.allclose(result, expected, atol=1e-6)))

# %% [markdown]
# ## What moves between devices
#
# The compiled program has one collective-permute per step boundary, each sending a `2x8`
# microbatch activation from stage `s` to stage `s + 1`, and the final all-reduce. Weights never
# move: that is the appeal of pipelining when layers are large and activations small.

# %%
text = run.lower(weights, xs).compile().as_text()
kinds = re.findall(r"= (f32\[[0-9,]*\])(?:\{[0-9,]*\})? (collective-permute|all-reduce)\(", text)
print(len([k for k in kinds if k[1] == 'collective-permute']), "collective-permutes of", kinds[0][0])
print([k for k in kinds if k[1] == 'all-reduce'])
