# shardscope-run: --devices cpu:8 --jax-version 0.11.2
# %% [markdown]
# # Lesson 8: tensor parallelism, the Megatron MLP
#
# Data parallelism and FSDP split the *batch*. Tensor (model) parallelism splits the layers
# themselves, so a model too big for one device's compute can run at a small batch per device.
# The Megatron-LM paper's transformer MLP is the classic example:
#
# * `W1` (d_model x d_ff) is split by **columns** over `'model'`: each device computes a slice of
#   the hidden units. This is matmul case 1 of lesson 5: no communication.
# * The activation (here `gelu`) is elementwise, so it runs on the slices.
# * `W2` (d_ff x d_model) is split by **rows** over `'model'`: its contracting dimension is
#   sharded like the hidden activations, matmul case 3. Each device gets a partial sum of the
#   output and one all-reduce over `'model'` finishes the layer.
#
# One all-reduce per MLP in the forward pass, no matter how wide `d_ff` is.

# %%
import re
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ('data', 'model'), axis_types=(AxisType.Auto, AxisType.Auto))
batch, d_model, d_ff = 16, 16, 32

x = jax.device_put(jnp.ones((batch, d_model)) / d_model, NamedSharding(mesh, P('data', None)))
w1 = jax.device_put(jnp.ones((d_model, d_ff)) / d_model, NamedSharding(mesh, P(None, 'model')))
w2 = jax.device_put(jnp.ones((d_ff, d_model)) / d_ff, NamedSharding(mesh, P('model', None)))
jax.debug.visualize_array_sharding(w1)
jax.debug.visualize_array_sharding(w2)

# %%
def mlp(x, w1, w2):
    h = jax.nn.gelu(x @ w1)
    return h @ w2

hidden = jax.jit(lambda x, w1: jax.nn.gelu(x @ w1))(x, w1)
print("hidden:", hidden.sharding.spec, "per device", hidden.addressable_shards[0].data.shape)
jax.debug.visualize_array_sharding(hidden)

# %% [markdown]
# The hidden activations are split two ways (batch over `'data'`) and four ways (hidden units over
# `'model'`): every device holds an 8x8 block of the 16x32 matrix.
#
# ## Exercise: predict, then run
#
# Compile the whole MLP. Which collective appears, over which device groups, and what is the
# sharding of the output?

# %%
f = jax.jit(mlp)
out = f(x, w1, w2)
print(out.sharding.spec)
for line in f.lower(x, w1, w2).compile().as_text().splitlines():
    m = re.search(r"= (f32\[[0-9,]*\])(?:\{[0-9,]*\})? (all-gather|all-reduce|reduce-scatter|all-to-all)\(.*"
                  r"replica_groups=(\{[0-9,{}]*\}|\[[0-9,]*\]<=\[[0-9,]*\](?:T\([0-9,]*\))?|mesh\[[^\]]*\] \{[^}]*\})", line)
    if m:
        print(m.group(2), m.group(1), "groups", m.group(3))
jax.debug.visualize_array_sharding(out)

# %% [markdown]
# One all-reduce over the rows of the mesh (`{0,1,2,3}` and `{4,5,6,7}` are the `'model'` groups),
# on an 8x16 block: the batch slice times `d_model`. The output is split by batch only and
# replicated over `'model'`, ready to feed the next layer's `W1`, which is why the Megatron layout
# alternates column-split and row-split weights.
#
# ## The backward pass
#
# The weight gradients come out sharded exactly like the weights, so the update stays local. Each
# device's gradient covers only its batch slice, so they are summed over `'data'` with all-reduces,
# as in lesson 6 (and the forward output's all-reduce over `'model'` is still there).

# %%
loss = lambda w1, w2, x: jnp.sum(mlp(x, w1, w2) ** 2)
step = jax.jit(jax.grad(loss, argnums=(0, 1)))
g1, g2 = step(w1, w2, x)
print("dW1:", g1.sharding.spec, " dW2:", g2.sharding.spec)
text = step.lower(w1, w2, x).compile().as_text()
print(sorted(set(re.findall(r"\b(all-reduce|all-gather|reduce-scatter)\(", text))))
