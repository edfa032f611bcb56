# %%
import os
os.environ["XLA_FLAGS"] = '--xla_force_host_platform_device_count=8'

# %%
import functools
from typing import Optional, Callable

import numpy as np
import jax
from jax import lax, random, numpy as jnp

import flax
from flax import struct, traverse_util, linen as nn
from flax.core import freeze, unfreeze
from flax.training import train_state, checkpoints

import optax

# %%
print(f"We have 8 fake Jax deivces now: {jax.devices()}")

# %%
from jax.sharding import Mesh, PartitionSpec as P, NamedSharding
from jax.lax import with_sharding_constraint
from jax.experimental import mesh_utils

# %%
# create a mesh and annotate each axis with a name
device_mesh =mesh_utils.create_device_mesh((2, 4))
print(device_mesh)

# annotate each axis with a name using the axis_names param
mesh = Mesh(devices=device_mesh, axis_names=('data', 'model'))
print(mesh)

def mesh_sharding(pspec: jax.sharding.PartitionSpec) -> NamedSharding:
  return NamedSharding(mesh, pspec)

# %%
class DotReluDot(nn.Module):
  depth: int
  dense_init: Callable = nn.initializers.xavier_normal()

  @nn.compact
  def __call__(self, x):

    y = nn.Dense(self.depth,
                 kernel_init=nn.with_partitioning(self.dense_init, (None, 'model')),
                 use_bias=False, # or overwrite with `bias_init`
                 )(x)
    y = jax.nn.relu(y)

    # Force a local sharding annotation
    y = with_sharding_constraint(y, mesh_sharding(P('data', 'model')))

    W2 = self.param(
        'W2',
        nn.with_partitioning(self.dense_init, ('model', None)),
        (self.depth, x.shape[-1])
    )

    z = jnp.dot(y, W2)
    # Force a local sharding annotation
    z = with_sharding_constraint(z, mesh_sharding(P('data', None)))

    # returns a tuple to conform with the API `flax.linen.scan`
    # as shown in the cell below
    return z, None

# %%
class MLP(nn.Module):
  num_layers: int
  depth: int
  use_scan: bool

  @nn.compact
  def __call__(self, x):
    if self.use_scan:
      x, _ = nn.scan(DotReluDot, length=self.num_layers,
                     variable_axes={"params": 0},
                     split_rngs={"params": True},
                     metadata_params={nn.PARITION_NAME: None}
                     )(self.depth)(x)
    else:
      for i in range(self.num_layers):
        x, _ = DotReluDot(self.depth)(x)
    return x

# %%
# ML hyperparameters
BATCH, LAYERS, DEPTH, USE_SCAN = 8, 4, 1024, False

# create fake inputs
x = jnp.ones((BATCH, DEPTH))
# initialize a PRNG Key
k = random.key(0)

# create an optax optimizer
optimizer = optax.adam(learning_rate=0.001)
# instantiate the model
model = MLP(LAYERS, DEPTH, USE_SCAN)

# %%
# for data parallelism, you can shard the batched input x across the data axis
x_sharding = mesh_sharding(P('data', None))
# use jax.device_put to place it onto the correct devices
x = jax.device_put(x, x_sharding)
jax.debug.visualize_array_sharding(x)

# %%
def init_fn(k, x, model, optimizer):
  variables = model.init(k, x) # Initialize the model
  state = train_state.TrainState.create(
      apply_fn=model.apply,
      params=variables['params'],
      tx=optimizer
  )
  return state

# %%
abstract_variables = jax.eval_shape(
    functools.partial(init_fn, model=model, optimizer=optimizer),
    k,
    x
)

# This `state_sharding` has the same pytree structure as `state`
# , which is the output of the `init_fn`
state_sharding = nn.get_sharding(abstract_variables, mesh)
state_sharding

# %%
jit_init_fn = jax.jit(init_fn, static_argnums=(2, 3),
                      in_shardings=(mesh_sharding(()), x_sharding),
                      out_shardings=state_sharding)

initialized_state = jit_init_fn(k, x, model, optimizer)

jax.debug.visualize_array_sharding(initialized_state.params['DotReluDot_0']['Dense_0']['kernel'].value)
jax.debug.visualize_array_sharding(initialized_state.params['DotReluDot_0']['W2'].value)

# %%
print(type(initialized_state.params['DotReluDot_0']['Dense_0']['kernel']))
print(type(initialized_state.params['DotReluDot_0']['Dense_0']['kernel'].value))
print(initialized_state.params['DotReluDot_0']['Dense_0']['kernel'].names)
print(initialized_state.params['DotReluDot_0']['Dense_0']['kernel'].value.shape)

# %%
unboxed_params = nn.meta.unbox(initialized_state.params)
all_zero = jax.tree_map(jnp.zeros_like, unboxed_params)
all_zero_params = nn.meta.replace_boxed(initialized_state.params, all_zero)
assert jnp.sum(nn.meta.unbox(all_zero_params['DotReluDot_0']['Dense_0']['kernel'])) == 0

# %%
initialized_state.params['DotReluDot_0']['Dense_0']['kernel'].value.sharding

# %%
print(initialized_state.step)
initialized_state.step.sharding

# %%
diff = jax.tree.map(
    lambda a, b: a - b,
    initialized_state.params['DotReluDot_0'],
    initialized_state.params['DotReluDot_0']
)
diff_array = diff['Dense_0']['kernel'].value
print(type(diff_array))
print(diff_array.shape)
print(diff_array.sharding)

# %%
@functools.partial(jax.jit, in_shardings=(state_sharding, x_sharding),
                   out_shardings=state_sharding)
def train_step(state, x):
  # a fake loss fcn
  def loss_unrolled(params):
    y = model.apply({'params': params}, x)
    return y.sum()
  grad_fn = jax.grad(loss_unrolled)
  grads = grad_fn(state.params)
  state = state.apply_gradients(grads=grads)
  return state

with mesh:
  new_state = train_step(initialized_state, x)

# %%
print(f'Sharding of Weight 1:')
jax.debug.visualize_array_sharding(initialized_state.params['DotReluDot_0']['Dense_0']['kernel'].value)
print(f'Sharding of Weight 2:')
jax.debug.visualize_array_sharding(initialized_state.params['DotReluDot_0']['W2'].value)

# %%
# create a compiled inference step
@functools.partial(jax.jit, in_shardings=(state_sharding, x_sharding),
                   out_shardings=x_sharding)
def apply_fn(state, x):
  return state.apply_fn({'params': state.params}, x)

with mesh:
  y = apply_fn(new_state, x)

print(type(y))
print(y.dtype)
print(y.shape)
jax.debug.visualize_array_sharding(y)

# %%
# %%timeit

def block_all(xs):
  jax.tree.map(lambda x: x.block_until_ready(), xs)
  return xs

with mesh:
  new_state = block_all(train_step(initialized_state, x))

# %%
class LogicalDotReluDot(nn.Module):
  depth: int
  dense_init: Callable = nn.initializers.xavier_normal()

  @nn.compact
  def __call__(self, x):
    y = nn.Dense(self.depth,
                 kernel_init=nn.with_logical_partitioning(self.dense_init, ('embed', 'hidden')),
                 use_bias=False,
                 )(x)
    y = jax.nn.relu(y)
    # force a local sharding annotation
    y = with_sharding_constraint(y, mesh_sharding(P('data', 'model')))

    W2 = self.param(
        'W2',
        nn.with_logical_partitioning(self.dense_init, ('hidden', 'embed')),
        (self.depth, x.shape[-1])
    )

    z = jnp.dot(y, W2)
    # Force a local sharding annotation
    z = nn.with_logical_constraint(z, ('batch', 'embed'))
    return z, None

class LogicalMLP(nn.Module):
  num_layers: int
  depth: int
  use_scan: bool

  @nn.compact
  def __call__(self, x):
    if self.use_scan:
      x, _ = nn.scan(LogicalDotReluDot, length=self.num_layers,
                     variable_axes={"params": 0},
                     split_rngs={"params": True},
                     metadata_params={nn.PARITION_NAME: None}
                     )(self.depth)(x)
    else:
      for i in range(self.num_layers):
        x, _ = LogicalDotReluDot(self.depth)(x)
    return x

# %%
# Unspecified rule means unsharded by default,
# so no need to specify ('embed', None),
# and ('layer', None)
rules = (('batch', 'data'),
         ('hidden', 'model'))

logical_model = LogicalMLP(LAYERS, DEPTH, USE_SCAN)

logical_abstract_variables = jax.eval_shape(
    functools.partial(init_fn, model=logical_model, optimizer=optimizer), k, x
)
logical_state_spec = nn.get_partition_spec(logical_abstract_variables)
print('annotations are logical, not mesh-specific: ',
      logical_state_spec.params['LogicalDotReluDot_0']['Dense_0']['kernel'])

# %%
logical_state_sharding = nn.logical_to_mesh_sharding(logical_state_spec, mesh, rules)
print('sharding annotations are mesh-specific: ',
      logical_state_sharding.params['LogicalDotReluDot_0']['Dense_0']['kernel'].spec)

# %%
state_sharding.params['DotReluDot_0'] == logical_state_sharding.params['LogicalDotReluDot_0']

# %%
logical_jit_init_fn = jax.jit(init_fn, static_argnums=(2, 3),
                              in_shardings=(mesh_sharding(()), x_sharding),
                              out_shardings=logical_state_sharding)

logical_initialized_state = logical_jit_init_fn(k, x, logical_model, optimizer)

# %%
print(f"sharding of weight 1:")
jax.debug.visualize_array_sharding(logical_initialized_state.params['LogicalDotReluDot_0']['Dense_0']['kernel'].value)
print(f"sharding of weight 2:")
jax.debug.visualize_array_sharding(logical_initialized_state.params['LogicalDotReluDot_0']['W2'].value)
