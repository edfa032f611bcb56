# %% [markdown]
# # A Flax model sharded over data and model axes
# Parameters annotated with mesh axes (`nn.with_partitioning`), shardings read from an abstract `init`, a jitted
# `init` that creates every parameter where it belongs, and one Adam step. The Variables panel lists `state` as a
# tree: each parameter with its sharding and bytes per device; select one to see its grid.

# %%
import jax
import jax.numpy as jnp
import flax.linen as nn
import optax
from flax.training import train_state
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ('data', 'model'), axis_types=(jax.sharding.AxisType.Auto,) * 2)


class MLP(nn.Module):
    hidden: int = 64

    @nn.compact
    def __call__(self, x):
        x = nn.Dense(self.hidden, use_bias=False,
                     kernel_init=nn.with_partitioning(nn.initializers.xavier_normal(), (None, 'model')))(x)
        x = nn.relu(x)
        return nn.Dense(16, use_bias=False,
                        kernel_init=nn.with_partitioning(nn.initializers.xavier_normal(), ('model', None)))(x)


model = MLP()
x = jax.device_put(jnp.ones((32, 16)), NamedSharding(mesh, P('data', None)))
optimizer = optax.adam(1e-3)


def init(key, x):
    variables = model.init(key, x)
    return train_state.TrainState.create(apply_fn=model.apply, params=variables['params'], tx=optimizer)


abstract = jax.eval_shape(init, jax.random.key(0), x)
state_sharding = nn.get_sharding(abstract, mesh)
state = jax.jit(init, out_shardings=state_sharding)(jax.random.key(0), x)
jax.debug.visualize_array_sharding(state.params['Dense_0']['kernel'].value)


# %%
@jax.jit
def train_step(state, x):
    def loss(params):
        y = state.apply_fn({'params': params}, x)
        return jnp.mean((y - x) ** 2)

    grads = jax.grad(loss)(state.params)
    return state.apply_gradients(grads=grads)


state = train_step(state, x)
print(state.step)
