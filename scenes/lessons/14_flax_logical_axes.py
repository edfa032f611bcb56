# shardscope-run: --devices cpu:8 --jax-version 0.11.2
# %% [markdown]
# # Lesson 14: Flax logical axes
#
# Writing mesh axis names (`'data'`, `'model'`) inside a model ties it to one parallelism plan.
# Flax's `linen` partitioning API separates the two:
#
# 1. the model annotates each parameter dimension with a **logical** name that says what the
#    dimension *is* (`'embed'`, `'hidden'`, `'batch'`), via `nn.with_logical_partitioning`;
# 2. a table of **rules** maps logical names to mesh axes (or to `None`, unsharded);
# 3. `nn.logical_to_mesh_sharding` turns the logical annotations into `NamedSharding`s.
#
# Changing the plan (data parallel, FSDP, tensor parallel) is then a change of rules, not of model
# code. (Flax NNX has the same idea with `sharding_names` metadata; this lesson uses `linen`.)

# %%
import functools
import jax
import jax.numpy as jnp
import flax.linen as nn
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ('data', 'model'), axis_types=(AxisType.Auto, AxisType.Auto))

class MLP(nn.Module):
    d_hidden: int = 16

    @nn.compact
    def __call__(self, x):
        init = nn.initializers.xavier_normal()
        h = nn.Dense(self.d_hidden, use_bias=False,
                     kernel_init=nn.with_logical_partitioning(init, ('embed', 'hidden')))(x)
        h = nn.with_logical_constraint(nn.relu(h), ('batch', 'hidden'))
        return nn.Dense(x.shape[-1], use_bias=False,
                        kernel_init=nn.with_logical_partitioning(init, ('hidden', 'embed')))(h)

model = MLP()
x = jnp.ones((16, 16))
abstract = jax.eval_shape(model.init, jax.random.key(0), x)
logical_spec = nn.get_partition_spec(abstract)
print(logical_spec['params']['Dense_0']['kernel'])
print(logical_spec['params']['Dense_1']['kernel'])

# %% [markdown]
# The abstract parameters (shapes only, nothing computed) carry logical specs: names of what each
# dimension means, not of mesh axes.
#
# ## Rules: the Megatron plan
#
# Map `'hidden'` to `'model'` and `'batch'` to `'data'`; `'embed'` is not listed, so it stays
# unsharded. This is lesson 8's tensor-parallel MLP.

# %%
tp_rules = (('batch', 'data'), ('hidden', 'model'))
shardings = nn.logical_to_mesh_sharding(logical_spec, mesh, tp_rules)
print(shardings['params']['Dense_0']['kernel'].spec)
print(shardings['params']['Dense_1']['kernel'].spec)

@functools.partial(jax.jit, out_shardings=shardings)
def init(key, x):
    return model.init(key, x)

with nn.logical_axis_rules(tp_rules):
    params = init(jax.random.key(0), x)
jax.debug.visualize_array_sharding(params['params']['Dense_0']['kernel'].value)

# %% [markdown]
# `jit` with `out_shardings` creates every parameter directly on the devices that hold it; the
# full matrix never exists on one device.
#
# The `with_logical_constraint` on the hidden activations uses the rules that are active
# (`nn.logical_axis_rules`) when the model runs:

# %%
xs = jax.device_put(jnp.ones((16, 16)), NamedSharding(mesh, P('data', None)))

@jax.jit
def forward(params, x):
    with nn.logical_axis_rules(tp_rules):
        return model.apply(params, x)

y = forward(params, xs)
print(y.shape, y.sharding.spec)

# %% [markdown]
# ## Exercise: predict, then run
#
# Now switch plans without touching `MLP`: FSDP-style rules that shard `'embed'` over `'data'` and
# keep `'hidden'` on `'model'`. What spec does each kernel get? Which devices hold the top-left
# block of `Dense_0`'s kernel?

# %%
fsdp_rules = (('batch', 'data'), ('embed', 'data'), ('hidden', 'model'))
fsdp = nn.logical_to_mesh_sharding(logical_spec, mesh, fsdp_rules)
print(fsdp['params']['Dense_0']['kernel'].spec)
print(fsdp['params']['Dense_1']['kernel'].spec)
kernel = jax.device_put(params['params']['Dense_0']['kernel'].value, fsdp['params']['Dense_0']['kernel'])
jax.debug.visualize_array_sharding(kernel)

# %% [markdown]
# `('embed', 'hidden')` becomes `P('data', 'model')`: each of the 8 devices holds one 8x4 block, the
# top-left one on device 0. `Dense_1`'s `('hidden', 'embed')` becomes `P('model', 'data')`. The
# model code is the same; only the table changed.
