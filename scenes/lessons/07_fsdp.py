# shardscope-run: --devices cpu:8 --jax-version 0.11.2
# %% [markdown]
# # Lesson 7: fully sharded data parallelism (FSDP)
#
# Data parallelism (lesson 6) keeps a full copy of the parameters, gradients and optimizer state
# on every device. FSDP (also called ZeRO-3) shards all of them over the same axis as the batch.
# Each weight is gathered just before it is used and dropped afterwards; each gradient is summed
# over the batch and immediately scattered back into shards, so every device only stores `1/N`
# of the model.
#
# Per layer and step that is an all-gather of the weights and a reduce-scatter of the gradients.
# An all-reduce *is* a reduce-scatter followed by an all-gather, so this moves the same bytes as
# plain data parallelism; only when the backward pass gathers the weights a second time (to save
# memory) does FSDP cost one extra all-gather. Either way the saving is nearly free when compute
# hides the communication.

# %%
import re
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((8,), ('fsdp',), axis_types=(AxisType.Auto,))
sharded_rows = NamedSharding(mesh, P('fsdp', None))
replicated = NamedSharding(mesh, P())

params = {
    'w1': jax.device_put(jnp.ones((16, 32)) / 16, sharded_rows),
    'w2': jax.device_put(jnp.ones((32, 8)) / 32, sharded_rows),
}
x = jax.device_put(jnp.arange(64 * 16, dtype=jnp.float32).reshape(64, 16) / 1024, NamedSharding(mesh, P('fsdp')))
y = jax.device_put(jnp.ones((64, 8)), NamedSharding(mesh, P('fsdp')))
jax.debug.visualize_array_sharding(params['w1'])
for shard in params['w1'].addressable_shards[:2]:
    print(shard.device, "holds rows", shard.index[0], "shape", shard.data.shape)

# %% [markdown]
# Both the batch and the weights are split over `'fsdp'`. The model gathers each weight where it
# uses it: a `with_sharding_constraint` to `P()` is the all-gather.

# %%
def gathered(w):
    return jax.lax.with_sharding_constraint(w, replicated)

def loss_fn(p, x, y):
    h = jax.nn.relu(x @ gathered(p['w1']))
    out = h @ gathered(p['w2'])
    return jnp.mean((out - y) ** 2)

param_shardings = {'w1': sharded_rows, 'w2': sharded_rows}

@jax.jit
def train_step(p, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(p, x, y)
    grads = jax.lax.with_sharding_constraint(grads, param_shardings)
    new_p = jax.tree.map(lambda w, g: w - 0.1 * g, p, grads)
    return new_p, loss

# %% [markdown]
# ## Exercise: predict, then run
#
# After one step, how are the new parameters sharded? How many rows of `w1` does each device
# store, and which collectives does the compiled step contain?

# %%
new_params, loss = train_step(params, x, y)
print("loss", round(float(loss), 4))
print({k: v.sharding.spec for k, v in new_params.items()})
print(new_params['w1'].addressable_shards[0].data.shape)
text = train_step.lower(params, x, y).compile().as_text()
print(sorted(re.findall(r"\b(all-reduce|all-gather|reduce-scatter)\(", text)))

# %% [markdown]
# The parameters stay sharded, 2 of the 16 rows of `w1` per device. The compiled step gathers the
# two weights (the backward pass reuses the gathered copies here) and sums the gradients over the
# batch. Summing into shards is a reduce-scatter in principle; shardscope writes it as an
# all-reduce after which each device keeps its own rows, as XLA's CPU backend does (its GPU and
# TPU backends fuse that pair into one reduce-scatter). The loss and both gradients do not depend
# on each other's sums, so XLA's all-reduce combiner sends them as one all-reduce of a tuple: one
# collective's latency instead of three. The per-device shapes tell the story:

# %%
for line in text.splitlines():
    m = re.search(r"= (\(?f32\[[0-9,]*\](?:\{[0-9,]*\})?(?:, f32\[[0-9,]*\](?:\{[0-9,]*\})?)*\)?) (all-gather|all-reduce|reduce-scatter)\(", line)
    if m:
        print(m.group(2), m.group(1))

# %% [markdown]
# ## Memory
#
# Per device, the parameters take 1/8 of what data parallelism needs. With an Adam optimizer
# (two more arrays the size of the parameters) the saving is three times larger.

# %%
full = sum(w.size for w in params.values()) * 4
per_device = sum(w.addressable_shards[0].data.size for w in params.values()) * 4
print(f"data parallel: {full} bytes per device, FSDP: {per_device} bytes per device")
