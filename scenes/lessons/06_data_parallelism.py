# shardscope-run: --devices cpu:8 --jax-version 0.11.2
# %% [markdown]
# # Lesson 6: data parallelism
#
# The simplest way to use many devices for training: every device keeps a full copy of the
# parameters and works on its own slice of the batch. The forward and backward passes need no
# communication at all, until the gradients: each device has the gradient of *its* examples, and
# the update needs their sum (or mean) over the whole batch, so one all-reduce per step combines
# them.
#
# In JAX this is just a sharding choice: batch `P('data')`, parameters `P()`, and `jit`.

# %%
import re
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((8,), ('data',), axis_types=(AxisType.Auto,))
batch_sharding = NamedSharding(mesh, P('data'))
replicated = NamedSharding(mesh, P())

d_in, d_out, batch = 16, 4, 64
params = {
    'w': jax.device_put(jnp.ones((d_in, d_out)) / d_in, replicated),
    'b': jax.device_put(jnp.zeros((d_out,)), replicated),
}
x = jax.device_put(jnp.arange(batch * d_in, dtype=jnp.float32).reshape(batch, d_in) / 1000, batch_sharding)
y = jax.device_put(jnp.ones((batch, d_out)), batch_sharding)
jax.debug.visualize_array_sharding(x)

# %% [markdown]
# Each device holds 8 of the 64 examples. A linear model with a mean-squared-error loss:

# %%
def loss_fn(p, x, y):
    pred = x @ p['w'] + p['b']
    return jnp.mean((pred - y) ** 2)

@jax.jit
def train_step(p, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(p, x, y)
    new_p = jax.tree.map(lambda w, g: w - 0.1 * g, p, grads)
    return new_p, loss, grads

# %% [markdown]
# ## Exercise: predict, then run
#
# What sharding will the gradients `grads['w']` have, and which collectives will the compiled step
# contain? (Think about what each device can compute alone.)

# %%
new_params, loss, grads = train_step(params, x, y)
print("loss", round(float(loss), 4))
print("grad w:", grads['w'].sharding.spec, " grad b:", grads['b'].sharding.spec)
print("new w:", new_params['w'].sharding.spec)
text = train_step.lower(params, x, y).compile().as_text()
print(sorted(set(re.findall(r"\b(all-reduce|all-gather|reduce-scatter)\(", text))))

# %% [markdown]
# The gradients are replicated, `P()`, like the parameters, so the update is local and every
# device ends the step with the same new parameters. Getting there took all-reduces over the
# `'data'` axis: the partial gradient sums of the eight devices (and the partial sums of the loss)
# are added together. None of the three sums needs another, so XLA's all-reduce combiner sends
# them together: one all-reduce of a tuple, which pays one collective's latency instead of three.
# (The line comes from shardscope's HLO-like listing, as in lesson 4; the weight gradient shows
# transposed, 4x16.)

# %%
for line in text.splitlines():
    if 'all-reduce(' in line:
        print(line.strip().split(', channel_id')[0])

# %% [markdown]
# ## What it costs
#
# Per step a ring all-reduce has each device send (and receive) almost twice the gradients' size,
# a reduce-scatter then an all-gather, whatever the batch size. Data parallelism stays efficient while the time to compute on the local batch is larger
# than the time to all-reduce the gradients, and it needs memory for a full copy of the
# parameters and optimizer state on every device. Lesson 7 removes that copy.

# %%
n_params = sum(p.size for p in jax.tree.leaves(params))
print(n_params, "parameters,", n_params * 4, "bytes of float32 gradients all-reduced per step")
for shard in params['w'].addressable_shards[:2]:
    print(shard.device, shard.data.shape)
